#pragma once
// What a namespace's mode wants a pod template to look like, and where the template as written
// disagrees. The plan is the only place that decides: it yields the concrete edits (with the
// policy-conflict warning of every user value an edit replaces) and the conflicts. The mutator
// applies the edits without deciding anything; the policy-conflict rule reports the conflicts;
// both read this one function so they can never disagree. Pure.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/dra.h"
#include "rdma_webhook/rules/nad.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

// One change to the object, at a pointer of the object as written.
struct Edit {
  enum class Kind {
    kSet,     // set the value, creating missing parents (an equal value changes nothing)
    kAppend,  // append to the array, creating it when missing
  };
  Kind kind = Kind::kSet;
  std::string pointer;
  nlohmann::json value;
  // onConflict: override: the policy-conflict warnings for the user values this edit replaces.
  std::vector<Finding> overrides;
};

// A user value that means something else than what the mode sets, reported under the
// namespace's onConflict (reject: every one; override: those that cannot be overridden).
struct Conflict {
  std::string pointer;  // the field as written
  std::string message;  // what the manifest says and what the mode wants
};

struct TemplatePlan {
  bool applies = false;     // the mode manages this template (GPU, path none/unknown/the mode's)
  std::vector<Edit> edits;  // in the order they are applied
  std::vector<Conflict> conflicts;
  // The plan must edit a network annotation Multus cannot read; the edit is left out.
  bool unreadable_annotation = false;

  // The workload must be left as written, for validation to judge what the user wrote: a
  // reported conflict, or an annotation the plan cannot edit (attaching nothing while setting
  // NCCL_SOCKET_IFNAME and claiming VFs would add ifname-not-attached to the user's
  // invalid-network-annotation).
  bool Blocks() const { return applies && (!conflicts.empty() || unreadable_annotation); }
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
  bool platform_from_plugin = false;  // `platform` rests on the gIB plugin alone (PlatformNics)
  TemplateDra dra;  // what its DRA claims hold, read through the catalogue (Assess fills it)
  // What decides each of `all`: the policy, its NAD or nothing (Assess fills it; empty when the
  // caller read the annotation alone, and then only the policy decides).
  TemplateNads nads;
};
TemplateNetworks ReadNetworks(const workload::PodTemplate& t,
                              const policy::NamespacePolicy& ns_policy, std::string_view pod_ns);

// The path of a template whose networks the caller has already read (TemplatePath without
// parsing the annotation again).
policy::Path TemplatePath(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns_policy, const TemplateNetworks& nets);

// The first resource a container of `t` claims that looks like an RDMA NIC or VF but that no
// policy list or NAD of `nets` names (koordinator.sh/rdma, a vendor's VF pool), "" when none;
// `gpu_only` looks at GPU containers alone. Its path cannot be told, so nothing is planned
// around it: the webhook's VF could be a second one.
std::string UnknownNicClaim(const workload::PodTemplate& t, const policy::Policy& policy,
                            const TemplateNetworks& nets, bool gpu_only);
// Whether the resource `r` is such a NIC resource (UnknownNicClaim's test of one name).
bool IsUnknownNicResource(const policy::Policy& policy, const TemplateNetworks& nets,
                          const std::string& r);

// The plan for a template; `nets` and `path` are computed once by the caller (diagnosis or
// mutation), so the annotation is parsed once per template and request.
TemplatePlan PlanTemplate(const workload::PodTemplate& t, const policy::Policy& policy,
                          const policy::NamespacePolicy& ns_policy, std::string_view pod_ns,
                          const TemplateNetworks& nets, policy::Path path);

}  // namespace rw::rules
