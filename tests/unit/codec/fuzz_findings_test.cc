// What tests/fuzz/fuzz_yaml found in the YAML reader and writer: numbers beyond a double
// (std::stod threw std::out_of_range out of ParseStream), infinities written as null, and NUL
// bytes yaml-cpp took for UTF-32 (strings that are no UTF-8), control characters written plain.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

using nlohmann::json;

TEST(YamlNumberRange, OverflowIsAStringUnderflowIsZeroLikeGoYaml) {
  const auto docs = ParseStream("a: 1e400\nb: -1E+400\nc: 1e-400\nd: 1" + std::string(400, '0') +
                                "\n1e400: +.inf\n");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].value) << docs[0].error;
  const json& v = *docs[0].value;
  EXPECT_EQ(v["a"], "1e400");
  EXPECT_EQ(v["b"], "-1E+400");
  EXPECT_EQ(v["c"], 0.0);
  EXPECT_EQ(v["d"], "1" + std::string(400, '0'));
  EXPECT_TRUE(v["1e400"].is_number_float());
  const auto again = ParseStream(ToYaml(v));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].value->at("a"), "1e400");  // quoted, so it reads back as the string
}

TEST(YamlNumberRange, LargeFiniteNumbersStayNumbers) {
  const auto docs = ParseStream("a: 1e308\nb: 99999999999999999999\n");
  ASSERT_TRUE(docs.at(0).value);
  EXPECT_EQ(docs[0].value->at("a"), 1e308);
  EXPECT_TRUE(docs[0].value->at("b").is_number_float());
}

// Found by tests/fuzz/fuzz_yaml: ToYaml wrote an infinity as "null" (nlohmann's dump), which
// read back as the string "null".
TEST(YamlNumberRange, InfinityRoundTrips) {
  for (const char* text : {".inf", "-.INF", "+.inf"}) {
    const auto docs = ParseStream(text);
    ASSERT_TRUE(docs.at(0).value) << text;
    const auto again = ParseStream(ToYaml(*docs[0].value));
    ASSERT_TRUE(again.at(0).value) << text;
    EXPECT_EQ(*again[0].value, *docs[0].value) << text << " -> " << ToYaml(*docs[0].value);
  }
}

// Found by tests/fuzz/fuzz_yaml: a string ending in CRs was written plain, and a CR is a line
// break to YAML, so it read back without them.
TEST(ToYaml, ControlCharactersAreQuotedAndRoundTrip) {
  for (const std::string s : {"auto\r\r", "a\rb", "tab\tinside", "bell\x07", "del\x7f", "x\n"}) {
    const json value = {{"k", s}};
    const auto again = ParseStream(ToYaml(value));
    ASSERT_EQ(again.size(), 1u);
    ASSERT_TRUE(again[0].value) << again[0].error;
    EXPECT_EQ(*again[0].value, value) << ToYaml(value);
  }
}

TEST(YamlNul, IsAnErrorNamingTheLine) {
  const std::string text("a: 1\n---\nb: x\n\t\0\0\0\0H<\x7f\n", 20);
  const auto docs = ParseStream(text);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_TRUE(docs[0].value);
  EXPECT_FALSE(docs[1].value);
  EXPECT_NE(docs[1].error.find("line 4: NUL byte"), std::string::npos) << docs[1].error;
}

// Found by tests/fuzz/fuzz_yaml: a key over 1024 characters (as written, escapes included)
// was written as an implicit key, which YAML readers refuse ("illegal map value").
TEST(YamlLongKeys, WrittenExplicitlySoTheyReadBack) {
  std::string tabs;
  for (int i = 0; i < 700; ++i) tabs += "x\t";
  for (const std::string& key : {std::string(2000, 'k'), tabs, std::string(129, 'a')}) {
    const json value = {{key, "v"}, {"short", json{{key, 1}}}};
    const auto again = ParseStream(ToYaml(value));
    ASSERT_EQ(again.size(), 1u);
    ASSERT_TRUE(again[0].value) << again[0].error;
    EXPECT_EQ(*again[0].value, value);
  }
}

}  // namespace
}  // namespace rw::codec
