#include <algorithm>
#include <iterator>

#include "patch_builder.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/mode_plan.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

struct PlannedTemplate {
  const workload::PodTemplate* t = nullptr;
  rules::TemplateNetworks nets;
  rules::TemplatePlan plan;
  policy::Path path;  // as written
};

// The plan decided everything; applying it only records its edits, in order, with the
// warnings of the user values they replace.
void Apply(rules::TemplatePlan& plan, PatchBuilder& patch, std::vector<rules::Finding>& overrides) {
  for (auto& edit : plan.edits) {
    if (edit.kind == rules::Edit::Kind::kAppend)
      patch.Append(edit.pointer, std::move(edit.value));
    else
      patch.Set(edit.pointer, std::move(edit.value));
    std::move(edit.overrides.begin(), edit.overrides.end(), std::back_inserter(overrides));
  }
}

}  // namespace

Mutation Mutate(const json& object, const policy::Policy& policy, std::string_view default_ns) {
  return Mutate(workload::Workload::Read(object, policy, default_ns), object, policy);
}

Mutation Mutate(const workload::Workload& w, json object, const policy::Policy& policy) {
  const auto& ns = policy.ForNamespace(w.ns);
  Mutation m;
  std::vector<PlannedTemplate> planned;
  for (const auto& t : w.templates) {
    PlannedTemplate p{&t, rules::ReadNetworks(t, ns, w.ns), {}, policy::Path::kNone};
    p.path = rules::TemplatePath(t, policy, ns, p.nets);
    planned.push_back(std::move(p));
  }
  const auto workload_path = [&](bool mutated) {
    std::vector<policy::Path> paths;
    for (const auto& p : planned)
      paths.push_back(mutated && p.plan.applies ? policy::ModePath(ns.mode) : p.path);
    return rules::WorkloadPath(paths);
  };
  if (rules::OptedOut(w, ns)) {
    m.skipped = true;
    m.result = std::move(object);
    m.path = workload_path(false);
    return m;
  }
  PatchBuilder patch(std::move(object));
  bool mutated = false;
  if (ns.mode != policy::Mode::kOff) {
    for (auto& p : planned) p.plan = rules::PlanTemplate(*p.t, policy, ns, w.ns, p.nets, p.path);
    // No self-denial: a conflict left for validation leaves the whole workload as written, so
    // that /validate denies it for what the user wrote, never for a field the webhook wrote.
    // So does an annotation the plan must edit but Multus cannot read (TemplatePlan::Blocks).
    const bool conflict =
        std::any_of(planned.begin(), planned.end(), [](const auto& p) { return p.plan.Blocks(); });
    // A GPU template that already chose another path (or a plugin) keeps it, and so does the
    // rest of its workload: moving its siblings onto the mode's path would split one job over
    // two paths (mixed-paths). allowedPaths decides whether the workload may keep its path.
    const bool other_path = std::any_of(planned.begin(), planned.end(), [](const auto& p) {
      return p.t->HasGpu() && !p.plan.applies;
    });
    mutated = !conflict && !other_path;
    if (mutated)
      for (auto& p : planned) Apply(p.plan, patch, m.overrides);
  }
  m.path = workload_path(mutated);
  m.patch = std::move(patch.operations());
  m.result = patch.TakeDocument();
  return m;
}

}  // namespace rw::mutate
