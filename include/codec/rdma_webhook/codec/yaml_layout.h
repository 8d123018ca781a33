#pragma once
// A YAML document as it is written (key order, comments, block scalars, flow lists, sequence
// indentation), edited with an RFC 6902 patch and rendered again, so that the diff of a mutated
// manifest shows only what changed. Pure: text in, text out.
//
// Kept: key order, comment lines (before the key or item that follows them), end-of-line
// comments (with the blanks before them), blank lines, block scalars, quoting of scalars, flow
// lists and mappings of scalars, the indentation of block lists. Not kept (the reader, yaml-cpp,
// does not report them): anchors and aliases (expanded), `<<` merge keys (their keys written
// out), tags, folded `>` scalars (written `|`), flow collections holding collections (written
// as blocks), the indentation width of mappings (2 spaces), blank lines right after a block
// scalar (they may be its content). Comments inside a value the patch replaces go with it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {

class YamlLayout {
 public:
  // nullopt when the reader cannot read the document's text.
  static std::optional<YamlLayout> Read(const DocumentText& document);

  // The value at `pointer` ("" or a List item's "/items/N") rendered with `patch` applied, in
  // the document's order with its comments; keys the patch adds come after the mapping's
  // others. `original` is the value the reader gave for it, `expected` what it must read back
  // as (the patch applied to `original`). nullopt when the text would not read back as
  // `expected` (the caller falls back to ToYaml) or the patch holds an operation other than
  // add, replace and remove.
  std::optional<std::string> Render(std::string_view pointer, const nlohmann::json& original,
                                    const nlohmann::json& patch,
                                    const nlohmann::json& expected) const;

  struct Impl;

 private:
  explicit YamlLayout(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::optional<std::string> RenderOrThrow(std::string_view pointer, const nlohmann::json& original,
                                           const nlohmann::json& patch,
                                           const nlohmann::json& expected) const;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace rw::codec
