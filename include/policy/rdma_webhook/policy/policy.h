#pragma once
// The policy: which access path each namespace takes and how strictly manifests are judged
// (docs/policy.md). Loading validates every field; the loaded value is immutable and
// shared between threads by const reference or shared_ptr<const Policy>.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/policy/mode_enums.h"

namespace rw::policy {

// `Mode` (off, then one value per mode) and `Path` (below, then one value per mode, named after
// it) are generated from the mode files (cmake/ModeTable.cmake): a mode is
// src/policy/modes/<name>.cc and src/rules/modes/<name>.cc, and its value is k<CamelCaseName>.
// The access path of a pod template or workload (docs/design.md#paths), besides the modes':
// kNone: no RDMA path; kPlugin: NICs NCCL reaches through a network plugin (EFA, gIB, TCPX);
// kUnknown: cannot be told; kMixed: templates of one workload on different paths;
// kPrivileged: InfiniBand reached through a privileged container alone (docs/design.md#paths).
// kDra (a mode's): RDMA NICs a DRA driver moves into the pod, named by a claim (docs/dra.md).
enum class Validation { kDeny, kWarn, kOff };
enum class OnConflict { kReject, kOverride };
enum class Fabric { kAuto, kRoce, kIb };  // auto: not known, fabric-specific rules stay silent
// A namespace's `rules:` entry: the severity a rule takes there, or off (dropped).
enum class RuleLevel { kError, kWarning, kOff };

std::string_view ToString(Mode m);
// The path a template takes once the namespace's mode is applied to it (none for off).
Path ModePath(Mode m);
std::string_view ToString(Validation v);
std::string_view ToString(Path p);
std::optional<Path> ParsePath(std::string_view s);

// One rail of the SR-IOV path: attach `network` as `interface`, claim `count` of `resource`.
struct SriovNetwork {
  std::string ns;  // empty: the pod's namespace
  std::string network;
  std::string interface = "eth1";
  std::string resource = "rdma/vf";
  long long count = 1;
};

struct NamespacePolicy {
  std::vector<std::string> names;  // exact names or globs; empty for `defaults`
  Mode mode = Mode::kOff;
  Validation validation = Validation::kDeny;
  std::vector<Path> allowed_paths;  // already resolved: [mode] by default, every path for off
  bool exclusive_nodes = false;
  std::map<std::string, RuleLevel> rules;  // per-rule severity overrides (`rules:`)
  OnConflict on_conflict = OnConflict::kReject;
  bool opt_out = false;
  bool inject_shm = false;
  struct {
    std::string socket_ifname;
    std::string device_resource;
  } host_network;
  struct {
    std::vector<SriovNetwork> networks;
    std::string annotation_key = "k8s.v1.cni.cncf.io/networks";
    std::vector<std::string> default_networks;
  } sriov;
  struct {
    std::string resource;
    long long count = 1;
    std::string network;
    std::string interface;
  } shared;
  struct {
    std::string claim_template;  // a ResourceClaimTemplate of the pod's namespace
    std::string claim_name = "rdma-nics";
    std::string socket_ifname;
  } dra;
  struct {
    Fabric fabric = Fabric::kAuto;
    std::optional<long long> gid_index;  // empty: auto
    std::string hca;
    std::string gdr_level;
    std::map<std::string, std::string> extra_env;
    // NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,NET where unset: the lines
    // `rdma-webhook verify` proves the transport from (docs/verify.md).
    bool debug_for_verify = false;
  } nccl;

  bool Allows(Path p) const;  // none, unknown and plugin always pass
};

// A count of copies in a workload kind: the integer at `at` (a pointer pattern, `*` = any key or
// index, as in `templates`) multiplies the pods of every template below its parent object (or
// below `<parent>/<under>` when `under` is set), less `less` (a LeaderWorkerSet's group size
// counts its leader) when `<parent>/<less_if>` exists or `less_if` is empty (without a
// leaderTemplate, LWS makes the leader from the workerTemplate too). Absent, a count is 1;
// negative, 0.
struct ReplicaCount {
  std::string at;
  std::string under{};
  long long less = 0;
  std::string less_if{};
  // Siblings of `at` that bound and multiply it (KubeRay's worker groups: the pods of a group
  // are its replicas raised to minReplicas, capped at maxReplicas, times numOfHosts); "" = none.
  // With a floor, an absent `at` still counts (as 1, raised to the floor).
  std::string floor{};
  std::string ceiling{};
  std::string times{};
  // A count DefaultReplicaCounts guessed: a value of another type there is some other field (a
  // replica type named `replicas`), ignored; a kind's own counts must be integers.
  bool guessed = false;
};

// Where a gang scheduler's minimum sits in a kind, and the entries whose `replicas` (1 when
// absent) add up to the whole gang.
struct GangFields {
  std::string min_available;  // a JSON pointer; "" = the kind has no gang
  std::string members;        // a pointer pattern of the replica entries
};

// A workload kind: where its pod templates are (JSON pointers, `*` = any key or index).
struct WorkloadKind {
  std::string group;  // "" for the core group
  std::string kind;
  // The one API version the row is for ("" for every version): two controllers may serve one
  // group and kind (training-operator's kubeflow.org/v1 MPIJob, mpi-operator's v2beta1).
  std::string version{};
  std::vector<std::string> templates;  // "" means the object itself is the pod
  // Whether one object's GPU pods can make one job across nodes (the training kinds). A Pod and
  // the apps kinds run independent replicas, so their pods never add up to a multi-node job.
  bool multi_node = true;
  // The dnsPolicy the kind's controller gives a hostNetwork pod that leaves it out; "" when
  // nothing does (the API server's ClusterFirst). Volcano's webhook sets ClusterFirstWithHostNet.
  std::string host_network_dns_policy{};
  // The controller sets host_network_dns_policy on every hostNetwork pod, over whatever the
  // template says (mpi-operator's v2beta1 MPIJob), not only where it is left out.
  bool host_network_dns_forced = false;
  // What multiplies a template's pods (replicas, Job parallelism, group sizes); a policy
  // `kinds:` entry that lists none gets DefaultReplicaCounts(templates).
  std::vector<ReplicaCount> replicas{};
  GangFields gang{};
};

// A DRA driver whose devices are NICs: a claim of them puts the template on `path` (dra: RDMA
// NICs moved into the pod; plugin: NICs NCCL reaches through a network plugin, as EFA's) when
// the device class or the request requires `attribute` to be true ("" = every device of the
// driver qualifies).
struct DraNicDriver {
  std::string driver;
  std::string attribute;
  Path path = Path::kDra;
};

// The counts a kind row without its own gets: along each template pattern, `parallelism` in
// every object on the way and `replicas` from the third level down (the top-level
// `/spec/replicas` of a controller counts independent copies), and a LeaderWorkerSet-style
// `size` (less its leader) above a `workerTemplate`.
std::vector<ReplicaCount> DefaultReplicaCounts(const std::vector<std::string>& templates);

struct Policy {
  // Resource names are globs (`*`, `?`): real clusters name their devices their own way.
  std::vector<std::string> gpu_resources{"nvidia.com/gpu", "amd.com/gpu"};
  std::vector<std::string> vf_resources{"rdma/vf"};
  std::vector<std::string> shared_resources{"rdma/hca_shared_devices_*"};
  std::vector<std::string> rdma_networks{"sriov-rdma-net"};
  // DRA drivers (docs/dra.md): the classes of a claim say which driver serves its devices.
  // Defaults: dranet (`rdma` attribute), the SR-IOV DRA driver (`rdmaCapable`), GKE's RDMA
  // driver, AWS EFA (the plugin path); NVIDIA's and AMD's GPU drivers.
  struct {
    std::vector<DraNicDriver> nic_drivers{
        {"dra.net", "rdma", Path::kDra},
        {"sriovnetwork.k8snetworkplumbingwg.io", "rdmaCapable", Path::kDra},
        {"mrdma.google.com", "", Path::kDra},
        {"efa.networking.k8s.aws", "", Path::kPlugin}};
    std::vector<std::string> gpu_drivers{"gpu.nvidia.com", "gpu.amd.com"};
  } dra;
  // The cluster runs the network-resources-injector, which adds VF claims from annotations.
  bool network_resources_injector = false;
  // The policy wrote networkResourcesInjector (true or false). When it did not, the default
  // (false) may not be what the cluster does (OpenShift's SR-IOV operator deploys the injector
  // by default), so network-without-vf's fix on a template names the field.
  bool network_resources_injector_stated = false;
  std::vector<WorkloadKind> kinds;  // the built-in table followed by the policy's `kinds`
  NamespacePolicy defaults{};
  std::vector<NamespacePolicy> namespaces;
  std::string hash;  // stable digest of the normalized policy, for audit annotations

  bool IsGpuResource(std::string_view name) const;
  bool IsVfResource(std::string_view name) const;
  bool IsSharedResource(std::string_view name) const;
  bool IsRdmaDeviceResource(std::string_view name) const {
    return IsVfResource(name) || IsSharedResource(name);
  }

  // First matching namespace entry, else `defaults`.
  const NamespacePolicy& ForNamespace(std::string_view ns) const;
  // Row of the kinds table for an object's apiVersion and kind, or nullptr.
  const WorkloadKind* FindKind(std::string_view api_version, std::string_view kind) const;
};

// A policy document that does not follow the schema. `what()` names the field:
// "namespaces[2].sriov.count: must be >= 1".
class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // "<field>: <message>", the field as a path such as namespaces[0].nccl.fabric.
  PolicyError(const std::string& field, const std::string& message)
      : std::runtime_error(field + ": " + message), field_(field) {}
  const std::string& field() const { return field_; }  // "" when the error names no field
  // Where the field is written in the policy text, 1-based; 0 when not known (a JSON document,
  // a policy held in a ConfigMap, an error about no single field).
  std::size_t line = 0;
  std::size_t column = 0;

 private:
  std::string field_;
};

Policy ParsePolicy(const nlohmann::json& document);
// YAML or JSON text holding exactly one policy document.
Policy ParsePolicyText(std::string_view text);

// Warnings about namespace entries that never apply, wholly or for some of their names, because
// an earlier entry matches first ("namespaces[2].names[0]: 'team-a' is matched first by
// namespaces[0] ('team-*'), ..."). Only certain cases are reported (see shadowing.cc).
std::vector<std::string> ShadowedNamespaceEntries(const Policy& policy);

// The embedded default policy (README documents it); safe: denies nothing outside the
// namespaces it names.
std::string_view DefaultPolicyText();
const Policy& DefaultPolicy();

// The built-in workload kinds (docs/policy.md#kinds), one row each.
const std::vector<WorkloadKind>& BuiltinKinds();

// Shell-style glob with `*` and `?`.
bool GlobMatch(std::string_view pattern, std::string_view text);
bool MatchesAny(const std::vector<std::string>& patterns, std::string_view text);

// Every rule id a namespace's `rules:` may name (docs/rules.md), in alphabetical order: the
// names of the rule files, generated at build time (cmake/RuleCatalog.cmake) so that the
// policy knows them without depending on the rules module.
const std::vector<std::string_view>& KnownRuleIds();

}  // namespace rw::policy
