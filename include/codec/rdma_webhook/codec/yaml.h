#pragma once
// YAML and JSON text <-> nlohmann::json. Pure: takes text, returns values; reads no files.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::codec {

// A mapping key written again in the same mapping. kubectl's reader is not strict: the last
// value wins and the earlier one is silently lost.
struct DuplicateKey {
  std::string pointer;           // RFC 6901 pointer of the key in the document's value
  std::string key;               // the key as written
  std::size_t line = 0;          // 1-based line of this (later, winning) occurrence
  std::size_t column = 0;        // 1-based column of it (tells apart repeats on one line)
  std::size_t earlier_line = 0;  // 1-based line of the occurrence it overrides
};

// Where a value is written: 1-based line and column in the stream's text. For a mapping member
// it is its key (the line a reader looks for), for a sequence item the item itself.
struct Position {
  std::size_t line = 0;
  std::size_t column = 0;
};

// RFC 6901 pointer -> where the value at it is written. Sorted, so the pointers under a prefix
// are one range.
using PositionMap = std::map<std::string, Position>;

// The position of `pointer`, or of its nearest ancestor the map holds; nullopt when none is.
std::optional<Position> FindPosition(const PositionMap& positions, std::string_view pointer);

// One document of a YAML stream.
struct SourceDocument {
  std::size_t index = 0;                // 0-based position in the stream
  std::size_t line = 1;                 // 1-based line where the document starts
  std::optional<nlohmann::json> value;  // empty for an empty document or on error
  std::string error;                    // set when the document could not be read ("line N: ...")
  // In document order. A mapping copied by an alias or a merge key reports its duplicates at
  // every place it is copied to (same line and column, another pointer).
  std::vector<DuplicateKey> duplicate_keys;
  // Only with Positions::kRecord: where each value is written ("" is the document's start). A
  // document read as JSON has only "".
  PositionMap positions;
};

// Whether ParseStream records each value's position (costs memory; the CLI's line numbers).
enum class Positions { kSkip, kRecord };

// What a repeated mapping key means.
enum class DuplicateKeys {
  kRefuse,    // the document is an error naming the line (our own files: the policy)
  kLastWins,  // kubectl's reading: the last value wins, listed in `duplicate_keys` (manifests)
};

// Splits a stream into documents and converts each, resolving plain scalars the way YAML 1.1
// readers (kubectl, Helm) do: true/false/yes/no/on/off are booleans, ~/null are null, integers
// and floats are numbers. Anchors, aliases and `<<` merge keys are expanded (an explicit key
// overrides a merged one; that is no duplicate). Text that is one JSON value is parsed as JSON.
// A broken document does not stop the others from being read.
//
// Documents are numbered as PyYAML's safe_load_all counts them: comments and blank lines before
// the first `---` are no document; an explicit `---` starts one even when nothing follows (it
// takes an index and has no value); `...` ends one, and what follows it is a document only when
// it holds content or starts with `---`.
std::vector<SourceDocument> ParseStream(std::string_view text,
                                        DuplicateKeys duplicates = DuplicateKeys::kRefuse,
                                        Positions positions = Positions::kSkip);

// One document of a stream as written, numbered as ParseStream numbers them: for what is to be
// printed again unchanged, or re-rendered in its own order with its comments (yaml_layout.h).
struct DocumentText {
  std::string leading;          // comment lines before its `---` that belong to no document
  std::string body;             // the text the reader parses (after `---` on its line, if any)
  bool explicit_start = false;  // began with a `---` line: written is "---" + body
  bool json = false;            // the whole stream was one JSON text
};

// The documents of a stream, index for index those of ParseStream (the same splitting).
std::vector<DocumentText> SplitStreamText(std::string_view text);

// Renders a value as block YAML (strings that would read back as another type are quoted).
std::string ToYaml(const nlohmann::json& value);

// Deepest nesting of arrays/objects in JSON text, counted without parsing; used to refuse
// hostile inputs before recursive code sees them.
std::size_t JsonNestingDepth(std::string_view text);

inline constexpr std::size_t kMaxNestingDepth = 512;

// "a string", "a list", "a mapping", ... for error messages about wrong types.
std::string TypeName(const nlohmann::json& value);

}  // namespace rw::codec
