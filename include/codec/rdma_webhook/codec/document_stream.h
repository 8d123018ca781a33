#pragma once
// Reading a YAML or JSON stream one document at a time, and a JSON `List` (kubectl's
// `get -o json`) one item at a time, so that memory holds one object whatever the input's size
// and time stays linear in it. Pure like the rest of the codec: the bytes come from a callback.
#include <cstddef>
#include <functional>
#include <optional>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {

// Fills `buffer` with up to `capacity` bytes of the stream and returns how many; 0 at its end.
// Read errors are the callback's to throw.
using Pull = std::function<std::size_t(char* buffer, std::size_t capacity)>;

// Restarts the stream at its first byte.
using Rewind = std::function<void()>;

// One document of the stream, or one item of a `List` document (`kind: List`, `items: [...]`).
// Empty documents give no entry. For an item, `doc` is the item's: its value, its repeated keys
// and positions with pointers into the item; `doc.index` and `doc.line` stay the document's.
struct StreamEntry {
  SourceDocument doc;
  std::optional<std::size_t> item;  // the List item's index
};

struct StreamOptions {
  DuplicateKeys duplicates = DuplicateKeys::kLastWins;
  Positions positions = Positions::kSkip;
  // The producer promises one JSON `List` (kubectl get -o json): its items are read as they
  // arrive and nothing is read twice, so `rewind` is not needed.
  bool json_list = false;
  // A document (or List item) larger than this is an error; the ones after it are still read.
  std::size_t max_document_bytes = std::size_t{64} << 20;
};

using EntrySink = std::function<void(StreamEntry&&)>;

// Reads the whole stream, handing each entry to `sink` in input order, with the same documents,
// indexes, lines, values and errors as ParseStream followed by List expansion. A JSON text is
// first scanned without building values to learn whether it is a List (kubectl writes `kind`
// after `items`), then read again from `rewind`; without `rewind` (and without `json_list`) the
// stream is read into memory whole, up to max_document_bytes. A JSON List broken part-way
// reports the items before the break, then an error entry for the item where it broke. YAML is
// read twice too: first to find the `List` documents laid out as `kubectl get -o yaml` writes
// them (block items, no anchors, aliases or tags), whose items are then read one at a time with
// only each item capped at max_document_bytes; any other document is read whole. One difference
// from the whole reader: such a List with more than 500,000 nodes is read, not refused.
void ReadStream(const Pull& pull, const Rewind& rewind, const StreamOptions& options,
                const EntrySink& sink);

}  // namespace rw::codec
