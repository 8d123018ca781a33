#pragma once
// The rules tests write their manifests as YAML: the one document of a text, as JSON.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/yaml.h"

namespace rw::rules::test {

inline nlohmann::json Yaml(const std::string& text) {
  auto docs = codec::ParseStream(text);
  EXPECT_EQ(docs.size(), 1u);
  EXPECT_TRUE(docs[0].error.empty()) << docs[0].error;
  return *docs[0].value;
}

// Every document of a text that parsed, as JSON (the objects a catalogue is built from).
inline std::vector<nlohmann::json> YamlObjects(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (auto& d : codec::ParseStream(text))
    if (d.value) out.push_back(std::move(*d.value));
  return out;
}

}  // namespace rw::rules::test
