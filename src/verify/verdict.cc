#include "rdma_webhook/verify/verdict.h"

#include <algorithm>

namespace rw::verify {

std::string_view ToString(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFellBack:
      return "fell-back";
    case Outcome::kError:
      return "error";
    case Outcome::kHang:
      return "hang";
    case Outcome::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view ToString(Gdr g) {
  switch (g) {
    case Gdr::kOn:
      return "on";
    case Gdr::kOff:
      return "off";
    case Gdr::kPartial:
      return "partial";
    case Gdr::kNotApplicable:
      return "n/a";
    case Gdr::kUnknown:
      break;
  }
  return "unknown";
}

bool IsRdmaTransport(std::string_view inter_node) {
  return inter_node == "RoCE" || inter_node == "IB" || inter_node == "EFA" || inter_node == "gIB" ||
         inter_node == "MNNVL";
}

const std::vector<CauseInfo>& Causes() {
  static const std::vector<CauseInfo> kCauses = {
      {Cause::kNone, "none", "nothing wrong", "none"},
      {Cause::kNoRdmaDevice, "no-rdma-device", "no usable verbs or EFA device inside the process",
       "give the pod the device: an SR-IOV VF, a shared HCA or the EFA resource from the device "
       "plugin (or hostNetwork with the devices), and IPC_LOCK"},
      {Cause::kLibibverbsMissing, "libibverbs-missing",
       "the RDMA userspace (libibverbs and its provider) is not in the image",
       "install rdma-core (libibverbs1 and the provider, e.g. ibverbs-providers) in the image"},
      {Cause::kHcaFilter, "hca-filter", "NCCL_IB_HCA excludes every usable port",
       "set NCCL_IB_HCA to the HCA names the pod really has ('=' for exact names, '^' to "
       "exclude), or drop it when the NICs come from DRA or a device plugin"},
      {Cause::kIbDisabled, "ib-disabled", "Socket by configuration (NCCL_IB_DISABLE, NCCL_NET)",
       "remove NCCL_IB_DISABLE=1 / NCCL_NET=Socket when RDMA is intended"},
      {Cause::kPluginFailed, "plugin-failed",
       "a net plugin is present but incompatible or fails to initialise",
       "a plugin build that matches the NCCL release; for aws-ofi-nccl the matching "
       "libfabric/EFA installer; for GPUDirect-TCPXO the RxDM sidecar"},
      {Cause::kGidIndex, "gid-index", "the RoCE GID index is wrong or differs between pods",
       "unset NCCL_IB_GID_INDEX (NCCL 2.21+ picks the RoCE v2 IPv4 GID) or set it per pod from "
       "`rdma-webhook gids`"},
      {Cause::kFabricUnreachable, "fabric-unreachable",
       "the NICs cannot reach each other over the RDMA fabric",
       "routing between the GID subnets, rail alignment (NCCL_CROSS_NIC=0), PFC/ECN and MTU on "
       "the fabric"},
      {Cause::kVerbsResource, "verbs-resource", "a verbs allocation (QP, CQ, MR) failed",
       "memlock unlimited and IPC_LOCK in the pod; device permissions"},
      {Cause::kGdrUnavailable, "gdr-unavailable",
       "GPUDirect RDMA is off: data is staged through host memory",
       "load nvidia-peermem (and use NCCL 2.23+ to detect it) or DMA-BUF; check GPU/NIC "
       "placement and NCCL_NET_GDR_LEVEL"},
      {Cause::kShmTooSmall, "shm-too-small", "/dev/shm cannot hold NCCL's segments",
       "mount an emptyDir with medium: Memory at /dev/shm"},
      {Cause::kSocketInterface, "socket-interface",
       "no interface, or a wrong one (lo, a bridge), for bootstrap or Socket",
       "set NCCL_SOCKET_IFNAME to an interface that exists in the pod"},
      {Cause::kCudaError, "cuda-error", "a CUDA call failed inside NCCL",
       "depends on the call named in the line"},
      {Cause::kTimeout, "timeout",
       "the framework's watchdog gave up; the transport is not in the log",
       "rerun with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,NET"},
      {Cause::kK8sCni, "k8s-cni", "the pod sandbox cannot be created (Multus / SR-IOV CNI)",
       "request the VF resource that matches the network; VF GUIDs for InfiniBand"},
      {Cause::kK8sDevicePlugin, "k8s-device-plugin",
       "the RDMA device plugin or DRA driver offers no device to the pod",
       "device plugin selectors that match RDMA-capable ports; enough free devices"},
      {Cause::kNotApplicable, "not-applicable",
       "single-node job: no byte crosses the network, so no inter-node transport to judge", "none"},
      {Cause::kUnknown, "unknown", "the log does not show a cause",
       "collect every pod's log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,NET"},
  };
  return kCauses;
}

const CauseInfo& Describe(Cause c) {
  const auto& all = Causes();
  const auto it =
      std::find_if(all.begin(), all.end(), [c](const CauseInfo& i) { return i.cause == c; });
  return it == all.end() ? all.back() : *it;
}

std::string_view ToString(Cause c) { return Describe(c).id; }

nlohmann::json ToJson(const Verdict& v) {
  using nlohmann::json;
  auto opt = [](const std::optional<int>& i) { return i ? json(*i) : json(nullptr); };
  json proofs = json::array();
  for (const auto& p : v.proofs)
    proofs.push_back({{"source", p.source}, {"line", p.line}, {"text", p.text}});
  json secondary = json::array();
  for (const auto c : v.secondary) secondary.push_back(ToString(c));
  json processes = json::array();
  for (const auto& p : v.processes) {
    processes.push_back({{"host", p.host},
                         {"pid", p.pid},
                         {"node", p.node},
                         {"ranks", p.ranks},
                         {"cudaDevs", p.cuda_devs},
                         {"net", p.net},
                         {"channelNets", p.channel_nets},
                         {"devices", p.devices},
                         {"linkLayer", p.link_layer},
                         {"gidIndex", opt(p.gid_index)},
                         {"gdr", ToString(p.gdr)},
                         {"intraNode", p.intra},
                         {"nranks", opt(p.nranks)},
                         {"nNodes", opt(p.nnodes)}});
  }
  const auto& info = Describe(v.cause);
  return {{"ncclVersion", v.nccl_version.empty() ? json(nullptr) : json(v.nccl_version)},
          {"interNode", v.inter_node},
          {"net", v.net.empty() ? json(nullptr) : json(v.net)},
          {"linkLayer", v.link_layer.empty() ? json(nullptr) : json(v.link_layer)},
          {"devices", v.devices},
          {"intraNode", v.intra_node},
          {"gidIndex", opt(v.gid_index)},
          {"gdr", ToString(v.gdr)},
          {"nodes", opt(v.nodes)},
          {"singleNode", v.single_node},
          {"outcome", ToString(v.outcome)},
          {"cause", info.id},
          {"meaning", info.meaning},
          {"fix", info.fix},
          {"secondaryCauses", secondary},
          {"explanation", v.explanation},
          {"proofs", proofs},
          {"processes", processes},
          {"read",
           {{"lines", v.lines},
            {"ncclRecords", v.nccl_records},
            {"linesCut", v.lines_cut},
            {"processesCapped", v.processes_capped},
            {"previousRuns", v.previous_runs},
            {"lastRunFrom", v.last_run_from.empty() ? json(nullptr) : json(v.last_run_from)}}}};
}

}  // namespace rw::verify
