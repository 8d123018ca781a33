// path-not-allowed: the namespace does not allow the workload's path.
// Its reference and example: ../docs/path-not-allowed.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

using policy::Path;

void PathNotAllowed(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.path == Path::kNone || ctx.path == Path::kUnknown || ctx.path == Path::kMixed ||
      ctx.path == Path::kPlugin)
    return;
  if (ctx.ns.Allows(ctx.path)) return;
  std::string allowed;
  for (Path p : ctx.ns.allowed_paths)
    allowed += (allowed.empty() ? "" : ", ") + std::string(policy::ToString(p));
  std::string pointer;
  // The path rests on a guess when every template on it is RDMA only by an assumed NAD.
  std::string assumed;
  bool stated = false;
  for (const auto& f : ctx.templates) {
    if (f.path != ctx.path) continue;
    if (pointer.empty()) pointer = f.t->SpecPointer();
    if (f.rdma_assumed.empty()) stated = true;
    if (assumed.empty()) assumed = f.rdma_assumed;
  }
  rule.ReportOnRdma(stated ? std::string() : assumed, out, pointer,
                    "the workload takes the " + std::string(policy::ToString(ctx.path)) +
                        " path, but namespace '" + ctx.w.ns + "' allows only " + allowed +
                        ": the cluster is not set up for that path here.",
                    "remove the fields that select " + std::string(policy::ToString(ctx.path)) +
                        " and let the webhook apply the namespace's mode (" +
                        std::string(policy::ToString(ctx.ns.mode)) + ")");
}

}  // namespace

namespace catalog {
extern const Rule path_not_allowed;
const Rule path_not_allowed = {.id = "path-not-allowed",
                               .severity = Severity::kError,
                               .check = PathNotAllowed,
                               .position = 100};
}  // namespace catalog

}  // namespace rw::rules
