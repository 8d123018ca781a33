#include "rdma_webhook/rules/verdict.h"

#include <algorithm>

#include "rdma_webhook/rules/reading_findings.h"

namespace rw::rules {
namespace {

using nlohmann::json;

const json& At(const json& object, const std::string& pointer) {
  static const json kNull;
  const json::json_pointer p(pointer);
  return object.contains(p) ? object.at(p) : kNull;
}

json AnnotationsThatMatter(const json& object, const std::string& template_pointer) {
  json annotations = At(object, template_pointer + "/metadata/annotations");
  if (annotations.is_object()) annotations.erase(std::string(kRestartedAtAnnotation));
  if (annotations.is_object() && annotations.empty()) return json();
  return annotations;
}

std::vector<std::string> TemplatePointers(const workload::Workload& w) {
  std::vector<std::string> pointers;
  for (const auto& t : w.templates) pointers.push_back(t.pointer);
  return pointers;
}

// What errors do for this object: a controller-owned Pod only warns (see ControllerOwnedPod).
policy::Validation Enforcement(policy::Validation validation, const json& object) {
  if (validation == policy::Validation::kDeny && ControllerOwnedPod(object))
    return policy::Validation::kWarn;
  return validation;
}

bool HasError(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kError; });
}

}  // namespace

std::optional<Controller> ControllerOf(const json& object) {
  const json& owners = At(object, "/metadata/ownerReferences");
  if (!owners.is_array()) return std::nullopt;
  for (const auto& o : owners) {
    if (!o.is_object() || o.value("controller", json()) != true) continue;
    const json& api_version = o.value("apiVersion", json());
    const json& kind = o.value("kind", json());
    Controller c;
    if (api_version.is_string()) {
      const auto& v = api_version.get_ref<const std::string&>();
      const auto slash = v.find('/');
      if (slash != std::string::npos) c.group = v.substr(0, slash);
    }
    if (kind.is_string()) c.kind = kind.get<std::string>();
    return c;
  }
  return std::nullopt;
}

bool ControllerOwnedPod(const json& object) {
  return object.is_object() && object.value("kind", json()) == "Pod" &&
         ControllerOf(object).has_value();
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

Verdict Judge(const Diagnosis& diagnosis, const json& object) {
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
  v.deny = v.enforcement == policy::Validation::kDeny && HasError(v.findings);
  return v;
}

Verdict JudgeMalformed(const workload::ManifestError& error, const policy::NamespacePolicy& ns,
                       const json& object) {
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

bool PodTemplatesUnchanged(const json& old_object, const json& new_object,
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
    if (At(old_object, p + "/spec") != At(new_object, p + "/spec")) return false;
    if (AnnotationsThatMatter(old_object, p) != AnnotationsThatMatter(new_object, p)) return false;
  }
  return true;
}

}  // namespace rw::rules
