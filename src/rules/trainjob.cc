#include "rdma_webhook/rules/trainjob.h"

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

}  // namespace rw::rules
