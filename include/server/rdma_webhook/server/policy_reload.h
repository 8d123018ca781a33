#pragma once
// Reloading the policy file while serving: a file that loads replaces the policy for the
// requests that start after it; a broken one leaves the policy in force, is counted in
// rdma_webhook_reloads_total{what="policy",result="failure"} and logged with the reason, and
// the next good file is taken as if nothing happened. No timers or signals here (the lifecycle
// calls Poll every --reload-interval and Reload on SIGHUP), so it is tested with a fake Env.
#include <optional>
#include <string>
#include <string_view>

#include "rdma_webhook/server/env.h"
#include "rdma_webhook/server/file_watch.h"
#include "rdma_webhook/server/front.h"
#include "rdma_webhook/server/metrics.h"

namespace rw::server {

class PolicyReload {
 public:
  // `file` empty: the embedded default is in force and nothing is ever reloaded. Records what
  // the file holds now. Everything passed in outlives this.
  PolicyReload(Env& env, std::string file, Front& front, Metrics& metrics);

  // Reloads when the file holds something else than at the previous look (its content, or
  // whether it can be read). Returns whether it tried.
  bool Poll();
  // Reads the file and puts its policy in force, or keeps the one in force, counting and
  // logging either way. `trigger` is logged ("file changed", "SIGHUP").
  void Reload(std::string_view trigger);

 private:
  Env& env_;
  const std::string file_;
  Front& front_;
  Metrics& metrics_;
  std::optional<FileWatch> watch_;
};

}  // namespace rw::server
