#include "admission_log.h"

#include <nlohmann/json.hpp>

#include "rdma_webhook/server/log.h"

namespace rw::server {

void RecordAdmission(admission::Endpoint endpoint, const admission::Outcome& outcome,
                     Metrics& metrics) {
  using log::Level;
  const std::string_view name = admission::ToString(endpoint);
  if (outcome.decided) {
    metrics.CountDecision(name, outcome.decision.path, outcome.allowed);
    for (const auto& f : outcome.decision.findings) {
      metrics.CountFinding(f.rule, rules::ToString(f.severity));
    }
  }
  nlohmann::json fields = {{"endpoint", name}, {"uid", outcome.uid}};
  auto describe = [&] {
    fields["operation"] = outcome.operation;
    fields["kind"] = outcome.kind;
    fields["namespace"] = outcome.ns;
    fields["name"] = outcome.name;
    fields["dryRun"] = outcome.dry_run;
    fields["path"] = outcome.decision.path;
  };
  if (outcome.http_status == 500) {
    fields["error"] = outcome.error;
    log::Event(Level::kError, "internal error; answered 500", fields);
  } else if (outcome.http_status != 200) {
    if (log::Enabled(Level::kDebug)) {
      fields["error"] = outcome.error;
      log::Event(Level::kDebug, "bad request", fields);
    }
  } else if (!outcome.allowed) {
    describe();
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& f : outcome.decision.findings) {
      if (f.severity == rules::Severity::kError) rules.push_back(f.rule);
    }
    fields["rules"] = rules;
    fields["message"] = outcome.decision.response.status.message;
    log::Event(Level::kInfo, "denied", fields);
  } else if (log::Enabled(Level::kDebug)) {
    describe();
    fields["patched"] = outcome.decision.response.patch.has_value();
    fields["warnings"] = outcome.decision.response.warnings;
    log::Event(Level::kDebug, "allowed", fields);
  }
}

}  // namespace rw::server
