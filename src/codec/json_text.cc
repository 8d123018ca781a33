#include "rdma_webhook/codec/json_text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/basic_parser_impl.hpp>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

namespace bj = boost::json;
using nlohmann::json;

// A number as nlohmann's lexer converts its text: with '.', 'e' or 'E' a double (strtod);
// otherwise a signed (leading '-') or unsigned integer, and a double when it does not fit.
// nullopt for a double out of range, which nlohmann refuses.
std::optional<json> NumberFromText(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  if (text.find_first_of(".eE") == std::string::npos) {
    errno = 0;
    if (text.front() == '-') {
      const long long v = std::strtoll(begin, &end, 10);
      if (errno == 0 && end == begin + text.size()) return json(static_cast<std::int64_t>(v));
    } else {
      const unsigned long long v = std::strtoull(begin, &end, 10);
      if (errno == 0 && end == begin + text.size()) return json(static_cast<std::uint64_t>(v));
    }
  }
  const double d = std::strtod(begin, &end);
  if (!std::isfinite(d)) return std::nullopt;
  return json(d);
}

// Builds nlohmann's DOM from the parser's events. The stack holds the open arrays and objects;
// a pointer into a container stays valid because a container only grows while none of its
// children is open.
class DomBuilder {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  json root;
  bool out_of_range = false;  // a number nlohmann refuses: the caller lets nlohmann say so

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) {
    open_.push_back(Put(json(json::value_t::object)));
    return true;
  }
  bool on_object_end(std::size_t, bj::error_code&) {
    open_.pop_back();
    return true;
  }
  bool on_array_begin(bj::error_code&) {
    open_.push_back(Put(json(json::value_t::array)));
    return true;
  }
  bool on_array_end(std::size_t, bj::error_code&) {
    open_.pop_back();
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
    if (text_.empty()) {
      Put(json(std::string(s.data(), s.size())));
    } else {
      text_.append(s.data(), s.size());
      Put(json(std::move(text_)));
      text_.clear();
    }
    return true;
  }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  // The parser's own value is exact for these two; only the type follows nlohmann's rule.
  bool on_int64(std::int64_t v, bj::string_view s, bj::error_code&) {
    const bool negative = number_.empty() ? (!s.empty() && s.front() == '-') : number_[0] == '-';
    number_.clear();
    if (negative) {
      Put(json(v));
    } else {
      Put(json(static_cast<std::uint64_t>(v)));
    }
    return true;
  }
  bool on_uint64(std::uint64_t v, bj::string_view, bj::error_code&) {
    number_.clear();
    Put(json(v));
    return true;
  }
  // A double is read again from its text with strtod, as nlohmann reads it, so that the value
  // is the same to the last bit (and -0 or an integer too long for 64 bits gets nlohmann's type).
  bool on_double(double, bj::string_view s, bj::error_code& ec) {
    number_.append(s.data(), s.size());
    auto value = NumberFromText(number_);
    number_.clear();
    if (!value) {
      out_of_range = true;
      ec = bj::error::exception;  // stops the parser; nlohmann then reports the number
      return false;
    }
    Put(std::move(*value));
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    Put(json(b));
    return true;
  }
  bool on_null(bj::error_code&) {
    Put(json(nullptr));
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  // Places a value in the open container (or as the root) and returns where it now lives.
  json* Put(json&& value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = *parent.get_ptr<json::array_t*>();
      items.push_back(std::move(value));
      return &items.back();
    }
    // nlohmann keeps the last of duplicate keys.
    auto& members = *parent.get_ptr<json::object_t*>();
    auto [it, inserted] = members.try_emplace(std::move(key_));
    it->second = std::move(value);
    key_.clear();
    return &it->second;
  }

  std::vector<json*> open_;
  std::string key_, text_, number_;
};

// Empties the containers below `value`, children first; `depth` levels are left to go.
void EmptyChildren(json& value, std::size_t depth) {
  if (depth == 0) return;
  if (value.is_object()) {
    auto& members = *value.get_ptr<json::object_t*>();
    for (auto& member : members) EmptyChildren(member.second, depth - 1);
    members.clear();
  } else if (value.is_array()) {
    auto& items = *value.get_ptr<json::array_t*>();
    for (auto& item : items) EmptyChildren(item, depth - 1);
    items.clear();
  }
}

// A string nlohmann writes unchanged between quotes: printable ASCII, no quote and no backslash.
bool Plain(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view text) {
  if (!Plain(text)) {
    out += json(std::string(text)).dump();
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

void AppendJson(std::string& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : *value.get_ptr<const json::object_t*>()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(out, key);
        out += ':';
        AppendJson(out, member);
      }
      out += '}';
      return;
    }
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : *value.get_ptr<const json::array_t*>()) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, item);
      }
      out += ']';
      return;
    }
    case json::value_t::string:
      AppendJsonString(out, *value.get_ptr<const std::string*>());
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::null:
      out += "null";
      return;
    case json::value_t::number_integer:
      out += std::to_string(value.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      out += std::to_string(value.get<std::uint64_t>());
      return;
    default:  // doubles (nlohmann's shortest form), binary, discarded
      out += value.dump();
      return;
  }
}

std::string DumpJson(const json& value) {
  std::string out;
  AppendJson(out, value);
  return out;
}

void ReleaseJson(json& value) {
  EmptyChildren(value, kReleaseDepth);
  value = nullptr;
}

json ParseJson(std::string_view text, std::size_t max_depth) {
  bj::parse_options options;      // standard JSON only: no comments, no trailing commas
  options.max_depth = max_depth;  // the same count as JsonNestingDepth: max_depth levels pass
  bj::basic_parser<DomBuilder> parser(options);
  bj::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used == text.size()) return std::move(parser.handler().root);
  // Too deep: the valid prefix read so far already nests deeper, so the whole text does.
  // Otherwise (malformed, out of range, a byte order mark) nlohmann has the last word, and its
  // exception (or, where it is more lenient, its value) is what callers always had; where it
  // reads on past the fast parser's stop it must not build what is too deep either.
  if (ec == bj::error::too_deep || JsonNestingDepth(text) > max_depth)
    throw JsonTooDeep("nested deeper than " + std::to_string(max_depth));
  return json::parse(text);
}

}  // namespace rw::codec
