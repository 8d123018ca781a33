// invalid-network-annotation: the network annotation cannot be parsed as Multus parses it.
// Its reference and example: ../docs/invalid-network-annotation.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void InvalidNetworkAnnotation(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty()) continue;
    for (const auto& e : f.networks.errors) {
      rule.Report(out,
                  f.t->MetadataPointer() + "/annotations/" + workload::EscapePointerToken(e.key),
                  "the network annotation cannot be read (" + e.key + ": " + e.problem +
                      "): Multus rejects it and the pod never starts.",
                  "write `[namespace/]name[@interface]` items separated by commas, or a JSON list "
                  "of {\"name\", \"namespace\", \"interface\"} objects");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule invalid_network_annotation;
const Rule invalid_network_annotation = {.id = "invalid-network-annotation",
                                         .severity = Severity::kError,
                                         .check = InvalidNetworkAnnotation,
                                         .position = 140};
}  // namespace catalog

}  // namespace rw::rules
