#include "rdma_webhook/workload/workload.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

#include "quantity.h"
#include "rdma_webhook/codec/dom.h"

namespace rw::workload {
namespace {

namespace bj = boost::json;
using Value = bj::value;

std::string Kind(const Value& v) { return codec::TypeName(v); }

bool IsInteger(const Value& v) { return v.is_int64() || v.is_uint64(); }
// An integer as nlohmann's get<long long>() gives it (an unsigned one past 2^63 wraps).
long long IntegerOf(const Value& v) {
  return v.is_int64() ? v.get_int64() : static_cast<long long>(v.get_uint64());
}
double DoubleOf(const Value& v) {
  return v.is_double()  ? v.get_double()
         : v.is_int64() ? static_cast<double>(v.get_int64())
                        : static_cast<double>(v.get_uint64());
}
std::string StringOf(const Value& v) { return std::string(v.get_string()); }
std::string_view ViewOf(const Value& v) {
  const bj::string& s = v.get_string();
  return std::string_view(s.data(), s.size());
}

// Copies what the variables' views point at into one buffer of the container's and points them
// there: one allocation for the container where a string per name and value were hundreds. The
// buffer is filled by memcpy, not appended to: at a 30 KB review's hundreds of variables the
// appends' capacity checks were 3 % of its Handle.
std::shared_ptr<const char[]> KeepText(std::vector<EnvVar>& env) {
  std::size_t total = 0;
  for (const auto& var : env) total += var.name.size() + (var.value ? var.value->size() : 0);
  auto text = std::make_shared_for_overwrite<char[]>(total);
  char* at = text.get();
  const auto keep = [&at](std::string_view view) {
    if (!view.empty()) std::memcpy(at, view.data(), view.size());
    const std::string_view kept(at, view.size());
    at += view.size();
    return kept;
  };
  for (auto& var : env) {
    var.name = keep(var.name);
    if (var.value) var.value = keep(*var.value);
  }
  return text;
}

// A value a templating step fills and has not filled yet: `${GPUS}`, `$GPUS`, `__NUM_NODES__`,
// `<num-gpus>`, or an upper-case name (`PLACEHOLDER_GPUS`, `NUM_NODES`), which is never a number
// or a quantity.
bool LooksLikePlaceholder(std::string_view s) {
  if (s.size() < 2) return false;
  if (s.front() == '$' || (s.front() == '<' && s.back() == '>')) return true;
  if (s.size() > 4 && s.substr(0, 2) == "__" && s.substr(s.size() - 2) == "__") return true;
  const auto upper = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  return upper(s.front()) && s.find('_') != std::string_view::npos &&
         std::all_of(s.begin(), s.end(),
                     [&](char c) { return upper(c) || (c >= '0' && c <= '9'); });
}

constexpr const char* kPlaceholderHint =
    " (a template variable not substituted yet: run envsubst, or the templating that fills it, "
    "first)";

// A string value as an error shows it: quoted, cut at 64 bytes.
std::string Shown(const std::string& text) {
  return "'" + (text.size() > 64 ? text.substr(0, 64) + "..." : text) + "'";
}

// "must be an integer, got ..." with the value when it is a placeholder left in.
std::string NotAnInteger(const Value& v) {
  std::string got = "must be an integer, got " + Kind(v);
  if (v.is_string() && LooksLikePlaceholder(v.get_string())) {
    got += " " + Shown(StringOf(v)) + kPlaceholderHint;
  }
  return got;
}

// Where a field is: its RFC 6901 pointer as a chain of tokens on the stack, written out only
// when an error names it. Building every pointer eagerly cost a review several allocations per
// environment variable, for errors that almost never happen.
class Where {
 public:
  explicit Where(std::string_view root) : root_(root) {}
  Where(const Where& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Where(const Where& parent, std::size_t index)
      : parent_(&parent), index_(index), is_index_(true) {}

  std::string str() const {
    if (parent_ == nullptr) return std::string(root_);
    return parent_->str() + "/" + (is_index_ ? std::to_string(index_) : EscapePointerToken(key_));
  }

 private:
  const Where* parent_ = nullptr;
  std::string_view root_;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_index_ = false;
};

// Typed access to a field that may be absent; a present field of the wrong type throws with
// its pointer, so the user learns exactly what to fix (as kubectl's decoder would). The Where
// a Reader is given (and its parents) must outlive it.
class Reader {
 public:
  // `object` must be an object (RequireObject).
  Reader(const Value& object, const Where& where) : obj_(object.get_object()), where_(where) {}

  Where Child(std::string_view key) const { return Where(where_, key); }

  const Value* Field(std::string_view key) const {
    const Value* v = obj_.if_contains(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }
  const Value* Object(std::string_view key) const { return Object(key, Field(key)); }
  const Value* Object(std::string_view key, const Value* field) const {
    return Typed(key, field, bj::kind::object, "an object");
  }
  const bj::array* Array(std::string_view key) const {
    const Value* v = Typed(key, Field(key), bj::kind::array, "a list");
    return v ? &v->get_array() : nullptr;
  }
  std::optional<std::string> String(std::string_view key) const { return String(key, Field(key)); }
  // The same for `field`, what Field(key) found.
  std::optional<std::string> String(std::string_view key, const Value* field) const {
    const auto view = View(key, field);
    return view ? std::optional<std::string>(*view) : std::nullopt;
  }
  // The same as a view into the object: valid while the object is, and not moved.
  std::optional<std::string_view> View(std::string_view key, const Value* field) const {
    const Value* v = Typed(key, field, bj::kind::string, "a string");
    return v ? std::optional<std::string_view>(ViewOf(*v)) : std::nullopt;
  }
  std::optional<bool> Bool(std::string_view key) const {
    const Value* v = Typed(key, Field(key), bj::kind::bool_, "a boolean");
    return v ? std::optional<bool>(v->get_bool()) : std::nullopt;
  }
  std::optional<long long> Integer(std::string_view key) const {
    const Value* v = Field(key);
    if (v == nullptr) return std::nullopt;
    if (!IsInteger(*v)) throw ManifestError(Child(key).str(), NotAnInteger(*v));
    return IntegerOf(*v);
  }

 private:
  const Value* Typed(std::string_view key, const Value* v, bj::kind type, const char* name) const {
    if (v == nullptr) return nullptr;
    if (v->kind() != type)
      throw ManifestError(Child(key).str(), std::string("must be ") + name + ", got " + Kind(*v));
    return v;
  }

  const bj::object& obj_;
  const Where& where_;
};

// What Reader::Field gives for each of `keys` (nullptr when absent or null), found in one walk
// of the object's members. Boost.JSON keeps no duplicate keys, so the first match is the only one.
template <std::size_t N>
std::array<const Value*, N> FieldsOf(const Value& object,
                                     const std::array<std::string_view, N>& keys) {
  std::array<const Value*, N> out{};
  for (const auto& member : object.get_object()) {
    const std::string_view key(member.key().data(), member.key().size());
    for (std::size_t i = 0; i < N; ++i) {
      if (key == keys[i]) {
        if (!member.value().is_null()) out[i] = &member.value();
        break;
      }
    }
  }
  return out;
}

void RequireObject(const Value& v, const Where& where) {
  if (!v.is_object()) throw ManifestError(where.str(), "must be an object, got " + Kind(v));
}

// Members in nlohmann's order (codec::SortedMembers), so the first error named is the same
// however the review ordered them.
std::map<std::string, std::string> ReadStringMap(const Value* m, const Where& where) {
  std::map<std::string, std::string> out;
  if (m == nullptr) return out;
  for (const auto* member : codec::SortedMembers(m->get_object())) {
    const Value& v = member->value();
    if (!v.is_string())
      throw ManifestError(Where(where, member->key()).str(), "must be a string, got " + Kind(v));
    out.emplace_hint(out.end(), std::string(member->key()), StringOf(v));
  }
  return out;
}

// Labels are not read, only checked as the API server would: the same error as
// ReadStringMap's, without building a map to throw away.
void CheckStringMap(const Value* m, const Where& where) {
  if (m == nullptr) return;
  const bj::object& members = m->get_object();
  if (std::all_of(members.begin(), members.end(),
                  [](const bj::key_value_pair& member) { return member.value().is_string(); }))
    return;
  // The first error in nlohmann's order, as ReadStringMap names it.
  for (const auto* member : codec::SortedMembers(members))
    if (!member->value().is_string())
      throw ManifestError(Where(where, member->key()).str(),
                          "must be a string, got " + Kind(member->value()));
}

Quantities ReadQuantities(const Value* m, const Where& where) {
  Quantities out;
  if (m == nullptr) return out;
  for (const auto* member : codec::SortedMembers(m->get_object())) {
    const Value& v = member->value();
    const Where field(where, member->key());
    // The API server takes `nvidia.com/gpu:` with no value (pruned, or a zero Quantity).
    if (v.is_null()) continue;
    std::optional<long long> count;
    std::string text;  // a string value, to show when it is no quantity
    if (v.is_number()) {
      count = SaturatedCount(DoubleOf(v));
    } else if (v.is_string()) {
      text = StringOf(v);
      count = ParseQuantityCount(text);
    } else {
      throw ManifestError(field.str(), "must be a quantity, got " + Kind(v));
    }
    if (!count) {
      // `${GPU_PER_NODE}` or `__GPUS__`: a file of a templating step, not yet substituted.
      const std::string hint = LooksLikePlaceholder(text) ? kPlaceholderHint : "";
      throw ManifestError(field.str(), (text.empty() ? std::string() : Shown(text) + " ") +
                                           "is not a valid quantity" + hint);
    }
    out.emplace_hint(out.end(), std::string(member->key()), *count);
  }
  return out;
}

std::vector<std::string> ReadStrings(const bj::array* a, const Where& where) {
  std::vector<std::string> out;
  if (a == nullptr) return out;
  out.reserve(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const Value& item = (*a)[i];
    if (!item.is_string())
      throw ManifestError(Where(where, i).str(), "must be a string, got " + Kind(item));
    out.push_back(StringOf(item));
  }
  return out;
}

std::string NormalizeCapability(std::string cap) {
  std::transform(cap.begin(), cap.end(), cap.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return cap;
}

struct PodSecurity {
  std::optional<long long> run_as_user;
  std::optional<bool> run_as_non_root;
};

Container ReadContainer(const Value& c, const Where& where, std::size_t index,
                        const policy::Policy& policy, const PodSecurity& pod) {
  RequireObject(c, where);
  Reader r(c, where);
  Container out;
  out.pointer = where.str();
  out.index = index;
  out.name = r.String("name").value_or("");
  out.image = r.String("image").value_or("");
  if (const bj::array* env = r.Array("env")) {
    const Where env_where = r.Child("env");
    out.env.reserve(env->size());
    for (std::size_t i = 0; i < env->size(); ++i) {
      const Where ep(env_where, i);
      RequireObject((*env)[i], ep);
      Reader er((*env)[i], ep);
      // Found in one walk of the entry (a review holds hundreds of them, and each lookup in a
      // small Boost.JSON object is a walk of its own), then checked in this order, as they
      // always were: the error a user sees does not change.
      const auto [name_field, value_field, value_from_field] =
          FieldsOf<3>((*env)[i], {"name", "value", "valueFrom"});
      EnvVar var;
      var.index = i;
      // Views into the review for now; moved into the container's own text below.
      const auto name = er.View("name", name_field);
      if (!name) throw ManifestError(ep.str() + "/name", "is required");
      var.name = *name;
      var.value = er.View("value", value_field);
      var.from_ref = er.Object("valueFrom", value_from_field) != nullptr;
      out.env_name_bits |= EnvNameBit(var.name);
      out.env.push_back(var);
    }
    out.env_name_bits_size = out.env.size();
    out.env_text = KeepText(out.env);
  }
  if (const bj::array* env_from = r.Array("envFrom")) {
    const Where env_from_where = r.Child("envFrom");
    for (std::size_t i = 0; i < env_from->size(); ++i) {
      const Where ep(env_from_where, i);
      RequireObject((*env_from)[i], ep);
      out.env_from_prefixes.push_back(Reader((*env_from)[i], ep).String("prefix").value_or(""));
    }
  }
  if (const Value* res = r.Object("resources")) {
    const Where res_where = r.Child("resources");
    Reader rr(*res, res_where);
    out.limits = ReadQuantities(rr.Object("limits"), rr.Child("limits"));
    out.requests = ReadQuantities(rr.Object("requests"), rr.Child("requests"));
    if (const bj::array* claims = rr.Array("claims")) {
      for (const auto& claim : *claims) {
        const Value* name = claim.is_object() ? claim.get_object().if_contains("name") : nullptr;
        if (name != nullptr && name->is_string()) out.dra_claim_names.push_back(StringOf(*name));
      }
    }
  }
  out.run_as_user = pod.run_as_user;
  out.run_as_non_root = pod.run_as_non_root;
  if (const Value* sc = r.Object("securityContext")) {
    const Where sc_where = r.Child("securityContext");
    Reader sr(*sc, sc_where);
    out.privileged = sr.Bool("privileged").value_or(false);
    if (auto u = sr.Integer("runAsUser")) out.run_as_user = u;
    if (auto n = sr.Bool("runAsNonRoot")) out.run_as_non_root = n;
    if (const Value* caps = sr.Object("capabilities")) {
      const Where caps_where = sr.Child("capabilities");
      Reader cr(*caps, caps_where);
      const bj::array* add = cr.Array("add");
      for (auto& cap : ReadStrings(add, cr.Child("add")))
        out.caps_add.push_back(NormalizeCapability(cap));
      ReadStrings(cr.Array("drop"), cr.Child("drop"));
    }
  }
  out.argv = ReadStrings(r.Array("command"), r.Child("command"));
  out.command_size = out.argv.size();
  for (auto& a : ReadStrings(r.Array("args"), r.Child("args"))) out.argv.push_back(std::move(a));
  if (const bj::array* ports = r.Array("ports")) {
    const Where ports_where = r.Child("ports");
    for (std::size_t i = 0; i < ports->size(); ++i) {
      const Where pp(ports_where, i);
      RequireObject((*ports)[i], pp);
      if (auto port = Reader((*ports)[i], pp).Integer("containerPort")) out.ports.push_back(*port);
    }
  }
  if (const bj::array* mounts = r.Array("volumeMounts")) {
    const Where mounts_where = r.Child("volumeMounts");
    for (std::size_t i = 0; i < mounts->size(); ++i) {
      const Where mp(mounts_where, i);
      RequireObject((*mounts)[i], mp);
      Reader mr((*mounts)[i], mp);
      out.mounts.push_back({mr.String("name").value_or(""), mr.String("mountPath").value_or("")});
    }
  }
  out.gpu = out.ClaimWhere([&](const std::string& res) { return policy.IsGpuResource(res); }) > 0;
  return out;
}

PodTemplate ReadTemplate(const Value& t, const std::string& pointer, const policy::Policy& policy) {
  RequireObject(t, Where(pointer.empty() ? "/" : pointer));
  PodTemplate out;
  out.pointer = pointer;
  const Where where(pointer);
  Reader tr(t, where);
  if (const Value* md = tr.Object("metadata")) {
    const Where md_where = tr.Child("metadata");
    Reader mr(*md, md_where);
    const Value* ann = mr.Object("annotations");
    out.annotations = ReadStringMap(ann, mr.Child("annotations"));
    CheckStringMap(mr.Object("labels"), mr.Child("labels"));
  }
  const Value* spec = tr.Object("spec");
  if (spec == nullptr) return out;
  const Where spec_where = tr.Child("spec");
  Reader sr(*spec, spec_where);
  out.host_network = sr.Bool("hostNetwork").value_or(false);
  out.host_ipc = sr.Bool("hostIPC").value_or(false);
  out.dns_policy = sr.String("dnsPolicy");
  PodSecurity pod;
  if (const Value* psc = sr.Object("securityContext")) {
    const Where psc_where = sr.Child("securityContext");
    Reader pr(*psc, psc_where);
    pod.run_as_user = pr.Integer("runAsUser");
    pod.run_as_non_root = pr.Bool("runAsNonRoot");
  }
  if (const bj::array* volumes = sr.Array("volumes")) {
    const Where volumes_where = sr.Child("volumes");
    for (std::size_t i = 0; i < volumes->size(); ++i) {
      const Value& v = (*volumes)[i];
      const Where vp(volumes_where, i);
      RequireObject(v, vp);
      auto name = Reader(v, vp).String("name");
      if (!name) continue;
      Volume& volume = out.volumes[*name];
      const bj::object& members = v.get_object();
      volume.host_path = members.contains("hostPath");
      const Value* empty_dir = members.if_contains("emptyDir");
      const Value* medium = empty_dir != nullptr && empty_dir->is_object()
                                ? empty_dir->get_object().if_contains("medium")
                                : nullptr;
      volume.memory_empty_dir =
          medium != nullptr && medium->is_string() && medium->get_string() == "Memory";
    }
  }
  if (const bj::array* containers = sr.Array("containers")) {
    const Where containers_where = sr.Child("containers");
    // Sized once: growing by doubling held the old and the new array at once, 1.5 times the
    // containers of a pod of thousands.
    out.containers.reserve(containers->size());
    for (std::size_t i = 0; i < containers->size(); ++i)
      out.containers.push_back(
          ReadContainer((*containers)[i], Where(containers_where, i), i, policy, pod));
  }
  if (const bj::array* init = sr.Array("initContainers")) {
    const Where init_where = sr.Child("initContainers");
    for (std::size_t i = 0; i < init->size(); ++i) {
      const Where ip(init_where, i);
      RequireObject((*init)[i], ip);
      if (auto image = Reader((*init)[i], ip).String("image"))
        out.init_images.push_back(std::move(*image));
    }
  }
  if (const bj::array* claims = sr.Array("resourceClaims")) {
    for (const auto& claim : *claims) {
      if (!claim.is_object()) continue;
      const bj::object& members = claim.get_object();
      PodTemplate::ResourceClaim rc;
      if (const Value* v = members.if_contains("name"); v != nullptr && v->is_string())
        rc.name = StringOf(*v);
      for (const char* key : {"resourceClaimTemplateName", "resourceClaimName"})
        if (const Value* v = members.if_contains(key); v != nullptr && v->is_string()) {
          rc.source = StringOf(*v);
          rc.from_template = std::string_view(key) == "resourceClaimTemplateName";
        }
      out.resource_claims.push_back(std::move(rc));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> PointerTokens(std::string_view pattern) {
  std::vector<std::string> tokens;
  std::string scratch;
  for (std::size_t pos = 1; !pattern.empty() && pos <= pattern.size();)
    tokens.emplace_back(codec::NextPointerToken(pattern, pos, scratch));
  return tokens;
}

namespace {

// Members are visited in nlohmann's order (codec::SortedMembers), as they always were.
void Expand(const Value& node, const std::vector<std::string>& tokens, std::size_t at,
            const std::string& prefix, std::vector<std::string>& out) {
  if (at == tokens.size()) {
    if (!node.is_null()) out.push_back(prefix);
    return;
  }
  const std::string& token = tokens[at];
  if (node.is_object()) {
    if (token == "*") {
      for (const auto* m : codec::SortedMembers(node.get_object()))
        Expand(m->value(), tokens, at + 1, prefix + "/" + EscapePointerToken(m->key()), out);
    } else if (const Value* child = node.get_object().if_contains(token)) {
      Expand(*child, tokens, at + 1, prefix + "/" + EscapePointerToken(token), out);
    }
  } else if (node.is_array()) {
    const auto& items = node.get_array();
    if (token == "*") {
      for (std::size_t i = 0; i < items.size(); ++i)
        Expand(items[i], tokens, at + 1, prefix + "/" + std::to_string(i), out);
    } else if (!token.empty() && std::all_of(token.begin(), token.end(), ::isdigit) &&
               token.size() < 9) {
      const std::size_t i = std::stoul(token);
      if (i < items.size()) Expand(items[i], tokens, at + 1, prefix + "/" + std::to_string(i), out);
    }
  }
}

}  // namespace

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out.push_back(c);
  }
  return out;
}

std::vector<std::string> ExpandPattern(const Value& object, std::string_view pattern) {
  std::vector<std::string> out;
  Expand(object, PointerTokens(pattern), 0, "", out);
  return out;
}

const EnvVar* Container::FindEnv(std::string_view wanted) const {
  // The rules ask about a dozen NCCL names per container, most of them absent, and a 30 KB
  // review's containers hold hundreds of variables: walking them all was 5 % of its /validate.
  if (env_name_bits_size == env.size() && (env_name_bits & EnvNameBit(wanted)) == 0) return nullptr;
  // Kubernetes lets a later duplicate win. The last byte is compared before the rest: the rules
  // ask for NCCL_* names among many of the same length and prefix, and it tells most apart
  // without a call to memcmp (10 % of Diagnose on the 30 KB bench review).
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->name.size() == wanted.size() && (wanted.empty() || it->name.back() == wanted.back()) &&
        it->name == wanted)
      return &*it;
  return nullptr;
}

std::string Container::ArgvPointer(std::size_t i) const {
  return i < command_size ? pointer + "/command/" + std::to_string(i)
                          : pointer + "/args/" + std::to_string(i - command_size);
}

long long Container::Claim(std::string_view resource) const {
  if (auto it = limits.find(resource); it != limits.end()) return it->second;
  if (auto it = requests.find(resource); it != requests.end()) return it->second;
  return 0;
}

bool Container::HasCapability(std::string_view cap) const {
  return std::any_of(caps_add.begin(), caps_add.end(),
                     [&](const std::string& c) { return c == cap || c == "ALL"; });
}

// containerd (internal/cri/opts) writes "CAP_" + the upper-cased name for every entry but ALL;
// CRI-O (SpecSetupCapabilities) prefixes only names without it. CAP_ALL is ALL on neither.
bool Container::HasOnlyPrefixedCapability(std::string_view cap) const {
  return !HasCapability(cap) &&
         std::any_of(caps_add.begin(), caps_add.end(), [&](const std::string& c) {
           return c.size() == cap.size() + 4 && c.rfind("CAP_", 0) == 0 &&
                  std::string_view(c).substr(4) == cap;
         });
}

bool PodTemplate::HasGpu() const {
  return std::any_of(containers.begin(), containers.end(),
                     [](const Container& c) { return c.gpu; });
}

std::vector<std::string> Container::ResourceNames() const {
  std::vector<std::string> out;
  for (const auto& [resource, count] : limits) out.push_back(resource);
  for (const auto& [resource, count] : requests)
    if (!limits.count(resource)) out.push_back(resource);
  std::sort(out.begin(), out.end());
  return out;
}

bool PodTemplate::IsHostPathVolume(std::string_view name) const {
  auto it = volumes.find(std::string(name));
  return it != volumes.end() && it->second.host_path;
}

long long PodTemplate::TotalClaim(std::string_view resource) const {
  long long total = 0;
  for (const auto& c : containers) total = AddCounts(total, c.Claim(resource));
  return total;
}

const std::string* PodTemplate::Annotation(std::string_view key) const {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? nullptr : &it->second;
}

bool PodTemplate::HasMemoryShm(const Container& c) const {
  for (const auto& m : c.mounts) {
    if (m.mount_path != "/dev/shm" && m.mount_path != "/dev/shm/") continue;
    auto it = volumes.find(m.name);
    if (it != volumes.end() && it->second.memory_empty_dir) return true;
  }
  return false;
}

namespace {

// The integer at `pointer`; a value of another type is an error naming it, or ignored when the
// count was only guessed (`fallback` then).
long long CountAt(const Value& value, const std::string& pointer, bool strict, long long fallback) {
  if (IsInteger(value)) return IntegerOf(value);
  if (!strict) return fallback;
  throw ManifestError(pointer, NotAnInteger(value));
}

bool Below(const std::string& t, const std::string& scope, bool or_at) {
  if (t.size() == scope.size()) return or_at && t == scope;
  return t.size() > scope.size() && t.compare(0, scope.size(), scope) == 0 &&
         t[scope.size()] == '/';
}

// The count of `count` in the object at `parent` (which holds `leaf`), bounded and multiplied
// by the siblings the count names; nullopt when it says nothing there.
std::optional<long long> CountIn(const bj::object& holder, const std::string& parent,
                                 const std::string& leaf, const policy::ReplicaCount& count) {
  const auto present = [&](const std::string& name) -> const Value* {
    const Value* v = holder.if_contains(name);
    return v == nullptr || v->is_null() ? nullptr : v;
  };
  const auto sibling = [&](const std::string& name) -> std::optional<long long> {
    if (name.empty()) return std::nullopt;
    const Value* v = present(name);
    if (v == nullptr) return std::nullopt;
    return CountAt(*v, parent + "/" + name, !count.guessed, 1);
  };
  const Value* own = present(leaf);
  const auto floor = sibling(count.floor);
  if (own == nullptr && !floor) return std::nullopt;
  long long n = own == nullptr ? 1 : CountAt(*own, parent + "/" + leaf, !count.guessed, 1);
  if (floor) n = std::max(n, *floor);
  if (const auto ceiling = sibling(count.ceiling)) n = std::min(n, *ceiling);
  if (const auto times = sibling(count.times)) {
    const long long by = std::max<long long>(*times, 0);
    n = n > 0 && by > kMaxReplicas / n ? kMaxReplicas : n * by;
  }
  return n;
}

void ReadReplicas(const Value& object, const policy::WorkloadKind& row,
                  std::vector<PodTemplate>& templates) {
  for (const auto& count : row.replicas) {
    const std::size_t cut = count.at.rfind('/');
    const std::string leaf = count.at.substr(cut + 1);
    for (const auto& parent : ExpandPattern(object, count.at.substr(0, cut))) {
      const Value* at = codec::Find(object, parent);
      if (at == nullptr || !at->is_object()) continue;
      const bj::object& holder = at->get_object();
      const auto counted = CountIn(holder, parent, leaf, count);
      if (!counted) continue;
      const long long n = *counted;
      const std::string scope = count.under.empty() ? parent : parent + "/" + count.under;
      bool less = count.less_if.empty();
      if (!less) {
        const Value* v = holder.if_contains(count.less_if);
        less = v != nullptr && !v->is_null();
      }
      for (auto& t : templates) {
        if (!Below(t.pointer, scope, !count.under.empty())) continue;
        const long long factor = std::max<long long>(n - (less ? count.less : 0), 0);
        t.replicas = factor != 0 && t.replicas > kMaxReplicas / factor
                         ? kMaxReplicas
                         : std::min(t.replicas * factor, kMaxReplicas);
      }
    }
  }
}

std::optional<Workload::Gang> ReadGang(const Value& object, const policy::GangFields& fields) {
  if (fields.min_available.empty()) return std::nullopt;
  const Value* at = codec::Find(object, fields.min_available);
  if (at == nullptr) return std::nullopt;
  Workload::Gang gang;
  gang.pointer = fields.min_available;
  gang.min_available = CountAt(*at, gang.pointer, true, 0);
  for (const auto& pointer : ExpandPattern(object, fields.members)) {
    const Value* entry = codec::Find(object, pointer);
    if (entry == nullptr || !entry->is_object()) continue;
    const Value* replicas = entry->get_object().if_contains("replicas");
    const long long n =
        replicas == nullptr ? 1 : CountAt(*replicas, pointer + "/replicas", true, 1);
    gang.members = std::min(gang.members + n, kMaxReplicas);  // as Volcano adds them
  }
  return gang;
}

}  // namespace

Workload Workload::Read(const nlohmann::json& object, const policy::Policy& policy,
                        std::string_view default_ns) {
  return Read(codec::ToDom(object), policy, default_ns);
}

Workload Workload::Read(const Value& object, const policy::Policy& policy,
                        std::string_view default_ns) {
  if (!object.is_object())
    throw ManifestError("", "the document must be an object, got " + Kind(object));
  Workload w;
  const Where root("");
  Reader r(object, root);
  w.api_version = r.String("apiVersion").value_or("");
  w.kind = r.String("kind").value_or("");
  w.ns = std::string(default_ns);
  if (const Value* md = r.Object("metadata")) {
    const Where md_where("/metadata");
    Reader mr(*md, md_where);
    w.name = mr.String("name").value_or(mr.String("generateName").value_or(""));
    if (auto ns = mr.String("namespace"); ns && !ns->empty()) w.ns = std::move(*ns);
    w.annotations = ReadStringMap(mr.Object("annotations"), mr.Child("annotations"));
  }
  w.kind_row = policy.FindKind(w.api_version, w.kind);
  if (w.kind_row == nullptr) {
    // No row says where the templates are: judge what has a pod template's shape, and keep
    // what cannot be read as evidence, since the shape alone does not promise a pod's types.
    ShapeSearch found = FindPodTemplatesByShape(object);
    w.shape_search_truncated = found.truncated;
    for (const auto& pointer : found.pointers) {
      try {
        w.templates.push_back(ReadTemplate(*codec::Find(object, pointer), pointer, policy));
      } catch (const ManifestError& e) {
        w.unread_templates.push_back(e.what());
      }
    }
    return w;
  }
  for (const auto& pattern : w.kind_row->templates) {
    if (pattern.empty()) {
      w.templates.push_back(ReadTemplate(object, "", policy));
      continue;
    }
    for (const auto& pointer : ExpandPattern(object, pattern))
      w.templates.push_back(ReadTemplate(*codec::Find(object, pointer), pointer, policy));
  }
  if (w.kind_row->multi_node) ReadReplicas(object, *w.kind_row, w.templates);
  w.gang = ReadGang(object, w.kind_row->gang);
  return w;
}

}  // namespace rw::workload
