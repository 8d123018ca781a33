// mode: hostNetwork, and its section `hostNetwork: {socketIfname, deviceResource}`.
#include "mode.h"

namespace rw::policy::modes {
namespace {

void Read(const nlohmann::json& v, const std::string& path, NamespacePolicy& ns) {
  Fields f(v, path);
  ns.host_network.socket_ifname = f.String("socketIfname", ns.host_network.socket_ifname);
  ns.host_network.device_resource = f.String("deviceResource", ns.host_network.device_resource);
  f.Done();
}

schema::Schema Section() {
  return schema::Object({{"socketIfname", schema::String()}, {"deviceResource", schema::String()}});
}

}  // namespace

extern const Row host_network;
constexpr Row host_network = {.mode = Mode::kHostNetwork,
                              .name = "hostNetwork",
                              .position = 10,
                              .path = Path::kHostNetwork,
                              .read = Read,
                              .require = nullptr,
                              .section_schema = Section};

}  // namespace rw::policy::modes
