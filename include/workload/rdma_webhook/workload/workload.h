#pragma once
// Read-only views of a workload object: its pod templates and their containers, with every
// field the rules read already type-checked. Pure; the views own what they hold, so the object
// may go once it is read.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

#include "rdma_webhook/policy/policy.h"

namespace rw::workload {

// A field of the object has a type the Kubernetes schema does not allow. `pointer` is the
// RFC 6901 pointer of the field.
class ManifestError : public std::runtime_error {
 public:
  ManifestError(std::string pointer, const std::string& message)
      : std::runtime_error(pointer + ": " + message), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }

 private:
  std::string pointer_;
};

// RFC 6901 escaping of one reference token, and the unescaped tokens of a pointer.
std::string EscapePointerToken(std::string_view token);
std::vector<std::string> PointerTokens(std::string_view pointer);

// A quantity counts at most this many units (about 2^53, where a double still holds every
// integer): 9E, 1e400 or 2^63-1 read as it. Past it no device count is real, and a sum of
// capped counts, capped again by AddCounts, cannot overflow.
inline constexpr long long kMaxQuantityCount = 9'000'000'000'000'000;
inline long long AddCounts(long long a, long long b) {
  const long long sum = a + b;  // both within ±kMaxQuantityCount: no overflow
  return sum > kMaxQuantityCount ? kMaxQuantityCount
                                 : (sum < -kMaxQuantityCount ? -kMaxQuantityCount : sum);
}

// Resource name -> units. Transparent, so a rule asks for a name it holds as a view without
// building a string for every lookup.
using Quantities = std::map<std::string, long long, std::less<>>;

// The name and value are views into the text their container keeps (Container::env_text): a
// review's containers hold hundreds of variables, and a string of its own for each was the
// largest part of reading a workload.
struct EnvVar {
  std::string_view name;
  std::optional<std::string_view> value;  // plain value (numbers and booleans rendered as text)
  bool from_ref = false;                  // valueFrom: unknown at admission
  std::size_t index = 0;
};

// The bit of Container::env_name_bits a name sets.
inline std::uint64_t EnvNameBit(std::string_view name) {
  const unsigned last = name.empty() ? 0u : static_cast<unsigned char>(name.back());
  return std::uint64_t{1} << ((name.size() * 7 + last) & 63);
}

struct VolumeMount {
  std::string name;
  std::string mount_path;
};

struct Container {
  std::string pointer;  // e.g. /spec/template/spec/containers/0
  std::size_t index = 0;
  std::string name;
  std::string image;
  bool gpu = false;
  std::vector<std::string> dra_claim_names;  // the pod-level claims resources.claims names
  // A DRA claim names devices that come from a driver, not from a device plugin.
  bool HasDraClaims() const { return !dra_claim_names.empty(); }
  std::vector<EnvVar> env;
  // What env's views point into, shared by copies of the container, so a copy's views stay valid.
  std::shared_ptr<const char[]> env_text;
  // A bit for each (length, last byte) of the names in env (EnvNameBit), set where env is read:
  // a name whose bit is clear is not there, and FindEnv says so without a walk, as it does for
  // most NCCL names the rules ask about. Used only while env still has env_name_bits_size
  // entries; an env built another way is walked.
  std::uint64_t env_name_bits = 0;
  std::size_t env_name_bits_size = 0;
  std::vector<std::string> env_from_prefixes;  // one entry per envFrom source ("" = no prefix)
  Quantities limits;
  Quantities requests;
  std::vector<std::string> caps_add;  // upper case, a CAP_ prefix kept (runtimes differ on it)
  bool privileged = false;
  std::optional<long long> run_as_user;  // effective (container over pod)
  std::optional<bool> run_as_non_root;   // effective (container over pod)
  std::vector<std::string> argv;         // command followed by args
  std::size_t command_size = 0;          // how many of argv come from `command`
  // The pointer of argv[index]: an element of `command` or of `args`.
  std::string ArgvPointer(std::size_t index) const;
  std::vector<long long> ports;  // declared containerPorts
  std::vector<VolumeMount> mounts;

  // The variable named `name` (the last of duplicates, as Kubernetes lets the later win).
  const EnvVar* FindEnv(std::string_view name) const;
  // How many units of `resource` the container claims (limits, else requests).
  long long Claim(std::string_view resource) const;
  // Units claimed of every resource name `matches` accepts (limits, else requests, per name).
  template <class Pred>
  long long ClaimWhere(Pred matches) const {
    long long total = 0;
    for (const auto& [resource, count] : limits)
      if (matches(resource)) total = AddCounts(total, count);
    for (const auto& [resource, count] : requests)
      if (!limits.count(resource) && matches(resource)) total = AddCounts(total, count);
    return total;
  }
  // Every resource name in limits or requests, sorted, once each.
  std::vector<std::string> ResourceNames() const;
  // The capability reaches the container on every CRI runtime: its bare name (any case) or ALL.
  bool HasCapability(std::string_view cap) const;
  // Only the CAP_-prefixed name asks for it (CAP_IPC_LOCK): CRI-O strips the prefix, but
  // containerd's CRI prepends another (CAP_CAP_IPC_LOCK), so there the container lacks it.
  bool HasOnlyPrefixedCapability(std::string_view cap) const;
};

// What the rules need of a pod volume.
struct Volume {
  bool host_path = false;         // a hostPath volume
  bool memory_empty_dir = false;  // an emptyDir with medium: Memory
};

struct PodTemplate {
  std::string pointer;  // "" for a Pod, else e.g. /spec/template
  std::string MetadataPointer() const { return pointer + "/metadata"; }
  std::string SpecPointer() const { return pointer + "/spec"; }
  std::map<std::string, std::string> annotations;
  bool host_network = false;
  bool host_ipc = false;
  std::optional<std::string> dns_policy;
  std::map<std::string, Volume> volumes;  // by name
  std::vector<Container> containers;      // regular containers (not init containers)
  std::vector<std::string> init_images;   // images of init containers (plugin signs)
  // One entry of spec.resourceClaims: its name and the template or claim it comes from.
  struct ResourceClaim {
    std::string name;
    std::string source;          // resourceClaimTemplateName or resourceClaimName
    bool from_template = false;  // source names a ResourceClaimTemplate, not a ResourceClaim
  };
  std::vector<ResourceClaim> resource_claims;  // spec.resourceClaims (DRA)
  bool HasResourceClaims() const { return !resource_claims.empty(); }

  // The pods this template stands for: the kind row's counts on its way from the object
  // (replicas × parallelism × group size), at most kMaxReplicas; 1 for a kind whose pods never
  // make one job across nodes (a Pod, the apps kinds).
  long long replicas = 1;

  bool HasGpu() const;
  long long TotalClaim(std::string_view resource) const;
  template <class Pred>
  long long TotalClaimWhere(Pred matches) const {
    long long total = 0;
    for (const auto& c : containers) total = AddCounts(total, c.ClaimWhere(matches));
    return total;
  }
  // True when the volume named `name` is a hostPath volume.
  bool IsHostPathVolume(std::string_view name) const;
  const std::string* Annotation(std::string_view key) const;
  // True when the container mounts a memory-backed emptyDir at /dev/shm.
  bool HasMemoryShm(const Container& c) const;
};

struct TrainJobFacts;  // trainjob.h

struct Workload {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string ns;  // metadata.namespace, else the default given to Read
  const policy::WorkloadKind* kind_row = nullptr;  // nullptr: not a workload the policy knows
  // A kind without a row still has its pod templates judged: they are found by their shape
  // (FindPodTemplatesByShape). Such templates are never mutated, since only a row says the
  // kind's controller really builds its pods from them.
  std::vector<PodTemplate> templates;
  // Template-shaped objects of a kind without a row that could not be read as pod templates
  // ("<pointer>: <problem>"): a custom resource may reuse the shape with other field types, so
  // this is evidence, never a reading error.
  std::vector<std::string> unread_templates;
  bool shape_search_truncated = false;  // a bound of FindPodTemplatesByShape stopped the search
  bool TemplatesByShape() const { return kind_row == nullptr && !templates.empty(); }
  std::map<std::string, std::string> annotations;  // the object's own metadata.annotations
  // A TrainJob: what Trainer makes of it beyond the pod templates (the templates are then the
  // effective JobSet's, see trainjob.h); nullptr for every other kind.
  const TrainJobFacts* trainjob = nullptr;
  // A gang scheduler's minimum, where the kind row has one and the object sets it.
  struct Gang {
    long long min_available = 0;
    std::string pointer;    // where minAvailable is written
    long long members = 0;  // the replicas of every member entry (1 each when absent)
  };
  std::optional<Gang> gang;

  // Throws ManifestError when a field the rules read has the wrong type. The review's object
  // is read as a Boost.JSON value (codec/dom.h); a document of the CLI or the tests is read
  // through the same code, converted first.
  static Workload Read(const boost::json::value& object, const policy::Policy& policy,
                       std::string_view default_ns);
  static Workload Read(const nlohmann::json& object, const policy::Policy& policy,
                       std::string_view default_ns);
};

// The bounds of the search by shape: how deep below the object's root a template may sit, how
// many templates one object may hold, and how many JSON values the search visits at most (so
// that a large custom resource costs the review a bounded time).
inline constexpr std::size_t kMaxShapeDepth = 12;
inline constexpr std::size_t kMaxShapeTemplates = 64;
inline constexpr std::size_t kMaxShapeVisits = 20000;

struct ShapeSearch {
  std::vector<std::string> pointers;  // in key order, as the object is held; "" for the object
  bool truncated = false;             // a bound stopped the search before its end
};
// The pod templates of an object by their shape: a mapping whose `spec.containers` is a
// non-empty list of mappings that each have a non-empty string `name`. The object's own
// `metadata` and `status` are not searched, nor is anything below a template found.
ShapeSearch FindPodTemplatesByShape(const boost::json::value& object);
ShapeSearch FindPodTemplatesByShape(const nlohmann::json& object);

// Replica counts saturate here: past it a workload is surely multi-node, and products of
// user-written counts cannot overflow.
inline constexpr long long kMaxReplicas = 1'000'000;

// Expands a template pattern (`*` = any key or index) against an object: the matching
// pointers that exist, in document order.
std::vector<std::string> ExpandPattern(const boost::json::value& object, std::string_view pattern);

}  // namespace rw::workload
