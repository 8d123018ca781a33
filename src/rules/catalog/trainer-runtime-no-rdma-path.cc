// trainer-runtime-no-rdma-path: a multi-node TrainJob in a hostNetwork namespace runs on a runtime
// without hostNetwork. Its reference and example: ../docs/trainer-runtime-no-rdma-path.yaml.
#include "../trainer_templates.h"

namespace rw::rules {
namespace {

using policy::Path;

// In a hostNetwork namespace the webhook would put the pods on the host network, but a
// TrainJob cannot say hostNetwork or dnsPolicy (no override or patch of any Trainer version
// has them): only the runtime can, and a multi-node job on a runtime without them trains over
// the pod network, without the host's RDMA NICs.
void TrainerRuntimeNoRdmaPath(const Context& ctx, const Rule& rule, Findings& out) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || facts->num_nodes < 2 || ctx.ns.mode != policy::Mode::kHostNetwork) return;
  const auto* f = TrainerNodeTemplate(ctx);
  if (f == nullptr || f->gpu.empty() || f->t->host_network) return;
  if (f->path == Path::kPlugin || f->path == Path::kSriov || f->path == Path::kShared) return;
  rule.Report(out, "/spec/runtimeRef",
              "this namespace runs RDMA on the host network, but " + facts->runtime.Describe() +
                  " does not set hostNetwork for its trainer pods and a TrainJob cannot (Trainer's "
                  "overrides and runtimePatches have no hostNetwork or dnsPolicy): the " +
                  std::to_string(facts->num_nodes) +
                  " nodes of this job talk over the pod network, without RDMA",
              "use a runtime whose trainer pods set `hostNetwork: true` and `dnsPolicy: "
              "ClusterFirstWithHostNet`, or change " +
                  facts->runtime.Describe());
}

}  // namespace

namespace catalog {
extern const Rule trainer_runtime_no_rdma_path;
const Rule trainer_runtime_no_rdma_path = {.id = "trainer-runtime-no-rdma-path",
                                           .severity = Severity::kWarning,
                                           .check = TrainerRuntimeNoRdmaPath,
                                           .position = 280};
}  // namespace catalog

}  // namespace rw::rules
