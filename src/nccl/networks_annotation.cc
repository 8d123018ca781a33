// The Multus network selection annotation, read as Multus reads it. The reference is
// multus-cni (commit 95a0932, 2026-08-20): pkg/k8sclient/k8sclient.go parsePodNetworkAnnotation
// and parsePodNetworkObjectName, the encoding/json decoding of types.NetworkSelectionElement,
// GetNetworkDelegates/getKubernetesDelegate, types.CheckGatewayConfig and, in
// pkg/multus/multus.go, getIfname and DelegateAdd. tests/unit/nccl/multus_vectors.json holds
// what that code makes of ~150 values; tests/multus-oracle regenerates it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

using OrderedJson = nlohmann::ordered_json;

// One UTF-8 code point at s[i]: the code point and its length; an invalid sequence reads as
// one byte that is no code point (as Go's utf8.DecodeRune gives RuneError).
struct CodePoint {
  char32_t value = 0;
  std::size_t size = 1;
  bool valid = false;
};

CodePoint DecodeAt(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return {c, 1, true};
  std::size_t n = 0;
  char32_t v = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    v = c & 0x07;
  } else {
    return {};
  }
  if (i + n > s.size()) return {};
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {};
    v = (v << 6) | (b(i + k) & 0x3F);
  }
  const bool overlong = (n == 3 && v < 0x800) || (n == 4 && v < 0x10000);
  if (overlong || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return {};
  return {v, n, true};
}

// Go's unicode.IsSpace: the ASCII spaces, U+0085, U+00A0 and the White_Space property.
bool IsGoSpace(char32_t c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

// Go's strings.TrimSpace.
std::string_view TrimSpace(std::string_view s) {
  while (!s.empty()) {
    const CodePoint cp = DecodeAt(s, 0);
    if (!cp.valid || !IsGoSpace(cp.value)) break;
    s.remove_prefix(cp.size);
  }
  while (!s.empty()) {
    // The last code point starts at the last byte that is not a continuation byte.
    std::size_t start = s.size() - 1;
    while (start > 0 && s.size() - start < 4 &&
           (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
      --start;
    const CodePoint cp = DecodeAt(s, start);
    if (!cp.valid || start + cp.size != s.size() || !IsGoSpace(cp.value)) break;
    s.remove_suffix(cp.size);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = s.find(sep, pos);
    parts.push_back(
        s.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
    if (end == std::string_view::npos) return parts;
    pos = end + 1;
  }
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, any length: the shape Multus requires of comma-form names.
bool DnsLabelShape(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// What a namespace can be called (DNS-1123 label).
bool IsDns1123Label(std::string_view s) { return s.size() <= 63 && DnsLabelShape(s); }

// What a custom resource such as a NetworkAttachmentDefinition can be called (DNS-1123
// subdomain).
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  const auto labels = Split(s, '.');
  return std::all_of(labels.begin(), labels.end(), DnsLabelShape);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool HexPair(std::string_view s, std::size_t at) {
  return at + 2 <= s.size() && HexValue(s[at]) >= 0 && HexValue(s[at + 1]) >= 0;
}

// Go's net.ParseMAC: 6, 8 or 20 bytes as xx:xx:.., xx-xx-.., xxxx.xxxx.. or bare hex.
bool IsMac(std::string_view s) {
  const auto byte_count_ok = [](std::size_t n) { return n == 6 || n == 8 || n == 20; };
  if (s.size() < 12) return false;
  if (s[2] == ':' || s[2] == '-') {
    if ((s.size() + 1) % 3 != 0 || !byte_count_ok((s.size() + 1) / 3)) return false;
    for (std::size_t x = 0; x < s.size(); x += 3) {
      if (!HexPair(s, x)) return false;
      if (x + 2 < s.size() && s[x + 2] != s[2]) return false;
    }
    return true;
  }
  if (s[4] == '.') {
    if ((s.size() + 1) % 5 != 0 || !byte_count_ok(2 * (s.size() + 1) / 5)) return false;
    for (std::size_t x = 0; x < s.size(); x += 5) {
      if (!HexPair(s, x) || !HexPair(s, x + 2)) return false;
      if (x + 4 < s.size() && s[x + 4] != '.') return false;
    }
    return true;
  }
  if (s.size() % 2 != 0 || !byte_count_ok(s.size() / 2)) return false;
  for (std::size_t x = 0; x < s.size(); x += 2)
    if (!HexPair(s, x)) return false;
  return true;
}

using Ip16 = std::array<std::uint8_t, 16>;

// Dotted-quad fields as Go's netip reads them: no leading zeros, each <= 255, exactly four.
bool ParseIpv4Fields(std::string_view s, std::uint8_t* out) {
  int value = 0, digits = 0, field = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      if (digits == 1 && value == 0) return false;
      value = value * 10 + (c - '0');
      ++digits;
      if (value > 255) return false;
    } else if (c == '.') {
      if (i == 0 || i == s.size() - 1 || s[i - 1] == '.' || field == 3) return false;
      out[field++] = static_cast<std::uint8_t>(value);
      value = digits = 0;
    } else {
      return false;
    }
  }
  if (field < 3) return false;
  out[3] = static_cast<std::uint8_t>(value);
  return true;
}

// IPv6 as Go's netip reads it, without a zone (net.ParseIP refuses zones).
bool ParseIpv6(std::string_view s, Ip16& ip) {
  if (s.find('%') != std::string_view::npos) return false;
  ip.fill(0);
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::size_t ellipsis = kNone;  // byte position the "::" stands at
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    s.remove_prefix(2);
    if (s.empty()) return true;
  }
  std::size_t i = 0;
  while (i < 16) {
    std::size_t off = 0;
    std::uint32_t acc = 0;
    for (; off < s.size() && HexValue(s[off]) >= 0; ++off) {
      acc = (acc << 4) + static_cast<std::uint32_t>(HexValue(s[off]));
      if (off > 3 || acc > 0xFFFF) return false;
    }
    if (off == 0) return false;
    if (off < s.size() && s[off] == '.') {  // trailing IPv4
      if ((ellipsis == kNone && i != 12) || i + 4 > 16) return false;
      if (!ParseIpv4Fields(s, ip.data() + i)) return false;
      s = {};
      i += 4;
      break;
    }
    ip[i] = static_cast<std::uint8_t>(acc >> 8);
    ip[i + 1] = static_cast<std::uint8_t>(acc);
    i += 2;
    s.remove_prefix(off);
    if (s.empty()) break;
    if (s[0] != ':' || s.size() == 1) return false;
    s.remove_prefix(1);
    if (s[0] == ':') {
      if (ellipsis != kNone) return false;
      ellipsis = i;
      s.remove_prefix(1);
      if (s.empty()) break;
    }
  }
  if (!s.empty()) return false;
  if (i < 16) {
    if (ellipsis == kNone) return false;
    const std::size_t n = 16 - i;
    for (std::size_t j = i; j > ellipsis; --j) ip[j - 1 + n] = ip[j - 1];
    std::fill_n(ip.begin() + static_cast<std::ptrdiff_t>(ellipsis), n, std::uint8_t{0});
  } else if (ellipsis != kNone) {
    return false;  // "::" must stand for at least one group
  }
  return true;
}

// Go's net.ParseIP (16-byte form in `ip`); `bits` is 32 for IPv4 text, 128 for IPv6 text.
bool ParseIp(std::string_view s, Ip16& ip, int& bits) {
  for (const char c : s) {
    if (c == '.') {
      ip.fill(0);
      ip[10] = ip[11] = 0xFF;
      bits = 32;
      return ParseIpv4Fields(s, ip.data() + 12);
    }
    if (c == ':') {
      bits = 128;
      return ParseIpv6(s, ip);
    }
    if (c == '%') return false;
  }
  return false;
}

bool IsIp(std::string_view s) {
  Ip16 ip;
  int bits = 0;
  return ParseIp(s, ip, bits);
}

// Go's net.ParseCIDR: address, '/', a decimal prefix length (leading zeros allowed) within
// the address' bit length.
bool IsCidr(std::string_view s) {
  const std::size_t slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  Ip16 ip;
  int bits = 0;
  if (!ParseIp(s.substr(0, slash), ip, bits)) return false;
  const std::string_view mask = s.substr(slash + 1);
  if (mask.empty() || mask.size() > 8) return false;
  int n = 0;
  for (const char c : mask) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  return n <= bits;
}

// IPv4 or IPv4-mapped IPv6 (what Go's IP.To4 accepts).
bool IsV4(const Ip16& ip) {
  for (std::size_t k = 0; k < 10; ++k)
    if (ip[k] != 0) return false;
  return ip[10] == 0xFF && ip[11] == 0xFF;
}

// Why libcni (utils.ValidateInterfaceName) refuses an interface name; empty when it does not.
std::string InterfaceNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > 15) return "is longer than 15 bytes";
  if (name == "." || name == "..") return "is . or ..";
  for (std::size_t i = 0; i < name.size();) {
    const CodePoint cp = DecodeAt(name, i);
    if (cp.valid && (cp.value == '/' || cp.value == ':' || IsGoSpace(cp.value)))
      return "contains '/', ':' or a space";
    i += cp.size;
  }
  return {};
}

// Go's encoding/json matches object keys to field names case-insensitively, folding each
// character to the smallest member of its Unicode case orbit: besides ASCII, U+017F (long s)
// folds with 's' and U+212A (Kelvin sign) with 'k'. Field names are ASCII, so other
// characters never match.
std::string FoldKey(std::string_view key) {
  std::string out;
  for (std::size_t i = 0; i < key.size();) {
    const CodePoint cp = DecodeAt(key, i);
    if (cp.valid && cp.value == 0x17F) {
      out += 'S';
    } else if (cp.valid && cp.value == 0x212A) {
      out += 'K';
    } else if (cp.size == 1 && key[i] >= 'a' && key[i] <= 'z') {
      out += static_cast<char>(key[i] - 'a' + 'A');
    } else {
      out.append(key.substr(i, cp.size));
    }
    i += cp.size;
  }
  return out;
}

// An integer Go decodes into an int (int64): no fraction or exponent, in range.
bool IsGoInt(const OrderedJson& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return true;
  return v.is_number_unsigned() &&
         v.get<std::uint64_t>() <=
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

// Checks that every known key of `obj` has a value Go decodes into the field's type (null
// always does); `int_fields` and `string_fields` are folded names.
bool FieldsDecode(const OrderedJson& obj, const std::set<std::string>& int_fields,
                  const std::set<std::string>& string_fields) {
  for (const auto& [key, v] : obj.items()) {
    if (v.is_null()) continue;
    const std::string k = FoldKey(key);
    if (int_fields.count(k) && !IsGoInt(v)) return false;
    if (string_fields.count(k) && !v.is_string()) return false;
  }
  return true;
}

// One JSON item as Go decodes it into NetworkSelectionElement.
struct Selection {
  std::string name, ns, interface, interface_key, legacy_interface, legacy_key, mac, guid;
  std::optional<std::vector<std::string>> ips;
  std::optional<std::vector<std::string>> gateways;  // "" stands for a nil IP
};

// The members of an object, in document order and with every repeated key: Go's decoder
// assigns them one after the other (the last wins; a null leaves a string as it was), which a
// DOM keeping one value per key cannot tell.
using Members = std::vector<std::pair<std::string, OrderedJson>>;

// Go's decoder refuses JSON nested deeper than this.
constexpr int kMaxNesting = 10000;

// A copy of `v` down to `levels` levels below it; deeper arrays and objects become empty ones
// (only their type matters to the decoding), so a deeply nested value costs no deep recursion.
OrderedJson Shallow(const OrderedJson& v, int levels) {
  if (!v.is_structured()) return v;
  OrderedJson out = v.is_array() ? OrderedJson::array() : OrderedJson::object();
  if (levels == 0) return out;
  if (v.is_array()) {
    for (const auto& e : v) out.push_back(Shallow(e, levels - 1));
  } else {
    for (const auto& [k, e] : v.items()) out[k] = Shallow(e, levels - 1);
  }
  return out;
}

// Parses the JSON value; `items` gets, per element of a top-level list, its members when it is
// an object (each as deep as NetworkSelectionElement looks: portMappings[i].hostPort);
// `too_deep` is set when the value is nested deeper than Go allows.
OrderedJson ParseList(std::string_view value, std::vector<std::optional<Members>>& items,
                      bool& too_deep) {
  using Event = OrderedJson::parse_event_t;
  std::string key;
  // Depth 1: the list's elements; depth 2: an element's keys and member values (a nested
  // member is complete at its object_end/array_end).
  const auto callback = [&](int depth, Event event, OrderedJson& parsed) {
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxNesting)
      too_deep = true;
    if (depth == 1 && event == Event::object_start) {
      items.emplace_back(Members{});
    } else if (depth == 1 && (event == Event::array_start || event == Event::value)) {
      items.emplace_back(std::nullopt);
    } else if (depth == 2 && event == Event::key) {
      key = parsed.get<std::string>();
    } else if (depth == 2 &&
               (event == Event::value || event == Event::object_end || event == Event::array_end)) {
      if (!items.empty() && items.back()) items.back()->emplace_back(key, Shallow(parsed, 2));
    }
    return true;
  };
  return OrderedJson::parse(value, callback, false);
}

// Decodes one element of the JSON list; on failure `problem` says why.
std::optional<Selection> DecodeItem(const OrderedJson& item, const std::optional<Members>& members,
                                    std::string& problem) {
  if (item.is_null()) {
    problem = "is null (Multus dereferences it and fails)";
    return std::nullopt;
  }
  if (!item.is_object() || !members) {
    problem = "is not a JSON object";
    return std::nullopt;
  }
  Selection s;
  const auto string_field = [&](const std::string& key, const OrderedJson& v, std::string& into) {
    if (v.is_null()) return true;  // Go leaves the field as it was
    if (!v.is_string()) {
      problem = "\"" + key + "\" must be a string";
      return false;
    }
    into = v.get<std::string>();
    return true;
  };
  for (const auto& [key, v] : *members) {
    const std::string k = FoldKey(key);
    std::string ignored;
    if (k == "NAME") {
      if (!string_field(key, v, s.name)) return std::nullopt;
    } else if (k == "NAMESPACE") {
      if (!string_field(key, v, s.ns)) return std::nullopt;
    } else if (k == "INTERFACE") {
      if (!string_field(key, v, s.interface)) return std::nullopt;
      if (v.is_string()) s.interface_key = key;
    } else if (k == "INTERFACEREQUEST") {
      if (!string_field(key, v, s.legacy_interface)) return std::nullopt;
      if (v.is_string()) s.legacy_key = key;
    } else if (k == "MAC") {
      if (!string_field(key, v, s.mac)) return std::nullopt;
    } else if (k == "INFINIBAND-GUID") {
      if (!string_field(key, v, s.guid)) return std::nullopt;
    } else if (k == "DEVICEID") {
      if (!string_field(key, v, ignored)) return std::nullopt;
    } else if (k == "IPS" || k == "DEFAULT-ROUTE") {
      auto& into = k == "IPS" ? s.ips : s.gateways;
      if (v.is_null()) {
        into.reset();
        continue;
      }
      if (!v.is_array()) {
        problem = "\"" + key + "\" must be a list of strings";
        return std::nullopt;
      }
      into.emplace();
      for (const auto& e : v) {
        if (!e.is_null() && !e.is_string()) {
          problem = "\"" + key + "\" must be a list of strings";
          return std::nullopt;
        }
        into->push_back(e.is_string() ? e.get<std::string>() : std::string());
        if (k == "DEFAULT-ROUTE" && !into->back().empty() && !IsIp(into->back())) {
          problem = "\"" + key + "\": '" + into->back() + "' is not an IP address";
          return std::nullopt;
        }
      }
    } else if (k == "PORTMAPPINGS") {
      if (v.is_null()) continue;
      bool ok = v.is_array();
      for (const auto& e : ok ? v : OrderedJson::array())
        ok = ok && (e.is_null() || (e.is_object() && FieldsDecode(e, {"HOSTPORT", "CONTAINERPORT"},
                                                                  {"PROTOCOL", "HOSTIP"})));
      if (!ok) {
        problem = "\"" + key + "\" must be a list of {hostPort, containerPort, protocol, hostIP}";
        return std::nullopt;
      }
    } else if (k == "BANDWIDTH") {
      if (!v.is_null() &&
          !(v.is_object() &&
            FieldsDecode(v, {"INGRESSRATE", "INGRESSBURST", "EGRESSRATE", "EGRESSBURST"}, {}))) {
        problem = "\"" + key + "\" must be an object of integer rates and bursts";
        return std::nullopt;
      }
    } else if (k == "CNI-ARGS") {
      if (!v.is_null() && !v.is_object()) {
        problem = "\"" + key + "\" must be an object";
        return std::nullopt;
      }
    }
  }
  return s;
}

bool IsDefault(const std::vector<std::string>& defaults, std::string_view name) {
  return std::find(defaults.begin(), defaults.end(), name) != defaults.end();
}

// Multus names an item without an interface net<N>, N its 1-based position among the
// non-default items; explicitly named items keep their place in that count.
void AssignDefaultInterfaces(std::vector<NetworkAttachment>& items) {
  std::size_t position = 0;
  for (auto& a : items) {
    if (a.default_network) continue;
    ++position;
    if (!a.explicit_interface) a.interface = "net" + std::to_string(position);
  }
}

std::string Item(std::size_t i) { return "item " + std::to_string(i) + " "; }

// parsePodNetworkObjectName: [namespace/]name[@interface], each part trimmed.
bool ReadCommaItem(std::string_view item, NetworkAttachment& a, std::string& problem) {
  const auto slash = Split(item, '/');
  if (slash.size() > 2) {
    problem = "'" + std::string(item) + "' has more than one '/'";
    return false;
  }
  std::string_view rest = slash.back();
  if (slash.size() == 2) a.ns = std::string(TrimSpace(slash[0]));
  const auto at = Split(rest, '@');
  if (at.size() > 2) {
    problem = "'" + std::string(item) + "' has more than one '@'";
    return false;
  }
  a.name = std::string(TrimSpace(at[0]));
  if (at.size() == 2) a.interface = std::string(TrimSpace(at[1]));
  for (const std::string* part : {&a.ns, &a.name}) {
    if (!part->empty() && !DnsLabelShape(*part)) {
      problem = "'" + *part +
                "' is not a DNS-1123 label (lower-case letters, digits and '-', starting and "
                "ending with a letter or digit)";
      return false;
    }
  }
  if (!a.interface.empty() &&
      (a.interface.size() > 15 || a.interface.find_first_of(" \t\n\v\f\r/") != std::string::npos)) {
    problem = "interface name '" + a.interface + "' is longer than 15 bytes or has a space or '/'";
    return false;
  }
  a.explicit_interface = !a.interface.empty();
  return true;
}

}  // namespace

NetworksAnnotation NetworksAnnotation::Parse(std::string_view value, std::string_view pod_ns,
                                             const std::vector<std::string>& default_networks) {
  NetworksAnnotation out;
  if (value.empty()) return out;  // no annotation value: no networks
  // A bound on the items read (docs/http.md#bounds): the rules compare attachments with one
  // another, and a 1.5 MB annotation of 100 000 items once held one review for 22 s.
  const auto too_many = [&] {
    return "lists more than " + std::to_string(kMaxAttachments) +
           " networks, more than rdma-webhook reads (no pod has that many interfaces)";
  };
  const auto fail = [&out](std::string stage, std::string problem) {
    out.error_stage = std::move(stage);
    out.error = std::move(problem);
    if (out.error_stage == "parse") out.attachments.clear();
    return out;
  };
  // Gateways per item, for the default-route check below.
  std::vector<std::optional<std::vector<std::string>>> gateways;
  if (value.find_first_of("[{\"") != std::string_view::npos) {
    out.json_form = true;
    std::vector<std::optional<Members>> members;
    bool too_deep = false;
    const auto parsed = ParseList(value, members, too_deep);
    if (too_deep)
      return fail("parse", "the JSON is nested deeper than the " + std::to_string(kMaxNesting) +
                               " levels Go's decoder accepts");
    if (parsed.is_discarded())
      return fail("parse", "the value looks like JSON (it has '[', '{' or '\"') but is not JSON");
    if (!parsed.is_array())
      return fail("parse", "the JSON value is not a list of network selection objects");
    if (parsed.size() > kMaxAttachments) return fail("parse", too_many());
    std::size_t i = 0;
    for (const auto& item : parsed) {
      std::string problem;
      static const std::optional<Members> kNotAnObject;
      auto s = DecodeItem(item, i < members.size() ? members[i] : kNotAnObject, problem);
      if (!s) return fail("parse", Item(i) + problem);
      NetworkAttachment a;
      a.item = i++;
      a.name = std::move(s->name);
      a.ns = std::move(s->ns);
      a.interface = std::move(s->interface);
      a.interface_key = std::move(s->interface_key);
      if (!s->mac.empty() && !IsMac(s->mac))
        return fail("parse", Item(a.item) + "\"mac\": '" + s->mac + "' is not a MAC address");
      if (!s->guid.empty() && !IsMac(s->guid))
        return fail("parse", Item(a.item) + "\"infiniband-guid\": '" + s->guid +
                                 "' is not a GUID (MAC address syntax)");
      for (const auto& ip : s->ips.value_or(std::vector<std::string>{})) {
        const bool ok = ip.find('/') != std::string::npos ? IsCidr(ip) : IsIp(ip);
        if (!ok)
          return fail("parse", Item(a.item) + "\"ips\": '" + ip + "' is not an IP address or CIDR");
      }
      if (a.interface.empty() && !s->legacy_interface.empty()) {
        a.interface = std::move(s->legacy_interface);
        a.interface_key = std::move(s->legacy_key);
      }
      if (a.interface.empty()) a.interface_key.clear();
      a.explicit_interface = !a.interface.empty();
      gateways.push_back(std::move(s->gateways));
      out.attachments.push_back(std::move(a));
    }
  } else {
    if (static_cast<std::size_t>(std::count(value.begin(), value.end(), ',')) >= kMaxAttachments)
      return fail("parse", too_many());
    std::size_t i = 0;
    for (const std::string_view raw : Split(value, ',')) {
      NetworkAttachment a;
      a.item = i++;
      std::string problem;
      if (!ReadCommaItem(TrimSpace(raw), a, problem)) return fail("parse", Item(a.item) + problem);
      out.attachments.push_back(std::move(a));
    }
  }
  for (auto& a : out.attachments) {
    if (a.ns.empty()) a.ns = std::string(pod_ns);
    a.default_network = IsDefault(default_networks, a.name);
  }
  AssignDefaultInterfaces(out.attachments);

  // Multus looks every item up as a NetworkAttachmentDefinition: a name no custom resource
  // can have, or a namespace no namespace can have, is never found.
  for (const auto& a : out.attachments) {
    if (!IsDns1123Subdomain(a.name))
      return fail("lookup", Item(a.item) + (a.name.empty() ? std::string("names no network")
                                                           : "names network '" + a.name +
                                                                 "', which no "
                                                                 "NetworkAttachmentDefinition "
                                                                 "can be called"));
    if (!IsDns1123Label(a.ns))
      return fail("lookup", Item(a.item) + "names namespace '" + a.ns +
                                "', which no namespace can be called");
  }
  // types.CheckGatewayConfig: at most one default route per IP family over all networks (a
  // nil IP, from "" or null, counts as IPv6).
  int v4 = 0, v6 = 0;
  for (const auto& g : gateways) {
    for (const auto& ip : g.value_or(std::vector<std::string>{})) {
      Ip16 bytes{};
      int bits = 0;
      if (!ip.empty() && ParseIp(ip, bytes, bits) && IsV4(bytes))
        ++v4;
      else
        ++v6;
    }
  }
  if (v4 > 1 || v6 > 1)
    return fail("gateway",
                "more than one default-route per IP family: Multus does not support ECMP");
  // DelegateAdd: eth0 (the cluster network) and lo exist; each network then takes its name.
  std::set<std::string> taken{"eth0", "lo"};
  for (const auto& a : out.attachments) {
    if (a.default_network && !a.explicit_interface) continue;  // named by the platform
    if (!taken.insert(a.interface).second)
      return fail("interface", Item(a.item) + "would create interface '" + a.interface +
                                   "', which the pod already has");
    const std::string problem = InterfaceNameProblem(a.interface);
    if (!problem.empty())
      return fail("interface", Item(a.item) + "interface name '" + a.interface + "' " + problem);
  }
  return out;
}

std::string FormatAttachmentItem(const NetworkAttachment& a, std::string_view pod_ns) {
  std::string out;
  if (!a.ns.empty() && a.ns != pod_ns) out += a.ns + "/";
  out += a.name;
  if (a.explicit_interface) out += "@" + a.interface;
  return out;
}

}  // namespace rw::nccl
