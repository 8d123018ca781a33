// hostnetwork-with-network-annotation: a hostNetwork pod asks Multus for networks.
// Its reference and example: ../docs/hostnetwork-with-network-annotation.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void HostnetworkWithNetworkAnnotation(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || !f.t->host_network) continue;
    for (const std::string& key :
         {ctx.ns.sriov.annotation_key, std::string("k8s.v1.cni.cncf.io/networks")}) {
      const std::string* v = f.t->Annotation(key);
      if (v == nullptr || v->empty()) continue;
      rule.Report(out, f.t->MetadataPointer() + "/annotations/" + workload::EscapePointerToken(key),
                  "hostNetwork: true together with the network annotation " + key +
                      ": Multus does not act on host-network pods, so the attachment never "
                      "happens and claimed VFs stay unused.",
                  "choose one path: remove hostNetwork (SR-IOV) or remove the annotation (host "
                  "network)");
      break;
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule hostnetwork_with_network_annotation;
const Rule hostnetwork_with_network_annotation = {.id = "hostnetwork-with-network-annotation",
                                                  .severity = Severity::kError,
                                                  .check = HostnetworkWithNetworkAnnotation,
                                                  .position = 80};
}  // namespace catalog

}  // namespace rw::rules
