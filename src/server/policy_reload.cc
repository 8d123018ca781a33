#include "rdma_webhook/server/policy_reload.h"

#include <utility>
#include <vector>

#include "rdma_webhook/server/policy_loader.h"

namespace rw::server {

PolicyReload::PolicyReload(Env& env, std::string file, Front& front, Metrics& metrics)
    : env_(env), file_(std::move(file)), front_(front), metrics_(metrics) {
  if (!file_.empty()) watch_.emplace(std::vector<std::string>{file_}, env_);
}

bool PolicyReload::Poll() {
  if (!watch_ || !watch_->Changed()) return false;
  Reload("file changed");
  return true;
}

void PolicyReload::Reload(std::string_view trigger) {
  if (file_.empty()) return;
  PolicyLoad load = LoadPolicy(env_, file_, FileKinds::kRegularOnly);
  if (load.error) {
    metrics_.CountReload("policy", false);
    env_.Log(log::Level::kError, "policy reload failed; the previous policy stays in force",
             {{"file", file_},
              {"trigger", trigger},
              {"error", load.error->detail},
              {"policyHash", front_.policy()->hash}});
    return;
  }
  const std::string previous = front_.policy()->hash;
  const std::string hash = load.policy->hash;
  front_.UsePolicy(std::move(load.policy));
  metrics_.CountReload("policy", true);
  env_.Log(log::Level::kInfo, "policy reloaded",
           {{"file", file_},
            {"trigger", trigger},
            {"policyHash", hash},
            {"previousPolicyHash", previous}});
}

}  // namespace rw::server
