// Where each value of a YAML document is written (ParseStream with Positions::kRecord): the CLI's
// line numbers and SARIF regions.
#include <gtest/gtest.h>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

Position At(const SourceDocument& doc, const std::string& pointer) {
  const auto it = doc.positions.find(pointer);
  EXPECT_NE(it, doc.positions.end()) << pointer;
  return it == doc.positions.end() ? Position{} : it->second;
}

TEST(Positions, NotRecordedUnlessAsked) {
  const auto docs = ParseStream("a: 1\n", DuplicateKeys::kLastWins);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_TRUE(docs[0].positions.empty());
}

TEST(Positions, KeysAndSequenceItemsAcrossDocuments) {
  const auto docs = ParseStream(
      "# comment\nkind: Secret\n---\nspec:\n  containers:\n    - name: a\n      image: x\n"
      "    - {name: b}\n",
      DuplicateKeys::kLastWins, Positions::kRecord);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(At(docs[0], "").line, 2u);
  EXPECT_EQ(At(docs[0], "/kind").line, 2u);
  const auto& d = docs[1];
  EXPECT_EQ(At(d, "/spec").line, 4u);
  EXPECT_EQ(At(d, "/spec/containers").line, 5u);
  EXPECT_EQ(At(d, "/spec/containers/0").line, 6u);
  EXPECT_EQ(At(d, "/spec/containers/0").column, 7u);  // the item's content, after "- "
  EXPECT_EQ(At(d, "/spec/containers/0/image").line, 7u);
  EXPECT_EQ(At(d, "/spec/containers/0/image").column, 7u);
  EXPECT_EQ(At(d, "/spec/containers/1/name").line, 8u);
}

TEST(Positions, RepeatedKeyIsTheLastOneAndPointersAreEscaped) {
  const auto docs =
      ParseStream("a/b: 1\nx: 1\nx: 2\n", DuplicateKeys::kLastWins, Positions::kRecord);
  EXPECT_EQ(At(docs[0], "/a~1b").line, 1u);
  EXPECT_EQ(At(docs[0], "/x").line, 3u);
}

TEST(Positions, JsonDocumentHasOnlyItsStart) {
  const auto docs =
      ParseStream("{\"a\": {\"b\": 1}}", DuplicateKeys::kLastWins, Positions::kRecord);
  ASSERT_EQ(docs[0].positions.size(), 1u);
  EXPECT_EQ(At(docs[0], "").line, 1u);
}

TEST(Positions, BrokenDocumentHasNone) {
  const auto docs = ParseStream("a: [\n", DuplicateKeys::kLastWins, Positions::kRecord);
  EXPECT_TRUE(docs[0].positions.empty());
}

TEST(FindPosition, NearestWrittenAncestor) {
  const PositionMap m = {{"", {1, 1}}, {"/spec", {3, 1}}, {"/spec/containers/0", {5, 7}}};
  EXPECT_EQ(FindPosition(m, "/spec/containers/0/securityContext")->line, 5u);
  EXPECT_EQ(FindPosition(m, "/spec/volumes")->line, 3u);
  EXPECT_EQ(FindPosition(m, "/metadata")->line, 1u);
  EXPECT_EQ(FindPosition(m, "")->line, 1u);
  EXPECT_FALSE(FindPosition(PositionMap{}, "/a").has_value());
}

}  // namespace
}  // namespace rw::codec
