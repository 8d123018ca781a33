// gang-incomplete: the Volcano gang is smaller than the job.
// Its reference and example: ../docs/gang-incomplete.yaml.
#include <algorithm>

#include "../context.h"

namespace rw::rules {
namespace {

long long ReplicaSum(const nlohmann::json& specs, std::string_view field_name) {
  long long total = 0;
  auto add = [&](const nlohmann::json& spec) {
    if (!spec.is_object()) return;
    auto it = spec.find(std::string(field_name));
    total += (it != spec.end() && it->is_number_integer()) ? it->get<long long>() : 1;
  };
  if (specs.is_array())
    for (const auto& s : specs) add(s);
  if (specs.is_object())
    for (const auto& s : specs) add(s);
  return total;
}

void GangIncomplete(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.w.object == nullptr || ctx.w.kind_row == nullptr) return;
  if (std::none_of(ctx.templates.begin(), ctx.templates.end(),
                   [](const TemplateFacts& f) { return !f.gpu.empty(); }))
    return;
  const auto& obj = *ctx.w.object;
  const auto& group = ctx.w.kind_row->group;
  const nlohmann::json* min = nullptr;
  long long total = 0;
  std::string pointer;
  auto at = [&](const char* ptr) -> const nlohmann::json* {
    const auto p = nlohmann::json::json_pointer(ptr);
    return obj.contains(p) ? &obj.at(p) : nullptr;
  };
  if (group == "batch.volcano.sh" && ctx.w.kind == "Job") {
    min = at("/spec/minAvailable");
    pointer = "/spec/minAvailable";
    if (const auto* tasks = at("/spec/tasks")) total = ReplicaSum(*tasks, "replicas");
  } else if (group == "kubeflow.org") {
    min = at("/spec/runPolicy/schedulingPolicy/minAvailable");
    pointer = "/spec/runPolicy/schedulingPolicy/minAvailable";
    for (const auto& pattern : ctx.w.kind_row->templates) {
      // /spec/<x>ReplicaSpecs/*/template: the replica specs map is two levels up.
      const std::string specs = pattern.substr(0, pattern.find("/*"));
      if (const auto* s = at(specs.c_str())) total += ReplicaSum(*s, "replicas");
    }
  }
  // Volcano's webhook turns an absent or 0 minAvailable into the sum of the tasks' own
  // minAvailable (each defaulting to its replicas): only a positive value below the total is
  // the user's choice of a partial gang.
  if (min == nullptr || !min->is_number_integer() || min->get<long long>() <= 0 ||
      min->get<long long>() >= total)
    return;
  rule.Report(out, pointer,
              "minAvailable is " + std::to_string(min->get<long long>()) + " but the job has " +
                  std::to_string(total) +
                  " replicas: the gang scheduler may start a partial job whose ranks wait forever "
                  "for the missing ones while holding GPUs.",
              "set minAvailable to the total replica count (" + std::to_string(total) + ")");
}

}  // namespace

namespace catalog {
extern const Rule gang_incomplete;
const Rule gang_incomplete = {.id = "gang-incomplete",
                              .severity = Severity::kWarning,
                              .check = GangIncomplete,
                              .position = 220};
}  // namespace catalog

}  // namespace rw::rules
