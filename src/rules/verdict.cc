#include "rdma_webhook/rules/verdict.h"

#include <algorithm>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/rules/reading_findings.h"

namespace rw::rules {
namespace {

namespace bj = boost::json;
using Value = bj::value;

const Value& At(const Value& object, const std::string& pointer) {
  static const Value kNull;
  const Value* v = codec::Find(object, pointer);
  return v != nullptr ? *v : kNull;
}

const Value& Member(const Value& object, std::string_view key) {
  static const Value kNull;
  const Value* v = object.is_object() ? object.get_object().if_contains(key) : nullptr;
  return v != nullptr ? *v : kNull;
}

// Two templates' annotations compared without kRestartedAtAnnotation; a map left empty counts
// as no map.
bool SameAnnotationsThatMatter(const Value& a, const Value& b) {
  const auto matter = [](const Value& v) {
    std::size_t n = 0;
    for (const auto& m : v.get_object())
      if (m.key() != kRestartedAtAnnotation) ++n;
    return n;
  };
  const bool a_none = a.is_object() ? matter(a) == 0 : a.is_null();
  const bool b_none = b.is_object() ? matter(b) == 0 : b.is_null();
  if (a_none || b_none) return a_none == b_none;
  if (!a.is_object() || !b.is_object()) return codec::SameValue(a, b);
  if (matter(a) != matter(b)) return false;
  for (const auto& m : a.get_object()) {
    if (m.key() == kRestartedAtAnnotation) continue;
    const Value* other = b.get_object().if_contains(m.key());
    if (other == nullptr || !codec::SameValue(m.value(), *other)) return false;
  }
  return true;
}

std::vector<std::string> TemplatePointers(const workload::Workload& w) {
  std::vector<std::string> pointers;
  for (const auto& t : w.templates) pointers.push_back(t.pointer);
  return pointers;
}

// What errors do for this object: a controller-owned Pod only warns (see ControllerOwnedPod).
policy::Validation Enforcement(policy::Validation validation, const Value& object) {
  if (validation == policy::Validation::kDeny && ControllerOwnedPod(object))
    return policy::Validation::kWarn;
  return validation;
}

bool HasError(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kError; });
}

}  // namespace

std::optional<Controller> ControllerOf(const Value& object) {
  const Value& owners = At(object, "/metadata/ownerReferences");
  if (!owners.is_array()) return std::nullopt;
  for (const auto& o : owners.get_array()) {
    const Value& controller = Member(o, "controller");
    if (!controller.is_bool() || !controller.get_bool()) continue;
    const Value& api_version = Member(o, "apiVersion");
    const Value& kind = Member(o, "kind");
    Controller c;
    if (api_version.is_string()) {
      const std::string_view v = api_version.get_string();
      const auto slash = v.find('/');
      if (slash != std::string_view::npos) c.group = std::string(v.substr(0, slash));
    }
    if (kind.is_string()) c.kind = std::string(kind.get_string());
    return c;
  }
  return std::nullopt;
}

std::optional<Controller> ControllerOf(const nlohmann::json& object) {
  return ControllerOf(codec::ToDom(object));
}

bool ControllerOwnedPod(const Value& object) {
  const Value& kind = Member(object, "kind");
  return kind.is_string() && kind.get_string() == "Pod" && ControllerOf(object).has_value();
}

bool ControllerOwnedPod(const nlohmann::json& object) {
  return ControllerOwnedPod(codec::ToDom(object));
}

std::vector<const Finding*> Verdict::Errors() const {
  std::vector<const Finding*> errors;
  for (const auto& f : findings)
    if (f.severity == Severity::kError) errors.push_back(&f);
  return errors;
}

bool Verdict::Warns(const Finding& f) const {
  if (enforcement == policy::Validation::kOff) return false;
  return f.severity == Severity::kWarning || enforcement == policy::Validation::kWarn;
}

Verdict Judge(const Diagnosis& diagnosis, const nlohmann::json& object) {
  return Judge(diagnosis, codec::ToDom(object));
}

Verdict Judge(const Diagnosis& diagnosis, const Value& object) {
  Verdict v;
  v.enforcement = Enforcement(diagnosis.enforcement, object);
  if (diagnosis.skipped) {
    v.reason = Reason::kOptedOut;
    return v;
  }
  if (diagnosis.enforcement == policy::Validation::kOff) {
    v.reason = Reason::kValidationOff;
    return v;
  }
  v.findings = diagnosis.findings;
  v.suppressed = diagnosis.suppressed;
  v.deny = v.enforcement == policy::Validation::kDeny && HasError(v.findings);
  return v;
}

Verdict JudgeMalformed(const workload::ManifestError& error, const policy::NamespacePolicy& ns,
                       const nlohmann::json& object) {
  return JudgeMalformed(error, ns, codec::ToDom(object));
}

Verdict JudgeMalformed(const workload::ManifestError& error, const policy::NamespacePolicy& ns,
                       const Value& object) {
  Verdict v;
  v.reason = Reason::kMalformed;
  v.enforcement = Enforcement(ns.validation, object);
  v.findings.push_back(MalformedManifestFinding(error));
  ApplyRuleLevels(v.findings, ns);  // a namespace may set malformed-manifest to warning or off
  v.deny = v.enforcement == policy::Validation::kDeny && HasError(v.findings);
  return v;
}

Verdict Unchanged(const policy::NamespacePolicy& ns) {
  Verdict v;
  v.reason = Reason::kUnchanged;
  v.enforcement = ns.validation;
  return v;
}

bool PodTemplatesUnchanged(const nlohmann::json& old_object, const nlohmann::json& new_object,
                           const workload::Workload& now, const policy::Policy& policy) {
  return PodTemplatesUnchanged(codec::ToDom(old_object), codec::ToDom(new_object), now, policy);
}

bool PodTemplatesUnchanged(const Value& old_object, const Value& new_object,
                           const workload::Workload& now, const policy::Policy& policy) {
  std::vector<std::string> before;
  try {
    before = TemplatePointers(workload::Workload::Read(old_object, policy, now.ns));
  } catch (const workload::ManifestError&) {
    return false;  // the old object was unreadable; judge the new one on its own
  }
  const auto pointers = TemplatePointers(now);
  if (pointers != before) return false;
  for (const auto& p : pointers) {
    if (!codec::SameValue(At(old_object, p + "/spec"), At(new_object, p + "/spec"))) return false;
    if (!SameAnnotationsThatMatter(At(old_object, p + "/metadata/annotations"),
                                   At(new_object, p + "/metadata/annotations")))
      return false;
  }
  return true;
}

}  // namespace rw::rules
