#include "rdma_webhook/rules/dra.h"

#include <algorithm>
#include <initializer_list>

#include "rdma_webhook/catalogue/dra.h"

namespace rw::rules {
namespace {

using catalogue::Catalogue;
using catalogue::Source;

constexpr std::string_view kGroup = "resource.k8s.io";
constexpr std::string_view kComputeDomainGroup = "resource.nvidia.com";

// What one request (or one of its alternatives) gets.
enum class Devices { kRdmaNic, kPluginNic, kGpu, kOther, kUnknown };

struct Reading {
  Devices devices = Devices::kUnknown;
  std::string text;  // "DeviceClass 'dranet' (driver dra.net with rdma): RDMA NICs"
};

std::string From(Source s) { return s == Source::kInputs ? "the inputs" : "the cluster"; }

// Why an object is not in the catalogue, for the evidence.
std::string Missing(const Catalogue& c, std::string_view kind, std::string_view ns) {
  if (c.Knows(kGroup, kind, ns)) return "the cluster has none of that name";
  if (c.source() == Source::kCluster)
    return "not listed in this namespace (kubectl could not list " + std::string(kind) + "s)";
  return "not among the inputs (check --cluster reads the cluster's)";
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Reading ReadClass(std::string_view class_name, const catalogue::DeviceRequirements& own,
                  const policy::Policy& policy, const Catalogue& c) {
  const catalogue::Entry* entry = c.FindEntry(kGroup, "DeviceClass", "", class_name);
  const std::string named = "DeviceClass '" + std::string(class_name) + "'";
  if (entry == nullptr)
    return {Devices::kUnknown, named + " unknown: " + Missing(c, "DeviceClass", "")};
  const auto view = catalogue::ReadDeviceClass(entry->object);
  catalogue::DeviceRequirements req = view.requirements;
  req.Add(own);
  const std::string where = named + " (" + From(entry->source) + ")";
  for (const auto& nic : policy.dra.nic_drivers) {
    if (std::find(req.drivers.begin(), req.drivers.end(), nic.driver) == req.drivers.end())
      continue;
    const std::string driver = "driver " + nic.driver;
    if (!nic.attribute.empty() && !req.RequiresAttribute(nic.attribute))
      return {Devices::kOther, where + ", " + driver + " without requiring " + nic.attribute +
                                   ": NICs not known to do RDMA"};
    const bool plugin = nic.path == policy::Path::kPlugin;
    return {plugin ? Devices::kPluginNic : Devices::kRdmaNic,
            where + ", " + driver + (nic.attribute.empty() ? "" : " with " + nic.attribute) +
                (plugin ? ": NICs of a network plugin" : ": RDMA NICs")};
  }
  for (const auto& gpu : policy.dra.gpu_drivers)
    if (std::find(req.drivers.begin(), req.drivers.end(), gpu) != req.drivers.end())
      return {Devices::kGpu, where + ", driver " + gpu + ": GPUs"};
  if (req.drivers.empty() && req.uncertain)
    return {Devices::kUnknown, where + ": its selectors do not say which driver"};
  return {Devices::kOther,
          where + (req.drivers.empty() ? ", no driver named" : ", driver " + Join(req.drivers)) +
              ": neither NICs nor GPUs of the policy's dra lists"};
}

// A request: its alternatives must agree (the scheduler picks one of firstAvailable).
Reading ReadRequest(const catalogue::DeviceRequestView& r, const policy::Policy& policy,
                    const Catalogue& c) {
  const std::string named = "request '" + r.name + "': ";
  if (r.alternatives.empty()) return {Devices::kUnknown, named + "names no DeviceClass"};
  Reading first;
  for (std::size_t i = 0; i < r.alternatives.size(); ++i) {
    const auto& a = r.alternatives[i];
    if (a.device_class.empty()) return {Devices::kUnknown, named + "names no DeviceClass"};
    Reading got = ReadClass(a.device_class, a.requirements, policy, c);
    if (i == 0) {
      first = std::move(got);
    } else if (got.devices != first.devices) {
      return {Devices::kUnknown, named +
                                     "its firstAvailable alternatives hold different devices (" +
                                     first.text + "; " + got.text + ")"};
    }
  }
  return {first.devices, named + first.text};
}

// A constraint applies to request `name`: it lists no requests (all of the claim's), the
// request, or one of its firstAvailable subrequests (`name/sub`).
bool Covers(const catalogue::DeviceConstraintView& k, std::string_view name) {
  if (k.requests.empty()) return true;
  return std::any_of(k.requests.begin(), k.requests.end(), [&](const std::string& r) {
    return r == name || (r.size() > name.size() && r.compare(0, name.size(), name) == 0 &&
                         r[name.size()] == '/');
  });
}

// The attribute places devices on the PCIe tree or a NUMA node: `resource.kubernetes.io/
// pcieRoot` (the standard attribute dranet and NVIDIA's driver publish) or a driver's own
// `<domain>/numaNode`, `<domain>/pcieRoot`.
bool IsPlacementAttribute(std::string_view attribute) {
  const std::size_t slash = attribute.rfind('/');
  const std::string_view bare =
      slash == std::string_view::npos ? attribute : attribute.substr(slash + 1);
  return bare == "pcieRoot" || bare == "numaNode";
}

// A claim with GPU and RDMA NIC requests is aligned when one placement constraint covers a GPU
// request and a NIC request together; a claim without both kinds has nothing to align.
bool Aligned(const catalogue::ClaimSpecView& spec, const std::vector<Devices>& held) {
  std::vector<std::string_view> gpus, nics;
  for (std::size_t i = 0; i < spec.requests.size() && i < held.size(); ++i) {
    if (held[i] == Devices::kGpu) gpus.push_back(spec.requests[i].name);
    if (held[i] == Devices::kRdmaNic) nics.push_back(spec.requests[i].name);
  }
  if (gpus.empty() || nics.empty()) return true;
  for (const auto& k : spec.constraints) {
    if (!IsPlacementAttribute(k.match_attribute)) continue;
    const auto covered = [&](std::string_view r) { return Covers(k, r); };
    if (std::any_of(gpus.begin(), gpus.end(), covered) &&
        std::any_of(nics.begin(), nics.end(), covered))
      return true;
  }
  return false;
}

bool Names(const workload::Container& c, std::string_view claim) {
  return std::find(c.dra_claim_names.begin(), c.dra_claim_names.end(), claim) !=
         c.dra_claim_names.end();
}

void AddIndex(std::vector<std::size_t>& list, std::size_t i) {
  if (std::find(list.begin(), list.end(), i) == list.end()) list.push_back(i);
}

void AddUnnamedInterfaces(TemplateDra& out, const std::string& source) {
  if (std::find(out.unnamed_interfaces.begin(), out.unnamed_interfaces.end(), source) ==
      out.unnamed_interfaces.end())
    out.unnamed_interfaces.push_back(source);
}

void Record(TemplateDra& out, const workload::PodTemplate& t, Devices devices,
            const std::string& claim, const std::string& evidence) {
  const auto add_claim = [&](std::vector<std::string>& list) {
    if (!claim.empty() && std::find(list.begin(), list.end(), claim) == list.end())
      list.push_back(claim);
  };
  if (devices == Devices::kRdmaNic) {
    if (out.nic.empty()) out.nic = evidence;
    add_claim(out.nic_claims);
  }
  if (devices == Devices::kPluginNic && out.plugin.empty()) out.plugin = evidence;
  if (devices == Devices::kGpu) add_claim(out.gpu_claims);
  if (devices == Devices::kUnknown) out.unknown = true;
  if (devices != Devices::kGpu && !claim.empty()) AddUnnamedInterfaces(out, claim);
  if (claim.empty()) return;
  for (std::size_t i = 0; i < t.containers.size(); ++i) {
    if (!Names(t.containers[i], claim)) continue;
    if (devices == Devices::kGpu) AddIndex(out.gpu_containers, i);
    if (devices == Devices::kRdmaNic) AddIndex(out.nic_containers, i);
  }
}

void ReadClaim(const workload::PodTemplate::ResourceClaim& claim, const workload::PodTemplate& t,
               const policy::Policy& policy, const Catalogue& c, std::string_view ns,
               std::string_view policy_nics, TemplateDra& out) {
  const std::string_view kind = claim.from_template ? "ResourceClaimTemplate" : "ResourceClaim";
  const std::string object = std::string(kind) + " " + std::string(ns) + "/" + claim.source;
  const std::string named = "DRA claim '" + claim.name + "' (" + object;
  if (claim.source.empty()) {
    out.unknown = true;
    AddUnnamedInterfaces(out, claim.name);
    out.evidence.push_back("DRA claim '" + claim.name + "' names no template or claim: unknown");
    return;
  }
  const catalogue::Entry* entry = c.FindEntry(kGroup, kind, ns, claim.source);
  if (entry == nullptr && claim.from_template && !policy_nics.empty() &&
      claim.source == policy_nics) {
    const std::string line = named + "): the namespace policy's dra.claimTemplate (" +
                             Missing(c, kind, ns) + "): RDMA NICs";
    Record(out, t, Devices::kRdmaNic, claim.name, line);
    out.evidence.push_back(line);
    return;
  }
  if (entry == nullptr) {
    out.unknown = true;
    AddUnnamedInterfaces(out, claim.name);
    out.evidence.push_back(named + " unknown: " + Missing(c, kind, ns) +
                           "): its devices are unknown");
    return;
  }
  const auto spec = catalogue::ReadClaimObject(entry->object);
  if (!spec || spec->requests.empty()) {
    out.unknown = true;
    AddUnnamedInterfaces(out, claim.name);
    out.evidence.push_back(named + ", " + From(entry->source) + ") requests no devices: unknown");
    return;
  }
  std::vector<Devices> held;
  std::string text;
  for (const auto& r : spec->requests) {
    Reading got = ReadRequest(r, policy, c);
    text += (text.empty() ? "" : "; ") + got.text;
    held.push_back(got.devices);
  }
  const std::string line = named + ", " + From(entry->source) + "): " + text;
  for (const Devices d : held) Record(out, t, d, claim.name, line);
  out.evidence.push_back(line);
  if (!Aligned(*spec, held)) out.unaligned_claims.push_back(claim.name);
}

// A container limit served by a DeviceClass (KEP-5004): its extendedResourceName, or the
// implicit deviceclass.resource.kubernetes.io/<class>.
void ReadExtendedResources(const workload::PodTemplate& t, const policy::Policy& policy,
                           const Catalogue& c, TemplateDra& out) {
  constexpr std::string_view kImplicit = "deviceclass.resource.kubernetes.io/";
  const auto classes = c.All(kGroup, "DeviceClass");
  for (std::size_t i = 0; i < t.containers.size(); ++i) {
    const auto& container = t.containers[i];
    for (const auto& r : container.ResourceNames()) {
      if (policy.IsGpuResource(r) || policy.IsRdmaDeviceResource(r) || container.Claim(r) <= 0)
        continue;
      std::string class_name;
      if (r.rfind(kImplicit, 0) == 0) class_name = r.substr(kImplicit.size());
      for (const auto* e : classes)
        if (class_name.empty() && catalogue::ReadDeviceClass(e->object).extended_resource_name == r)
          class_name = catalogue::ReadDeviceClass(e->object).name;
      if (class_name.empty()) continue;
      const Reading got = ReadClass(class_name, {}, policy, c);
      const std::string line = "container '" + container.name + "' claims " + r +
                               ", the extended resource of " + got.text;
      Record(out, t, got.devices, "", line);
      if (got.devices != Devices::kGpu)
        AddUnnamedInterfaces(out, "container '" + container.name + "' " + r);
      if (got.devices == Devices::kGpu) AddIndex(out.gpu_containers, i);
      if (got.devices == Devices::kRdmaNic) AddIndex(out.nic_containers, i);
      out.evidence.push_back(line);
    }
  }
}

// NVIDIA's DRA driver makes one ResourceClaimTemplate per ComputeDomain
// (spec.channel.resourceClaimTemplate.name): a pod claiming it gets the domain's IMEX channel.
// `object` at the path of keys, when every step is a mapping and the last a string; "" otherwise.
std::string StringAtPath(const nlohmann::json& object, std::initializer_list<const char*> keys) {
  const nlohmann::json* at = &object;
  for (const char* key : keys) {
    if (!at->is_object()) return {};
    const auto it = at->find(key);
    if (it == at->end()) return {};
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

// NVIDIA's DRA driver makes one ResourceClaimTemplate per ComputeDomain
// (spec.channel.resourceClaimTemplate.name): a pod claiming it gets the domain's IMEX channel.
void ReadComputeDomains(const workload::PodTemplate& t, const Catalogue& c, std::string_view ns,
                        TemplateDra& out) {
  if (!c.HoldsAny(kComputeDomainGroup, "ComputeDomain")) return;
  for (const auto* e : c.All(kComputeDomainGroup, "ComputeDomain")) {
    const std::string name = StringAtPath(e->object, {"metadata", "name"});
    // The entry's namespace is its key's: the same entry found under the pod's is in it.
    if (c.FindEntry(kComputeDomainGroup, "ComputeDomain", ns, name) != e) continue;
    out.compute_domains.push_back(name);
    const std::string rct =
        StringAtPath(e->object, {"spec", "channel", "resourceClaimTemplate", "name"});
    if (rct.empty()) continue;
    for (const auto& claim : t.resource_claims)
      if (claim.from_template && claim.source == rct &&
          std::find(out.channel_claims.begin(), out.channel_claims.end(), claim.name) ==
              out.channel_claims.end())
        out.channel_claims.push_back(claim.name);
  }
}

}  // namespace

TemplateDra ReadTemplateDra(const workload::PodTemplate& t, const policy::Policy& policy,
                            const catalogue::Catalogue& catalogue, std::string_view ns,
                            std::string_view policy_nics) {
  TemplateDra out;
  for (const auto& claim : t.resource_claims)
    ReadClaim(claim, t, policy, catalogue, ns, policy_nics, out);
  ReadComputeDomains(t, catalogue, ns, out);
  // An IMEX channel is no network interface, whatever its class reads as.
  std::erase_if(out.unnamed_interfaces, [&](const std::string& claim) {
    return std::find(out.channel_claims.begin(), out.channel_claims.end(), claim) !=
           out.channel_claims.end();
  });
  // Only a catalogue with classes can say what an extended resource is: an empty one (no
  // cluster objects at all) costs the review nothing.
  if (catalogue.size() > 0) ReadExtendedResources(t, policy, catalogue, out);
  return out;
}

}  // namespace rw::rules
