// mode: shared, and its section `shared: {resource, count, network, interface}`.
#include "mode.h"

namespace rw::policy::modes {
namespace {

void Read(const nlohmann::json& v, const std::string& path, NamespacePolicy& ns) {
  Fields f(v, path);
  ns.shared.resource = f.String("resource", ns.shared.resource);
  ns.shared.count = f.Count("count", ns.shared.count);
  ns.shared.network = f.String("network", ns.shared.network);
  ns.shared.interface = f.String("interface", ns.shared.interface);
  if (!ns.shared.interface.empty() && !ValidInterface(ns.shared.interface))
    Fail(f.Path("interface"), "is not a valid interface name");
  f.Done();
}

void Require(const NamespacePolicy& ns, const Fields& entry) {
  if (ns.shared.resource.empty())
    Fail(entry.Path("shared.resource"), "mode shared needs a resource");
}

schema::Schema Section() {
  return schema::Object({{"resource", schema::String()},
                         {"count", schema::Count()},
                         {"network", schema::String()},
                         {"interface", {{"anyOf", {schema::Interface(), {{"const", ""}}}}}}});
}

}  // namespace

extern const Row shared;
constexpr Row shared = {.mode = Mode::kShared,
                        .name = "shared",
                        .position = 30,
                        .path = Path::kShared,
                        .read = Read,
                        .require = Require,
                        .section_schema = Section};

}  // namespace rw::policy::modes
