// JSON on the request path: what parsing the bench review bodies costs with each candidate
// parser, alone and when it also builds the small view the core reads (issue 9, item 4).
// Median thread CPU time per parse, MB/s and heap allocations per parse.
//
//   json_parse_bench BODY_DIR [ROUNDS=15]
//
// The view: the review's uid/operation/namespace/name, the object's kind, apiVersion and
// annotations, and for every pod template (any `spec` holding `containers`, found by shape,
// not by kind) its annotations, hostNetwork, dnsPolicy and per container name, image, env
// (name, value, valueFrom), resources limits/requests and securityContext privileged and
// capabilities.add. One ViewBuilder fills it from events; each parser drives it, so all
// variants do the same work and their views are checked to be equal.
#include <simdjson.h>

#include <boost/json.hpp>
#include <boost/version.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory_resource>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure.h"
#include "rdma_webhook/codec/json_text.h"
#include "rdma_webhook/codec/yaml.h"

#define RW_STRINGIFY2(x) #x
#define RW_STRINGIFY(x) RW_STRINGIFY2(x)

namespace {

// ---- the view ------------------------------------------------------------------------------

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct EnvView {
  std::string name, value;
  bool from_ref = false;
};
struct ContainerView {
  std::string name, image;
  std::vector<EnvView> env;
  Pairs limits, requests;
  bool privileged = false;
  std::vector<std::string> caps_add;
};
struct Token {
  std::string key;  // object member name, or "" in an array
  long index = -1;  // array index, or -1 in an object
  bool operator==(const Token& o) const { return index == o.index && key == o.key; }
};
struct TemplateView {
  std::vector<Token> prefix;  // path of the template (the parent of `spec` and `metadata`)
  Pairs annotations;
  bool host_network = false;
  std::optional<std::string> dns_policy;
  std::vector<ContainerView> containers;
};
struct ReviewView {
  std::string uid, operation, ns, name, api_version, kind;
  Pairs annotations;
  std::vector<TemplateView> templates;

  // A digest to check that every parser built the same view. Object members may come in
  // another order (nlohmann's DOM sorts them), so members and templates are summed.
  std::size_t Digest() const {
    std::size_t h = uid.size() + operation.size() * 3 + ns.size() * 5 + kind.size() * 7;
    for (const auto& [k, v] : annotations) h += k.size() * 31 + v.size();
    for (const auto& t : templates) {
      std::size_t th = t.containers.size() + (t.host_network ? 1 : 0) +
                       (t.dns_policy ? t.dns_policy->size() : 0);
      for (const auto& [k, v] : t.annotations) th += k.size() * 31 + v.size();
      for (const auto& c : t.containers) {
        std::size_t ch = c.name.size() + c.image.size() * 3 + c.caps_add.size() * 5;
        for (const auto& e : c.env) ch = ch * 7 + e.name.size() + e.value.size() + e.from_ref;
        for (const auto& [k, v] : c.limits) ch += k.size() * 11 + v.size();
        for (const auto& [k, v] : c.requests) ch += k.size() * 13 + v.size();
        th = th * 17 + ch;
      }
      h += th * 131;
    }
    return h;
  }
};

// Fills a ReviewView from parse events: a path stack and a matcher on it.
class ViewBuilder {
 public:
  ReviewView view;

  void Key(std::string_view k) { frames_.back().tok.key.assign(k.data(), k.size()); }
  void BeginObject() {
    Before();
    if (const long s = LastSpec();
        ContainerField(s, 3) && Tok(s + 3).key == "env" && Tok(s + 5).key == "valueFrom") {
      Env(s).from_ref = true;
    }
    frames_.push_back({false, {}});
  }
  void BeginArray() {
    Before();
    frames_.push_back({true, {"", -1}});
  }
  void End() { frames_.pop_back(); }
  void String(std::string_view s) {
    Before();
    Scalar(s, true);
  }
  void Number(std::string_view text) {
    Before();
    Scalar(text, false);
  }
  void Bool(bool b) {
    Before();
    const std::size_t n = frames_.size();
    const long s = LastSpec();
    if (s < 0) return;
    if (n == static_cast<std::size_t>(s) + 2 && Tok(s + 1).key == "hostNetwork") {
      Template(static_cast<std::size_t>(s)).host_network = b;
    } else if (ContainerField(s, 2) && Tok(s + 3).key == "securityContext" &&
               Tok(s + 4).key == "privileged") {
      Container(s).privileged = b;
    }
  }
  void Null() { Before(); }

 private:
  struct Frame {
    bool array;
    Token tok;
  };
  std::vector<Frame> frames_;

  void Before() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().tok.index;
  }
  const Token& Tok(long i) const { return frames_[static_cast<std::size_t>(i)].tok; }
  // The last path token named `spec` (a pod spec when `containers` or a pod field follows).
  long LastSpec() const {
    for (long i = static_cast<long>(frames_.size()) - 1; i >= 2; --i)
      if (!frames_[static_cast<std::size_t>(i)].array && Tok(i).key == "spec") return i;
    return -1;
  }
  // path = [..., spec, containers, i, <extra tokens>]: true when exactly `extra` follow i.
  bool ContainerField(long s, std::size_t extra) const {
    return s >= 0 && frames_.size() == static_cast<std::size_t>(s) + 3 + extra &&
           Tok(s + 1).key == "containers" && Tok(s + 2).index >= 0;
  }
  TemplateView& Template(std::size_t prefix_len) {
    for (auto& t : view.templates) {
      if (t.prefix.size() != prefix_len) continue;
      bool same = true;
      for (std::size_t i = 0; i < prefix_len && same; ++i) same = t.prefix[i] == frames_[i].tok;
      if (same) return t;
    }
    TemplateView t;
    for (std::size_t i = 0; i < prefix_len; ++i) t.prefix.push_back(frames_[i].tok);
    view.templates.push_back(std::move(t));
    return view.templates.back();
  }
  ContainerView* ContainerAt(long s) {
    auto& cs = Template(static_cast<std::size_t>(s)).containers;
    const auto i = static_cast<std::size_t>(Tok(s + 2).index);
    if (cs.size() <= i) cs.resize(i + 1);
    return &cs[i];
  }
  ContainerView& Container(long s) { return *ContainerAt(s); }
  // [..., spec, containers, i, env, j, <field>]
  EnvView& Env(long s) {
    auto& env = Container(s).env;
    const auto j = static_cast<std::size_t>(Tok(s + 4).index);
    if (env.size() <= j) env.resize(j + 1);
    return env[j];
  }

  void Scalar(std::string_view v, bool is_string) {
    const std::size_t n = frames_.size();
    if (n >= 2 && Tok(0).key == "request") {
      if (n == 2 && is_string) {
        const std::string& k = Tok(1).key;
        if (k == "uid") view.uid = v;
        if (k == "operation") view.operation = v;
        if (k == "namespace") view.ns = v;
        if (k == "name") view.name = v;
        return;
      }
      if (n == 3 && Tok(1).key == "object" && is_string) {
        if (Tok(2).key == "kind") view.kind = v;
        if (Tok(2).key == "apiVersion") view.api_version = v;
        return;
      }
    }
    // [P..., metadata, annotations, K]: the object's (P = request/object) or a template's.
    if (n >= 4 && is_string && Tok(static_cast<long>(n) - 3).key == "metadata" &&
        Tok(static_cast<long>(n) - 2).key == "annotations") {
      Pair pair{Tok(static_cast<long>(n) - 1).key, std::string(v)};
      if (n == 5 && Tok(1).key == "object") view.annotations.push_back(pair);
      Template(n - 3).annotations.push_back(std::move(pair));
      return;
    }
    const long s = LastSpec();
    if (s < 0) return;
    if (n == static_cast<std::size_t>(s) + 2 && is_string && Tok(s + 1).key == "dnsPolicy") {
      Template(static_cast<std::size_t>(s)).dns_policy = std::string(v);
    } else if (ContainerField(s, 1) && is_string) {
      if (Tok(s + 3).key == "name") Container(s).name = v;
      if (Tok(s + 3).key == "image") Container(s).image = v;
    } else if (ContainerField(s, 3) && Tok(s + 3).key == "env" && is_string) {
      if (Tok(s + 5).key == "name") Env(s).name = v;
      if (Tok(s + 5).key == "value") Env(s).value = v;
    } else if (ContainerField(s, 3) && Tok(s + 3).key == "resources") {
      if (Tok(s + 4).key == "limits")
        Container(s).limits.emplace_back(Tok(s + 5).key, std::string(v));
      if (Tok(s + 4).key == "requests")
        Container(s).requests.emplace_back(Tok(s + 5).key, std::string(v));
    } else if (ContainerField(s, 4) && is_string && Tok(s + 3).key == "securityContext" &&
               Tok(s + 4).key == "capabilities" && Tok(s + 5).key == "add") {
      Container(s).caps_add.emplace_back(v);
    }
  }
  using Pair = std::pair<std::string, std::string>;
};

// ---- drivers: each parser feeds the ViewBuilder ---------------------------------------------

// nlohmann SAX: no DOM at all.
struct NlohmannSax {
  ViewBuilder& b;
  using json = nlohmann::json;
  bool null() { return b.Null(), true; }
  bool boolean(bool v) { return b.Bool(v), true; }
  bool number_integer(json::number_integer_t v) { return b.Number(std::to_string(v)), true; }
  bool number_unsigned(json::number_unsigned_t v) { return b.Number(std::to_string(v)), true; }
  bool number_float(json::number_float_t, const std::string& s) { return b.Number(s), true; }
  bool string(std::string& s) { return b.String(s), true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return b.BeginObject(), true; }
  bool key(std::string& k) { return b.Key(k), true; }
  bool end_object() { return b.End(), true; }
  bool start_array(std::size_t) { return b.BeginArray(), true; }
  bool end_array() { return b.End(), true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw std::runtime_error(e.what());
  }
};

void WalkNlohmann(const nlohmann::json& v, ViewBuilder& b) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      b.BeginObject();
      for (auto it = v.begin(); it != v.end(); ++it) {
        b.Key(it.key());
        WalkNlohmann(it.value(), b);
      }
      b.End();
      break;
    case nlohmann::json::value_t::array:
      b.BeginArray();
      for (const auto& e : v) WalkNlohmann(e, b);
      b.End();
      break;
    case nlohmann::json::value_t::string:
      b.String(v.get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean:
      b.Bool(v.get<bool>());
      break;
    case nlohmann::json::value_t::null:
      b.Null();
      break;
    default:
      b.Number(v.dump());
  }
}

void WalkBoost(const boost::json::value& v, ViewBuilder& b) {
  switch (v.kind()) {
    case boost::json::kind::object:
      b.BeginObject();
      for (const auto& kv : v.get_object()) {
        b.Key(kv.key());
        WalkBoost(kv.value(), b);
      }
      b.End();
      break;
    case boost::json::kind::array:
      b.BeginArray();
      for (const auto& e : v.get_array()) WalkBoost(e, b);
      b.End();
      break;
    case boost::json::kind::string:
      b.String(v.get_string());
      break;
    case boost::json::kind::bool_:
      b.Bool(v.get_bool());
      break;
    case boost::json::kind::null:
      b.Null();
      break;
    default:
      b.Number(boost::json::serialize(v));
  }
}

void WalkSimdDom(simdjson::dom::element v, ViewBuilder& b) {
  using simdjson::dom::element_type;
  switch (v.type()) {
    case element_type::OBJECT:
      b.BeginObject();
      for (auto field : simdjson::dom::object(v)) {
        b.Key(field.key);
        WalkSimdDom(field.value, b);
      }
      b.End();
      break;
    case element_type::ARRAY:
      b.BeginArray();
      for (auto e : simdjson::dom::array(v)) WalkSimdDom(e, b);
      b.End();
      break;
    case element_type::STRING:
      b.String(std::string_view(v));
      break;
    case element_type::BOOL:
      b.Bool(bool(v));
      break;
    case element_type::NULL_VALUE:
      b.Null();
      break;
    case element_type::INT64:
      b.Number(std::to_string(int64_t(v)));
      break;
    case element_type::UINT64:
      b.Number(std::to_string(uint64_t(v)));
      break;
    default:
      b.Number(std::to_string(double(v)));
  }
}

void WalkOnDemand(simdjson::ondemand::value v, ViewBuilder& b) {
  using simdjson::ondemand::json_type;
  switch (v.type().value()) {
    case json_type::object:
      b.BeginObject();
      for (auto field : v.get_object()) {
        b.Key(field.unescaped_key().value());
        WalkOnDemand(field.value().value(), b);
      }
      b.End();
      break;
    case json_type::array:
      b.BeginArray();
      for (auto e : v.get_array()) WalkOnDemand(e.value(), b);
      b.End();
      break;
    case json_type::string:
      b.String(v.get_string().value());
      break;
    case json_type::boolean:
      b.Bool(v.get_bool().value());
      break;
    case json_type::null:
      v.is_null();
      b.Null();
      break;
    default:
      b.Number(v.raw_json_token());
  }
}

// ---- nlohmann DOM on a per-parse arena -----------------------------------------------------

// One arena per thread, reset before each parse; deallocate is a no-op.
thread_local std::pmr::monotonic_buffer_resource* g_arena = nullptr;

template <class T>
struct ArenaAllocator {
  using value_type = T;
  ArenaAllocator() = default;
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(g_arena->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T*, std::size_t) {}
  template <class U>
  bool operator==(const ArenaAllocator<U>&) const {
    return true;
  }
};
using ArenaString = std::basic_string<char, std::char_traits<char>, ArenaAllocator<char>>;
using ArenaJson = nlohmann::basic_json<std::map, std::vector, ArenaString, bool, std::int64_t,
                                       std::uint64_t, double, ArenaAllocator>;

volatile std::size_t g_sink = 0;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: json_parse_bench BODY_DIR [ROUNDS]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int rounds = argc >= 3 ? std::atoi(argv[2]) : 15;
  std::printf("simdjson %s, implementation %s; Boost %d; nlohmann %d.%d.%d\n",
              RW_STRINGIFY(SIMDJSON_VERSION), simdjson::get_active_implementation()->name().c_str(),
              BOOST_VERSION, NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
              NLOHMANN_JSON_VERSION_PATCH);
  std::printf("%-16s %-44s %10s %8s %9s\n", "body", "parser", "us/parse", "MB/s", "allocs");

  // Buffers reused across parses, as a server thread would keep them.
  static unsigned char arena_buffer[4 << 20];
  simdjson::dom::parser dom_parser;
  simdjson::ondemand::parser od_parser;

  for (const char* name : {"pod-3k", "job-10k", "pytorchjob-30k"}) {
    const std::string body = rw::bench::ReadFile(dir + "/" + name + ".json");
    const simdjson::padded_string padded(body);  // the body read into a padded buffer

    std::vector<std::pair<std::string, std::function<std::size_t()>>> cases = {
        {"codec::JsonNestingDepth pre-scan (before)",
         [&] { return rw::codec::JsonNestingDepth(body); }},
        {"nlohmann json::parse (DOM, before)", [&] { return nlohmann::json::parse(body).size(); }},
        {"codec::ParseJson: Boost.JSON -> nlohmann DOM (today)",
         [&] { return rw::codec::ParseJson(body, rw::codec::kMaxNestingDepth).size(); }},
        {"nlohmann DOM + walk to view",
         [&] {
           ViewBuilder b;
           WalkNlohmann(nlohmann::json::parse(body), b);
           return b.view.Digest();
         }},
        {"nlohmann SAX -> view (no DOM)",
         [&] {
           ViewBuilder b;
           NlohmannSax sax{b};
           nlohmann::json::sax_parse(body, &sax);
           return b.view.Digest();
         }},
        {"nlohmann DOM, arena allocator",
         [&] {
           std::pmr::monotonic_buffer_resource arena(arena_buffer, sizeof arena_buffer);
           g_arena = &arena;
           return ArenaJson::parse(body).size();
         }},
        {"Boost.JSON parse, default resource",
         [&] { return boost::json::parse(body).as_object().size(); }},
        {"Boost.JSON parse, monotonic_resource",
         [&] {
           boost::json::monotonic_resource mr(arena_buffer, sizeof arena_buffer);
           return boost::json::parse(body, &mr).as_object().size();
         }},
        {"Boost.JSON monotonic + walk to view",
         [&] {
           boost::json::monotonic_resource mr(arena_buffer, sizeof arena_buffer);
           ViewBuilder b;
           WalkBoost(boost::json::parse(body, &mr), b);
           return b.view.Digest();
         }},
        {"simdjson DOM parse (parser reused)",
         [&] { return dom_parser.parse(padded).get_object().value().size(); }},
        {"simdjson DOM + walk to view",
         [&] {
           ViewBuilder b;
           WalkSimdDom(dom_parser.parse(padded).value(), b);
           return b.view.Digest();
         }},
        {"simdjson ondemand -> view (parser reused)",
         [&] {
           ViewBuilder b;
           auto doc = od_parser.iterate(padded);
           WalkOnDemand(doc.get_value().value(), b);
           return b.view.Digest();
         }},
    };

    // Every view-building variant must see the same view.
    std::optional<std::size_t> digest;
    for (const auto& [label, f] : cases) {
      if (label.find("view") == std::string::npos) continue;
      const std::size_t d = f();
      if (digest && *digest != d) {
        std::fprintf(stderr, "json_parse_bench: %s: %s built another view (%zu, not %zu)\n", name,
                     label.c_str(), d, *digest);
        return 1;
      }
      digest = d;
    }
    for (const auto& [label, f] : cases) {
      const rw::bench::Stat s = rw::bench::Measure([&] { g_sink = g_sink + f(); }, rounds);
      std::printf("%-16s %-44s %10.1f %8.0f %9.0f\n", name, label.c_str(), s.ns / 1000,
                  static_cast<double>(body.size()) / s.ns * 1000, s.allocs);
    }
    {
      ViewBuilder b;
      NlohmannSax sax{b};
      nlohmann::json::sax_parse(body, &sax);
      std::size_t containers = 0, env = 0;
      for (const auto& t : b.view.templates) {
        containers += t.containers.size();
        for (const auto& c : t.containers) env += c.env.size();
      }
      std::printf("%-16s %zu bytes; view: %zu templates, %zu containers, %zu env vars\n", name,
                  body.size(), b.view.templates.size(), containers, env);
    }
    std::fflush(stdout);
  }
  return 0;
}
