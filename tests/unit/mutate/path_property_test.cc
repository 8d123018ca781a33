// Mutate decides the resulting path with its plan instead of diagnosing the mutated object
// again. This checks that decision against Diagnose over every manifest of the repository's
// corpora, in every namespace of every golden policy: the two must never disagree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::mutate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> Files(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MutatePath, EqualsTheDiagnosisOfTheResultAcrossTheCorpus) {
  const fs::path src = RW_SOURCE_DIR;
  std::vector<json> objects;
  for (const auto& dir :
       {"tests/golden/inputs", "tests/golden/paths", "tests/golden/kinds", "tests/golden/real"}) {
    for (const auto& file : Files(src / dir))
      for (auto& doc : codec::ParseStream(Slurp(file)))
        if (doc.value && doc.value->is_object()) objects.push_back(std::move(*doc.value));
  }
  // Every rule's minimal failing example (docs/rules.md) adds the edge cases.
  for (const auto& rule : rules::RuleReferences())
    for (auto& doc : codec::ParseStream(std::string(rule.doc->example)))
      if (doc.value && doc.value->is_object()) objects.push_back(std::move(*doc.value));
  ASSERT_GT(objects.size(), 60u);
  std::size_t compared = 0, mutated = 0;
  for (const auto& policy_file : Files(src / "tests/golden/policies")) {
    const auto policy = policy::ParsePolicyText(Slurp(policy_file));
    std::vector<std::string> namespaces{"default"};
    for (const auto& entry : policy.namespaces)
      for (const auto& name : entry.names)
        if (name.find_first_of("*?") == std::string::npos) namespaces.push_back(name);
    for (const auto& ns : namespaces) {
      for (json object : objects) {
        if (object.contains("metadata") && object["metadata"].is_object())
          object["metadata"].erase("namespace");
        Mutation m;
        try {
          m = Mutate(object, policy, ns);
        } catch (const workload::ManifestError&) {
          continue;  // malformed inputs are not mutated
        }
        const auto diagnosed = rules::Diagnose(m.result, policy, ns).path;
        EXPECT_EQ(policy::ToString(m.path), policy::ToString(diagnosed))
            << policy_file.filename() << " namespace " << ns << ": " << object.value("kind", "")
            << " " << object["metadata"].value("name", "");
        ++compared;
        if (!m.patch.empty()) ++mutated;
      }
    }
  }
  EXPECT_GT(mutated, 100u) << "the corpus must exercise mutation, or the test proves nothing";
  RecordProperty("compared", static_cast<int>(compared));
}

}  // namespace
}  // namespace rw::mutate
