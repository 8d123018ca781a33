#include "parse_over.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

// Safe by construction: namespaces that no entry names get `mode: off` and `validation: warn`,
// so the webhook never changes or denies anything there. Two opt-in namespace families show
// both access paths. The resource lists name what real installers and public guides use;
// docs/real-clusters.md gives the source of each name, README.md documents this text.
std::string_view DefaultPolicyText() {
  static constexpr std::string_view kText = R"(apiVersion: rdma-webhook/v1
kind: Policy
gpuResources:
  - nvidia.com/gpu
  - amd.com/gpu
  - nvidia.com/gpu.shared
  - nvidia.com/mig-*
  - koordinator.sh/gpu*
  - aws.amazon.com/neuron*
resources:
  vf:
    - rdma/vf
    - nvidia.com/rdma-vf
    - nvidia.com/rdma_vf
    - nvidia.com/sriov*
    - intel.com/sriov*
    - openshift.io/*
    - nvidia.com/roce_gdr
    - nvidia.com/hostdev
    - amd.com/nic
    - amd.com/vnic
    - vke.volcengine.com/rdma
  shared:
    - rdma/hca_shared_devices_*
    - rdma/rdma_shared_device_*
    - rdma/ib
    - rdma/shared_ib
    - aliyun/erdma
    - rdma/hca
rdmaNetworks: [sriov-rdma-net]
kinds: []
defaults:
  mode: off
  validation: warn
namespaces:
  - names: [rdma-host-*]
    mode: hostNetwork
    validation: deny
    allowedPaths: [hostNetwork, tcp]
    exclusiveNodes: true
    hostNetwork:
      deviceResource: rdma/hca_shared_devices_a
    nccl:
      fabric: roce
      gidIndex: auto
  - names: [rdma-sriov-*]
    mode: sriov
    validation: deny
    allowedPaths: [sriov, tcp]
    sriov:
      networks:
        - {network: sriov-rdma-net, interface: eth1, resource: rdma/vf}
    nccl:
      fabric: roce
      gidIndex: auto
)";
  return kText;
}

const Policy& DefaultPolicy() {
  static const Policy kPolicy = ParsePolicyTextOver(DefaultPolicyText(), Policy{});
  return kPolicy;
}

}  // namespace rw::policy
