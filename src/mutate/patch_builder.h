#pragma once
// Builds an RFC 6902 patch and the patched document together, so that the patch provably
// applies to the original: every operation is applied to the document as it is recorded. The
// document is the review's own Boost.JSON value (codec/dom.h), patched where it lies; new values
// are made in its storage. The operations are written as text as they are recorded (patch.h).
#include <string>

#include <boost/json/value.hpp>
#include <nlohmann/json.hpp>

#include "rdma_webhook/mutate/patch.h"

namespace rw::mutate {

class PatchBuilder {
 public:
  explicit PatchBuilder(boost::json::value& document) : doc_(document) {}

  // Sets the value at `pointer`. Missing (or null) parents are created by one `add` of the
  // outermost missing member holding the nested value; an existing member is `replace`d; an
  // equal value records nothing. `value` is taken, so a plan that is done with its edits can move
  // a subtree into the value of the `add` that creates its parents.
  void Set(const std::string& pointer, nlohmann::json value);
  // Appends to the array at `pointer` (created when missing) with an explicit index, so user
  // entries keep their order and are never rewritten.
  void Append(const std::string& pointer, nlohmann::json value);
  // Removes the existing member or array element at `pointer` (later elements move up).
  void Remove(const std::string& pointer);
  // Each operation is recorded before the document is edited: a value the patch cannot carry
  // (a string that is not UTF-8, Patch::Record) throws with both left as they were.

  Patch& operations() { return ops_; }

 private:
  boost::json::value& doc_;
  Patch ops_;
};

}  // namespace rw::mutate
