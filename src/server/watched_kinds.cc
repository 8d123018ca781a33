#include "rdma_webhook/server/watched_kinds.h"

#include <array>

namespace rw::server {
namespace {

// Versions: resource.k8s.io/v1 is DRA's GA API (Kubernetes 1.34); the NAD CRD of the Network
// Plumbing Working Group's specification serves only v1; Kubeflow Trainer v2 serves v1alpha1;
// NVIDIA's DRA driver for GPUs serves ComputeDomain as resource.nvidia.com/v1beta1.
constexpr std::array<WatchedKind, 7> kKinds = {{
    {"resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false},
    {"resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", true},
    {"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true},
    {"k8s.cni.cncf.io", "v1", "network-attachment-definitions", "NetworkAttachmentDefinition",
     true},
    {"trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", "ClusterTrainingRuntime",
     false},
    {"trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "TrainingRuntime", true},
    {"resource.nvidia.com", "v1beta1", "computedomains", "ComputeDomain", true},
}};

}  // namespace

std::string WatchedKind::Name() const { return std::string(resource) + "." + std::string(group); }

std::string WatchedKind::CollectionPath() const {
  return "/apis/" + std::string(group) + "/" + std::string(version) + "/" + std::string(resource);
}

std::string WatchedKind::ApiVersion() const {
  return std::string(group) + "/" + std::string(version);
}

std::span<const WatchedKind> WatchedKinds() { return kKinds; }

}  // namespace rw::server
