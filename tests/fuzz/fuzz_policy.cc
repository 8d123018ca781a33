// The policy parser: policy::ParsePolicyText on any text.
//
// Invariants:
//  - only policy::PolicyError escapes (any other exception is a crash: libFuzzer aborts on it);
//  - a PolicyError names what is wrong (non-empty message);
//  - a policy that loads is deterministic: the same text loads to the same hash, and every
//    namespace lookup finds an entry whose resolved allowed paths admit its own mode.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "rdma_webhook/policy/policy.h"

namespace {

using rw::fuzz::Check;
namespace policy = rw::policy;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  policy::Policy p;
  try {
    p = policy::ParsePolicyText(text);
  } catch (const policy::PolicyError& e) {
    Check(e.what()[0] != '\0', "a PolicyError without a message");
    return 0;
  }
  Check(!p.hash.empty(), "a loaded policy without a hash");
  Check(policy::ParsePolicyText(text).hash == p.hash, "the same text loads to another hash");
  for (const char* ns : {"default", "kube-system", "team-a", "", "a*"}) {
    const policy::NamespacePolicy& entry = p.ForNamespace(ns);
    Check(entry.Allows(policy::ModePath(entry.mode)),
          "a namespace's own mode is not an allowed path", ns);
  }
  return 0;
}
