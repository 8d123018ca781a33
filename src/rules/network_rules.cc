// Rules about how the NIC reaches the pod: the claim, the plug, the host network and DNS.
#include "rule_functions.h"

namespace rw::rules {

// An error where the template uses RDMA (NCCL bootstrap needs the rendezvous Service); a
// warning for a GPU pod that merely runs on the host network.
void HostnetworkDns(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || !f.t->host_network) continue;
    // Left out, the dnsPolicy is what the kind's controller sets (Volcano's webhook:
    // ClusterFirstWithHostNet), else the API server's ClusterFirst.
    auto dns = f.t->dns_policy;
    if (!dns && ctx.w.kind_row != nullptr && !ctx.w.kind_row->host_network_dns_policy.empty())
      dns = ctx.w.kind_row->host_network_dns_policy;
    if (dns && *dns != "ClusterFirst" && *dns != "Default") continue;
    rule.ReportAs(
        f.rdma ? Severity::kError : Severity::kWarning, out, f.t->SpecPointer() + "/dnsPolicy",
        "hostNetwork: true with dnsPolicy " + dns.value_or("unset (ClusterFirst)") +
            ": a host-network pod then resolves with the node's resolv.conf, so cluster "
            "Service names (the rendezvous address) do not resolve and NCCL bootstrap hangs.",
        "set dnsPolicy: ClusterFirstWithHostNet");
  }
}

void IfnameNotAttached(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    // The platform's NICs (GKE multi-networking) are not in a Multus annotation.
    if (f.t->host_network || !f.networks.platform.empty()) continue;
    for (const auto* c : f.gpu) {
      const auto* v = c->FindEnv("NCCL_SOCKET_IFNAME");
      if (v == nullptr || !v->value || v->value->empty() || v->value->front() == '^') continue;
      if (!nccl::SocketIfname::Parse(*v->value).SelectedAmong(f.interfaces).empty()) continue;
      std::string have;
      for (const auto& i : f.interfaces) have += (have.empty() ? "" : ", ") + i;
      rule.Report(out, EnvPointer(*c, *v),
                  "container '" + c->name + "' sets NCCL_SOCKET_IFNAME=" + *v->value +
                      ", which matches none of the pod's interfaces (" + have +
                      "): NCCL finds no socket interface and fails to bootstrap.",
                  "attach the network that creates that interface in the network annotation, or "
                  "name an interface the pod has (eth0, or the attached one)");
    }
  }
}

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

// Only the absence of any attachment is certain: a network the policy does not know may be the
// one that plugs the VF in. RoCE needs the VF's netdev (its IP makes the GID): an error there;
// on InfiniBand (or an unknown fabric) the verbs reach the VF without it: a warning.
namespace {

// Cloud CNIs that attach a pod's RDMA NICs through their own annotation, in a format of their
// own: its presence is an attachment (the rule only needs to know that one exists).
constexpr std::string_view kVendorAttachmentKeys[] = {"k8s.volcengine.com/pod-networks"};

bool VendorAttachment(const workload::PodTemplate& t) {
  for (auto key : kVendorAttachmentKeys)
    if (const auto* v = t.Annotation(key); v != nullptr && !v->empty()) return true;
  return false;
}

}  // namespace

void VfWithoutNetwork(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || f.t->host_network || f.vf_claimed == 0 || !f.networks.all.empty() ||
        !f.networks.platform.empty() || VendorAttachment(*f.t))
      continue;
    std::string pointer = f.t->SpecPointer();
    std::string resource;
    for (const auto& c : f.t->containers)
      for (const auto& r : c.ResourceNames())
        if (resource.empty() && ctx.policy.IsVfResource(r) && c.Claim(r) > 0) {
          resource = r;
          pointer = c.pointer + "/resources/" + (c.limits.count(r) ? "limits/" : "requests/") +
                    workload::EscapePointerToken(r);
        }
    rule.ReportAs(
        ctx.ns.nccl.fabric == policy::Fabric::kRoce ? Severity::kError : Severity::kWarning, out,
        pointer,
        "the pod claims " + resource +
            " but no network annotation plugs the VF in: the device plugin reserves the "
            "VF and Multus never moves it into the pod, so NCCL sees no RDMA device.",
        "add `" + ctx.ns.sriov.annotation_key +
            ": <rdma-network>@eth1` to the pod "
            "template's annotations (one attachment per VF)");
  }
}

void NetworkWithoutVf(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || f.t->host_network || !f.networks.platform.empty()) continue;
    // The network-resources-injector adds the claims to the pods a template makes; a bare Pod
    // has already been through it when it is validated.
    if (ctx.policy.network_resources_injector && !f.t->pointer.empty()) continue;
    if (static_cast<long long>(f.rdma_attachments) <= f.vf_claimed) continue;
    const std::string res =
        ctx.policy.vf_resources.empty() ? "rdma/vf" : ctx.policy.vf_resources.front();
    rule.Report(
        out, f.networks.pointer,
        "the annotation attaches " + std::to_string(f.rdma_attachments) +
            " RDMA network(s) but the pod claims " + std::to_string(f.vf_claimed) +
            " VF(s): the SR-IOV CNI has no allocated VF to move in and pod sandbox "
            "creation fails.",
        "claim one " + res + " per RDMA attachment in the GPU container's resources.limits");
  }
}

void IbDisabledWithRdma(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.vf_claimed + f.shared_claimed == 0 && f.rdma_attachments == 0) continue;
    for (const auto* c : f.gpu) {
      if (!DisablesIb(*c)) continue;
      const auto* v = c->FindEnv("NCCL_IB_DISABLE");
      rule.Report(out, EnvPointer(*c, *v),
                  "container '" + c->name + "' sets NCCL_IB_DISABLE=" + *v->value +
                      " while the pod claims RDMA devices or attaches an RDMA network: NCCL "
                      "falls back to TCP sockets and the RDMA NIC sits idle.",
                  "set NCCL_IB_DISABLE=0 (or remove it), or drop the RDMA resources and network "
                  "if TCP is intended");
    }
  }
}

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

}  // namespace rw::rules
