#pragma once
// One watched kind kept current the way client-go's reflector does it: LIST (in pages) for a
// resourceVersion, WATCH from it with bookmarks, events applied to the kind's store; 410 Gone
// (an HTTP answer or an ERROR event) lists again; a broken connection retries with backoff and
// jitter from the last resourceVersion; 404 (the CRD is not installed) and 403 (RBAC) are logged
// once and asked again on a slow period, except right after a listing: an API server that has
// just started refuses for a moment, and the objects listed are kept through a refusal shorter
// than --watch-absent-retry. A 403 is a warning until it has lasted that long, then an error.
// Never throws out of Run.
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "kube_client.h"
#include "rdma_webhook/server/env.h"
#include "rdma_webhook/server/metrics.h"
#include "rdma_webhook/server/object_store.h"
#include "rdma_webhook/server/watch_options.h"
#include "rdma_webhook/server/watched_kinds.h"

namespace rw::server {

class Reflector {
 public:
  // changed: the store changed (the snapshot is due). settled: the first LIST got an answer that
  // decides (listed, not served, forbidden); called once. All of it runs on the caller's strand.
  struct Hooks {
    std::function<void()> changed;
    std::function<void()> settled;
  };
  // Everything passed in outlives the reflector.
  Reflector(const WatchedKind& kind, const WatchOptions& options, KubeClient& client, Env& env,
            Metrics& metrics, Hooks hooks);

  // Runs until its coroutine is destroyed (the io_context stops).
  boost::asio::awaitable<void> Run();

  const WatchedKind& kind() const { return kind_; }
  const ObjectStore& store() const { return store_; }
  // Its LIST completed and the kind is served and allowed: the catalogue knows the kind.
  bool listed() const { return state_ == State::kListed; }

 private:
  // What the last LIST said; a log line is written when it changes, not per retry.
  enum class State { kStarting, kListed, kAbsent, kForbidden, kFailing };
  // How a watch ended.
  enum class WatchEnd { kTimedOut, kGone, kRelist, kBroken };

  boost::asio::awaitable<State> List();
  boost::asio::awaitable<WatchEnd> Watch();
  boost::asio::awaitable<void> Sleep(std::chrono::milliseconds how_long);
  std::chrono::milliseconds NextBackoff();
  bool KeepThroughRefusal();
  // 403s have come in a row for longer than --watch-absent-retry.
  bool ForbiddenLong() const;
  void Enter(State state, const nlohmann::json& fields);
  void Touch();
  void Changed();

  const WatchedKind& kind_;
  const WatchOptions& options_;
  KubeClient& client_;
  Env& env_;
  Metrics& metrics_;
  Hooks hooks_;
  const std::string name_;
  ObjectStore store_;
  std::string resource_version_;
  State state_ = State::kStarting;
  bool settled_ = false;
  unsigned failures_ = 0;  // in a row; the backoff's exponent
  // The store holds what a LIST returned (not emptied since), and when the refusals (403, 404)
  // that followed it began.
  bool holds_listing_ = false;
  std::optional<std::chrono::system_clock::time_point> refused_since_;
  // When the 403s in a row began (reset by a listing or a 404), and whether the error line
  // that says they lasted was written.
  std::optional<std::chrono::system_clock::time_point> forbidden_since_;
  bool forbidden_error_logged_ = false;
  std::minstd_rand random_;
};

}  // namespace rw::server
