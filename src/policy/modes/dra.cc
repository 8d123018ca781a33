// mode: dra, and its section `dra: {claimTemplate, claimName, socketIfname}`: the pods claim
// their RDMA NICs from a ResourceClaimTemplate of their namespace (docs/dra.md#mode-dra).
#include <algorithm>

#include "mode.h"

namespace rw::policy::modes {
namespace {

// RFC 1123: lowercase letters, digits and `-` (`.` too in a subdomain), starting and ending
// with a letter or digit. A ResourceClaimTemplate's name is a subdomain (at most 253
// characters), a pod's claim name a label (at most 63): the API server refuses anything else.
bool Rfc1123(std::string_view s, std::size_t max, bool dots) {
  if (s.empty() || s.size() > max) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || (dots && c == '.'); });
}

constexpr const char* kSubdomain = "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$";
constexpr const char* kLabel = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

void Read(const nlohmann::json& v, const std::string& path, NamespacePolicy& ns) {
  Fields f(v, path);
  ns.dra.claim_template = f.String("claimTemplate", ns.dra.claim_template);
  if (!ns.dra.claim_template.empty() && !Rfc1123(ns.dra.claim_template, 253, true))
    Fail(f.Path("claimTemplate"), "'" + ns.dra.claim_template +
                                      "' is not a ResourceClaimTemplate name (RFC 1123 subdomain)");
  ns.dra.claim_name = f.String("claimName", ns.dra.claim_name);
  if (!Rfc1123(ns.dra.claim_name, 63, false))
    Fail(f.Path("claimName"),
         "'" + ns.dra.claim_name + "' is not a pod claim name (RFC 1123 label, at most 63)");
  ns.dra.socket_ifname = f.String("socketIfname", ns.dra.socket_ifname);
  if (!ns.dra.socket_ifname.empty() && !ValidInterface(ns.dra.socket_ifname))
    Fail(f.Path("socketIfname"), "is not a valid interface name");
  f.Done();
}

void Require(const NamespacePolicy& ns, const Fields& entry) {
  if (ns.dra.claim_template.empty())
    Fail(entry.Path("dra.claimTemplate"), "mode dra needs the ResourceClaimTemplate of the NICs");
}

schema::Schema Section() {
  return schema::Object(
      {{"claimTemplate", {{"type", "string"}, {"maxLength", 253}, {"pattern", kSubdomain}}},
       {"claimName", {{"type", "string"}, {"maxLength", 63}, {"pattern", kLabel}}},
       {"socketIfname", {{"anyOf", {schema::Interface(), {{"const", ""}}}}}}});
}

}  // namespace

extern const Row dra;
constexpr Row dra = {.mode = Mode::kDra,
                     .name = "dra",
                     .position = 50,
                     .path = Path::kDra,
                     .read = Read,
                     .require = Require,
                     .section_schema = Section};

}  // namespace rw::policy::modes
