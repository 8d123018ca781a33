#include "rdma_webhook/rules/trainjob.h"

#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/verdict.h"

namespace rw::rules {
namespace {

// Pointers of the effective JobSet's pod templates; a TrainJob has no /spec/replicatedJobs, so
// every other pointer a rule reports (/spec/trainer/..., /metadata/...) is the TrainJob's own.
bool IsEffective(std::string_view pointer) { return pointer.rfind("/spec/replicatedJobs", 0) == 0; }

}  // namespace

void PointIntoTrainJob(Diagnosis& d, const workload::TrainJobTemplates& t,
                       std::string_view source) {
  const auto& runtime = t.facts.runtime;
  d.evidence.insert(d.evidence.begin(),
                    "runtime " + runtime.Describe() + " (" + std::string(source) + ")");
  for (auto& f : d.findings) {
    if (!IsEffective(f.pointer)) continue;
    const workload::Origin o = t.OriginOf(f.pointer);
    if (o.document == workload::Origin::kTrainJob) {
      f.pointer = o.pointer.empty() ? "/spec" : o.pointer;
    } else {
      f.message += " (written in " + runtime.Describe() + " at " + o.pointer + ")";
      f.pointer = "/spec/runtimeRef";
    }
  }
}

Diagnosis RuntimeNotFound(const workload::RuntimeRef& ref, std::string_view why) {
  Diagnosis d;
  d.path = policy::Path::kUnknown;
  d.evidence.push_back("runtime " + ref.Describe() + " not found (" + std::string(why) +
                       "): the pods Trainer builds from it cannot be judged");
  return d;
}

TrainJobRuntime FindRuntime(const workload::RuntimeRef& ref,
                            const catalogue::Catalogue& catalogue) {
  TrainJobRuntime out;
  if (!ref.IsTrainerRuntime()) {
    out.why_not = "runtimeRef names " + ref.group + " " + ref.kind +
                  ", which is not a Kubeflow Trainer runtime";
    return out;
  }
  if (const auto* e = catalogue.FindEntry(workload::kTrainerGroup, ref.kind, ref.ns, ref.name)) {
    out.object = &e->object;
    out.source = std::string(catalogue::ToString(e->source));
    return out;
  }
  out.why_not = catalogue.Knows(workload::kTrainerGroup, ref.kind, ref.ns)
                    ? "the cluster has no " + ref.kind + " of that name" +
                          (ref.ns.empty() ? "" : " in namespace " + ref.ns)
                    : "not among the inputs: give the runtime's manifest too, or read the "
                      "cluster (--cluster)";
  return out;
}

Diagnosis DiagnoseTrainJob(const nlohmann::json& trainjob, const policy::Policy& policy,
                           std::string_view default_ns, const catalogue::Catalogue& catalogue) {
  const auto ref = workload::ReadRuntimeRef(trainjob, default_ns);
  const auto runtime = FindRuntime(ref, catalogue);
  if (runtime.object == nullptr) return RuntimeNotFound(ref, runtime.why_not);
  const auto t = workload::EffectiveTemplates(trainjob, *runtime.object, ref,
                                              workload::ResourcesPerNode::kMerge);
  const auto w = workload::ReadTrainJob(t, policy, default_ns);
  Diagnosis d = Diagnose(Assess(w, policy, catalogue));
  PointIntoTrainJob(d, t, runtime.source);
  return d;
}

bool TrainJobTemplatesUnchanged(const nlohmann::json& old_trainjob,
                                const nlohmann::json& new_trainjob, const policy::Policy& policy,
                                std::string_view default_ns,
                                const catalogue::Catalogue& catalogue) {
  const auto ref = workload::ReadRuntimeRef(new_trainjob, default_ns);
  const auto runtime = FindRuntime(ref, catalogue);
  if (runtime.object == nullptr) return false;
  const nlohmann::json::json_pointer trainer("/spec/trainer");
  if (old_trainjob.contains(trainer) != new_trainjob.contains(trainer) ||
      (new_trainjob.contains(trainer) && old_trainjob.at(trainer) != new_trainjob.at(trainer)))
    return false;
  const auto now = workload::EffectiveTemplates(new_trainjob, *runtime.object, ref,
                                                workload::ResourcesPerNode::kMerge);
  workload::TrainJobTemplates before;
  try {
    before = workload::EffectiveTemplates(old_trainjob, *runtime.object, ref,
                                          workload::ResourcesPerNode::kMerge);
  } catch (const workload::ManifestError&) {
    return false;
  }
  return PodTemplatesUnchanged(*before.jobset, *now.jobset,
                               workload::ReadTrainJob(now, policy, default_ns), policy);
}

}  // namespace rw::rules
