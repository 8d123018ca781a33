// legacy-network-key: the pod uses the network annotation key current Multus ignores.
// Its reference and example: ../docs/legacy-network-key.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void LegacyNetworkKey(const Context& ctx, const Rule& rule, Findings& out) {
  static constexpr std::string_view kLegacy = "kubernetes.v1.cni.cncf.io/networks";
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || f.t->Annotation(kLegacy) == nullptr) continue;
    rule.Report(out,
                f.t->MetadataPointer() + "/annotations/" + workload::EscapePointerToken(kLegacy),
                "the pod template uses the annotation kubernetes.v1.cni.cncf.io/networks, which "
                "only Multus v2 read; current Multus ignores it, so no network is attached and "
                "no VF is plugged in.",
                "rename the key to k8s.v1.cni.cncf.io/networks (interfaceRequest becomes "
                "`<net>@<interface>` or \"interface\" in the JSON form)");
  }
}

}  // namespace

namespace catalog {
extern const Rule legacy_network_key;
const Rule legacy_network_key = {.id = "legacy-network-key",
                                 .severity = Severity::kError,
                                 .check = LegacyNetworkKey,
                                 .position = 40};
}  // namespace catalog

}  // namespace rw::rules
