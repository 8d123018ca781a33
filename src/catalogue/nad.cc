#include "rdma_webhook/catalogue/nad.h"

#include <algorithm>
#include <array>

namespace rw::catalogue {
namespace {

using nlohmann::json;

const json* Member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringMember(const json& object, std::string_view key) {
  const json* v = Member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// CNI plugins that move a device of the network's resource into the pod, RDMA side included:
// the SR-IOV CNI (a VF), its InfiniBand twin, and host-device (a whole PF or VF). The `rdma`
// meta plugin moves the RDMA device of the chain's netdev (exclusive RDMA namespace mode).
constexpr std::array<std::string_view, 4> kRdmaTypes = {"sriov", "ib-sriov", "host-device", "rdma"};

bool IsRdmaType(std::string_view type) {
  return std::find(kRdmaTypes.begin(), kRdmaTypes.end(), type) != kRdmaTypes.end();
}

// The config's plugins: the config itself, or each of a conflist's `plugins` (the first is the
// main plugin, the rest its chain). Returns the problem when the config cannot be read ("" when
// it was).
std::string ReadPlugins(const json& config, std::vector<const json*>& plugins) {
  if (!config.is_object()) return "spec.config is not a JSON object";
  const json* list = Member(config, "plugins");
  if (list == nullptr) {
    plugins.push_back(&config);
    return {};
  }
  if (!list->is_array()) return "spec.config plugins is not a list";
  if (list->empty()) return "spec.config has no plugins";
  if (list->size() > kMaxNadPlugins)
    return "spec.config has more than " + std::to_string(kMaxNadPlugins) + " plugins";
  for (const auto& p : *list) plugins.push_back(&p);
  return {};
}

}  // namespace

std::string NadView::Types() const {
  std::string out;
  for (const auto& t : types) out += (out.empty() ? "" : " + ") + t;
  return out;
}

NadView ReadNad(const json& nad) {
  NadView view;
  if (const json* meta = Member(nad, "metadata"); meta != nullptr) {
    view.ns = StringMember(*meta, "namespace");
    view.name = StringMember(*meta, "name");
    if (const json* annotations = Member(*meta, "annotations"); annotations != nullptr)
      view.resource = StringMember(*annotations, kNadResourceAnnotation);
  }
  const json* spec = Member(nad, "spec");
  const json* config = spec != nullptr ? Member(*spec, "config") : nullptr;
  // Without spec.config Multus reads the network's config from a file on the node: unknown here.
  if (config == nullptr || (config->is_string() && config->get_ref<const std::string&>().empty())) {
    view.problem = "no spec.config (the config is a file on the nodes)";
    return view;
  }
  if (!config->is_string()) {
    view.problem = "spec.config is not a string";
    return view;
  }
  const auto& text = config->get_ref<const std::string&>();
  if (text.size() > kMaxNadConfigBytes) {
    view.problem = "spec.config is longer than " + std::to_string(kMaxNadConfigBytes) + " bytes";
    return view;
  }
  // No exceptions: malformed text is a discarded value. nlohmann's parser keeps its nesting on
  // the heap, so the byte bound above also bounds its work.
  const json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded()) {
    view.problem = "spec.config is not JSON";
    return view;
  }
  std::vector<const json*> plugins;
  view.problem = ReadPlugins(parsed, plugins);
  if (!view.problem.empty()) return view;
  for (const json* p : plugins) {
    std::string type = StringMember(*p, "type");
    if (type.empty()) {
      view.problem = "a plugin of spec.config names no type";
      view.types.clear();
      return view;
    }
    view.types.push_back(std::move(type));
  }
  const std::string& main = view.types.front();
  view.needs_device = (main == "sriov" || main == "ib-sriov") && !view.resource.empty() &&
                      Member(*plugins.front(), "deviceID") == nullptr;
  const bool rdma = std::any_of(view.types.begin(), view.types.end(), IsRdmaType);
  view.nics = rdma ? NadNics::kRdma : NadNics::kNetdev;
  view.rdma_stated = std::any_of(view.types.begin(), view.types.end(), [](const std::string& t) {
    return t == "ib-sriov" || t == "rdma";
  });
  return view;
}

}  // namespace rw::catalogue
