#pragma once
// `serve --watch-cluster`: a reflector per watched kind on one strand, the snapshot the webhook
// reads rebuilt at most once per debounce period after a change, and readiness held until every
// kind's first LIST was answered or the ready timeout passed (docs/http.md#the-cluster-watch).
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "kube_client.h"
#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/server/env.h"
#include "rdma_webhook/server/metrics.h"
#include "rdma_webhook/server/watch_options.h"
#include "reflector.h"

namespace rw::server {

class ClusterWatch {
 public:
  using Publish = std::function<void(std::shared_ptr<const catalogue::Catalogue>)>;
  // `publish` receives every new snapshot; `ready` is called once. Both run on the watch's
  // strand. Throws std::invalid_argument when the API server cannot be found (not in a pod and
  // no --kube-api-server).
  ClusterWatch(const WatchOptions& options, Env& env, Metrics& metrics, Publish publish,
               std::function<void()> ready);

  // Starts the reflectors and the ready timeout on a strand of `ioc`. The watch must be
  // destroyed before `ioc` (it holds the strand); its coroutines end with the io_context and
  // touch nothing of it while they are destroyed.
  void Start(boost::asio::io_context& ioc);

 private:
  boost::asio::awaitable<void> PublishLater();
  boost::asio::awaitable<void> ReadyTimeout();
  void Changed();
  void Settled();
  void Ready(bool timed_out);

  const WatchOptions& options_;
  Env& env_;
  Metrics& metrics_;
  Publish publish_;
  std::function<void()> ready_;
  KubeClient client_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::optional<boost::asio::strand<boost::asio::io_context::executor_type>> strand_;
  std::size_t settled_ = 0;
  bool ready_called_ = false;
  bool publish_pending_ = false;
};

}  // namespace rw::server
