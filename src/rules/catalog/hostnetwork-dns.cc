// hostnetwork-dns: a hostNetwork pod resolves names with the node's DNS.
// Its reference and example: ../docs/hostnetwork-dns.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

// An error where the template uses RDMA (NCCL bootstrap needs the rendezvous Service); a
// warning for a GPU pod that merely runs on the host network.
void HostnetworkDns(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || !f.t->host_network) continue;
    // Left out (or, for a controller that forces it, whatever it says), the dnsPolicy is what
    // the kind's controller sets, else the API server's ClusterFirst.
    const auto dns = DnsPolicyGiven(*f.t, ctx.w.kind_row).policy;
    if (dns && *dns != "ClusterFirst" && *dns != "Default") continue;
    rule.ReportAs(
        f.rdma ? Severity::kError : Severity::kWarning, out, f.t->SpecPointer() + "/dnsPolicy",
        "hostNetwork: true with dnsPolicy " + dns.value_or("unset (ClusterFirst)") +
            ": a host-network pod then resolves with the node's resolv.conf, so cluster "
            "Service names (the rendezvous address) do not resolve and NCCL bootstrap hangs.",
        "set dnsPolicy: ClusterFirstWithHostNet");
  }
}

}  // namespace

namespace catalog {
extern const Rule hostnetwork_dns;
const Rule hostnetwork_dns = {
    .id = "hostnetwork-dns", .severity = Severity::kError, .check = HostnetworkDns, .position = 10};
}  // namespace catalog

}  // namespace rw::rules
