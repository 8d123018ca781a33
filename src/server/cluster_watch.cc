#include "cluster_watch.h"

#include <cstdlib>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rdma_webhook/server/watched_kinds.h"

namespace rw::server {
namespace {

namespace net = boost::asio;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

}  // namespace

ClusterWatch::ClusterWatch(const WatchOptions& options, Env& env, Metrics& metrics, Publish publish,
                           std::function<void()> ready)
    : options_(options),
      env_(env),
      metrics_(metrics),
      publish_(std::move(publish)),
      ready_(std::move(ready)),
      client_(ResolveApiServer(options, [](const char* name) { return std::getenv(name); }), env) {
  for (const WatchedKind& kind : WatchedKinds()) {
    reflectors_.push_back(std::make_unique<Reflector>(
        kind, options_, client_, env_, metrics_,
        Reflector::Hooks{[this] { Changed(); }, [this] { Settled(); }}));
  }
}

void ClusterWatch::Start(net::io_context& ioc) {
  strand_.emplace(net::make_strand(ioc));
  env_.Log(Level::kInfo, "cluster watch: starting",
           {{"apiServer", client_.endpoint().Url()},
            {"ca", client_.endpoint().ca_file},
            {"token", client_.endpoint().token_file},
            {"resources", reflectors_.size()}});
  for (auto& reflector : reflectors_) net::co_spawn(*strand_, reflector->Run(), net::detached);
  net::co_spawn(*strand_, ReadyTimeout(), net::detached);
}

void ClusterWatch::Changed() {
  if (publish_pending_) return;
  publish_pending_ = true;
  net::co_spawn(*strand_, PublishLater(), net::detached);
}

net::awaitable<void> ClusterWatch::PublishLater() {
  // Events that come within the debounce period share one rebuild.
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(options_.debounce);
  co_await timer.async_wait(kTuple);
  publish_pending_ = false;
  std::size_t total = 0;
  for (const auto& reflector : reflectors_) total += reflector->store().size();
  std::vector<nlohmann::json> objects;
  objects.reserve(total);
  // A kind that was listed is known to the catalogue even with no object: "no such DeviceClass"
  // is then a finding, where a kind not served or not allowed stays unknown.
  std::vector<catalogue::Listing> listed;
  for (const auto& reflector : reflectors_) {
    reflector->store().CopyTo(objects);
    if (reflector->listed()) {
      listed.push_back({std::string(reflector->kind().group), std::string(reflector->kind().kind),
                        std::nullopt});
    }
  }
  auto snapshot = std::make_shared<const catalogue::Catalogue>(
      catalogue::Catalogue::From(objects, catalogue::Source::kCluster, std::move(listed)));
  objects = {};
  metrics_.CountSnapshot(snapshot->size());
  publish_(std::move(snapshot));
}

void ClusterWatch::Settled() {
  if (++settled_ == reflectors_.size()) Ready(false);
}

void ClusterWatch::Ready(bool timed_out) {
  if (ready_called_) return;
  ready_called_ = true;
  if (!timed_out) {
    env_.Log(Level::kInfo, "cluster watch: every resource's first LIST answered; ready",
             nlohmann::json::object());
  } else {
    nlohmann::json waiting = nlohmann::json::array();
    for (const auto& reflector : reflectors_) {
      if (!reflector->listed()) waiting.push_back(reflector->kind().Name());
    }
    env_.Log(
        Level::kWarn,
        "cluster watch: ready timeout passed before every resource was listed; ready, "
        "and the policy alone decides for those until they are",
        {{"notListed", waiting},
         {"readyTimeoutSeconds", std::chrono::duration<double>(options_.ready_timeout).count()}});
  }
  ready_();
}

net::awaitable<void> ClusterWatch::ReadyTimeout() {
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(options_.ready_timeout);
  co_await timer.async_wait(kTuple);
  Ready(true);
}

}  // namespace rw::server
