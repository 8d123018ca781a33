// mode: hostNetwork. The pod joins the node's network and NCCL uses the host's RDMA NICs.
#include "../context.h"
#include "mode.h"

namespace rw::rules::modes {
namespace {

// The netdevs of the host are every hostNetwork pod's: the path alone says nothing of RDMA.
bool OnHostNetwork(const workload::PodTemplate& t, const policy::Policy&,
                   const policy::NamespacePolicy&, const TemplateNetworks&) {
  return t.host_network;
}
constexpr Sign kSigns[] = {{40, OnHostNetwork}};

// A sign of RDMA on the host network (HostNetworkRdmaSign, or a multi-node training kind).
bool RdmaShown(const TemplateFacts& f) { return !f.rdma_sign.empty(); }

std::vector<EnvWant> Env(const policy::NamespacePolicy& ns) {
  std::vector<EnvWant> env;
  if (!ns.host_network.socket_ifname.empty())
    env.push_back({"NCCL_SOCKET_IFNAME", ns.host_network.socket_ifname});
  env.push_back({"NCCL_IB_DISABLE", "0"});
  return env;
}

void Plan(Draft& d) {
  const auto& t = d.t;
  const std::string spec = t.SpecPointer();
  d.host_network = true;
  if (!t.host_network) d.plan.edits.push_back({Edit::Kind::kSet, spec + "/hostNetwork", true, {}});
  // ClusterFirst resolves nothing of the cluster from the host network; ClusterFirstWithHostNet
  // and None are what the user may keep. Default is the one other value override replaces.
  const auto& dns = t.dns_policy;
  if (!dns || *dns == "ClusterFirst") {
    d.plan.edits.push_back({Edit::Kind::kSet, spec + "/dnsPolicy", "ClusterFirstWithHostNet", {}});
  } else if (*dns != "ClusterFirstWithHostNet" && *dns != "None") {
    if (*dns == "Default" && d.ns.on_conflict == policy::OnConflict::kOverride)
      d.plan.edits.push_back(
          {Edit::Kind::kSet,
           spec + "/dnsPolicy",
           "ClusterFirstWithHostNet",
           {Override(spec + "/dnsPolicy", "replaced dnsPolicy Default with ClusterFirstWithHostNet",
                     "set dnsPolicy: ClusterFirstWithHostNet")}});
    else  // reported under reject; under override another value is kept
      d.Conflict(spec + "/dnsPolicy",
                 "dnsPolicy is '" + *dns +
                     "' but the namespace policy runs pods on the host network "
                     "with dnsPolicy ClusterFirstWithHostNet",
                 false);
  }
  if (d.nets.value != nullptr && !d.nets.value->empty())
    d.Conflict(d.nets.pointer,
               "the pod attaches networks with " + d.nets.key +
                   ", but the namespace policy runs it on the host network, "
                   "where Multus attaches nothing",
               true);
  // A template that already claims an RDMA device of the policy's lists (another shared pool,
  // say rdma/hca_shared_devices_b) has the device cgroup entry NCCL needs: a claim of the
  // policy's pool on top would hold two, or leave the pod Pending where nodes offer only its own.
  const bool has_device =
      t.TotalClaimWhere([&](const std::string& r) { return d.policy.IsRdmaDeviceResource(r); }) > 0;
  if (!d.ns.host_network.device_resource.empty() && !has_device)
    d.claims[d.ns.host_network.device_resource] = 1;
}

}  // namespace

extern const Unit host_network;
constexpr Unit host_network = {.mode = policy::Mode::kHostNetwork,
                               .rdma = true,
                               .rdma_shown = RdmaShown,
                               .signs = kSigns,
                               .env = Env,
                               .plan = Plan};

}  // namespace rw::rules::modes
