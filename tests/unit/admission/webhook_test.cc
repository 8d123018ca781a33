#include "rdma_webhook/admission/webhook.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rdma_webhook/mutate/mutation.h"

namespace rw::admission {
namespace {

using nlohmann::json;

const policy::Policy& TestPolicy() {
  static const policy::Policy p = policy::ParsePolicyText(R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces:
  - {names: [hn-deny], mode: hostNetwork, validation: deny}
  - {names: [hn-warn], mode: hostNetwork, validation: warn}
  - {names: [hn-off], mode: hostNetwork, validation: "off"}
  - {names: [hn-optout], mode: hostNetwork, validation: deny, optOut: true}
  - {names: [hn-nooptout], mode: hostNetwork, validation: deny, optOut: false}
)");
  return p;
}

// A GPU pod on the host network that shows RDMA (NCCL_IB_HCA) without IPC_LOCK and without a
// DNS policy: two errors (ipc-lock-missing, hostnetwork-dns) wherever validation denies.
json BrokenPod(const std::string& ns) {
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "trainer"}, {"namespace", ns}}},
              {"spec",
               {{"hostNetwork", true},
                {"containers",
                 {{{"name", "trainer"},
                   {"image", "pytorch"},
                   {"env", {{{"name", "NCCL_IB_HCA"}, {"value", "mlx5"}}}},
                   {"resources", {{"limits", {{"nvidia.com/gpu", 8}}}}}}}}}}};
}

json GpuPod(const std::string& ns) {
  json pod = BrokenPod(ns);
  pod["spec"].erase("hostNetwork");
  return pod;
}

json Job(const std::string& ns, const json& pod_spec) {
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}, {"namespace", ns}}},
              {"spec", {{"template", {{"metadata", json::object()}, {"spec", pod_spec}}}}}};
}

struct ReviewArgs {
  std::string operation = "CREATE";
  json object;
  json old_object;
  std::string ns;
  bool dry_run = false;
  std::string sub_resource;
  std::string_view version = kApiVersionV1;
};

std::string MakeReview(const ReviewArgs& a) {
  json request = {{"uid", "uid-1"}, {"operation", a.operation}, {"namespace", a.ns}};
  if (!a.object.is_null()) request["object"] = a.object;
  if (!a.old_object.is_null()) request["oldObject"] = a.old_object;
  if (a.dry_run) request["dryRun"] = true;
  if (!a.sub_resource.empty()) request["subResource"] = a.sub_resource;
  return json{{"apiVersion", a.version}, {"kind", "AdmissionReview"}, {"request", request}}.dump();
}

json Answer(Endpoint e, const ReviewArgs& a, int expected_http = 200) {
  const Outcome o = Webhook().Handle(e, MakeReview(a), TestPolicy());
  EXPECT_EQ(o.http_status, expected_http) << o.body;
  const json review = json::parse(o.body);
  EXPECT_EQ(review["apiVersion"], a.version);
  EXPECT_EQ(review["kind"], "AdmissionReview");
  EXPECT_EQ(review["response"]["uid"], "uid-1");
  return review["response"];
}

std::size_t WarningsStartingWith(const json& response, std::string_view rule) {
  std::size_t n = 0;
  for (const auto& w : response.value("warnings", json::array())) {
    if (w.get<std::string>().rfind(std::string(rule) + ": ", 0) == 0) ++n;
  }
  return n;
}

// One row per situation of docs/http.md on /validate.
struct ValidateCase {
  std::string name;
  ReviewArgs args;
  bool allowed;
  bool warns_errors;  // the error findings come back as warnings
};

class Validate : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(Validate, Decides) {
  const auto& c = GetParam();
  const json r = Answer(Endpoint::kValidate, c.args);
  EXPECT_EQ(r["allowed"], c.allowed);
  EXPECT_FALSE(r.contains("patch"));
  EXPECT_FALSE(r.contains("patchType"));
  EXPECT_EQ(r["auditAnnotations"]["policy-hash"], TestPolicy().hash);
  EXPECT_TRUE(r["auditAnnotations"].contains("path"));
  if (!c.allowed) {
    EXPECT_EQ(r["status"]["code"], 403);
    EXPECT_EQ(r["status"]["reason"], "Forbidden");
    const std::string message = r["status"]["message"];
    EXPECT_NE(message.find("ipc-lock-missing"), std::string::npos) << message;
    EXPECT_NE(message.find("hostnetwork-dns"), std::string::npos) << message;
  }
  EXPECT_EQ(WarningsStartingWith(r, "ipc-lock-missing"), c.warns_errors ? 1u : 0u);
  for (const auto& w : r.value("warnings", json::array())) {
    EXPECT_LE(w.get<std::string>().size(), kMaxWarningChars + 2);  // "…" is 3 bytes, 1 char
  }
}

ReviewArgs Create(json object, std::string ns) {
  ReviewArgs a;
  a.object = std::move(object);
  a.ns = std::move(ns);
  return a;
}

ReviewArgs Update(json old_object, json object, std::string ns) {
  ReviewArgs a = Create(std::move(object), std::move(ns));
  a.operation = "UPDATE";
  a.old_object = std::move(old_object);
  return a;
}

ReviewArgs WithOperation(ReviewArgs a, std::string op) {
  a.operation = std::move(op);
  if (a.operation == "DELETE") {
    a.old_object = a.object;
    a.object = nullptr;
  }
  return a;
}

ReviewArgs DryRun(ReviewArgs a) {
  a.dry_run = true;
  return a;
}

ReviewArgs V1beta1(ReviewArgs a) {
  a.version = kApiVersionV1beta1;
  return a;
}

ReviewArgs SubResource(ReviewArgs a, std::string s) {
  a.sub_resource = std::move(s);
  return a;
}

json ControllerOwned(json pod) {
  pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", "Job"},
                                         {"name", "train"},
                                         {"uid", "j"},
                                         {"controller", true}}};
  return pod;
}

json OptedOut(json object) {
  object["metadata"]["annotations"] = {{"rdma-webhook.io/skip", "true"}};
  return object;
}

json Labeled(json object) {
  object["metadata"]["labels"] = {{"team", "a"}};
  object["metadata"]["finalizers"] = {"x/y"};
  object["status"] = {{"active", 1}};
  return object;
}

json Restarted(json job) {
  job["spec"]["template"]["metadata"]["annotations"] = {
      {std::string(kRestartedAtAnnotation), "2026-11-30T10:00:00Z"}};
  return job;
}

json TemplateAnnotated(json job) {
  job["spec"]["template"]["metadata"]["annotations"] = {{"team", "a"}};
  return job;
}

const json kBrokenSpec = BrokenPod("x")["spec"];
const json kHealthySpec = GpuPod("x")["spec"];

INSTANTIATE_TEST_SUITE_P(
    Table, Validate,
    ::testing::Values(
        ValidateCase{"CreateDeniedUnderDeny", Create(BrokenPod("hn-deny"), "hn-deny"), false,
                     false},
        ValidateCase{"CreateDeniedInV1beta1", V1beta1(Create(BrokenPod("hn-deny"), "hn-deny")),
                     false, false},
        ValidateCase{"DryRunDecidesTheSame", DryRun(Create(BrokenPod("hn-deny"), "hn-deny")), false,
                     false},
        ValidateCase{"ErrorsAreWarningsUnderWarn", Create(BrokenPod("hn-warn"), "hn-warn"), true,
                     true},
        ValidateCase{"NothingUnderOff", Create(BrokenPod("hn-off"), "hn-off"), true, false},
        ValidateCase{"ControllerOwnedPodOnlyWarned",
                     Create(ControllerOwned(BrokenPod("hn-deny")), "hn-deny"), true, true},
        ValidateCase{"OptOutHonouredWhereAllowed",
                     Create(OptedOut(BrokenPod("hn-optout")), "hn-optout"), true, false},
        ValidateCase{"OptOutIgnoredWhereNotAllowed",
                     Create(OptedOut(BrokenPod("hn-nooptout")), "hn-nooptout"), false, false},
        ValidateCase{"NamespaceFromObjectWhenRequestHasNone", Create(BrokenPod("hn-deny"), ""),
                     false, false},
        ValidateCase{"DeletePasses",
                     WithOperation(Create(BrokenPod("hn-deny"), "hn-deny"), "DELETE"), true, false},
        ValidateCase{"ConnectPasses",
                     WithOperation(Create(BrokenPod("hn-deny"), "hn-deny"), "CONNECT"), true,
                     false},
        ValidateCase{
            "StatusSubresourcePasses",
            SubResource(Update(Job("hn-deny", kBrokenSpec), Job("hn-deny", kBrokenSpec), "hn-deny"),
                        "status"),
            true, false},
        ValidateCase{
            "LabelFinalizerStatusUpdatePasses",
            Update(Job("hn-deny", kBrokenSpec), Labeled(Job("hn-deny", kBrokenSpec)), "hn-deny"),
            true, false},
        ValidateCase{
            "RestartedAtOnlyUpdatePasses",
            Update(Job("hn-deny", kBrokenSpec), Restarted(Job("hn-deny", kBrokenSpec)), "hn-deny"),
            true, false},
        ValidateCase{"TemplateSpecUpdateJudged",
                     Update(Job("hn-deny", kHealthySpec), Job("hn-deny", kBrokenSpec), "hn-deny"),
                     false, false},
        ValidateCase{"TemplateAnnotationUpdateJudged",
                     Update(Job("hn-deny", kBrokenSpec),
                            TemplateAnnotated(Job("hn-deny", kBrokenSpec)), "hn-deny"),
                     false, false}),
    [](const auto& row) { return row.param.name; });

TEST(Validate, NotAWorkloadPasses) {
  const json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "c"}, {"namespace", "hn-deny"}}},
                   {"data", {{"a", "b"}}}};
  const json r = Answer(Endpoint::kValidate, Create(cm, "hn-deny"));
  EXPECT_EQ(r["allowed"], true);
  EXPECT_EQ(r["auditAnnotations"]["path"], "none");
}

// The API server sends no name for an object created with generateName: the denial and the
// log name the prefix, marked as generated, rather than "Pod hn-deny/".
TEST(Validate, GenerateNameObjectIsNamedByItsPrefix) {
  json pod = BrokenPod("hn-deny");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "trainer-";
  const Outcome o =
      Webhook().Handle(Endpoint::kValidate, MakeReview(Create(pod, "hn-deny")), TestPolicy());
  const json r = json::parse(o.body)["response"];
  EXPECT_EQ(r["allowed"], false);
  const std::string message = r["status"]["message"];
  EXPECT_NE(message.find("Pod hn-deny/trainer-(generated) has 2 errors"), std::string::npos)
      << message;
  EXPECT_EQ(o.name, "trainer-(generated)");
}

TEST(Validate, WrongFieldTypeDeniedWithItsPointer) {
  json pod = BrokenPod("hn-deny");
  pod["spec"]["containers"] = "not a list";
  const json r = Answer(Endpoint::kValidate, Create(pod, "hn-deny"));
  EXPECT_EQ(r["allowed"], false);
  EXPECT_EQ(r["status"]["code"], 400);
  EXPECT_NE(r["status"]["message"].get<std::string>().find("/spec/containers"), std::string::npos);
}

TEST(Mutate, CreateReturnsTheCorePatch) {
  const json pod = GpuPod("hn-deny");
  const json r = Answer(Endpoint::kMutate, Create(pod, "hn-deny"));
  EXPECT_EQ(r["allowed"], true);
  const auto m = mutate::Mutate(pod, TestPolicy(), "hn-deny");
  ASSERT_FALSE(m.patch.empty());
  EXPECT_EQ(r["patchType"], "JSONPatch");
  EXPECT_EQ(r["patch"], Base64(m.patch.text()));
  // The answer's bytes are nlohmann's dump() of the operations, as they were when the patch
  // was a DOM dumped at the end (Patch writes them as they are recorded).
  EXPECT_EQ(m.patch.text(), m.patch.Json().dump());
  EXPECT_EQ(r["auditAnnotations"]["path"], "hostNetwork");
  EXPECT_FALSE(r.contains("warnings"));  // no override, no warning from /mutate
}

TEST(Mutate, AlreadyMutatedObjectGetsNoPatch) {
  const json pod = GpuPod("hn-deny");
  const auto m = mutate::Mutate(pod, TestPolicy(), "hn-deny");
  const json r = Answer(Endpoint::kMutate, Create(m.result, "hn-deny"));
  EXPECT_FALSE(r.contains("patch"));
  EXPECT_FALSE(r.contains("patchType"));
}

TEST(Mutate, UpdateWithoutTemplateChangeGetsNoPatch) {
  const json job = Job("hn-deny", kHealthySpec);
  const json r = Answer(Endpoint::kMutate, Update(job, Labeled(job), "hn-deny"));
  EXPECT_FALSE(r.contains("patch"));
}

TEST(Mutate, UpdateWithTemplateChangeIsPatched) {
  json old_job = Job("hn-deny", kHealthySpec);
  old_job["spec"]["template"]["spec"]["containers"][0]["image"] = "old";
  const json r =
      Answer(Endpoint::kMutate, Update(old_job, Job("hn-deny", kHealthySpec), "hn-deny"));
  EXPECT_TRUE(r.contains("patch"));
}

TEST(Mutate, DeleteAndOffNamespacesPass) {
  EXPECT_FALSE(
      Answer(Endpoint::kMutate, WithOperation(Create(GpuPod("hn-deny"), "hn-deny"), "DELETE"))
          .contains("patch"));
  EXPECT_FALSE(
      Answer(Endpoint::kMutate, Create(GpuPod("elsewhere"), "elsewhere")).contains("patch"));
}

TEST(Mutate, DryRunGetsTheSamePatch) {
  const json a = Answer(Endpoint::kMutate, Create(GpuPod("hn-deny"), "hn-deny"));
  const json b = Answer(Endpoint::kMutate, DryRun(Create(GpuPod("hn-deny"), "hn-deny")));
  EXPECT_EQ(a["patch"], b["patch"]);
}

TEST(Mutate, OptedOutObjectIsNotPatched) {
  const json r = Answer(Endpoint::kMutate, Create(OptedOut(GpuPod("hn-optout")), "hn-optout"));
  EXPECT_FALSE(r.contains("patch"));
}

TEST(Mutate, WrongFieldTypeIsAllowedUnpatchedWithAWarning) {
  json pod = GpuPod("hn-deny");
  pod["spec"]["containers"] = 3;
  const json r = Answer(Endpoint::kMutate, Create(pod, "hn-deny"));
  EXPECT_EQ(r["allowed"], true);
  EXPECT_FALSE(r.contains("patch"));
  EXPECT_EQ(r["warnings"].size(), 1u);
}

TEST(Webhook, MalformedBodyIs400WithoutReview) {
  const Outcome o = Webhook().Handle(Endpoint::kMutate, "{nope", TestPolicy());
  EXPECT_EQ(o.http_status, 400);
  EXPECT_FALSE(o.decided);
  EXPECT_TRUE(json::parse(o.body).contains("error"));
}

TEST(Webhook, ReviewWithoutObjectIs400EchoingUid) {
  ReviewArgs a;
  a.ns = "hn-deny";
  const Outcome o = Webhook().Handle(Endpoint::kValidate, MakeReview(a), TestPolicy());
  EXPECT_EQ(o.http_status, 400);
  const json r = json::parse(o.body);
  EXPECT_EQ(r["response"]["uid"], "uid-1");
  EXPECT_EQ(r["response"]["status"]["code"], 400);
}

// issue 11: a number beyond a double was answered 500 "internal error" with an empty uid.
TEST(Webhook, NumberOverflowIs400EchoingUid) {
  for (const auto endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Outcome o = Webhook().Handle(
        endpoint,
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)"
        R"({"uid":"uid-big","operation":"CREATE","namespace":"hn-deny",)"
        R"("object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"n":1e400}}}})",
        TestPolicy());
    EXPECT_EQ(o.http_status, 400);
    EXPECT_FALSE(o.decided);
    EXPECT_EQ(o.uid, "uid-big");
    const json r = json::parse(o.body);
    EXPECT_EQ(r["response"]["uid"], "uid-big");
    EXPECT_EQ(r["response"]["allowed"], false);
    EXPECT_EQ(r["response"]["status"]["code"], 400);
  }
}

// A quantity beyond a double in the object threw std::out_of_range from the core (std::stod,
// the pattern the fuzz targets found in the YAML reader), which the barrier answered 500. It is
// the user's value, and a valid quantity (the API server caps it): judged, capped, 200.
TEST(Webhook, OutOfRangeValuesInTheObjectAreJudgedNot500) {
  for (const char* quantity : {"1e400", "1e-400", "-1e400"}) {
    json pod = BrokenPod("hn-deny");
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = quantity;
    pod["spec"]["containers"][0]["env"][0]["value"] = "mlx5_0:99999999999999999999";
    const Outcome o =
        Webhook().Handle(Endpoint::kValidate, MakeReview(Create(pod, "hn-deny")), TestPolicy());
    EXPECT_EQ(o.http_status, 200) << quantity << ": " << o.body;
    EXPECT_EQ(o.body.find("malformed-manifest"), std::string::npos) << quantity << ": " << o.body;
    const Outcome m =
        Webhook().Handle(Endpoint::kMutate, MakeReview(Create(pod, "hn-deny")), TestPolicy());
    EXPECT_EQ(m.http_status, 200) << quantity << ": " << m.body;
  }
}

TEST(Webhook, NumberOverflowOutsideAReviewIs400WithoutReview) {
  const Outcome o = Webhook().Handle(Endpoint::kMutate, "[1e400]", TestPolicy());
  EXPECT_EQ(o.http_status, 400);
  EXPECT_TRUE(json::parse(o.body).contains("error"));
}

// Found by the fuzzer: reading the kind for the log line threw on a kind that is not a string.
TEST(Webhook, KindThatIsNotAStringIsNeverAnInternalError) {
  for (const char* review :
       {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",
            "operation":"CREATE","namespace":"hn-deny","object":{"kind":{"a":1}}}})",
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",
            "operation":"DELETE","namespace":"hn-deny","oldObject":{"kind":7}}})"}) {
    for (const auto endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
      const Outcome o = Webhook().Handle(endpoint, review, TestPolicy());
      EXPECT_LT(o.http_status, 500) << review;
      EXPECT_EQ(json::parse(o.body)["response"]["uid"], "u1") << o.body;
    }
  }
}

TEST(Webhook, BarrierTurnsExceptionsInto500EchoingUid) {
  const Webhook failing(
      [](Endpoint, const Request&, const policy::Policy&, const catalogue::Catalogue&) -> Decision {
        throw std::logic_error("boom");
      });
  ReviewArgs a = V1beta1(Create(GpuPod("hn-deny"), "hn-deny"));
  const Outcome o = failing.Handle(Endpoint::kMutate, MakeReview(a), TestPolicy());
  EXPECT_EQ(o.http_status, 500);
  EXPECT_FALSE(o.decided);
  const json r = json::parse(o.body);
  EXPECT_EQ(r["apiVersion"], kApiVersionV1beta1);
  EXPECT_EQ(r["response"]["uid"], "uid-1");
  EXPECT_EQ(r["response"]["allowed"], false);
  EXPECT_EQ(r["response"]["status"]["code"], 500);
  EXPECT_NE(r["response"]["status"]["message"].get<std::string>().find("boom"), std::string::npos);
}

TEST(Webhook, BarrierCatchesNonStandardExceptions) {
  const Webhook failing([](Endpoint, const Request&, const policy::Policy&,
                           const catalogue::Catalogue&) -> Decision { throw 42; });
  const Outcome o = failing.Handle(Endpoint::kValidate,
                                   MakeReview(Create(GpuPod("hn-deny"), "hn-deny")), TestPolicy());
  EXPECT_EQ(o.http_status, 500);
  EXPECT_EQ(json::parse(o.body)["response"]["uid"], "uid-1");
}

struct WarningCase {
  std::string name;
  std::string rule, fix;
  std::string expected;
};
class ShortWarnings : public ::testing::TestWithParam<WarningCase> {};
TEST_P(ShortWarnings, AreCut) {
  rules::Finding f;
  f.rule = GetParam().rule;
  f.fix = GetParam().fix;
  EXPECT_EQ(ShortWarning(f), GetParam().expected);
}
INSTANTIATE_TEST_SUITE_P(
    Table, ShortWarnings,
    ::testing::Values(
        WarningCase{"Short", "shm-too-small", "mount a memory emptyDir at /dev/shm",
                    "shm-too-small: mount a memory emptyDir at /dev/shm"},
        WarningCase{"ExactlyAtLimit", "r", std::string(117, 'x'), "r: " + std::string(117, 'x')},
        WarningCase{"OneOver", "r", std::string(118, 'x'),
                    "r: " + std::string(116, 'x') + "\u2026"},
        WarningCase{"MultibyteCountsAsOne", "r", std::string(116, 'x') + "\u00e9",
                    "r: " + std::string(116, 'x') + "\u00e9"},
        WarningCase{"CutNeverSplitsACharacter", "r", std::string(116, 'x') + "\u00e9\u00e9",
                    "r: " + std::string(116, 'x') + "\u2026"}),
    [](const auto& row) { return row.param.name; });

TEST(PodTemplateChanged, ComparesTemplatesFoundByTheWorkloadView) {
  const json job = Job("ns", kHealthySpec);
  EXPECT_FALSE(PodTemplateChanged(job, job, TestPolicy(), "ns"));
  EXPECT_FALSE(PodTemplateChanged(job, Labeled(job), TestPolicy(), "ns"));
  EXPECT_FALSE(PodTemplateChanged(job, Restarted(job), TestPolicy(), "ns"));
  EXPECT_TRUE(PodTemplateChanged(job, TemplateAnnotated(job), TestPolicy(), "ns"));
  EXPECT_TRUE(PodTemplateChanged(job, Job("ns", kBrokenSpec), TestPolicy(), "ns"));
  json scaled = job;
  scaled["spec"]["parallelism"] = 4;
  EXPECT_FALSE(PodTemplateChanged(job, scaled, TestPolicy(), "ns"));
}

}  // namespace
}  // namespace rw::admission

namespace rw::admission {
namespace {

// A custom resource of a kind without a row, holding the broken pod as a template by shape.
json UnknownKind(const std::string& ns) {
  json pod = BrokenPod(ns);
  return json{{"apiVersion", "serving.example.com/v1"},
              {"kind", "InferencePool"},
              {"metadata", {{"name", "pool"}, {"namespace", ns}}},
              {"spec", {{"engine", {{"template", {{"spec", pod["spec"]}}}}}}}};
}

TEST(UnknownKind, ValidateJudgesTheTemplateFoundByShape) {
  const json r = Answer(Endpoint::kValidate, Create(UnknownKind("hn-deny"), "hn-deny"));
  EXPECT_EQ(r["allowed"], false);
  const std::string message = r["status"]["message"];
  EXPECT_NE(message.find("ipc-lock-missing"), std::string::npos) << message;
  EXPECT_NE(message.find("/spec/engine/template/spec/containers/0"), std::string::npos) << message;
}

TEST(UnknownKind, MutateNeverEditsATemplateFoundByShape) {
  json job = UnknownKind("hn-deny");
  const json r = Answer(Endpoint::kMutate, Create(job, "hn-deny"));
  EXPECT_EQ(r["allowed"], true);
  EXPECT_FALSE(r.contains("patch")) << r.dump();
}

// TrainJob UPDATEs (docs/trainer.md#updates): judged when the pods Trainer builds change (its
// runtimePatches, which Trainer lets change while the TrainJob is suspended), passed otherwise,
// and mutated in the webhook's runtimePatches entry only (spec.trainer is immutable).
json TrainJobRuntime() {
  return json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime", "metadata": {"name": "torch"},
    "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
      {"name": "node", "template": {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "t:1"}]}}}}}]}}}})");
}

json QueuedTrainJob() {
  return json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "llama", "namespace": "hn-deny"},
    "spec": {"suspend": true, "runtimeRef": {"name": "torch"},
      "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}}}})");
}

json AdmittedByKueue(json job) {
  job["spec"]["suspend"] = false;
  job["spec"]["runtimePatches"] = json::parse(R"([{"manager": "kueue.x-k8s.io/manager",
    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node",
      "template": {"spec": {"template": {"spec": {"nodeSelector": {"pool": "h100"}}}}}}]}}}}])");
  return job;
}

std::string Unbase64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, n = 0;
  for (char ch : text) {
    const auto at = alphabet.find(ch);
    if (at == std::string::npos) continue;  // '=' padding
    bits = (bits << 6) | static_cast<unsigned>(at);
    if ((n += 6) >= 8) out.push_back(static_cast<char>((bits >> (n -= 8)) & 0xFF));
  }
  return out;
}

json AnswerWithRuntime(Endpoint e, const ReviewArgs& a) {
  const auto catalogue =
      catalogue::Catalogue::From({TrainJobRuntime()}, catalogue::Source::kCluster);
  const Outcome o = Webhook().Handle(e, MakeReview(a), TestPolicy(), catalogue);
  EXPECT_EQ(o.http_status, 200) << o.body;
  return json::parse(o.body)["response"];
}

TEST(TrainJobUpdate, UnchangedTemplatesPass) {
  json labelled = QueuedTrainJob();
  labelled["metadata"]["labels"]["team"] = "a";
  labelled["spec"]["suspend"] = false;  // resuming alone changes no pod
  const ReviewArgs a = Update(QueuedTrainJob(), labelled, "hn-deny");
  EXPECT_FALSE(AnswerWithRuntime(Endpoint::kMutate, a).contains("patch"));
  EXPECT_EQ(WarningsStartingWith(AnswerWithRuntime(Endpoint::kValidate, a),
                                 "trainer-runtime-no-rdma-path"),
            0u);
}

TEST(TrainJobUpdate, ChangedRuntimePatchesAreJudgedAndMutatedInTheOwnEntryOnly) {
  const ReviewArgs a = Update(QueuedTrainJob(), AdmittedByKueue(QueuedTrainJob()), "hn-deny");
  const json v = AnswerWithRuntime(Endpoint::kValidate, a);
  EXPECT_EQ(WarningsStartingWith(v, "trainer-runtime-no-rdma-path"), 1u) << v.dump();
  const json m = AnswerWithRuntime(Endpoint::kMutate, a);
  ASSERT_TRUE(m.contains("patch")) << m.dump();
  const json ops = json::parse(Unbase64(m["patch"].get<std::string>()));
  ASSERT_FALSE(ops.empty());
  for (const auto& op : ops)
    EXPECT_EQ(op["path"].get<std::string>().rfind("/spec/runtimePatches/1", 0), 0u) << op.dump();
  // The same review as a CREATE also writes spec.trainer (NCCL env for the host network).
  const json c =
      AnswerWithRuntime(Endpoint::kMutate, Create(AdmittedByKueue(QueuedTrainJob()), "hn-deny"));
  EXPECT_NE(Unbase64(c["patch"].get<std::string>()).find("/spec/trainer/env"), std::string::npos);
}

}  // namespace
}  // namespace rw::admission
