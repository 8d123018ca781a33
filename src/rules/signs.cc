#include "signs.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace rw::rules {
namespace {

using workload::Container;
using workload::PodTemplate;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

constexpr std::string_view kEfaResource = "vpc.amazonaws.com/efa";

// `who()` names the container, called only when there is a sign.
template <class Who>
std::string PluginImageSign(const std::string& image, const Who& who) {
  if (Contains(image, "tcpgpudmarxd"))
    return who() + " runs the GPUDirect-TCPX receive-datapath daemon (" + image + ")";
  if (Contains(image, "nccl-plugin-gpudirecttcpx"))
    return who() + " runs the GPUDirect-TCPX NCCL plugin image (" + image + ")";
  return {};
}

// libfabric's FI_PROVIDER names a provider, optionally layered (`tcp;ofi_rxm`); the first one
// is the wire.
bool TcpProvider(std::string_view value) {
  const std::string_view first = value.substr(0, value.find_first_of(";,"));
  return EqualsIgnoreCase(first, "tcp") || EqualsIgnoreCase(first, "sockets");
}

std::string ContainerPluginSign(const Container& c) {
  // Named only in a sign: the rules ask every container of every template, and most have none.
  const auto who = [&c] { return "container '" + c.name + "'"; };
  for (const auto& v : c.env) {
    // Every name asked about below starts with N or F: the rest of a long env list (a 30 KB
    // review's hundreds of variables) is passed over on its first byte.
    if (v.name.empty() || (v.name.front() != 'N' && v.name.front() != 'F')) continue;
    if (StartsWith(v.name, "NCCL_GPUDIRECTTCPX_") || StartsWith(v.name, "NCCL_FASTRAK_"))
      return who() + " sets " + std::string(v.name) + " (GPUDirect-TCPX/TCPXO)";
    if (!v.value) continue;
    if (v.name == "NCCL_NET" && !EqualsIgnoreCase(*v.value, "IB") &&
        !EqualsIgnoreCase(*v.value, "Socket") && !EqualsIgnoreCase(*v.value, "gIB") &&
        !v.value->empty())
      return who() + " sets NCCL_NET=" + std::string(*v.value) +
             " (a network plugin that is not verbs)";
    if (v.name == "FI_PROVIDER" && EqualsIgnoreCase(*v.value, "efa"))
      return who() + " sets FI_PROVIDER=efa (AWS EFA through libfabric)";
  }
  if (auto sign = PluginImageSign(c.image, who); !sign.empty()) return sign;
  if (c.Claim(kEfaResource) > 0 && EfaOverTcp(c).empty())
    return who() + " claims " + std::string(kEfaResource) + " (AWS EFA through libfabric)";
  return {};
}

// Device-injection annotations (NRI's device injector, GKE's, CDI). 0: none; 1: some; 2: one
// whose value names the verbs devices.
int InjectionAnnotation(const PodTemplate& t) {
  int found = 0;
  for (const auto& [key, value] : t.annotations) {
    if (!StartsWith(key, "devices.nri.io/") && !StartsWith(key, "devices.noderesource.dev/") &&
        !StartsWith(key, "devices.gke.io/container.") && !StartsWith(key, "cdi.k8s.io/"))
      continue;
    found = std::max(found, 1);
    if (Contains(value, "/dev/infiniband") || Contains(value, "uverbs") || Contains(value, "rdma"))
      found = 2;
  }
  return found;
}

// The last path segment of an image reference, without its tag or digest:
// `registry:5000/ai/nccl-plugin-gib:v1.0.6@sha256:...` is `nccl-plugin-gib`.
std::string_view ImageRepository(std::string_view image) {
  if (const auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  if (const auto slash = image.rfind('/'); slash != std::string_view::npos)
    image = image.substr(slash + 1);
  if (const auto colon = image.find(':'); colon != std::string_view::npos)
    image = image.substr(0, colon);
  return image;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string EfaOverTcp(const Container& c) {
  if (c.Claim(kEfaResource) <= 0) return {};
  const auto* v = c.FindEnv("FI_PROVIDER");
  if (v == nullptr || !v->value || !TcpProvider(*v->value)) return {};
  return "container '" + c.name + "' claims " + std::string(kEfaResource) +
         " but sets FI_PROVIDER=" + std::string(*v->value) +
         ": libfabric sends over TCP, not through the EFA device";
}

bool LooksLikeNicResource(std::string_view name) {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos || StartsWith(name, "hugepages-")) return false;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const std::string_view device = std::string_view(lower).substr(slash + 1);
  static constexpr std::string_view kAnywhere[] = {"rdma", "sriov",   "roce",
                                                   "mlnx", "hostdev", "infiniband"};
  for (auto part : kAnywhere)
    if (Contains(lower, part)) return true;
  static constexpr std::string_view kDevicePrefixes[] = {"hca", "nic", "vnic", "ib_",
                                                         "ib-", "vf_", "vf-"};
  for (auto prefix : kDevicePrefixes)
    if (StartsWith(device, prefix)) return true;
  // Whole words of the device name: `ib`, `vf`, `shared_ib`, `mlx_vf`.
  static constexpr std::string_view kWords[] = {"ib", "vf", "nic"};
  for (auto word : kWords) {
    if (device == word) return true;
    for (char sep : {'_', '-'}) {
      const std::string suffix = std::string(1, sep) + std::string(word);
      if (device.size() > suffix.size() && device.substr(device.size() - suffix.size()) == suffix)
        return true;
    }
  }
  return false;
}

std::string PluginSign(const PodTemplate& t) {
  for (const auto& c : t.containers)
    if (auto sign = ContainerPluginSign(c); !sign.empty()) return "plugin: " + sign;
  for (const auto& image : t.init_images)
    if (auto sign = PluginImageSign(image, [] { return std::string("an init container"); });
        !sign.empty())
      return "plugin: " + sign;
  return {};
}

PlatformNics ReadPlatformNics(const PodTemplate& t) {
  PlatformNics out;
  std::vector<std::string> rdma_networks;
  if (const std::string* value = t.Annotation("networking.gke.io/interfaces")) {
    // GKE's own format: a JSON list of {"interfaceName", "network"}. Anything else attaches
    // nothing we can name, so it is no sign (GKE itself rejects it at admission).
    const auto list = nlohmann::json::parse(*value, nullptr, false);
    if (list.is_array())
      for (const auto& item : list) {
        if (!item.is_object()) continue;
        const auto iface = item.find("interfaceName");
        const auto network = item.find("network");
        if (iface != item.end() && iface->is_string()) out.interfaces.push_back(*iface);
        if (network != item.end() && network->is_string() &&
            StartsWith(network->get_ref<const std::string&>(), "rdma"))
          rdma_networks.push_back(*network);
      }
  }
  if (!rdma_networks.empty()) {
    std::string names;
    for (const auto& n : rdma_networks) names += (names.empty() ? "" : ", ") + n;
    out.sign = "GKE multi-networking attaches RDMA networks " + names +
               " (networking.gke.io/interfaces): platform-attached NICs";
    return out;
  }
  // The gIB plugin alone says which NCCL transport runs, not who brings the NICs: a pod on the
  // host network has no network namespace of its own for the platform to attach NICs to, and
  // the plugin then drives the host's RDMA NICs (GKE's A3 Ultra recipes run either way). Such a
  // template is on the hostNetwork path, judged as the hostNetwork path is.
  if (t.host_network) return out;
  for (const auto& c : t.containers) {
    const auto* net = c.FindEnv("NCCL_NET");
    if (net != nullptr && net->value && EqualsIgnoreCase(*net->value, "gIB")) {
      out.sign = "container '" + c.name +
                 "' sets NCCL_NET=gIB (GKE GPUDirect-RDMA): " + "platform-attached NICs";
      out.from_plugin = true;
      return out;
    }
  }
  std::vector<std::string> images;
  for (const auto& c : t.containers) images.push_back(c.image);
  images.insert(images.end(), t.init_images.begin(), t.init_images.end());
  // Only the plugin image itself: a gIB diagnostic or test image also runs jobs without RDMA
  // NICs (an IMEX-only NVLink test); such a job's NICs, when it has them, show in its DRA claim.
  for (const auto& image : images)
    if (ImageRepository(image) == "nccl-plugin-gib") {
      out.sign = "image " + image +
                 " is GKE's gIB NCCL plugin (GPUDirect-RDMA): " + "platform-attached NICs";
      out.from_plugin = true;
      return out;
    }
  return out;
}

DeviceGrant FindDeviceGrant(const Container& c, const PodTemplate& t, const policy::Policy& policy,
                            bool platform_nics) {
  if (c.privileged) return {"privileged", true};
  for (const auto& r : c.ResourceNames())
    if (policy.IsRdmaDeviceResource(r) && c.Claim(r) > 0) return {"the resource " + r, true};
  if (platform_nics) return {"the platform's RDMA NICs", true};
  const int injection = InjectionAnnotation(t);
  if (injection == 2) return {"a device-injection annotation", true};
  if (c.HasDraClaims() || t.HasResourceClaims()) return {"a DRA claim", false};
  if (injection == 1) return {"a device-injection annotation", false};
  return {};
}

InfinibandMount FindInfinibandMount(const Container& c, const PodTemplate& t) {
  InfinibandMount out;
  for (std::size_t i = 0; i < c.mounts.size(); ++i) {
    const auto& m = c.mounts[i];
    if (m.mount_path != "/dev/infiniband" && !StartsWith(m.mount_path, "/dev/infiniband/"))
      continue;
    if (!out.mounted) {
      out.mounted = true;
      out.host_path = true;
      out.pointer = c.pointer + "/volumeMounts/" + std::to_string(i);
    }
    out.host_path = out.host_path && t.IsHostPathVolume(m.name);
  }
  return out;
}

std::string HostNetworkRdmaSign(const PodTemplate& t, const policy::Policy& policy) {
  for (const auto& c : t.containers) {
    for (const auto& r : c.ResourceNames())
      if (policy.IsRdmaDeviceResource(r) && c.Claim(r) > 0) return "claims " + r;
    if (!c.gpu) continue;
    const std::string who = "container '" + c.name + "' ";
    if (c.HasCapability("IPC_LOCK") || c.HasOnlyPrefixedCapability("IPC_LOCK"))
      return who + "adds IPC_LOCK";
    if (FindInfinibandMount(c, t).mounted) return who + "mounts /dev/infiniband";
    if (c.HasDraClaims()) return who + "has a DRA claim";
    for (const auto& v : c.env) {
      if ((StartsWith(v.name, "NCCL_IB_") && v.name != "NCCL_IB_DISABLE") ||
          v.name == "NCCL_SOCKET_IFNAME")
        return who + "sets " + std::string(v.name);
      if (v.name == "NCCL_NET" && v.value && EqualsIgnoreCase(*v.value, "IB"))
        return who + "sets NCCL_NET=IB";
    }
  }
  if (t.HasResourceClaims()) return "the pod has DRA resource claims";
  if (InjectionAnnotation(t) > 0) return "a device-injection annotation";
  return {};
}

}  // namespace rw::rules
