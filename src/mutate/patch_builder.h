#pragma once
// Builds an RFC 6902 patch and the patched document together, so that the patch provably
// applies to the original: every operation is applied to the document as it is recorded. The
// document is the review's own Boost.JSON value (codec/dom.h), patched where it lies; new values
// are made in its storage.
#include <string>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

namespace rw::mutate {

class PatchBuilder {
 public:
  explicit PatchBuilder(boost::json::value& document) : doc_(document) {}

  // Sets the value at `pointer`. Missing (or null) parents are created by one `add` of the
  // outermost missing member holding the nested value; an existing member is `replace`d; an
  // equal value records nothing. `value` is taken, so a plan that is done with its edits moves
  // them into the operations rather than copying them.
  void Set(const std::string& pointer, nlohmann::json value);
  // Appends to the array at `pointer` (created when missing) with an explicit index, so user
  // entries keep their order and are never rewritten.
  void Append(const std::string& pointer, nlohmann::json value);
  // Removes the existing member or array element at `pointer` (later elements move up).
  void Remove(const std::string& pointer);

  nlohmann::json& operations() { return ops_; }

 private:
  boost::json::value& doc_;
  nlohmann::json ops_ = nlohmann::json::array();
};

}  // namespace rw::mutate
