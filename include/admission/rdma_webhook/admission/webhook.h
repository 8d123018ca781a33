#pragma once
// The admission webhook: decode a review, decide with the policy core, encode the answer
// (docs/http.md). Mirrors controller-runtime's pkg/webhook/admission: a Request in, a
// Response out; a denial is a value, not an error; a barrier turns any escaped exception into a
// well-formed HTTP 500 review that still echoes the uid, so the API server's failurePolicy
// decides. No I/O, no clock, no logging: the server counts and logs from the Outcome.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/admission/review.h"
#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/verdict.h"

namespace rw::admission {

enum class Endpoint { kMutate, kValidate };
std::string_view ToString(Endpoint e);

// Kubernetes shows at most this many characters of one warning.
inline constexpr std::size_t kMaxWarningChars = 120;
// The annotation whose change alone does not make an UPDATE worth judging again (the core's).
using rules::kRestartedAtAnnotation;

// What the webhook decided about one decoded request.
struct Decision {
  Response response;
  std::string path = "none";             // the judged object's access path
  std::vector<rules::Finding> findings;  // the findings reported to the user (for metrics)
};

// The decision for one request. Pure. Throws whatever the core throws except
// workload::ManifestError, which becomes an answer. Takes the request by value: the mutator
// patches its object in place instead of copying it. `catalogue`: the cluster's objects as the
// server's watch last saw them (empty without one).
Decision Decide(Endpoint endpoint, Request request, const policy::Policy& policy,
                const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());

// True when a pod template of `new_object` differs from the one at the same place in
// `old_object`: its spec, or its annotations other than kRestartedAtAnnotation, or the set of
// templates itself. Objects that are not workloads of the policy have no templates.
bool PodTemplateChanged(const nlohmann::json& old_object, const nlohmann::json& new_object,
                        const policy::Policy& policy, std::string_view ns);

// `<rule>: <fix>` cut to kMaxWarningChars characters (UTF-8 aware).
std::string ShortWarning(const rules::Finding& finding);

// The answer to one HTTP body, and what the server counts and logs about it.
struct Outcome {
  int http_status = 200;
  std::string body;      // application/json
  bool decided = false;  // a review was answered with HTTP 200
  bool allowed = true;
  std::string error;  // for HTTP 400 and 500: what went wrong
  std::string uid, operation, kind, ns, name;
  bool dry_run = false;
  Decision decision;
};

class Webhook {
 public:
  using DecideFunction = std::function<Decision(Endpoint, Request, const policy::Policy&,
                                                const catalogue::Catalogue&)>;

  Webhook();
  // Tests inject a decision that throws to exercise the barrier.
  explicit Webhook(DecideFunction decide);

  // Never throws. Thread-safe: the webhook holds no mutable state.
  Outcome Handle(
      Endpoint endpoint, std::string_view body, const policy::Policy& policy,
      const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty()) const noexcept;

 private:
  DecideFunction decide_;
};

}  // namespace rw::admission
