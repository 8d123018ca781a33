// mixed-paths: the templates of one workload take different network paths.
// Its reference and example: ../docs/mixed-paths.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

using policy::Path;

void MixedPaths(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.path != Path::kMixed) return;
  std::string list;
  std::string pointer;
  Path first = Path::kNone;
  std::string assumed;  // a template's path that rests on a NAD not saying RDMA
  for (const auto& f : ctx.templates) {
    if (f.path == Path::kNone || f.path == Path::kUnknown) continue;
    if (assumed.empty()) assumed = f.rdma_assumed;
    list +=
        (list.empty() ? "" : ", ") + f.t->pointer + " → " + std::string(policy::ToString(f.path));
    if (first == Path::kNone)
      first = f.path;
    else if (pointer.empty() && f.path != first)
      pointer = f.t->SpecPointer();
  }
  rule.ReportOnRdma(
      assumed, out, pointer,
      "the GPU templates of this workload take different access paths (" + list +
          "): ranks on different paths cannot form one NCCL ring over RDMA, so the job "
          "hangs in rendezvous or falls back to TCP.",
      "give every GPU template the same path (same hostNetwork, resources and network "
      "annotation)");
}

}  // namespace

namespace catalog {
extern const Rule mixed_paths;
const Rule mixed_paths = {
    .id = "mixed-paths", .severity = Severity::kError, .check = MixedPaths, .position = 90};
}  // namespace catalog

}  // namespace rw::rules
