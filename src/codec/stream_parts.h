#pragma once
// Pieces of the YAML/JSON reader shared by the whole-text reader (yaml.cc) and the streaming
// one (document_stream.cc). Internal to the codec.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/codec/document_stream.h"
#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {

// A document copying mappings through aliases may hold no more nodes than this once expanded.
inline constexpr std::size_t kMaxNodes = 500'000;

// The text of one document as split from the stream, before parsing.
struct Chunk {
  std::string text;
  std::size_t first_line;        // 1-based line of the chunk's first line
  std::size_t first_column = 0;  // 0-based column where that line's text starts (3 after `---`)
  bool explicit_start = false;   // began with `---`: a document even when empty
  bool oversized = false;        // longer than the reader's cap: its text was not kept
};

// Splits a stream into documents line by line, as PyYAML counts them (see ParseStream).
// Documents are split before parsing so that one broken document leaves the others readable.
class DocumentSplitter {
 public:
  // `keep_all`: also hand out the chunks that are no document (SplitStreamText keeps their
  // comments).
  explicit DocumentSplitter(std::size_t max_bytes = std::string::npos, bool keep_all = false)
      : max_bytes_(max_bytes), keep_all_(keep_all) {}
  // The next line, without its '\n'; returns the document this line ended, if any.
  std::optional<Chunk> AddLine(std::string_view line);
  // The last document, if any.
  std::optional<Chunk> Finish();
  // Counts a line that the caller reads itself (a streamed List item's) as part of the document.
  void SkipLine() { ++line_no_; }

 private:
  std::optional<Chunk> Close();
  std::size_t max_bytes_;
  bool keep_all_;
  std::size_t line_no_ = 1;
  Chunk current_{"", 1};
};

std::vector<Chunk> SplitDocuments(std::string_view text, bool keep_all = false);

// A chunk is a document when it began with `---` or holds a node. Comments (a licence header)
// before the first `---`, or after a `...`, are no document: PyYAML and kubectl count that way.
bool IsDocument(const Chunk& chunk);

// True when the text has no node: only blank lines, comments and (`%`) directives.
bool Blank(std::string_view text);

// A document marker line: `---` or `...` at column 0, then whitespace or the line's end.
bool IsMarker(std::string_view line, std::string_view marker);

// Offset of the first byte that is not well-formed UTF-8, or npos; defined in yaml.cc.
std::size_t InvalidUtf8At(std::string_view s);

// Parses one document's text (JSON when it looks like JSON, else YAML); defined in yaml.cc.
SourceDocument ParseChunk(const Chunk& chunk, std::size_t index, DuplicateKeys duplicates,
                          Positions positions);

class ByteReader;

// A YAML document that is a `List` whose items can be read one at a time: a block mapping with
// `kind: List` and a block sequence of block mappings under `items`, without anchors, aliases
// or tags, each item no larger than the cap (kubectl's `get -o yaml` layout).
struct YamlListPlan {
  struct Item {
    std::size_t line, column;  // 1-based line, 0-based column of the item mapping's first key
  };
  std::size_t index;        // the document's index in the stream
  std::size_t line;         // the document's first line
  std::vector<Item> items;  // in order
  std::size_t end_line;     // the first line after the last item
};

// Reads the stream once with yaml-cpp's event parser (no values are built) and returns the
// documents that can be streamed item by item, in order. Any other document (broken, not a
// List, anchors, flow style...) is left to the whole-document reader.
std::vector<YamlListPlan> PlanYamlLists(ByteReader& in, std::size_t max_document_bytes);

// Hands a parsed document to `sink`: nothing for an empty one, each item for a `List`, else the
// document itself.
void EmitDocument(SourceDocument&& doc, const EntrySink& sink);

}  // namespace rw::codec
