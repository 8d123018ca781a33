#pragma once
// JSON text to nlohmann::json, read by Boost.JSON's parser. nlohmann's own lexer copies every
// string one byte at a time into a token buffer and costs a third of a review's CPU; Boost.JSON's
// parser scans runs of bytes and hands them over as views, and only the DOM is built here.
#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rw::codec {

// Text whose arrays and objects nest deeper than the caller allows (JsonNestingDepth of it is
// more than max_depth): refused before anything that deep is built.
class JsonTooDeep : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws JsonTooDeep when JsonNestingDepth(text) > max_depth; otherwise returns what
// nlohmann::json::parse(text) returns and throws what it throws: the same value types (a
// non-negative integer is unsigned, a negative one signed, any other number a double read as
// strtod reads it), the last of duplicate keys, the same exceptions and messages. Text the fast
// parser refuses (malformed, a number out of a double's range, a byte order mark) is handed to
// nlohmann, which decides, so errors read as they always did. Neither parser recurses.
nlohmann::json ParseJson(std::string_view text, std::size_t max_depth);

// The text value.dump() returns (compact, keys in the object's order, the same escapes and the
// same type_error on a string that is not UTF-8), written without nlohmann's serializer, which
// decodes every byte of every string as UTF-8: a 30 KB review's patch spent 5 % of the review
// there. Plain ASCII strings and integers are copied; any other string and every double are
// written by nlohmann, so their bytes are its own. Recurses once per level, as dump() does.
std::string DumpJson(const nlohmann::json& value);
// The same, appended to `out`; and one string as DumpJson writes a string value.
void AppendJson(std::string& out, const nlohmann::json& value);
void AppendJsonString(std::string& out, std::string_view text);

// Frees `value` (it is null afterwards) from its leaves up. nlohmann's destructor never recurses:
// it moves every descendant through a heap-allocated stack so that any depth is safe, and that
// shuffle was a quarter of a 30 KB review's CPU. Here containers are emptied depth first, so
// each one is freed with nothing left to move; below kReleaseDepth levels (a review is at most
// kMaxNestingDepth deep) the rest is left to nlohmann's destructor, so the call stack is bounded
// whatever the value.
void ReleaseJson(nlohmann::json& value);
inline constexpr std::size_t kReleaseDepth = 600;

}  // namespace rw::codec
