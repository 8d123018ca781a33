// mode: sriov, and its section `sriov: {annotationKey, defaultNetworks, networks}` (or the
// short form of one network: `network`, `interface`, `resource`, `count`).
#include <set>

#include "mode.h"

namespace rw::policy::modes {
namespace {

SriovNetwork ReadSriovNetwork(Fields& f, bool with_count) {
  SriovNetwork n;
  std::string network = f.String("network", "");
  if (network.empty()) Fail(f.Path("network"), "is required ([namespace/]name)");
  const std::size_t slash = network.find('/');
  if (slash != std::string::npos) {
    n.ns = network.substr(0, slash);
    network = network.substr(slash + 1);
    if (n.ns.empty() || network.empty() || network.find('/') != std::string::npos)
      Fail(f.Path("network"), "must be [namespace/]name");
  }
  if (network.find('@') != std::string::npos)
    Fail(f.Path("network"), "must not contain '@'; set `interface` instead");
  n.network = network;
  n.interface = f.String("interface", "eth1");
  if (!ValidInterface(n.interface)) Fail(f.Path("interface"), "is not a valid interface name");
  n.resource = f.String("resource", "rdma/vf");
  if (n.resource.empty()) Fail(f.Path("resource"), "must not be empty");
  n.count = with_count ? f.Count("count", 1) : 1;
  return n;
}

void Read(const nlohmann::json& v, const std::string& path, NamespacePolicy& ns) {
  Fields f(v, path);
  ns.sriov.annotation_key = f.String("annotationKey", ns.sriov.annotation_key);
  if (ns.sriov.annotation_key.empty() || ns.sriov.annotation_key.find('/') == std::string::npos)
    Fail(f.Path("annotationKey"), "must be an annotation key such as k8s.v1.cni.cncf.io/networks");
  ns.sriov.default_networks = f.Strings("defaultNetworks", ns.sriov.default_networks);
  if (const nlohmann::json* networks = f.Get("networks")) {
    if (v.contains("network")) Fail(f.Path("network"), "use either `networks` or the short form");
    if (!networks->is_array())
      Fail(f.Path("networks"), "must be a list, got " + codec::TypeName(*networks));
    ns.sriov.networks.clear();
    for (std::size_t i = 0; i < networks->size(); ++i) {
      Fields nf((*networks)[i], f.Path("networks") + "[" + std::to_string(i) + "]");
      ns.sriov.networks.push_back(ReadSriovNetwork(nf, true));
      nf.Done();
    }
  } else if (v.contains("network") || v.contains("interface") || v.contains("resource") ||
             v.contains("count")) {
    ns.sriov.networks = {ReadSriovNetwork(f, true)};
  }
  f.Done();
  std::set<std::string> interfaces;
  for (std::size_t i = 0; i < ns.sriov.networks.size(); ++i)
    if (!interfaces.insert(ns.sriov.networks[i].interface).second)
      Fail(path + ".networks[" + std::to_string(i) + "].interface",
           "'" + ns.sriov.networks[i].interface + "' is used by two networks");
}

void Require(const NamespacePolicy& ns, const Fields& entry) {
  if (ns.sriov.networks.empty())
    Fail(entry.Path("sriov.networks"), "mode sriov needs at least one network");
}

// ReadSriovNetwork's fields: one network, in `networks` or in the short form.
schema::Schema NetworkFields() {
  return {
      {"network",
       {{"type", "string"}, {"pattern", "^([^/]+/)?[^/@]+$"}, {"description", "[namespace/]name"}}},
      {"interface", schema::Interface()},
      {"resource", {{"type", "string"}, {"minLength", 1}}},
      {"count", schema::Count()}};
}

schema::Schema Section() {
  schema::Schema network = schema::Object(NetworkFields());
  network["required"] = {"network"};
  schema::Schema fields = {
      {"annotationKey",
       {{"type", "string"}, {"pattern", "/"}, {"description", "e.g. k8s.v1.cni.cncf.io/networks"}}},
      {"defaultNetworks", schema::Strings()},
      {"networks", {{"type", "array"}, {"items", network}}}};
  fields.update(NetworkFields());
  schema::Schema section = schema::Object(fields);
  // The short form needs its `network`, and it and `networks` exclude each other.
  section["dependencies"] = {
      {"interface", {"network"}}, {"resource", {"network"}}, {"count", {"network"}}};
  section["not"] = {{"required", {"network", "networks"}}};
  return section;
}

}  // namespace

extern const Row sriov;
constexpr Row sriov = {.mode = Mode::kSriov,
                       .name = "sriov",
                       .position = 20,
                       .path = Path::kSriov,
                       .read = Read,
                       .require = Require,
                       .section_schema = Section};

}  // namespace rw::policy::modes
