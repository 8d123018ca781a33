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

TEST(ParseStream, DuplicateKeysAreErrors) {
  EXPECT_NE(ParseStream("a: 1\na: 2\n")[0].error.find("duplicate key 'a'"), std::string::npos);
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
