#include "rdma_webhook/codec/yaml.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "stream_parts.h"
#include "template_marker.h"

namespace rw::codec {
namespace {

// The text of a scalar or key as YAML means it. The input was checked to be UTF-8 before
// yaml-cpp read it, but yaml-cpp decodes the escapes `\N` and `\_` of a double-quoted scalar
// into the single bytes 0x85 and 0xA0 (Latin-1) instead of U+0085 and U+00A0, which makes a
// string that is no UTF-8 (found by tests/fuzz/fuzz_yaml). Such a lone byte is re-encoded;
// well-formed text, the usual case, is returned as it is.
std::string ScalarText(const std::string& text) {
  if (InvalidUtf8At(text) == std::string_view::npos) return text;
  std::string out;
  out.reserve(text.size() + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t bad = InvalidUtf8At(std::string_view(text).substr(i));
    if (bad == std::string_view::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    out.append(text, i, bad);
    const auto byte = static_cast<unsigned char>(text[i + bad]);
    out.push_back(static_cast<char>(0xC0 | (byte >> 6)));
    out.push_back(static_cast<char>(0x80 | (byte & 0x3F)));
    i += bad + 1;
  }
  return out;
}

using nlohmann::json;

// Alias expansion can blow a small text up exponentially ("billion laughs"); past this many
// converted nodes the document is refused.

class ConversionError : public std::runtime_error {
 public:
  ConversionError(std::size_t line, const std::string& what)
      : std::runtime_error(what), line_(line) {}
  std::size_t line() const { return line_; }

 private:
  std::size_t line_;
};

bool IsDecimal(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i >= s.size()) return false;
  if (s[i] == '0' && s.size() - i > 1) return false;  // leading zero: YAML 1.1 octal, keep text
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool IsFloat(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  bool digits = false, dot = false, exp = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      digits = false;
      if (i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+')) ++i;
    } else {
      return false;
    }
  }
  return digits && (dot || exp);
}

// YAML 1.1 resolution of a plain (unquoted, untagged) scalar, as kubectl's reader does.
// A number a double holds, else the text: go-yaml (kubectl's reader) resolves a plain scalar
// strconv.ParseFloat refuses as out of range (1e400) to a string; below the smallest double
// (1e-400) it is 0, as in Go. std::stod would throw std::out_of_range for both.
json FloatOrString(const std::string& s) {
  const double v = std::strtod(s.c_str(), nullptr);
  if (std::isinf(v)) return s;
  return v;
}

json ResolvePlain(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on",   "On",   "ON",   "y",   "Y"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO",
                                       "off",   "Off",   "OFF",   "n",  "N"};
  for (const char* t : kTrue)
    if (s == t) return true;
  for (const char* f : kFalse)
    if (s == f) return false;
  if (s.size() > 1 && s[0] == '0' &&
      std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '7'; })) {
    long long v = 0;  // YAML 1.1 octal, as kubectl reads it
    auto [ptr, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v, 8);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  if (IsDecimal(s)) {
    long long v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    return FloatOrString(s);  // out of range for int64: a float, like kubectl
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    long long v = 0;
    auto [ptr, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  if (IsFloat(s)) return FloatOrString(s);
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
  return s;
}

// RFC 6901: `~` is written `~0` and `/` is written `~1`.
std::string EscapePointerToken(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

class Converter {
 public:
  // `first_column`: 0-based column in the file where the text's first line starts (after a `---`).
  Converter(std::size_t first_line, std::size_t first_column, DuplicateKeys mode,
            std::vector<DuplicateKey>& duplicates, PositionMap* positions = nullptr)
      : first_line_(first_line),
        first_column_(first_column),
        mode_(mode),
        duplicates_(duplicates),
        positions_(positions) {}

  // `pointer`: where the value lands in the converted document.
  json Convert(const YAML::Node& node, std::size_t depth, const std::string& pointer) {
    if (++nodes_ > kMaxNodes)
      throw ConversionError(Line(node), "document too large after alias expansion");
    if (depth > kMaxNestingDepth)
      throw ConversionError(Line(node), "nesting deeper than " + std::to_string(kMaxNestingDepth));
    // A mapping member already has its key's position; the first place a pointer is seen wins
    // (a merged mapping lands on its host's pointer).
    if (positions_ != nullptr) positions_->emplace(pointer, Position{Line(node), Column(node)});
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        return Scalar(node);
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const auto& item : node)
          out.push_back(Convert(item, depth + 1, pointer + "/" + std::to_string(out.size())));
        return out;
      }
      case YAML::NodeType::Map:
        return Map(node, depth, pointer);
    }
    return nullptr;
  }

  std::size_t Line(const YAML::Node& node) const {
    const auto mark = node.Mark();
    return mark.line >= 0 ? first_line_ + static_cast<std::size_t>(mark.line) : first_line_;
  }

  std::size_t Column(const YAML::Node& node) const {
    const auto mark = node.Mark();
    if (mark.column < 0) return 0;
    return static_cast<std::size_t>(mark.column) + 1 + (mark.line == 0 ? first_column_ : 0);
  }

 private:
  json Scalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    const std::string text = ScalarText(node.Scalar());
    if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "!!str") return text;
    if (tag == "?" || tag.empty()) return ResolvePlain(text);
    json resolved = ResolvePlain(text);
    if (tag == "tag:yaml.org,2002:int" && !resolved.is_number_integer())
      throw ConversionError(Line(node), "!!int value '" + text + "' is not an integer");
    return resolved;
  }

  json Map(const YAML::Node& node, std::size_t depth, const std::string& pointer) {
    json out = json::object();
    json merged = json::object();                  // `<<` merge keys: explicit keys win
    std::map<std::string, std::size_t> key_lines;  // explicit key -> line of its latest use
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        throw ConversionError(Line(kv.first), "mapping keys must be scalars");
      const std::string key = ScalarText(kv.first.Scalar());
      if (key == "<<" && kv.first.Tag() != "!") {
        // The merged mappings land in this one, so their keys' pointers are this mapping's.
        auto merge_one = [&](const YAML::Node& source_node) {
          const json m = Convert(source_node, depth + 1, pointer);
          if (!m.is_object())
            throw ConversionError(Line(kv.second), "merge key '<<' needs a mapping");
          for (auto it = m.begin(); it != m.end(); ++it)
            if (!merged.contains(it.key())) merged[it.key()] = it.value();
        };
        if (kv.second.IsSequence()) {
          if (++nodes_ > kMaxNodes)
            throw ConversionError(Line(kv.second), "document too large after alias expansion");
          for (const auto& m : kv.second) merge_one(m);
        } else {
          merge_one(kv.second);
        }
        continue;
      }
      const std::string child = pointer + "/" + EscapePointerToken(key);
      const std::size_t line = Line(kv.first);
      auto [seen, first_time] = key_lines.emplace(key, line);
      if (!first_time) {
        if (mode_ == DuplicateKeys::kRefuse)
          throw ConversionError(line, "duplicate key '" + key + "'");
        duplicates_.push_back({child, key, line, Column(kv.first), seen->second});
        seen->second = line;
      }
      if (positions_ != nullptr) (*positions_)[child] = {line, Column(kv.first)};  // last wins
      out[key] = Convert(kv.second, depth + 1, child);
    }
    for (auto it = merged.begin(); it != merged.end(); ++it)
      if (!out.contains(it.key())) out[it.key()] = it.value();
    return out;
  }

  std::size_t first_line_;
  std::size_t first_column_;
  DuplicateKeys mode_;
  std::vector<DuplicateKey>& duplicates_;
  PositionMap* positions_;
  std::size_t nodes_ = 0;
};

bool LooksLikeJson(std::string_view text) {
  auto it = std::find_if(text.begin(), text.end(),
                         [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  return it != text.end() && (*it == '{' || *it == '[');
}

}  // namespace

// Offset of the first byte that is not well-formed UTF-8, or npos. YAML is Unicode text and JSON
// output must be valid UTF-8, so a Latin-1 file is refused here with its line, not later.
std::size_t InvalidUtf8At(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;
    const auto second = static_cast<unsigned char>(s[i + 1]);
    if (second < lo || second > hi) return i;
    for (std::size_t k = 2; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

namespace {

// True when some object of the JSON text repeats a key (the JSON reader keeps the last one,
// as kubectl's does, without a word).
bool JsonRepeatsAKey(std::string_view text) {
  std::vector<std::set<std::string>> open;
  bool repeated = false;
  const json::parser_callback_t note = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == json::parse_event_t::object_end && !open.empty()) {
      open.pop_back();
    } else if (event == json::parse_event_t::key && !open.empty() && parsed.is_string() &&
               !open.back().insert(parsed.get<std::string>()).second) {
      repeated = true;
    }
    return true;
  };
  if (json::parse(text, note, /*allow_exceptions=*/false).is_discarded()) return false;
  return repeated;
}

// A JSON document's repeated keys, with lines and pointers found by reading the text as YAML
// (JSON is YAML's flow style); `doc.value` stays the JSON reader's. Refused, the document is an
// error. Nothing is noted when the YAML reader disagrees with the text.
void NoteJsonDuplicates(std::string_view text, std::size_t first_line, std::size_t first_column,
                        DuplicateKeys mode, SourceDocument& doc) {
  if (!JsonRepeatsAKey(text)) return;
  std::vector<DuplicateKey> found;
  try {
    Converter converter(first_line, first_column, DuplicateKeys::kLastWins, found);
    (void)converter.Convert(YAML::Load(std::string(text)), 0, "");
  } catch (const std::exception&) {
    return;
  }
  if (found.empty()) return;
  if (mode == DuplicateKeys::kRefuse) {
    doc.value.reset();
    doc.error = "line " + std::to_string(found[0].line) + ": duplicate key '" + found[0].key + "'";
    return;
  }
  doc.duplicate_keys = std::move(found);
}

}  // namespace

SourceDocument ParseChunk(const Chunk& chunk, std::size_t index, DuplicateKeys duplicates,
                          Positions positions) {
  SourceDocument doc;
  doc.index = index;
  doc.line = chunk.first_line;
  const bool record = positions == Positions::kRecord;
  if (const std::size_t bad = InvalidUtf8At(chunk.text); bad != std::string_view::npos) {
    const auto line =
        chunk.first_line +
        static_cast<std::size_t>(std::count(
            chunk.text.begin(), chunk.text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
    doc.error = "line " + std::to_string(line) + ": invalid UTF-8 (byte offset " +
                std::to_string(bad) + " of the document); save the file as UTF-8";
    return doc;
  }
  // YAML allows no NUL byte (go-yaml: "control characters are not allowed"), and yaml-cpp
  // takes leading NULs for UTF-16/UTF-32 and decodes ASCII into code points beyond Unicode,
  // strings that are no UTF-8 (found by tests/fuzz/fuzz_yaml).
  if (const std::size_t nul = chunk.text.find('\0'); nul != std::string_view::npos) {
    const auto line =
        chunk.first_line +
        static_cast<std::size_t>(std::count(
            chunk.text.begin(), chunk.text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    doc.error = "line " + std::to_string(line) + ": NUL byte (byte offset " + std::to_string(nul) +
                " of the document); YAML allows no control characters";
    return doc;
  }
  if (Blank(chunk.text)) return doc;
  try {
    if (LooksLikeJson(chunk.text)) {
      if (JsonNestingDepth(chunk.text) > kMaxNestingDepth) {
        doc.error = "line " + std::to_string(chunk.first_line) + ": nesting deeper than " +
                    std::to_string(kMaxNestingDepth);
        return doc;
      }
      json parsed = json::parse(chunk.text, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded()) {
        doc.value = std::move(parsed);
        NoteJsonDuplicates(chunk.text, chunk.first_line, chunk.first_column, duplicates, doc);
        if (record) doc.positions[""] = {chunk.first_line, chunk.first_column + 1};
        return doc;
      }
    }
    YAML::Node node = YAML::Load(chunk.text);
    Converter converter(chunk.first_line, chunk.first_column, duplicates, doc.duplicate_keys,
                        record ? &doc.positions : nullptr);
    json value = converter.Convert(node, 0, "");
    if (!value.is_null()) doc.value = std::move(value);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own depth guard says only "bad file"; the document nests past our bound too.
    const std::size_t line =
        chunk.first_line + (e.mark.line >= 0 ? static_cast<std::size_t>(e.mark.line) : 0);
    doc.error = "line " + std::to_string(line) + ": nesting deeper than " +
                std::to_string(kMaxNestingDepth);
  } catch (const YAML::Exception& e) {
    const std::size_t line =
        chunk.first_line + (e.mark.line >= 0 ? static_cast<std::size_t>(e.mark.line) : 0);
    // A template breaks YAML where nothing is wrong with it as a template: say what it is.
    if (const auto marker = FindTemplateMarker(chunk.text))
      doc.error = TemplateError(*marker, chunk.first_line);
    else
      doc.error = "line " + std::to_string(line) + ": " + e.msg;
  } catch (const ConversionError& e) {
    // `name: {{ include "x" . }}` is YAML (a flow mapping as a key) that no manifest means.
    if (const auto marker = FindTemplateMarker(chunk.text))
      doc.error = TemplateError(*marker, chunk.first_line);
    else
      doc.error = "line " + std::to_string(e.line()) + ": " + e.what();
  } catch (const std::exception& e) {
    doc.error = "line " + std::to_string(chunk.first_line) + ": " + e.what();
  }
  if (!doc.error.empty()) {
    doc.duplicate_keys.clear();
    doc.positions.clear();
  }
  if (!doc.value) doc.positions.clear();
  return doc;
}

namespace {

void Emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = value.begin(); it != value.end(); ++it) {
        // YAML caps an implicit key at 1024 characters as written (escapes included); a long
        // key is written explicitly (`? key`), which has no limit.
        if (it.key().size() > 128) out << YAML::LongKey;
        out << YAML::Key;
        Emit(out, json(it.key()));
        out << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      // Quote whatever a YAML 1.1 reader would not read back as this same string.
      // Number-like text (012, 1_000, 1:20, .5) means a number to some YAML 1.1 readers.
      const bool number_like =
          !s.empty() && std::string_view("0123456789+-.").find(s[0]) != std::string_view::npos;
      // A control character (a CR is a line break to YAML) is written escaped in double quotes.
      const bool control = std::any_of(s.begin(), s.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
      if (!ResolvePlain(s).is_string() || number_like || control) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      break;
    }
    case json::value_t::null:
      out << YAML::Null;
      break;
    case json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      break;
    default:
      // nlohmann writes a non-finite double as null, which would read back as another value;
      // the reader reads .inf and -.inf (and no NaN), so write those.
      if (value.is_number_float() && std::isinf(value.get<double>())) {
        out << (value.get<double>() > 0 ? ".inf" : "-.inf");
      } else {
        out << value.dump();
      }
      break;
  }
}

}  // namespace

std::optional<Position> FindPosition(const PositionMap& positions, std::string_view pointer) {
  std::string p(pointer);
  while (true) {
    if (const auto it = positions.find(p); it != positions.end()) return it->second;
    if (p.empty()) return std::nullopt;
    p.erase(p.rfind('/'));
  }
}

std::vector<SourceDocument> ParseStream(std::string_view text, DuplicateKeys duplicates,
                                        Positions positions) {
  std::vector<SourceDocument> docs;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  if (LooksLikeJson(text) && InvalidUtf8At(text) == std::string_view::npos) {
    // A whole JSON text is one document even when it spans lines that look like separators.
    if (JsonNestingDepth(text) <= kMaxNestingDepth) {
      json parsed = json::parse(text, nullptr, false);
      if (!parsed.is_discarded()) {
        SourceDocument doc;
        doc.value = std::move(parsed);
        NoteJsonDuplicates(text, 1, 0, duplicates, doc);
        if (positions == Positions::kRecord) doc.positions[""] = {1, 1};
        docs.push_back(std::move(doc));
        return docs;
      }
    }
  }
  std::size_t index = 0;
  for (const Chunk& chunk : SplitDocuments(text))
    docs.push_back(ParseChunk(chunk, index++, duplicates, positions));
  return docs;
}

std::vector<DocumentText> SplitStreamText(std::string_view text) {
  std::vector<DocumentText> docs;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (LooksLikeJson(text) && InvalidUtf8At(text) == std::string_view::npos &&
      JsonNestingDepth(text) <= kMaxNestingDepth &&
      !json::parse(text, nullptr, false).is_discarded()) {
    docs.push_back({"", std::string(text), false, true});
    return docs;
  }
  std::string leading;  // the text of chunks that are no document (comments before a `---`)
  for (Chunk& chunk : SplitDocuments(text, /*keep_all=*/true)) {
    if (!IsDocument(chunk)) {
      leading += chunk.text;
      continue;
    }
    docs.push_back({std::move(leading), std::move(chunk.text), chunk.explicit_start, false});
    leading.clear();
  }
  return docs;
}

std::string ToYaml(const json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  Emit(out, value);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text.push_back('\n');
  return text;
}

std::string TypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "a list";
    case json::value_t::object:
      return "a mapping";
    default:
      return "a number";
  }
}

std::size_t JsonNestingDepth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace rw::codec
