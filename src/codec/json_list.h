#pragma once
// A JSON List read one item at a time (internal to the codec).
#include <optional>
#include <string>

#include "byte_reader.h"
#include "rdma_webhook/codec/document_stream.h"

namespace rw::codec {

// What a scan of a JSON text found, without building any value.
struct JsonShape {
  bool valid = false;        // one JSON value, as json::parse would accept it, nesting <= 512
  bool object = false;       // its top level is an object
  bool items_array = false;  // whose `items` is an array (the last `items` when repeated)
  bool items_begun = false;  // an `items` array was entered (also when the text broke later)
  std::optional<std::string> kind;  // its `kind` when that is a string
  // A List: every reader expands its items.
  bool IsList() const { return valid && object && items_array && kind == "List"; }
  // Broken, but as a List whose items began: the items before the break are worth reporting.
  bool IsBrokenList() const {
    return !valid && object && items_begun && (!kind || *kind == "List");
  }
};

JsonShape ScanJsonShape(ByteReader& in);

// Reads a JSON object from `in`, handing each element of its top-level `items` array to `sink`
// as soon as it is read; the other members are skipped. Document index 0, line 1.
void ReadJsonListItems(ByteReader& in, const StreamOptions& options, const EntrySink& sink);

}  // namespace rw::codec
