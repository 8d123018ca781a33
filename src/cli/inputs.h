#pragma once
// Manifests named on the command line: files, directories and stdin, split into documents
// with `List` objects expanded. This is the CLI's I/O edge; the core sees only JSON values.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::cli {

struct InputDocument {
  std::string source;  // "file#doc" or "file#doc/items/i"
  nlohmann::json object;
};

struct InputError {
  std::string source;   // file, or file#doc
  std::string message;  // names the line where known
};

struct Inputs {
  std::vector<InputDocument> documents;
  std::vector<InputError> errors;
};

// Reads every argument in order; a broken file or document is an error entry, never an abort.
Inputs ReadInputs(const std::vector<std::string>& args);

// Reads a whole file (or "-" for stdin) with a size cap; throws std::runtime_error naming it.
std::string ReadFileText(const std::string& path);

}  // namespace rw::cli
