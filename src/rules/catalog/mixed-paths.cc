// mixed-paths: the templates of one workload take different network paths.
// Its reference and example: ../docs/mixed-paths.yaml.
#include <algorithm>

#include "../context.h"

namespace rw::rules {
namespace {

using policy::Path;

void MixedPaths(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.path != Path::kMixed) return;
  std::string list;
  std::string pointer;
  Path first = Path::kNone;
  for (const auto& f : ctx.templates) {
    if (f.path == Path::kNone || f.path == Path::kUnknown) continue;
    list +=
        (list.empty() ? "" : ", ") + f.t->pointer + " → " + std::string(policy::ToString(f.path));
    if (first == Path::kNone)
      first = f.path;
    else if (pointer.empty() && f.path != first)
      pointer = f.t->SpecPointer();
  }
  // privileged is read from a privileged container and NCCL's variables, not from a device the
  // cluster grants: a split that rests on it is said, never denied.
  const bool read_from_privileged =
      std::any_of(ctx.templates.begin(), ctx.templates.end(),
                  [](const TemplateFacts& f) { return f.path == Path::kPrivileged; });
  rule.ReportAs(read_from_privileged ? Severity::kWarning : rule.severity, out, pointer,
                "the GPU templates of this workload take different access paths (" + list +
                    "): ranks on different paths cannot form one NCCL ring over RDMA, so the "
                    "job hangs in rendezvous or falls back to TCP.",
                "give every GPU template the same path (same hostNetwork, resources and "
                "network annotation)");
}

}  // namespace

namespace catalog {
extern const Rule mixed_paths;
const Rule mixed_paths = {
    .id = "mixed-paths", .severity = Severity::kError, .check = MixedPaths, .position = 90};
}  // namespace catalog

}  // namespace rw::rules
