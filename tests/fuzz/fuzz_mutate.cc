// Differential target: mutate::Mutate against nlohmann's own RFC 6902 implementation and
// against rules::Diagnose, for a JSON object under one policy per mode.
//
// Invariants, for every policy:
//  - Mutate throws nothing but workload::ManifestError (wrong field types);
//  - json::patch(object, patch) == result: the patch the API server applies gives exactly the
//    object the webhook judged;
//  - Mutate(result).patch == []: mutating is idempotent (the API server may call a mutating
//    webhook again under reinvocationPolicy: IfNeeded);
//  - no self-denial: every error Diagnose reports on the result it already reported on the
//    input, by the same rule at the same field. Comparing rule ids alone let a new error hide
//    behind an old one of the same rule (an interface renamed under a container's
//    NCCL_SOCKET_IFNAME while another container already named a missing one).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/workload/workload.h"

namespace {

using nlohmann::json;
using rw::fuzz::Check;
namespace policy = rw::policy;

const std::vector<policy::Policy>& Policies() {
  static const std::vector<policy::Policy> policies = [] {
    const char* const kHeader =
        "apiVersion: rdma-webhook/v1\nkind: Policy\n"
        "resources: {vf: [rdma/vf], shared: [rdma/hca_shared_devices_a]}\n";
    std::vector<policy::Policy> out;
    for (const char* defaults : {
             R"(defaults: {mode: "off", validation: deny})",
             R"(defaults: {mode: hostNetwork, validation: deny, injectShm: true})",
             R"(defaults: {mode: sriov, validation: deny, injectShm: true,
                 sriov: {networks: [{network: sriov-rdma-net, interface: eth1}]},
                 nccl: {fabric: roce, gidIndex: 3, gdrLevel: PHB}})",
             R"(defaults: {mode: sriov, validation: deny, onConflict: override,
                 sriov: {networks: [{network: sriov-rdma-net, interface: eth1},
                                    {network: sriov-rdma-net-2, interface: eth2}]}})",
             R"(defaults: {mode: shared, validation: deny,
                 shared: {resource: rdma/hca_shared_devices_a, network: macvlan-rdma,
                          interface: net1}})",
             R"(defaults: {mode: tcp, validation: deny})",
         }) {
      out.push_back(policy::ParsePolicyText(std::string(kHeader) + defaults));
    }
    return out;
  }();
  return policies;
}

// "rule @pointer" of every error: the mutator only appends to user arrays, so a field of the
// input keeps its pointer in the result.
std::set<std::string> Errors(const rw::rules::Diagnosis& d) {
  std::set<std::string> errors;
  for (const auto& f : d.findings) {
    if (f.severity == rw::rules::Severity::kError) errors.insert(f.rule + " @" + f.pointer);
  }
  return errors;
}

bool Dns1123Label(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string Show(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // What the webhook would see: a JSON object no deeper than the decoder admits.
  if (rw::codec::JsonNestingDepth(text) > rw::codec::kMaxNestingDepth) return 0;
  const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return 0;
  // The API server sends only objects of a namespace that can exist (a DNS-1123 label); in any
  // other, every attachment the policy adds is one Multus cannot look up.
  const json ns = object.value("/metadata/namespace"_json_pointer, json());
  if (ns.is_string() && !Dns1123Label(ns.get_ref<const std::string&>())) return 0;

  for (std::size_t which = 0; which < Policies().size(); ++which) {
    const policy::Policy& p = Policies()[which];
    const std::string label = "policy #" + std::to_string(which) + ": ";
    rw::mutate::Mutation m;
    try {
      m = rw::mutate::Mutate(object, p, "default");
    } catch (const rw::workload::ManifestError&) {
      continue;
    }
    json patch;
    try {
      patch = m.patch.Json();
    } catch (const json::exception& e) {
      rw::fuzz::Fail("the patch is not JSON", std::string(e.what()) + "\n" + m.patch.text());
    }
    Check(patch.is_array() && patch.size() == m.patch.size(),
          "the patch is not an array of its operations", m.patch.text());
    json patched;
    try {
      patched = object.patch(patch);
    } catch (const json::exception& e) {
      rw::fuzz::Fail("the patch does not apply", std::string(e.what()) + "\n" + Show(patch));
    }
    Check(patched == m.result, "patch applied != the mutated result",
          label + Show(patch) + "\n" + Show(patched) + "\n" + Show(m.result));

    rw::mutate::Mutation again;
    try {
      again = rw::mutate::Mutate(m.result, p, "default");
    } catch (const rw::workload::ManifestError& e) {
      rw::fuzz::Fail("the mutated result is malformed", e.what());
    }
    Check(again.patch.empty(), "mutating the result again patches it",
          label + again.patch.text() + "\n" + Show(m.result));

    std::set<std::string> before;
    try {
      before = Errors(rw::rules::Diagnose(object, p, "default"));
    } catch (const rw::workload::ManifestError&) {
      continue;
    }
    for (const auto& error : Errors(rw::rules::Diagnose(m.result, p, "default"))) {
      Check(before.count(error) == 1, "self-denial: the result has an error the input did not",
            label + error + "\n" + Show(object) + "\n" + Show(m.result));
    }
  }
  return 0;
}
