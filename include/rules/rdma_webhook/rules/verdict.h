#pragma once
// The verdict on one workload: what its findings do, given who made the object and what its
// namespace enforces. One pure function shared by the webhook, `check` and `audit`, so that
// the three agree on when an error denies, when it only warns and when nothing is said
// (docs/design.md#the-verdict). Pure: no I/O. Each function reads the review's Boost.JSON
// object (codec/dom.h); the nlohmann overloads, for the CLI's documents, convert it first.
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

// The controller an object's ownerReferences name (the entry with `controller: true`).
struct Controller {
  std::string group;  // "" for the core group
  std::string kind;
};
std::optional<Controller> ControllerOf(const boost::json::value& object);
std::optional<Controller> ControllerOf(const nlohmann::json& object);

// A Pod made by a controller (Job, ReplicaSet, ...): its template was judged when the controller
// was submitted, and denying the Pod would only leave the controller retrying.
bool ControllerOwnedPod(const boost::json::value& object);
bool ControllerOwnedPod(const nlohmann::json& object);

// Why the verdict is what it is.
enum class Reason {
  kJudged,         // the rules ran and their findings apply
  kOptedOut,       // rdma-webhook.io/skip where the namespace allows it: nothing is said
  kValidationOff,  // the namespace's validation is off: nothing is said
  kUnchanged,      // an UPDATE that leaves every pod template as it was: judged at submit
  kMalformed,      // a field has a type the schema does not allow: one malformed-manifest finding
};

struct Verdict {
  Reason reason = Reason::kJudged;
  // What error findings do: the namespace's validation, downgraded from deny to warn for a
  // controller-owned Pod.
  policy::Validation enforcement = policy::Validation::kDeny;
  std::vector<Finding> findings;       // what the user is told; empty unless judged or malformed
  std::vector<Suppressed> suppressed;  // what ignore-check annotations suppressed: never denies
  bool deny = false;                   // an error under deny: /validate refuses the request

  // The error findings (what a denial lists).
  std::vector<const Finding*> Errors() const;
  // Whether `f` is shown as an admission warning: every warning, and errors when they only warn.
  bool Warns(const Finding& f) const;
};

// The verdict on a workload the rules diagnosed; `object` is the manifest it was read from.
Verdict Judge(const Diagnosis& diagnosis, const boost::json::value& object);
Verdict Judge(const Diagnosis& diagnosis, const nlohmann::json& object);

// The verdict on an object that could not be read as a workload (workload::ManifestError).
Verdict JudgeMalformed(const workload::ManifestError& error, const policy::NamespacePolicy& ns,
                       const boost::json::value& object);
Verdict JudgeMalformed(const workload::ManifestError& error, const policy::NamespacePolicy& ns,
                       const nlohmann::json& object);

// The verdict on an UPDATE whose pod templates did not change (PodTemplatesUnchanged).
Verdict Unchanged(const policy::NamespacePolicy& ns);

// The annotation `kubectl rollout restart` sets; changing only it does not change what the pods
// need, so it does not make an UPDATE worth judging again.
inline constexpr std::string_view kRestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt";

// True when every pod template of `now` (read from `new_object`) is the one at the same place
// in `old_object`: the same spec, the same annotations other than kRestartedAtAnnotation, and the
// same set of templates. An unreadable `old_object` counts as changed, so the new object is
// judged on its own.
bool PodTemplatesUnchanged(const boost::json::value& old_object,
                           const boost::json::value& new_object, const workload::Workload& now,
                           const policy::Policy& policy);
bool PodTemplatesUnchanged(const nlohmann::json& old_object, const nlohmann::json& new_object,
                           const workload::Workload& now, const policy::Policy& policy);

}  // namespace rw::rules
