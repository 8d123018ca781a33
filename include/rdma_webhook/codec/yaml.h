#pragma once
// YAML and JSON text <-> nlohmann::json. Pure: takes text, returns values; reads no files.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::codec {

// One document of a YAML stream.
struct SourceDocument {
  std::size_t index = 0;                // 0-based position in the stream
  std::size_t line = 1;                 // 1-based line where the document starts
  std::optional<nlohmann::json> value;  // empty for an empty document or on error
  std::string error;                    // set when the document could not be read ("line N: ...")
};

// Splits a stream at `---` lines and converts each document, resolving plain scalars the way
// YAML 1.1 readers (kubectl, Helm) do: true/false/yes/no/on/off are booleans, ~/null are null,
// integers and floats are numbers. Anchors and aliases are expanded. Text that is one JSON
// value is parsed as JSON. A broken document does not stop the others from being read.
std::vector<SourceDocument> ParseStream(std::string_view text);

// Renders a value as block YAML (strings that would read back as another type are quoted).
std::string ToYaml(const nlohmann::json& value);

// Deepest nesting of arrays/objects in JSON text, counted without parsing; used to refuse
// hostile inputs before recursive code sees them.
std::size_t JsonNestingDepth(std::string_view text);

inline constexpr std::size_t kMaxNestingDepth = 512;

// "a string", "a list", "a mapping", ... for error messages about wrong types.
std::string TypeName(const nlohmann::json& value);

}  // namespace rw::codec
