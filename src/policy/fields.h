#pragma once
// Reading the policy document: a mapping whose every key must be consumed, and the errors that
// name the field. Shared by the parser and the modes' sections (modes/).
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/policy/did_you_mean.h"
#include "rdma_webhook/policy/policy.h"

namespace rw::policy {

// Throws the PolicyError "<path>: <message>".
[[noreturn]] void Fail(const std::string& path, const std::string& message);

// A network interface name Linux accepts (IFNAMSIZ) and Multus can carry in an annotation item.
bool ValidInterface(std::string_view s);

// A mapping being read: every key must be consumed, so a typo is an error that names it.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) Fail(Where(), "must be a mapping, got " + codec::TypeName(object_));
  }

  const nlohmann::json* Get(const std::string& key) {
    used_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string String(const std::string& key, std::string fallback) {
    const nlohmann::json* v = Get(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) Fail(Path(key), "must be a string, got " + codec::TypeName(*v));
    return v->get<std::string>();
  }
  bool Bool(const std::string& key, bool fallback) {
    const nlohmann::json* v = Get(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) Fail(Path(key), "must be true or false, got " + codec::TypeName(*v));
    return v->get<bool>();
  }
  long long Count(const std::string& key, long long fallback) {
    const nlohmann::json* v = Get(key);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer()) Fail(Path(key), "must be an integer, got " + codec::TypeName(*v));
    const long long n = v->get<long long>();
    if (n < 1) Fail(Path(key), "must be >= 1");
    if (n > 1024) Fail(Path(key), "must be <= 1024");
    return n;
  }
  std::vector<std::string> Strings(const std::string& key, std::vector<std::string> fallback) {
    const nlohmann::json* v = Get(key);
    if (v == nullptr) return fallback;
    if (!v->is_array()) Fail(Path(key), "must be a list of strings, got " + codec::TypeName(*v));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const nlohmann::json& item = (*v)[i];
      if (!item.is_string() || item.get_ref<const std::string&>().empty())
        Fail(Path(key) + "[" + std::to_string(i) + "]", "must be a non-empty string");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  // off may arrive as boolean false: YAML 1.1 (and Helm) read an unquoted `off` that way.
  std::string Enum(const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& allowed) {
    const nlohmann::json* v = Get(key);
    if (v == nullptr) return fallback;
    std::string s;
    if (v->is_boolean() && !v->get<bool>() &&
        std::find(allowed.begin(), allowed.end(), "off") != allowed.end()) {
      s = "off";
    } else if (v->is_string()) {
      s = v->get<std::string>();
    } else {
      Fail(Path(key), "must be one of " + Join(allowed) + ", got " + codec::TypeName(*v));
    }
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      Fail(Path(key), "must be one of " + Join(allowed) + ", got '" + s + "'");
    return s;
  }

  // The keys asked for by now are every key the mapping takes: the closest is the suggestion.
  void Done() const {
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!used_.count(it.key()))
        Fail(Path(it.key()), "unknown field" + DidYouMean(it.key(), {used_.begin(), used_.end()}));
  }

  static std::string Join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
  }

 private:
  std::string Where() const { return path_.empty() ? "policy" : path_; }
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string> used_;
};

}  // namespace rw::policy
