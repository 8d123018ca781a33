#include <gtest/gtest.h>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

using nlohmann::json;

TEST(ParseStream, MultiDocumentWithEmptyOnesAndLines) {
  const auto docs = ParseStream("a: 1\n---\n# only a comment\n---\nb: [x, y]\n...\n");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(*docs[0].value, json({{"a", 1}}));
  EXPECT_FALSE(docs[1].value.has_value());
  EXPECT_TRUE(docs[1].error.empty());
  EXPECT_EQ(docs[2].index, 2u);
  EXPECT_EQ(docs[2].line, 4u);
}

// YAML's escapes \N and \_ are U+0085 and U+00A0; yaml-cpp decodes them into lone Latin-1
// bytes, a string that is no UTF-8 and does not survive ToYaml (found by tests/fuzz/fuzz_yaml).
TEST(ParseStream, NextLineAndNoBreakSpaceEscapesAreUtf8) {
  const auto docs = ParseStream("\"a\\_b\": \"c\\Nd\"\n");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].value.has_value()) << docs[0].error;
  EXPECT_EQ(*docs[0].value, (json{{"a\u00a0b", "c\u0085d"}}));
  const auto again = ParseStream(ToYaml(*docs[0].value));
  ASSERT_EQ(again.size(), 1u);
  ASSERT_TRUE(again[0].value.has_value()) << again[0].error;
  EXPECT_EQ(*again[0].value, *docs[0].value);
}

TEST(ParseStream, BrokenDocumentLeavesOthersReadable) {
  const auto docs = ParseStream("a: 1\n---\nb: [\n---\nc: 3\n");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_TRUE(docs[0].value.has_value());
  EXPECT_FALSE(docs[1].error.empty());
  EXPECT_NE(docs[1].error.find("line "), std::string::npos);
  EXPECT_EQ(*docs[2].value, json({{"c", 3}}));
}

TEST(ParseStream, Yaml11Scalars) {
  const auto v =
      *ParseStream("a: off\nb: 'off'\nc: ~\nd: 010\ne: 1.5\nf: yes\ng: \"3\"\nh: 0x1F\n")[0].value;
  EXPECT_EQ(v["a"], false);
  EXPECT_EQ(v["b"], "off");
  EXPECT_TRUE(v["c"].is_null());
  EXPECT_EQ(v["d"], 8);  // YAML 1.1 octal, as kubectl reads it
  EXPECT_EQ(v["e"], 1.5);
  EXPECT_EQ(v["f"], true);
  EXPECT_EQ(v["g"], "3");
  EXPECT_EQ(v["h"], 31);
}

TEST(ParseStream, AnchorsAliasesAndMergeKeys) {
  const auto v = *ParseStream("base: &b {x: 1, y: 2}\nuse: *b\nmerged: {<<: *b, y: 3}\n")[0].value;
  EXPECT_EQ(v["use"], json({{"x", 1}, {"y", 2}}));
  EXPECT_EQ(v["merged"], json({{"x", 1}, {"y", 3}}));
}

TEST(ParseStream, AliasBombIsRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i)
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + "]\n";
  const auto docs = ParseStream(text);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_NE(docs[0].error.find("too large"), std::string::npos) << docs[0].error;
}

TEST(ParseStream, DuplicateKeysAreErrorsWhenRefused) {
  // The default, for our own files (the policy): strict.
  const auto docs = ParseStream("a: 1\nb: 2\na: 3\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_FALSE(docs[0].value.has_value());
  EXPECT_NE(docs[0].error.find("line 3: duplicate key 'a'"), std::string::npos) << docs[0].error;
}

struct Dup {
  std::string pointer, key;
  std::size_t line, earlier_line;
};

struct DuplicateCase {
  const char* name;
  std::string text;
  json value;               // the document as kubectl reads it
  std::vector<Dup> expect;  // in document order
};

class DuplicateKeysLastWins : public ::testing::TestWithParam<DuplicateCase> {};

TEST_P(DuplicateKeysLastWins, KeepsTheLastValueAndListsTheRepeats) {
  const auto& c = GetParam();
  const auto docs = ParseStream(c.text, DuplicateKeys::kLastWins);
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].error.empty()) << docs[0].error;
  ASSERT_TRUE(docs[0].value.has_value());
  EXPECT_EQ(*docs[0].value, c.value);
  ASSERT_EQ(docs[0].duplicate_keys.size(), c.expect.size());
  for (std::size_t i = 0; i < c.expect.size(); ++i) {
    const auto& got = docs[0].duplicate_keys[i];
    EXPECT_EQ(got.pointer, c.expect[i].pointer) << i;
    EXPECT_EQ(got.key, c.expect[i].key) << i;
    EXPECT_EQ(got.line, c.expect[i].line) << i;
    EXPECT_EQ(got.earlier_line, c.expect[i].earlier_line) << i;
    EXPECT_GT(got.column, 0u) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, DuplicateKeysLastWins,
    ::testing::Values(
        DuplicateCase{"TopLevel", "a: 1\nb: 2\na: 3\n", {{"a", 3}, {"b", 2}}, {{"/a", "a", 3, 1}}},
        DuplicateCase{"Nested",
                      "spec:\n  containers:\n    - name: x\n      resources: {a: 1}\n"
                      "      resources: {b: 2}\n",
                      {{"spec", {{"containers", {{{"name", "x"}, {"resources", {{"b", 2}}}}}}}}},
                      {{"/spec/containers/0/resources", "resources", 5, 4}}},
        DuplicateCase{"InASecondListItem",
                      "items:\n  - {n: 0}\n  - n: 1\n    n: 2\n",
                      {{"items", {{{"n", 0}}, {{"n", 2}}}}},
                      {{"/items/1/n", "n", 4, 3}}},
        DuplicateCase{"FlowMappingOnOneLine",
                      "m: {a: 1, a: 2}\n",
                      {{"m", {{"a", 2}}}},
                      {{"/m/a", "a", 1, 1}}},
        DuplicateCase{
            "ThreeTimes", "a: 1\na: 2\na: 3\n", {{"a", 3}}, {{"/a", "a", 2, 1}, {"/a", "a", 3, 2}}},
        DuplicateCase{
            "PointerEscapesSlashAndTilde",
            "limits:\n  nvidia.com/gpu: 1\n  nvidia.com/gpu: 8\n  a~b: 1\n  a~b: 2\n",
            {{"limits", {{"nvidia.com/gpu", 8}, {"a~b", 2}}}},
            {{"/limits/nvidia.com~1gpu", "nvidia.com/gpu", 3, 2}, {"/limits/a~0b", "a~b", 5, 4}}},
        DuplicateCase{"ExplicitKeyOverridingAMergedOneIsNone",
                      "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n",
                      {{"base", {{"x", 1}, {"y", 2}}}, {"use", {{"x", 1}, {"y", 3}}}},
                      {}},
        DuplicateCase{"SeveralMergedMappingsAreNone",
                      "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nc: {<<: [*a, *b]}\n",
                      {{"a", {{"x", 1}}}, {"b", {{"x", 2}, {"y", 2}}}, {"c", {{"x", 1}, {"y", 2}}}},
                      {}},
        DuplicateCase{"RepeatedExplicitKeyNextToAMerge",
                      "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n  y: 3\n",
                      {{"base", {{"x", 1}}}, {"use", {{"x", 1}, {"y", 3}}}},
                      {{"/use/y", "y", 5, 4}}},
        // An alias copies the mapping, duplicate and all: each copy reports it, same line.
        DuplicateCase{"InsideAnAnchorEveryCopy",
                      "base: &b\n  x: 1\n  x: 2\nuse: *b\n",
                      {{"base", {{"x", 2}}}, {"use", {{"x", 2}}}},
                      {{"/base/x", "x", 3, 2}, {"/use/x", "x", 3, 2}}},
        DuplicateCase{"MergedFromAnAnchorLandsInTheMapping",
                      "use:\n  <<: &b {x: 1, x: 2}\n  y: 0\n",
                      {{"use", {{"x", 2}, {"y", 0}}}},
                      {{"/use/x", "x", 2, 2}}},
        DuplicateCase{"AfterAMarkerLineNumbersAreTheFiles",
                      "# header\n---\nkind: Pod\nkind: Service\n",
                      {{"kind", "Service"}},
                      {{"/kind", "kind", 4, 3}}}),
    [](const ::testing::TestParamInfo<DuplicateCase>& p) { return p.param.name; });

TEST(ParseStream, DuplicatesOnOneLineDifferInColumn) {
  const auto docs = ParseStream("--- {a: 1, a: 2, a: 3}\n", DuplicateKeys::kLastWins);
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].duplicate_keys.size(), 2u);
  EXPECT_EQ(docs[0].duplicate_keys[0].column, 12u);  // counted in the file, after the `--- `
  EXPECT_EQ(docs[0].duplicate_keys[1].column, 18u);
}

TEST(ParseStream, DuplicateKeysInJson) {
  // A JSON file, and a JSON document in a YAML stream: the last value wins, as in kubectl.
  const std::string text = "{\"a\": {\"k\": 1,\n  \"k\": 2}}";
  for (const std::string& t : {text, "x: 0\n---\n" + text}) {
    const auto docs = ParseStream(t, DuplicateKeys::kLastWins);
    const auto& doc = docs.back();
    ASSERT_TRUE(doc.error.empty()) << doc.error;
    EXPECT_EQ(*doc.value, json({{"a", {{"k", 2}}}}));
    ASSERT_EQ(doc.duplicate_keys.size(), 1u) << t;
    EXPECT_EQ(doc.duplicate_keys[0].pointer, "/a/k");
    EXPECT_EQ(doc.duplicate_keys[0].line, docs.size() == 1 ? 2u : 4u);
    EXPECT_EQ(doc.duplicate_keys[0].earlier_line, docs.size() == 1 ? 1u : 3u);
    const auto refused = ParseStream(t);
    EXPECT_FALSE(refused.back().value.has_value());
    EXPECT_NE(refused.back().error.find("duplicate key 'k'"), std::string::npos);
  }
  const auto clean =
      ParseStream("{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}", DuplicateKeys::kLastWins);
  EXPECT_TRUE(clean[0].duplicate_keys.empty());
}

TEST(ParseStream, DuplicateKeysInABrokenDocumentAreNotReported) {
  const auto docs = ParseStream("a: 1\na: 2\nb: [\n", DuplicateKeys::kLastWins);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_FALSE(docs[0].error.empty());
  EXPECT_TRUE(docs[0].duplicate_keys.empty());
}

struct IndexCase {
  const char* name;
  std::string text;
  std::size_t documents;                // as PyYAML's safe_load_all counts them
  std::vector<std::size_t> with_value;  // indices of the documents that have a value
  std::vector<std::size_t> lines;       // first line of each document
};

class DocumentIndices : public ::testing::TestWithParam<IndexCase> {};

TEST_P(DocumentIndices, CountAsPyYamlDoes) {
  const auto& c = GetParam();
  const auto docs = ParseStream(c.text);
  ASSERT_EQ(docs.size(), c.documents);
  std::vector<std::size_t> with_value, lines;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(docs[i].index, i);
    EXPECT_TRUE(docs[i].error.empty()) << i << ": " << docs[i].error;
    if (docs[i].value) with_value.push_back(i);
    lines.push_back(docs[i].line);
  }
  EXPECT_EQ(with_value, c.with_value);
  EXPECT_EQ(lines, c.lines);
}

// Each count was checked with python3 -c 'import yaml; print(len(list(yaml.safe_load_all(T))))'
// (PyYAML 6.0), except where a comment says PyYAML refuses the text.
INSTANTIATE_TEST_SUITE_P(
    Table, DocumentIndices,
    ::testing::Values(
        IndexCase{"Empty", "", 0, {}, {}}, IndexCase{"OnlyComments", "# a\n\n# b\n", 0, {}, {}},
        IndexCase{"NoMarker", "a: 1\n", 1, {0}, {1}},
        IndexCase{"CommentPrefixIsNoDocument",
                  "# licence\n#\n\n---\na: 1\n---\nb: 2\n",
                  2,
                  {0, 1},
                  {4, 6}},
        IndexCase{"CommentsThenContentWithoutMarker",
                  "# about\n# it\na: 1\n---\nb: 2\n",
                  2,
                  {0, 1},
                  {1, 4}},
        IndexCase{"MarkerOnTheFirstLine", "---\na: 1\n", 1, {0}, {1}},
        IndexCase{"MarkerWithATrailingComment",
                  "# x\n--- # first\na: 1\n--- #second\nb: 2\n",
                  2,
                  {0, 1},
                  {2, 4}},
        IndexCase{"EmptyDocumentsBetween",
                  "a: 1\n---\n---\n# nothing\n---\nb: 2\n",
                  4,
                  {0, 3},
                  {1, 2, 3, 5}},
        IndexCase{"TrailingMarker", "a: 1\n---\n", 2, {0}, {1, 2}},
        IndexCase{"TrailingMarkerWithoutNewline", "a: 1\n---", 2, {0}, {1, 2}},
        IndexCase{"DocumentEndMarker", "a: 1\n...\n", 1, {0}, {1}},
        IndexCase{"DocumentEndThenComments", "a: 1\n...\n# trailing\n", 1, {0}, {1}},
        // PyYAML (YAML 1.1) refuses a bare document after `...`; YAML 1.2 reads it, as we do.
        IndexCase{"DocumentEndThenContent", "a: 1\n...\nb: 2\n", 2, {0, 1}, {1, 3}},
        IndexCase{"DocumentEndThenMarker", "a: 1\n...\n# c\n---\nb: 2\n", 2, {0, 1}, {1, 4}},
        IndexCase{"LeadingDocumentEnd", "...\na: 1\n", 1, {0}, {2}},  // PyYAML: an error
        IndexCase{"ContentOnTheMarkerLine", "--- {a: 1}\n--- [1]\n", 2, {0, 1}, {1, 2}},
        IndexCase{"DirectiveBeforeTheFirstMarker", "%YAML 1.1\n---\na: 1\n", 1, {0}, {2}},
        IndexCase{"MarkerGluedToACommentIsText", "---#\n", 1, {0}, {1}},
        IndexCase{"ByteOrderMark", "\xEF\xBB\xBF# c\n---\na: 1\n", 1, {0}, {2}}),
    [](const ::testing::TestParamInfo<IndexCase>& p) { return p.param.name; });

TEST(ParseStream, MarkerGluedToACommentIsAPlainScalar) {
  const auto docs = ParseStream("---#\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(*docs[0].value, "---#");
}

TEST(ParseStream, BrokenDocumentAfterAHeaderKeepsItsIndexAndLine) {
  const auto docs = ParseStream("# licence\n---\na: 1\n---\nb: [\n---\nc: 3\n");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_NE(docs[1].error.find("line "), std::string::npos);
  EXPECT_EQ(docs[1].index, 1u);
  EXPECT_EQ(docs[1].line, 4u);
  EXPECT_EQ(*docs[2].value, json({{"c", 3}}));
}

TEST(ParseStream, JsonText) {
  const auto docs = ParseStream("{\"a\": [1, {\"b\": \"---\"}]}");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ((*docs[0].value)["a"][1]["b"], "---");
}

TEST(ParseStream, DeepNestingIsRefusedNotCrashed) {
  const std::string deep(100000, '[');
  const auto docs = ParseStream(deep);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_FALSE(docs[0].error.empty());
  std::string yaml_deep;
  for (int i = 0; i < 3000; ++i) yaml_deep += "[";
  EXPECT_FALSE(ParseStream("a: " + yaml_deep)[0].error.empty());
}

TEST(ParseStream, DeepBlockNestingNamesTheBoundNotABadFile) {
  // Block mappings nested past yaml-cpp's own depth guard: it said only "bad file".
  std::string text = "a:\n";
  for (int i = 1; i < 3000; ++i) text += std::string(static_cast<std::size_t>(i), ' ') + "b:\n";
  const auto docs = ParseStream(text);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_NE(docs[0].error.find("nesting deeper than 512"), std::string::npos) << docs[0].error;
  EXPECT_EQ(docs[0].error.find("bad file"), std::string::npos) << docs[0].error;
}

TEST(ToYaml, RoundTripsTrickyStrings) {
  const json v = {{"s", json::array({"off", "yes", "123", "", "~", "a: b", "x\ny", "- z", "#c"})},
                  {"n", 5},
                  {"f", 1.25},
                  {"b", true},
                  {"z", nullptr},
                  {"o", json::object()}};
  const auto back = ParseStream(ToYaml(v));
  ASSERT_EQ(back.size(), 1u);
  ASSERT_TRUE(back[0].error.empty()) << back[0].error << "\n" << ToYaml(v);
  EXPECT_EQ(*back[0].value, v) << ToYaml(v);
}

TEST(JsonNestingDepthTest, CountsOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth(R"({"a": [[1]], "b": "[[[[["})"), 3u);
}

}  // namespace
}  // namespace rw::codec
