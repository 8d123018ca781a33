#include "rdma_webhook/mutate/patch.h"

#include "rdma_webhook/codec/json_text.h"

namespace rw::mutate {

void Patch::Record(std::string_view op, std::string_view path, const nlohmann::json* value) {
  // A review's patch is hundreds of bytes to a few KiB: room for the usual one at once, rather
  // than the string doubling its way there from its small buffer.
  if (count_ == 0) text_.reserve(1024);
  const std::size_t closed = text_.size();
  text_.pop_back();  // the closing bracket, written again after the operation
  try {
    if (count_ > 0) text_ += ',';
    text_ += "{\"op\":";
    codec::AppendJsonString(text_, op);
    text_ += ",\"path\":";
    codec::AppendJsonString(text_, path);
    if (value != nullptr) {
      text_ += ",\"value\":";
      codec::AppendJson(text_, *value);
    }
    text_ += "}]";
  } catch (...) {
    // A string that is not UTF-8: the patch stays as it was, every operation before it intact.
    text_.resize(closed - 1);
    text_ += ']';
    throw;
  }
  ++count_;
}

}  // namespace rw::mutate
