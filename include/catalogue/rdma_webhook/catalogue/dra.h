#pragma once
// Typed views of the DRA objects in the catalogue (resource.k8s.io/v1 field names; v1beta1's
// request fields, which sit beside deviceClassName instead of under `exactly`, read the same).
// They read what decides a claim's devices: the class each request names, the driver and the
// attributes the CEL selectors require, the constraints between requests. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::catalogue {

// What a list of CEL selectors (all of which must hold) requires of a device, read from the
// common shapes `device.driver == "dra.net"` and `device.attributes["dra.net"].rdma == true`
// (or a bare `device.attributes["dra.net"].rdma`). An expression with `||` or `?` may hold
// without its tests: what it names is not required, and `uncertain` says the selectors were
// read only in part.
struct DeviceRequirements {
  std::vector<std::string> drivers;     // device.driver must equal each
  std::vector<std::string> attributes;  // attribute names that must be true ("rdma")
  bool uncertain = false;
  bool RequiresAttribute(std::string_view name) const;
  void Add(const DeviceRequirements& other);
};
// Reads `selectors` (a list of {cel: {expression}}); anything else reads as no requirement.
DeviceRequirements ReadSelectors(const nlohmann::json& selectors);

struct DeviceClassView {
  std::string name;
  DeviceRequirements requirements;
  std::string extended_resource_name;  // spec.extendedResourceName, "" when unset
};
DeviceClassView ReadDeviceClass(const nlohmann::json& device_class);

// The extended resource name a pod may use for a class without extendedResourceName (KEP-5004):
// deviceclass.resource.kubernetes.io/<class name>.
std::string ImplicitExtendedResourceName(std::string_view class_name);

// One way a request can be met: `exactly`, or one entry of `firstAvailable`.
struct DeviceAlternative {
  std::string name;  // the subrequest's name ("" for `exactly`)
  std::string device_class;
  DeviceRequirements requirements;  // the request's own selectors
  long long count = 1;              // allocationMode ExactCount (the default): count
  bool all = false;                 // allocationMode All: every matching device
};

struct DeviceRequestView {
  std::string name;
  std::vector<DeviceAlternative> alternatives;  // empty when the request names no class
};

struct DeviceConstraintView {
  std::vector<std::string> requests;  // empty: every request of the claim
  std::string match_attribute;        // "" when the constraint is another kind
};

struct DeviceConfigView {
  std::vector<std::string> requests;           // empty: every request
  std::string driver;                          // opaque.driver
  const nlohmann::json* parameters = nullptr;  // opaque.parameters, into the object read
};

// A ResourceClaimSpec: spec of a ResourceClaim, spec.spec of a ResourceClaimTemplate.
struct ClaimSpecView {
  std::vector<DeviceRequestView> requests;
  std::vector<DeviceConstraintView> constraints;
  std::vector<DeviceConfigView> config;
};
// `spec` must outlive the view (config parameters point into it).
ClaimSpecView ReadClaimSpec(const nlohmann::json& spec);
// The claim spec of a ResourceClaim or ResourceClaimTemplate object; nullopt when it has none.
std::optional<ClaimSpecView> ReadClaimObject(const nlohmann::json& object);

}  // namespace rw::catalogue
