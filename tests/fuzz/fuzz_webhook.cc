// The whole request path: Webhook::Handle on raw HTTP body bytes, on both endpoints.
//
// Invariants (docs/http.md, docs/reliability.md, issue 11):
//  - Handle never throws (it is noexcept: a throw would terminate) and the body is valid JSON;
//  - input DecodeReview rejects is answered 400, never 5xx; the answer is a review echoing the
//    uid when the error carries one, else {"error": ...};
//  - a decodable review is answered 200 echoing its uid and apiVersion (a 500 is a fault of the
//    core on input the API server can send, so it is a finding too);
//  - a patch, when there is one, is a JSON Patch that applies to the request's object;
//  - codec::ParseJson, which reads the body, makes of it what nlohmann::json::parse makes: the
//    same tree with the same node types, or the same exception with the same message.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <boost/json/monotonic_resource.hpp>
#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "rdma_webhook/admission/review.h"
#include "rdma_webhook/admission/webhook.h"
#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/json_text.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/policy/policy.h"

namespace {

using nlohmann::json;
using rw::fuzz::Check;
namespace admission = rw::admission;

// One namespace per mode, deny and warn, and an override namespace.
const rw::policy::Policy& FuzzPolicy() {
  static const rw::policy::Policy p = rw::policy::ParsePolicyText(R"(
apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces:
  - {names: [hn], mode: hostNetwork, validation: deny}
  - {names: [sriov], mode: sriov, validation: deny, injectShm: true,
     sriov: {networks: [{network: sriov-rdma-net, interface: eth1, resource: rdma/vf}]},
     nccl: {fabric: roce, gidIndex: 3, gdrLevel: PHB}}
  - {names: [sriov-override], mode: sriov, validation: warn, onConflict: override,
     sriov: {networks: [{network: sriov-rdma-net, interface: eth1},
                        {network: sriov-rdma-net-2, interface: eth2}]}}
  - {names: [shared], mode: shared, validation: deny,
     shared: {resource: rdma/hca_shared_devices_a, network: macvlan-rdma, interface: net1}}
  - {names: [tcp], mode: tcp, validation: deny}
  - {names: [opt-*], mode: hostNetwork, validation: deny, optOut: true}
)");
  return p;
}

// The tree with every number's type spelled out (json's == calls 5u and 5 equal, 0.0 and -0.0).
std::string Typed(const json& v) {
  switch (v.type()) {
    case json::value_t::object: {
      std::string out = "{";
      for (auto it = v.begin(); it != v.end(); ++it)
        out += json(it.key()).dump() + ":" + Typed(*it);
      return out + "}";
    }
    case json::value_t::array: {
      std::string out = "[";
      for (const auto& item : v) out += Typed(item) + ",";
      return out + "]";
    }
    case json::value_t::number_unsigned:
      return "u" + v.dump();
    case json::value_t::number_integer:
      return "i" + v.dump();
    case json::value_t::number_float: {
      const double d = v.get<double>();
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      return "f" + std::to_string(bits);
    }
    default:
      return v.dump();
  }
}

template <class Parse>
std::string ParsedAs(Parse parse, std::string_view text) {
  try {
    return Typed(parse(text));
  } catch (const json::exception& e) {
    return std::string("throws ") + e.what();
  } catch (const rw::codec::JsonTooDeep&) {
    return "too deep";
  }
}

// The reference is nlohmann behind the bracket count the request path always refused by.
void CheckParser(std::string_view body) {
  const std::string fast = ParsedAs(
      [](std::string_view t) { return rw::codec::ParseJson(t, rw::codec::kMaxNestingDepth); },
      body);
  const std::string reference = ParsedAs(
      [](std::string_view t) {
        if (rw::codec::JsonNestingDepth(t) > rw::codec::kMaxNestingDepth)
          throw rw::codec::JsonTooDeep("");
        return json::parse(t);
      },
      body);
  Check(fast == reference, "ParseJson and nlohmann disagree", fast + "\n---\n" + reference);
  // The request path's reader: the same values in Boost.JSON's DOM, the same refusals.
  const std::string dom = ParsedAs(
      [](std::string_view t) {
        boost::json::monotonic_resource arena;
        return rw::codec::FromDom(rw::codec::ParseDom(t, rw::codec::kMaxNestingDepth, &arena));
      },
      body);
  Check(dom == reference, "ParseDom and nlohmann disagree", dom + "\n---\n" + reference);
}

void CheckOutcome(admission::Endpoint endpoint, std::string_view body) {
  const admission::Outcome o = admission::Webhook().Handle(endpoint, body, FuzzPolicy());
  const json answer = json::parse(o.body, nullptr, /*allow_exceptions=*/false);
  Check(!answer.is_discarded(), "the answer is not valid JSON", o.body);

  admission::Request request;
  try {
    request = admission::DecodeReview(body);
  } catch (const admission::DecodeError& e) {
    Check(o.http_status == 400, "input the decoder rejected is not answered 400", o.body);
    Check(!o.decided, "rejected input counted as decided", o.body);
    if (e.uid().empty()) {
      Check(answer.is_object() && answer.contains("error"), "400 without {error}", o.body);
    } else {
      Check(answer.value("/response/uid"_json_pointer, json()) == e.uid(),
            "400 does not echo the uid the decoder read", o.body);
      Check(answer.value("/response/status/code"_json_pointer, json()) == 400,
            "400 review without status 400", o.body);
    }
    return;
  }
  Check(o.http_status == 200, "a decodable review is not answered 200", o.body);
  Check(o.decided, "a decodable review is not decided", o.body);
  Check(answer.value("apiVersion", json()) == request.api_version,
        "the answer is not in the request's apiVersion", o.body);
  Check(answer.value("/response/uid"_json_pointer, json()) == request.uid,
        "the answer does not echo the uid", o.body);
  const json* response = &answer["response"];
  Check(response->value("allowed", json()).is_boolean(), "response.allowed is no boolean", o.body);
  if (response->contains("patch")) {
    Check(endpoint == admission::Endpoint::kMutate, "validate answered with a patch", o.body);
    Check(response->value("patchType", json()) == "JSONPatch", "patch without patchType", o.body);
    const json patch =
        json::parse(rw::fuzz::Base64Decode(response->at("patch").get<std::string>()), nullptr,
                    /*allow_exceptions=*/false);
    Check(patch.is_array() && !patch.empty(), "the patch is not a non-empty array", o.body);
    try {
      (void)rw::codec::FromDom(request.object).patch(patch);
    } catch (const json::exception& e) {
      Check(false, "the patch does not apply to the object", e.what());
    }
  } else {
    Check(!response->contains("patchType"), "patchType without a patch", o.body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  CheckParser(body);
  CheckOutcome(admission::Endpoint::kMutate, body);
  CheckOutcome(admission::Endpoint::kValidate, body);
  return 0;
}
