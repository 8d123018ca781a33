// The one pass over a workload that Diagnose and Mutate share: networks, path and plan per
// template, and whether the webhook may edit the workload.
#include <algorithm>
#include <memory>

#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {

Assessment Assess(const workload::Workload& w, const policy::Policy& policy,
                  const catalogue::Catalogue& catalogue) {
  Assessment a;
  a.w = &w;
  a.policy = &policy;
  a.catalogue = &catalogue;
  a.ns = &policy.ForNamespace(w.ns);
  const auto& ns = *a.ns;
  a.opted_out = OptedOut(w, ns);
  std::vector<TemplateDra> dra;
  dra.reserve(w.templates.size());
  bool gpus_from_claims = false;
  const std::string_view policy_nics =
      ns.mode == policy::Mode::kDra ? std::string_view(ns.dra.claim_template) : std::string_view();
  for (const auto& t : w.templates) {
    dra.push_back(ReadTemplateDra(t, policy, catalogue, w.ns, policy_nics));
    for (const std::size_t i : dra.back().gpu_containers)
      gpus_from_claims = gpus_from_claims || !t.containers[i].gpu;
  }
  if (gpus_from_claims) {
    // A container given GPUs by a claim is a GPU container for every rule and plan: a copy
    // says so, made only then (a workload without such claims is read as it is).
    auto copy = std::make_shared<workload::Workload>(w);
    for (std::size_t i = 0; i < copy->templates.size(); ++i)
      for (const std::size_t c : dra[i].gpu_containers) copy->templates[i].containers[c].gpu = true;
    a.adjusted = std::move(copy);
    a.w = a.adjusted.get();
  }
  a.templates.reserve(w.templates.size());
  for (std::size_t i = 0; i < a.w->templates.size(); ++i) {
    const auto& t = a.w->templates[i];
    TemplateAssessment ta;
    ta.t = &t;
    ta.networks = ReadNetworks(t, ns, w.ns);
    ta.networks.dra = std::move(dra[i]);
    // The gIB plugin beside a DRA claim of RDMA NICs (GKE's DRANET) runs over the claim's NICs:
    // the claim, not the platform, brings them, and the template is on the dra path.
    if (ta.networks.platform_from_plugin && !ta.networks.dra.nic.empty())
      ta.networks.platform.clear();
    std::vector<std::string> claimed;
    for (const auto& c : t.containers)
      for (auto& r : c.ResourceNames()) claimed.push_back(std::move(r));
    ta.networks.nads = ReadTemplateNads(ta.networks.all, claimed, policy, ns, catalogue, w.ns);
    ta.path = TemplatePath(t, policy, ns, ta.networks);
    // An opted-out workload is neither edited nor judged: its plan would be read by nobody.
    if (!a.opted_out) ta.plan = PlanTemplate(t, policy, ns, w.ns, ta.networks, ta.path);
    a.templates.push_back(std::move(ta));
  }
  // Only a kind's row (built in or the policy's `kinds:`) says its controller builds its pods
  // from these templates as written; templates found by shape are judged, never edited.
  if (!a.opted_out && ns.mode != policy::Mode::kOff && w.kind_row != nullptr) {
    const auto& ts = a.templates;
    const bool blocked =
        std::any_of(ts.begin(), ts.end(), [](const auto& ta) { return ta.plan.Blocks(); });
    // A GPU template that already chose another path (or a plugin) keeps it, and so does the
    // rest of its workload: moving its siblings onto the mode's path would split one job over
    // two paths (mixed-paths). allowedPaths decides whether the workload may keep its path.
    const bool other_path = std::any_of(
        ts.begin(), ts.end(), [](const auto& ta) { return ta.t->HasGpu() && !ta.plan.applies; });
    a.mutates = !blocked && !other_path;
    a.waits_on_claims = std::any_of(ts.begin(), ts.end(), [](const auto& ta) {
      return ta.t->HasGpu() && !ta.plan.applies && ta.networks.dra.unknown;
    });
  }
  std::vector<policy::Path> paths;
  paths.reserve(a.templates.size());
  for (const auto& ta : a.templates)
    paths.push_back(a.mutates && ta.plan.applies ? policy::ModePath(ns.mode) : ta.path);
  a.path_after = WorkloadPath(paths);
  return a;
}

}  // namespace rw::rules
