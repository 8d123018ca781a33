#pragma once
// An RFC 6902 patch as the webhook answers it: the JSON text of its operations, written as each
// one is recorded. A 30 KB review's patch used to be a DOM of nlohmann maps that was built, then
// walked to text, then freed: ~4 % of the review. Callers that inspect the operations parse the
// text (Json()); the webhook and `mutate -o patch` write it as it is.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rw::mutate {

class Patch {
 public:
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }  // the number of operations
  // The patch as compact JSON, what DumpJson writes for the same operations: `[]` when empty;
  // each operation's members in the order op, path, value.
  const std::string& text() const { return text_; }
  std::string ReleaseText() && { return std::move(text_); }
  // The operations as nlohmann's DOM.
  nlohmann::json Json() const { return nlohmann::json::parse(text_); }

  // Records one operation; `value` is null for `remove`. Throws nlohmann's type_error (316)
  // when a string in `path` or `value` is not UTF-8, as dump() does.
  void Record(std::string_view op, std::string_view path, const nlohmann::json* value);

 private:
  std::string text_ = "[]";
  std::size_t count_ = 0;
};

}  // namespace rw::mutate
