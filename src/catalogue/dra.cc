#include "rdma_webhook/catalogue/dra.h"

#include <algorithm>
#include <cctype>

namespace rw::catalogue {
namespace {

using nlohmann::json;

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringMember(const json& object, const char* key) {
  const json* v = Member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::vector<std::string> Strings(const json* list) {
  std::vector<std::string> out;
  if (list != nullptr && list->is_array())
    for (const auto& s : *list)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

void AddOnce(std::vector<std::string>& list, std::string value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

std::size_t SkipSpaces(std::string_view s, std::size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// A CEL string literal at `i` ("..." or '...', no escapes in the names read here): its text,
// and `i` past it; nullopt when there is none.
std::optional<std::string> Literal(std::string_view s, std::size_t& i) {
  if (i >= s.size() || (s[i] != '"' && s[i] != '\'')) return std::nullopt;
  const char quote = s[i];
  const std::size_t end = s.find(quote, i + 1);
  if (end == std::string_view::npos) return std::nullopt;
  std::string out(s.substr(i + 1, end - i - 1));
  i = end + 1;
  return out;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The comparison after an operand at `i`: +1 when it requires true (none, `== true`,
// `!= false`), -1 when it requires false, 0 when it compares with something else.
int Truth(std::string_view s, std::size_t i) {
  i = SkipSpaces(s, i);
  const auto op = s.substr(i, 2);
  if (op != "==" && op != "!=") return 1;
  std::size_t j = SkipSpaces(s, i + 2);
  const bool eq = op == "==";
  if (s.substr(j, 4) == "true" && (j + 4 == s.size() || !IsIdentChar(s[j + 4]))) return eq ? 1 : -1;
  if (s.substr(j, 5) == "false" && (j + 5 == s.size() || !IsIdentChar(s[j + 5])))
    return eq ? -1 : 1;
  return 0;
}

bool Negated(std::string_view s, std::size_t at) {
  std::size_t i = at;
  while (i > 0 && std::isspace(static_cast<unsigned char>(s[i - 1]))) --i;
  return i > 0 && s[i - 1] == '!';
}

void ReadExpression(std::string_view e, DeviceRequirements& out) {
  // Only a conjunction of tests says what every matching device has.
  if (e.find("||") != std::string_view::npos || e.find('?') != std::string_view::npos) {
    out.uncertain = true;
    return;
  }
  constexpr std::string_view kDriver = "device.driver";
  for (std::size_t at = e.find(kDriver); at != std::string_view::npos;
       at = e.find(kDriver, at + 1)) {
    std::size_t i = SkipSpaces(e, at + kDriver.size());
    if (e.substr(i, 2) != "==") continue;
    i = SkipSpaces(e, i + 2);
    if (auto driver = Literal(e, i)) AddOnce(out.drivers, std::move(*driver));
  }
  // "dra.net" == device.driver
  for (std::size_t at = e.find("=="); at != std::string_view::npos; at = e.find("==", at + 2)) {
    if (SkipSpaces(e, at + 2) + kDriver.size() > e.size() ||
        e.substr(SkipSpaces(e, at + 2), kDriver.size()) != kDriver)
      continue;
    std::size_t end = at;
    while (end > 0 && std::isspace(static_cast<unsigned char>(e[end - 1]))) --end;
    if (end < 2 || (e[end - 1] != '"' && e[end - 1] != '\'')) continue;
    const std::size_t start = e.rfind(e[end - 1], end - 2);
    if (start == std::string_view::npos) continue;
    AddOnce(out.drivers, std::string(e.substr(start + 1, end - start - 2)));
  }
  constexpr std::string_view kAttributes = "device.attributes[";
  for (std::size_t at = e.find(kAttributes); at != std::string_view::npos;
       at = e.find(kAttributes, at + 1)) {
    std::size_t i = at + kAttributes.size();
    if (!Literal(e, i) || i >= e.size() || e[i] != ']') continue;
    ++i;
    std::string name;
    if (i < e.size() && e[i] == '.') {
      for (++i; i < e.size() && IsIdentChar(e[i]); ++i) name += e[i];
    } else if (i < e.size() && e[i] == '[') {
      ++i;
      auto quoted = Literal(e, i);
      if (!quoted || i >= e.size() || e[i] != ']') continue;
      name = std::move(*quoted);
      ++i;
    }
    if (name.empty()) continue;
    // A further member access (`.rdma.x`) is no bool test of the attribute: not read.
    if (i < e.size() && e[i] == '.') continue;
    if (!Negated(e, at) && Truth(e, i) == 1) AddOnce(out.attributes, std::move(name));
  }
}

}  // namespace

bool DeviceRequirements::RequiresAttribute(std::string_view name) const {
  return std::find(attributes.begin(), attributes.end(), name) != attributes.end();
}

void DeviceRequirements::Add(const DeviceRequirements& other) {
  for (const auto& d : other.drivers) AddOnce(drivers, d);
  for (const auto& a : other.attributes) AddOnce(attributes, a);
  uncertain = uncertain || other.uncertain;
}

DeviceRequirements ReadSelectors(const json& selectors) {
  DeviceRequirements out;
  if (!selectors.is_array()) return out;
  for (const auto& selector : selectors) {
    const json* cel = Member(selector, "cel");
    if (cel == nullptr) continue;
    const json* expression = Member(*cel, "expression");
    if (expression != nullptr && expression->is_string())
      ReadExpression(expression->get_ref<const std::string&>(), out);
  }
  return out;
}

DeviceClassView ReadDeviceClass(const json& device_class) {
  DeviceClassView out;
  if (const json* meta = Member(device_class, "metadata")) out.name = StringMember(*meta, "name");
  const json* spec = Member(device_class, "spec");
  if (spec == nullptr) return out;
  if (const json* selectors = Member(*spec, "selectors"))
    out.requirements = ReadSelectors(*selectors);
  out.extended_resource_name = StringMember(*spec, "extendedResourceName");
  return out;
}

std::string ImplicitExtendedResourceName(std::string_view class_name) {
  return "deviceclass.resource.kubernetes.io/" + std::string(class_name);
}

namespace {

DeviceAlternative ReadAlternative(const json& r, std::string name) {
  DeviceAlternative a;
  a.name = std::move(name);
  a.device_class = StringMember(r, "deviceClassName");
  if (const json* selectors = Member(r, "selectors")) a.requirements = ReadSelectors(*selectors);
  a.all = StringMember(r, "allocationMode") == "All";
  if (const json* count = Member(r, "count"); count != nullptr && count->is_number_integer())
    a.count = count->get<long long>();
  return a;
}

}  // namespace

ClaimSpecView ReadClaimSpec(const json& spec) {
  ClaimSpecView out;
  const json* devices = Member(spec, "devices");
  if (devices == nullptr) return out;
  if (const json* requests = Member(*devices, "requests"); requests && requests->is_array()) {
    for (const auto& r : *requests) {
      DeviceRequestView request;
      request.name = StringMember(r, "name");
      if (const json* exactly = Member(r, "exactly")) {
        request.alternatives.push_back(ReadAlternative(*exactly, ""));
      } else if (const json* first = Member(r, "firstAvailable"); first && first->is_array()) {
        for (const auto& sub : *first)
          request.alternatives.push_back(ReadAlternative(sub, StringMember(sub, "name")));
      } else if (Member(r, "deviceClassName") != nullptr) {  // v1beta1
        request.alternatives.push_back(ReadAlternative(r, ""));
      }
      out.requests.push_back(std::move(request));
    }
  }
  if (const json* constraints = Member(*devices, "constraints");
      constraints && constraints->is_array())
    for (const auto& c : *constraints)
      out.constraints.push_back(
          {Strings(Member(c, "requests")), StringMember(c, "matchAttribute")});
  if (const json* config = Member(*devices, "config"); config && config->is_array())
    for (const auto& c : *config) {
      DeviceConfigView view{Strings(Member(c, "requests")), "", nullptr};
      if (const json* opaque = Member(c, "opaque")) {
        view.driver = StringMember(*opaque, "driver");
        view.parameters = Member(*opaque, "parameters");
      }
      out.config.push_back(std::move(view));
    }
  return out;
}

std::optional<ClaimSpecView> ReadClaimObject(const json& object) {
  const json* spec = Member(object, "spec");
  if (spec == nullptr) return std::nullopt;
  if (StringMember(object, "kind") == "ResourceClaimTemplate") {
    spec = Member(*spec, "spec");
    if (spec == nullptr) return std::nullopt;
  }
  return ReadClaimSpec(*spec);
}

}  // namespace rw::catalogue
