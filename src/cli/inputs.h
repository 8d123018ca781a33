#pragma once
// Manifests named on the command line: files, directories and stdin, split into documents
// with `List` objects expanded. This is the CLI's I/O edge; the core sees only JSON values.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/document_stream.h"
#include "rdma_webhook/codec/yaml.h"

namespace rw::cli {

// One input document (or `List` item) in input order: readable, with its object, or not, with
// the reason. Empty documents are left out: they produce no result. A file or directory that
// cannot be read at all is one entry too, marked `whole_file`.
struct InputDocument {
  std::string source;                    // "file#doc" or "file#doc/items/i"; "file" if whole_file
  std::string file;                      // the file as given ("-" for stdin)
  std::optional<nlohmann::json> object;  // empty when it could not be read
  std::string error;                     // why it could not be read, naming the line where known
  bool whole_file = false;               // the error is about a file or directory, no document
  // Repeated mapping keys (the last value won, as in kubectl), pointers into `object`; a List
  // item carries only its own, once per line and column.
  std::vector<codec::DuplicateKey> duplicate_keys;
  // Where each value is written in the file (pointers into `object`), when asked for.
  codec::PositionMap positions;
  // Only when the text is kept: the file's documents as written (shared by them), the index of
  // this one among them, and the List item's pointer ("" for a whole document).
  std::shared_ptr<const std::vector<codec::DocumentText>> texts;
  std::size_t document = 0;
  std::string item;
};

struct InputError {
  std::string source;   // file, or file#doc
  std::string message;  // names the line where known
  std::string file{};   // the file as given, when known
};

using DocumentVisitor = std::function<void(InputDocument&&)>;

// Reads every argument in order, handing each document to `visit` as soon as it is read (one
// in memory at a time, whatever the file's size); a broken file or document is an entry with
// its error, never an abort. YAML is read as kubectl reads it: a repeated mapping key keeps its
// last value. With codec::Positions::kRecord each document carries its values' positions.
// Stdin that is not a regular file is first copied to a temporary file: a JSON List is read
// twice (see codec::ReadStream). `keep_text` (for `mutate -o yaml`, which writes a document
// again in its own order with its comments) reads each file whole, up to 64 MiB, and gives every
// document its text as written.
// What a directory argument reads: its *.yaml, *.yml and *.json files, or those of its whole
// tree (-R). At most kMaxDirectoryFiles per directory argument; past that it is unreadable.
enum class Directories { kTopLevel, kRecursive };
inline constexpr std::size_t kMaxDirectoryFiles = 100000;

void ForEachInput(const std::vector<std::string>& args, codec::Positions positions,
                  const DocumentVisitor& visit, bool keep_text = false,
                  Directories directories = Directories::kTopLevel);

// The documents of one stream named `name` (sources "name#doc..."), e.g. a child process's
// output; `json_list`: the producer promises one JSON List, read as it arrives.
void ForEachDocumentOf(const std::string& name, const codec::Pull& pull, bool json_list,
                       codec::Positions positions, const DocumentVisitor& visit);

// Reads a whole file (or "-" for stdin) with a size cap; throws std::runtime_error naming it.
std::string ReadFileText(const std::string& path);

}  // namespace rw::cli
