#pragma once
// What a namespace's mode wants a pod template to look like, and where the template as written
// disagrees. The mutator applies the plan; the policy-conflict rule reports its conflicts; both
// read this one function so they can never disagree. Pure.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

struct EnvWant {
  std::string name;
  std::string value;
  bool extra = false;  // from nccl.extraEnv: added when absent, a user value is never a conflict
};

// A user value that means something else than what the mode sets.
struct Conflict {
  std::string pointer;  // the field as written
  std::string message;  // what the manifest says and what the mode wants
  bool always = false;  // a conflict even under onConflict: override (cannot be overridden)
};

struct Rename {
  std::size_t item = 0;  // index of the attachment item in the annotation value
  std::string interface;
};

struct TemplatePlan {
  bool applies = false;       // the mode manages this template (GPU, path none/unknown/the mode's)
  bool own_rails = false;     // the template brings its own NICs: no attachment, VF or ifname
  std::vector<EnvWant> env;   // for every GPU container, in this order
  bool ipc_lock = false;      // add IPC_LOCK to every GPU container
  bool host_network = false;  // set hostNetwork: true + dnsPolicy
  std::vector<nccl::NetworkAttachment> attach;  // items to append to the annotation
  std::vector<Rename> renames;                  // onConflict: override renames
  std::map<std::string, long long> claims;      // resource -> count the template must claim in all
  bool shm = false;                             // memory emptyDir at /dev/shm
  std::vector<Conflict> conflicts;
  // Pod interfaces after the plan: eth0, lo and every attachment's interface.
  std::vector<std::string> interfaces;
};

// A network annotation Multus cannot read: which key, and what is wrong with its value.
struct AnnotationError {
  std::string key;
  std::string problem;
};

// Attachments the template's network annotations make (configured key, then the Multus key).
struct TemplateNetworks {
  std::string key;                           // the key the plan edits (policy annotationKey)
  std::string pointer;                       // pointer of that annotation
  const std::string* value = nullptr;        // current value under `key`, or nullptr
  nccl::NetworksAnnotation parsed;           // of `key`
  std::vector<nccl::NetworkAttachment> all;  // of every network key present
  std::vector<AnnotationError> errors;
  std::string plugin;    // evidence of a non-verbs NCCL network plugin, "" when none
  std::string platform;  // evidence of platform-attached RDMA NICs (GKE), "" when none
  std::vector<std::string> platform_interfaces;  // interfaces the platform attaches
};
TemplateNetworks ReadNetworks(const workload::PodTemplate& t,
                              const policy::NamespacePolicy& ns_policy, std::string_view pod_ns);

// True when NCCL_SOCKET_IFNAME `value` selects exactly `wanted` among `interfaces`
// (under hostNetwork: equal after removing one leading `=`).
bool SameSocketIfname(std::string_view value, std::string_view wanted,
                      const std::vector<std::string>& interfaces, bool host_network);
// Values equal as NCCL reads them (numbers compare as numbers).
bool SameEnvValue(std::string_view name, std::string_view value, std::string_view wanted,
                  const std::vector<std::string>& interfaces, bool host_network);

// The path of a template whose networks the caller has already read (TemplatePath without
// parsing the annotation again).
policy::Path TemplatePath(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns_policy, const TemplateNetworks& nets);

// The plan for a template; `nets` and `path` are computed once by the caller (diagnosis or
// mutation), so the annotation is parsed once per template and request.
TemplatePlan PlanTemplate(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns_policy, std::string_view pod_ns,
                          const TemplateNetworks& nets, policy::Path path);

// True when a conflict of `plan` is reported under the namespace's onConflict (and so the whole
// workload is left unmutated for validation to deny).
bool ReportsConflict(const TemplatePlan& plan, const policy::NamespacePolicy& ns_policy);

}  // namespace rw::rules
