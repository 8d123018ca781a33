#include "rdma_webhook/admission/webhook.h"

#include <algorithm>
#include <exception>
#include <set>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/trainjob.h"
#include "rdma_webhook/rules/verdict.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::admission {
namespace {

namespace bj = boost::json;
using nlohmann::json;

// The string at `pointer`, or "" when it is absent or of another type: the object is the user's.
std::string StringAt(const bj::value& object, std::string_view pointer) {
  const bj::value* v = codec::Find(object, pointer);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

void AddWarning(std::vector<std::string>& warnings, const rules::Finding& f) {
  std::string w = ShortWarning(f);
  if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) {
    warnings.push_back(std::move(w));
  }
}

// The object's name as a person reads it: the API server leaves request.name empty for an object
// created with generateName, and its name is only made after admission, so the prefix is shown
// with a mark that the rest is generated ("train-(generated)") instead of an empty name.
std::string ObjectName(const Request& request, const bj::value& object) {
  if (!request.name.empty()) return request.name;
  std::string name = StringAt(object, "/metadata/name");
  if (!name.empty()) return name;
  name = StringAt(object, "/metadata/generateName");
  return name.empty() ? name : name + "(generated)";
}

std::string DenialMessage(const Request& request,
                          const std::vector<const rules::Finding*>& errors) {
  const bj::value& object = request.object;
  std::string kind = StringAt(object, "/kind");
  if (kind.empty()) kind = "object";
  const std::string name = ObjectName(request, object);
  std::string message = "rdma-webhook: " + kind + " " + request.ns + "/" + name + " has " +
                        std::to_string(errors.size()) +
                        (errors.size() == 1 ? " error" : " errors") + ": ";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const rules::Finding& f = *errors[i];
    if (i > 0) message += "; ";
    message += "[" + f.rule + "]";
    if (!f.pointer.empty()) message += " at " + f.pointer;
    message += ": " + f.Text();
  }
  return message;
}

Decision Pass(const Request& request, const policy::Policy& policy) {
  Decision d;
  d.response.uid = request.uid;
  d.response.audit_annotations = {{"path", d.path}, {"policy-hash", policy.hash}};
  return d;
}

// Turns the core's verdict into the answer of one endpoint. /mutate never refuses: it tells
// every finding as a warning; /validate refuses on a denying verdict.
void Answer(Endpoint endpoint, const Request& request, rules::Verdict verdict, Decision& d) {
  if (verdict.reason == rules::Reason::kMalformed) {
    d.path = "unknown";
    d.response.audit_annotations["path"] = d.path;
    const auto& f = verdict.findings.front();
    if (endpoint == Endpoint::kValidate && verdict.deny) {
      d.response.allowed = false;
      d.response.status = {400, "BadRequest", "rdma-webhook: " + f.message};
    } else if (verdict.enforcement != policy::Validation::kOff) {
      d.response.warnings.push_back(ShortWarning(f));
    }
    return;
  }
  if (verdict.deny) {
    d.response.allowed = false;
    d.response.status = {403, "Forbidden", DenialMessage(request, verdict.Errors())};
  }
  for (const auto& f : verdict.findings)
    if (verdict.Warns(f)) AddWarning(d.response.warnings, f);
  // Suppressed findings neither deny nor warn, but the API server's audit log records which
  // rules an annotation silenced, so that a suppression is never invisible.
  std::string suppressed;
  for (const auto& x : verdict.suppressed)
    if (("," + suppressed + ",").find("," + x.finding.rule + ",") == std::string::npos)
      suppressed += (suppressed.empty() ? "" : ",") + x.finding.rule;
  if (!suppressed.empty()) d.response.audit_annotations["suppressed"] = suppressed;
  d.findings = std::move(verdict.findings);
}

}  // namespace

std::string_view ToString(Endpoint e) { return e == Endpoint::kMutate ? "mutate" : "validate"; }

std::string ShortWarning(const rules::Finding& finding) {
  std::string w = finding.rule + ": " + (finding.fix.empty() ? finding.message : finding.fix);
  // Count characters, not bytes: cut at a code point boundary and mark the cut.
  std::size_t chars = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if ((static_cast<unsigned char>(w[i]) & 0xC0) == 0x80) continue;
    if (++chars == kMaxWarningChars) {
      std::size_t end = i + 1;
      while (end < w.size() && (static_cast<unsigned char>(w[end]) & 0xC0) == 0x80) ++end;
      if (end == w.size()) return w;
      // Replace the last character with an ellipsis so the total stays at the limit.
      return w.substr(0, i) + "\u2026";
    }
  }
  return w;
}

bool PodTemplateChanged(const json& old_object, const json& new_object,
                        const policy::Policy& policy, std::string_view ns) {
  return !rules::PodTemplatesUnchanged(old_object, new_object,
                                       workload::Workload::Read(new_object, policy, ns), policy);
}

Decision Decide(Endpoint endpoint, Request request, const policy::Policy& policy,
                const catalogue::Catalogue& catalogue) {
  Decision d = Pass(request, policy);
  // DELETE and CONNECT carry nothing to judge; subresources (status, scale) never touch a
  // template.
  if (request.operation != "CREATE" && request.operation != "UPDATE") return d;
  if (!request.sub_resource.empty()) return d;
  const std::string ns = request.ns.empty() ? std::string("default") : request.ns;
  try {
    // The object is read once; every step below works on this view.
    const auto w = workload::Workload::Read(request.object, policy, ns);
    // A TrainJob is judged through the pods Trainer builds from its runtime, which the cluster
    // watch holds; without the watch its runtime is not known: `unknown`, which passes
    // (docs/trainer.md).
    const bool update = request.operation == "UPDATE";
    // A TrainJob is read through Trainer's effective JobSet, which is built in nlohmann's DOM
    // (workload/trainjob.h): its objects cross over once, here.
    std::optional<json> trainjob, old_trainjob;
    if (w.kind == "TrainJob") {
      json object = codec::FromDom(request.object);
      if (workload::IsTrainJob(object)) {
        trainjob = std::move(object);
        if (update) old_trainjob = codec::FromDom(request.old_object);
      }
    }
    // Finalizer, label, status and scale updates pass: their templates are what was judged. A
    // TrainJob's templates are the ones Trainer builds.
    if (update &&
        (trainjob
             ? rules::TrainJobTemplatesUnchanged(*old_trainjob, *trainjob, policy, ns, catalogue)
             : rules::PodTemplatesUnchanged(request.old_object, request.object, w, policy))) {
      return d;
    }
    if (endpoint == Endpoint::kMutate) {
      const auto operation =
          update ? mutate::TrainJobOperation::kUpdate : mutate::TrainJobOperation::kCreate;
      // The review's object is patched where it lies; only the patch is answered.
      mutate::Mutation m = trainjob
                               ? mutate::MutateTrainJob(*trainjob, policy, ns, catalogue, operation)
                               : mutate::MutateInPlace(w, request.object, policy, catalogue);
      if (!m.patch.empty()) d.response.patch = std::move(m.patch).ReleaseText();
      for (const auto& f : m.overrides) AddWarning(d.response.warnings, f);
      d.findings = std::move(m.overrides);
      d.path = std::string(policy::ToString(m.path));
      d.response.audit_annotations["path"] = d.path;
      return d;
    }
    rules::Diagnosis diag = trainjob ? rules::DiagnoseTrainJob(*trainjob, policy, ns, catalogue)
                                     : rules::Diagnose(w, policy, catalogue);
    d.path = std::string(policy::ToString(diag.path));
    d.response.audit_annotations["path"] = d.path;
    Answer(endpoint, request, rules::Judge(diag, request.object), d);
    return d;
  } catch (const workload::ManifestError& e) {
    Answer(endpoint, request,
           rules::JudgeMalformed(e, policy.ForNamespace(request.ns), request.object), d);
    return d;
  }
}

Webhook::Webhook() : decide_(Decide) {}
Webhook::Webhook(DecideFunction decide) : decide_(std::move(decide)) {}

Outcome Webhook::Handle(Endpoint endpoint, std::string_view body, const policy::Policy& policy,
                        const catalogue::Catalogue& catalogue) const noexcept {
  Outcome out;
  std::string api_version;
  try {
    std::optional<Request> decoded;
    try {
      decoded.emplace(DecodeReview(body));
    } catch (const DecodeError& e) {
      out.http_status = 400;
      out.error = e.what();
      out.uid = e.uid();
      if (e.uid().empty()) {
        out.body = json{{"error", out.error}}.dump(-1, ' ', false, json::error_handler_t::replace);
      } else {
        Response r{e.uid(), false, {}, {}, {}, {400, "BadRequest", out.error}};
        out.body = EncodeReview(e.api_version(), r);
      }
      return out;
    }
    Request& request = *decoded;
    api_version = request.api_version;
    out.uid = request.uid;
    out.operation = request.operation;
    out.ns = request.ns;
    out.name = request.name;
    out.dry_run = request.dry_run;
    const bj::value& subject = request.object.is_object() ? request.object : request.old_object;
    if (subject.is_object()) {
      out.kind = StringAt(subject, "/kind");
      out.name = ObjectName(request, subject);
    }
    const std::string uid = request.uid;
    out.decision = decide_(endpoint, std::move(request), policy, catalogue);
    out.decision.response.uid = uid;
    out.body = EncodeReview(api_version, out.decision.response);
    out.allowed = out.decision.response.allowed;
    out.decided = true;
    return out;
  } catch (const std::exception& e) {
    out.error = std::string("internal error: ") + e.what();
  } catch (...) {
    out.error = "internal error";
  }
  // The barrier: a well-formed review that still echoes the uid, so failurePolicy decides.
  try {
    out.http_status = 500;
    out.decided = false;
    out.allowed = false;
    Response r{out.uid, false, {}, {}, {}, {500, "InternalError", out.error}};
    out.body = EncodeReview(api_version, r);
  } catch (...) {
    out.body = R"({"error":"internal error"})";
  }
  return out;
}

}  // namespace rw::admission
