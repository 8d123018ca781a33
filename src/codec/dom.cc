#include "rdma_webhook/codec/dom.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include "rdma_webhook/codec/json_text.h"
#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

namespace bj = boost::json;
using nlohmann::json;

// A double as nlohmann's lexer reads its text (strtod), so both DOMs hold the same bits; nullopt
// for one out of a double's range, which nlohmann refuses.
std::optional<double> DoubleFromText(const std::string& text) {
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// Builds the Boost.JSON value from the parser's events on Boost's own value_stack, with
// nlohmann's number types (ParseJson's DomBuilder makes the same choices).
class ArenaBuilder {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  explicit ArenaBuilder(bj::storage_ptr storage) { stack_.reset(std::move(storage)); }

  bj::value Release() { return stack_.release(); }
  bool out_of_range = false;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return true; }
  bool on_object_end(std::size_t n, bj::error_code&) {
    stack_.push_object(n);  // of duplicate keys the last is kept, as nlohmann keeps it
    return true;
  }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t n, bj::error_code&) {
    stack_.push_array(n);
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_chars(s);
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_key(s);
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_string(s);
    return true;
  }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t v, bj::string_view s, bj::error_code&) {
    const bool negative = number_.empty() ? (!s.empty() && s.front() == '-') : number_[0] == '-';
    number_.clear();
    if (negative)
      stack_.push_int64(v);
    else
      stack_.push_uint64(static_cast<std::uint64_t>(v));
    return true;
  }
  bool on_uint64(std::uint64_t v, bj::string_view, bj::error_code&) {
    number_.clear();
    stack_.push_uint64(v);
    return true;
  }
  bool on_double(double, bj::string_view s, bj::error_code& ec) {
    number_.append(s.data(), s.size());
    const auto d = DoubleFromText(number_);
    number_.clear();
    if (!d) {
      out_of_range = true;
      ec = bj::error::exception;  // stops the parser; nlohmann then reports the number
      return false;
    }
    stack_.push_double(*d);
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    stack_.push_bool(b);
    return true;
  }
  bool on_null(bj::error_code&) {
    stack_.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  bj::value_stack stack_;
  std::string number_;
};

bool PlainIndex(std::string_view token) {
  return !token.empty() && token.size() < 19 &&
         std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         (token.size() == 1 || token.front() != '0');
}

}  // namespace

bj::value ParseDom(std::string_view text, std::size_t max_depth, bj::storage_ptr storage) {
  bj::parse_options options;      // standard JSON only: no comments, no trailing commas
  options.max_depth = max_depth;  // the same count as JsonNestingDepth: max_depth levels pass
  bj::basic_parser<ArenaBuilder> parser(options, storage);
  bj::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used == text.size()) return parser.handler().Release();
  // Whatever the fast parser refused, ParseJson decides as it always has: the same exception,
  // or, where nlohmann is more lenient (a byte order mark), its value.
  return ToDom(ParseJson(text, max_depth), std::move(storage));
}

bj::value ToDom(const json& value, bj::storage_ptr storage) {
  switch (value.type()) {
    case json::value_t::object: {
      bj::object out(storage);
      out.reserve(value.size());
      for (auto it = value.begin(); it != value.end(); ++it)
        out.emplace(it.key(), ToDom(it.value(), storage));
      return bj::value(std::move(out));
    }
    case json::value_t::array: {
      bj::array out(storage);
      out.reserve(value.size());
      for (const auto& item : value) out.push_back(ToDom(item, storage));
      return bj::value(std::move(out));
    }
    case json::value_t::string:
      return bj::value(bj::string_view(value.get_ref<const std::string&>()), storage);
    case json::value_t::boolean:
      return bj::value(value.get<bool>(), storage);
    case json::value_t::number_integer:
      return bj::value(value.get<std::int64_t>(), storage);
    case json::value_t::number_unsigned:
      return bj::value(value.get<std::uint64_t>(), storage);
    case json::value_t::number_float:
      return bj::value(value.get<double>(), storage);
    default:  // null, and nlohmann's binary and discarded values, which JSON text never makes
      return bj::value(nullptr, storage);
  }
}

json FromDom(const bj::value& value) {
  switch (value.kind()) {
    case bj::kind::object: {
      json out(json::value_t::object);
      auto& members = *out.get_ptr<json::object_t*>();
      for (const auto& m : value.get_object())
        members.insert_or_assign(std::string(m.key()), FromDom(m.value()));
      return out;
    }
    case bj::kind::array: {
      json out(json::value_t::array);
      auto& items = *out.get_ptr<json::array_t*>();
      items.reserve(value.get_array().size());
      for (const auto& item : value.get_array()) items.push_back(FromDom(item));
      return out;
    }
    case bj::kind::string:
      return json(std::string(value.get_string()));
    case bj::kind::bool_:
      return json(value.get_bool());
    case bj::kind::int64:
      return json(value.get_int64());
    case bj::kind::uint64:
      return json(value.get_uint64());
    case bj::kind::double_:
      return json(value.get_double());
    case bj::kind::null:
      break;
  }
  return json();
}

std::string TypeName(const bj::value& value) {
  switch (value.kind()) {
    case bj::kind::null:
      return "null";
    case bj::kind::bool_:
      return "a boolean";
    case bj::kind::string:
      return "a string";
    case bj::kind::array:
      return "a list";
    case bj::kind::object:
      return "a mapping";
    default:
      return "a number";
  }
}

bool SameValue(const bj::value& a, const bj::value& b) {
  const auto number = [](const bj::value& v) { return v.is_number(); };
  if (number(a) && number(b)) {
    // nlohmann: integers of either sign compare exactly, anything with a double as doubles.
    if (a.is_double() || b.is_double()) return a.to_number<double>() == b.to_number<double>();
    if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
    if (a.is_uint64() && b.is_uint64()) return a.get_uint64() == b.get_uint64();
    const std::int64_t s = a.is_int64() ? a.get_int64() : b.get_int64();
    const std::uint64_t u = a.is_uint64() ? a.get_uint64() : b.get_uint64();
    return s >= 0 && static_cast<std::uint64_t>(s) == u;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case bj::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (const auto& m : x) {
        const bj::value* other = y.if_contains(m.key());
        if (other == nullptr || !SameValue(m.value(), *other)) return false;
      }
      return true;
    }
    case bj::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!SameValue(x[i], y[i])) return false;
      return true;
    }
    default:
      return a == b;  // strings, booleans, nulls
  }
}

std::string_view NextPointerToken(std::string_view pointer, std::size_t& pos,
                                  std::string& scratch) {
  const std::size_t end = std::min(pointer.find('/', pos), pointer.size());
  std::string_view token = pointer.substr(pos, end - pos);
  pos = end + 1;
  if (token.find('~') == std::string_view::npos) return token;
  scratch.clear();
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      scratch += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      scratch += token[i];
    }
  }
  return scratch;
}

const bj::value* Find(const bj::value& root, std::string_view pointer) {
  return Find(const_cast<bj::value&>(root), pointer);
}

bj::value* Find(bj::value& root, std::string_view pointer) {
  bj::value* at = &root;
  std::string scratch;
  std::size_t pos = 1;
  while (pos <= pointer.size() && !pointer.empty()) {
    const std::string_view token = NextPointerToken(pointer, pos, scratch);
    if (at->is_object()) {
      at = at->get_object().if_contains(token);
    } else if (at->is_array() && PlainIndex(token)) {
      auto& items = at->get_array();
      std::size_t i = 0;  // PlainIndex: at most 18 digits, which always fit
      std::from_chars(token.data(), token.data() + token.size(), i);
      at = i < items.size() ? &items[i] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::vector<const bj::key_value_pair*> SortedMembers(const bj::object& object) {
  std::vector<const bj::key_value_pair*> out;
  out.reserve(object.size());
  bool sorted = true;
  for (const auto& m : object) {
    if (!out.empty() && !(out.back()->key() < m.key())) sorted = false;
    out.push_back(&m);
  }
  if (!sorted)
    std::sort(out.begin(), out.end(), [](const bj::key_value_pair* a, const bj::key_value_pair* b) {
      return a->key() < b->key();
    });
  return out;
}

}  // namespace rw::codec
