#pragma once
// The request's JSON as Boost.JSON values, the DOM the core reads. A review's object is parsed
// into a per-request monotonic arena: building nlohmann's tree (a std::map node per member, two
// allocations per long string) and freeing it again was more than half of a 30 KB review's CPU
// (bench/PROFILE.md); in the arena a value costs a bump of a pointer and freeing is dropping the
// arena. nlohmann stays where files and people are (policy, YAML, the CLI's output, TrainJob's
// effective JobSet): ToDom and FromDom cross between the two, exactly.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/dom_arena.h"

namespace rw::codec {

// The same value ParseJson(text, max_depth) returns, as a Boost.JSON value held by `storage`:
// the same number types (a non-negative integer unsigned, a negative one signed, any other
// number a double read as strtod reads it), the last of duplicate keys, the same exceptions
// (JsonTooDeep, nlohmann's parse_error) with the same messages.
boost::json::value ParseDom(std::string_view text, std::size_t max_depth,
                            boost::json::storage_ptr storage);

// nlohmann -> Boost.JSON and back, value for value: number types, keys and strings unchanged.
// Both recurse once per level (a value is at most kMaxNestingDepth deep where it is read).
boost::json::value ToDom(const nlohmann::json& value, boost::json::storage_ptr storage = {});
nlohmann::json FromDom(const boost::json::value& value);

// The type as the core's errors name it ("a mapping", "a list", ...), as TypeName(nlohmann).
std::string TypeName(const boost::json::value& value);

// nlohmann compares numbers by value across its three number types (1 == 1u == 1.0); so does
// this, so that a patch is the same whichever DOM it was computed on. (Only where nlohmann casts
// an unsigned integer to a signed one, and finds -1 and 2^64-1 equal, this compares exactly.)
bool SameValue(const boost::json::value& a, const boost::json::value& b);

// The value at an RFC 6901 pointer ("" is `root`), or nullptr when a step is missing, is of
// another type, or is an index that is not a plain decimal.
const boost::json::value* Find(const boost::json::value& root, std::string_view pointer);
boost::json::value* Find(boost::json::value& root, std::string_view pointer);

// One reference token of an RFC 6901 pointer, unescaped (~1 is '/', ~0 is '~'), read from `pos`
// (just past a '/'); `pos` moves past it, beyond the pointer's size after the last token. A view
// into `pointer`, or into `scratch` when the token had an escape.
std::string_view NextPointerToken(std::string_view pointer, std::size_t& pos, std::string& scratch);

// The members of an object in nlohmann's order (by key, bytewise), which is the order every
// reader of the core walks in, so that the first error, the templates found and the patch are
// the same for a review and for the CLI. Objects the API server writes from Go maps are already
// in this order, and then nothing is sorted.
std::vector<const boost::json::key_value_pair*> SortedMembers(const boost::json::object& object);

}  // namespace rw::codec
