// A JSON List read one item at a time: kubectl's `get -o json` of a whole cluster is one List
// of tens of thousands of objects, and only one of them is held at a time.
#include "json_list.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>

#include "stream_parts.h"

namespace rw::codec {
namespace {

using nlohmann::json;

// Follows the parser's events with no value built: the top level's `kind` and whether its
// `items` is an array, and the nesting depth.
class ShapeScan {
 public:
  explicit ShapeScan(JsonShape& shape) : shape_(shape) {}

  bool null() { return Scalar(); }
  bool boolean(bool) { return Scalar(); }
  bool number_integer(json::number_integer_t) { return Scalar(); }
  bool number_unsigned(json::number_unsigned_t) { return Scalar(); }
  bool number_float(json::number_float_t, const std::string&) { return Scalar(); }
  bool binary(json::binary_t&) { return Scalar(); }
  bool string(std::string& value) {
    if (depth_ == 1 && key_ == "kind") {
      shape_.kind = value;
      return true;
    }
    return Scalar();
  }
  bool key(std::string& name) {
    if (depth_ == 1) key_ = name;
    return true;
  }
  bool start_object(std::size_t) {
    if (depth_ == 0) shape_.object = true;
    Scalar();
    return Enter();
  }
  bool start_array(std::size_t) {
    const bool items = depth_ == 1 && key_ == "items";
    Scalar();
    if (items) shape_.items_array = shape_.items_begun = true;
    return Enter();
  }
  bool end_object() { return Leave(); }
  bool end_array() { return Leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // A member value of the top level replaces what an earlier member of that name said.
  bool Scalar() {
    if (depth_ == 1 && key_ == "kind") shape_.kind.reset();
    if (depth_ == 1 && key_ == "items") shape_.items_array = false;
    return true;
  }
  bool Enter() { return ++depth_ <= kMaxNestingDepth; }  // deeper: not read as JSON
  bool Leave() {
    --depth_;
    return true;
  }

  JsonShape& shape_;
  std::size_t depth_ = 0;
  std::string key_;
};

// Reads the List's text byte by byte; each item's text is cut out and parsed on its own.
class ListReader {
 public:
  ListReader(ByteReader& in, const StreamOptions& options, const EntrySink& sink)
      : in_(in), options_(options), sink_(sink) {}

  void Run() {
    try {
      ReadTop();
    } catch (const Broken& e) {
      StreamEntry entry;
      entry.doc.error = "line " + std::to_string(e.line) + ": " + e.what;
      entry.item = item_;
      sink_(std::move(entry));
    }
  }

 private:
  struct Broken {
    std::size_t line;
    std::string what;
  };

  [[noreturn]] void Fail(const std::string& what) { throw Broken{in_.line(), what}; }

  static std::string Describe(int c) {
    if (c < 0) return "the end of the input";
    return std::string("'") + static_cast<char>(c) + "'";
  }

  void SkipSpace() {
    for (int c = in_.Peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = in_.Peek())
      in_.Get();
  }

  void ReadTop() {
    SkipSpace();
    if (in_.Peek() < 0) return;  // nothing at all: no entries
    if (in_.Get() != '{') Fail("a JSON List is an object");
    SkipSpace();
    if (in_.Peek() == '}') {
      in_.Get();
    } else {
      while (true) {
        SkipSpace();
        if (in_.Peek() != '"') Fail("expected a member name, found " + Describe(in_.Peek()));
        std::string raw;
        Capture(raw, std::string::npos);
        const json name = json::parse(raw, nullptr, /*allow_exceptions=*/false);
        if (!name.is_string()) Fail("member name " + raw + " is no JSON string");
        SkipSpace();
        if (const int c = in_.Get(); c != ':')
          Fail("expected ':' after " + raw + ", found " + Describe(c));
        SkipSpace();
        if (name == "items" && in_.Peek() == '[') {
          ReadItems();
        } else {
          std::string skipped;
          Capture(skipped, 0);
        }
        SkipSpace();
        const int c = in_.Get();
        if (c == '}') break;
        if (c != ',') Fail("expected ',' or '}' after member " + raw + ", found " + Describe(c));
      }
    }
    SkipSpace();
    if (in_.Peek() >= 0) Fail("text after the List's closing '}'");
  }

  void ReadItems() {
    in_.Get();  // '['
    std::size_t next = 0;
    SkipSpace();
    if (in_.Peek() == ']') {
      in_.Get();
      return;
    }
    while (true) {
      SkipSpace();
      item_ = next;
      Chunk chunk{"", in_.line(), in_.column()};
      const bool fits = Capture(chunk.text, options_.max_document_bytes);
      StreamEntry entry;
      entry.item = next;
      if (!fits) {
        entry.doc.error = "line " + std::to_string(chunk.first_line) + ": item larger than " +
                          std::to_string(options_.max_document_bytes >> 20) + " MiB";
      } else {
        entry.doc = ParseChunk(chunk, 0, options_.duplicates, options_.positions);
        // As a List item's read from the whole text: the document's line, no positions of its
        // own (a JSON document records only its start), and a `null` item is a null value.
        entry.doc.line = 1;
        entry.doc.positions.clear();
        if (!entry.doc.value && entry.doc.error.empty()) entry.doc.value = nullptr;
      }
      sink_(std::move(entry));
      ++next;
      item_ = next;
      SkipSpace();
      const int c = in_.Get();
      if (c == ']') break;
      if (c != ',')
        Fail("expected ',' or ']' after item " + std::to_string(next - 1) + ", found " +
             Describe(c));
    }
    item_.reset();
  }

  // Appends one JSON value's text to `out`, keeping at most `max` bytes; false when it had more.
  // Brackets are only counted: the item's own parse says what is wrong inside it.
  bool Capture(std::string& out, std::size_t max) {
    bool fits = true;
    std::size_t taken = 0;
    auto put = [&](int c) {
      ++taken;
      if (out.size() < max) {
        out.push_back(static_cast<char>(c));
      } else {
        fits = false;
      }
    };
    const std::size_t begun = in_.line();
    auto next = [&] {
      const int c = in_.Get();
      if (c < 0) Fail("the input ends inside the value begun at line " + std::to_string(begun));
      put(c);
      return c;
    };
    auto string_rest = [&] {  // after the opening quote
      for (int c = next(); c != '"'; c = next())
        if (c == '\\') next();
    };
    int c = in_.Peek();
    if (c == '"') {
      next();
      string_rest();
    } else if (c == '{' || c == '[') {
      std::size_t depth = 0;
      do {
        c = next();
        if (c == '"') {
          string_rest();
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          --depth;
        }
      } while (depth > 0);
    } else {
      while ((c = in_.Peek()) >= 0 && c != ',' && c != '}' && c != ']' && c != ' ' && c != '\t' &&
             c != '\n' && c != '\r')
        put(in_.Get());
      if (taken == 0) Fail("expected a value, found " + Describe(c));
    }
    return fits;
  }

  ByteReader& in_;
  const StreamOptions& options_;
  const EntrySink& sink_;
  std::optional<std::size_t> item_;  // the item being read, named by an error
};

}  // namespace

JsonShape ScanJsonShape(ByteReader& in) {
  JsonShape shape;
  ShapeScan scan(shape);
  shape.valid = json::sax_parse(ByteReader::Iterator(&in), ByteReader::Iterator(), &scan);
  return shape;
}

void ReadJsonListItems(ByteReader& in, const StreamOptions& options, const EntrySink& sink) {
  ListReader(in, options, sink).Run();
}

}  // namespace rw::codec
