// codec::ParseJson must be nlohmann::json::parse, only faster: the same tree (types included),
// the same exceptions with the same messages. codec::ParseDom, the request path's reader, is held
// to the same reference.
#include "rdma_webhook/codec/json_text.h"

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/yaml.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/monotonic_resource.hpp>

namespace {

using nlohmann::json;
using rw::codec::JsonNestingDepth;
using rw::codec::JsonTooDeep;
using rw::codec::kMaxNestingDepth;

json Parse(std::string_view text) { return rw::codec::ParseJson(text, kMaxNestingDepth); }

// Equal as trees and in every node's type: json's operator== calls 5u and 5 equal, and 0.0 and
// -0.0, which the core could still tell apart.
bool SameTree(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
        if (ia.key() != ib.key() || !SameTree(*ia, *ib)) return false;
      return true;
    }
    case json::value_t::array:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!SameTree(a[i], b[i])) return false;
      return true;
    case json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    default:
      return a == b;
  }
}

// What a parser makes of `text`: its tree, or the exception's type and message.
struct Outcome {
  json value;
  std::string error;  // "" when parsed
};

template <class Parse>
Outcome Run(Parse parse, const std::string& text) {
  try {
    return {parse(text), ""};
  } catch (const json::parse_error& e) {
    return {json(), std::string("parse_error: ") + e.what()};
  } catch (const json::out_of_range& e) {
    return {json(), std::string("out_of_range: ") + e.what()};
  } catch (const JsonTooDeep&) {
    return {json(), "too deep"};
  }
}

void ExpectSameAsNlohmann(const std::string& text) {
  const Outcome fast = Run([](const std::string& t) { return Parse(t); }, text);
  // The reference: nlohmann behind the bracket count the request path always refused by.
  const Outcome reference = Run(
      [](const std::string& t) {
        if (JsonNestingDepth(t) > kMaxNestingDepth) throw JsonTooDeep("");
        return json::parse(t);
      },
      text);
  EXPECT_EQ(fast.error, reference.error) << text;
  EXPECT_TRUE(SameTree(fast.value, reference.value))
      << text << "\nfast: " << fast.value.dump() << "\nnlohmann: " << reference.value.dump();
  // The review's DOM (codec/dom.h) holds the same values and fails with the same exceptions.
  const Outcome dom = Run(
      [](const std::string& t) {
        boost::json::monotonic_resource arena;
        return rw::codec::FromDom(rw::codec::ParseDom(t, kMaxNestingDepth, &arena));
      },
      text);
  EXPECT_EQ(dom.error, reference.error) << text;
  EXPECT_TRUE(SameTree(dom.value, reference.value))
      << text << "\ndom: " << dom.value.dump() << "\nnlohmann: " << reference.value.dump();
  // The patch of every review is written by DumpJson: the same bytes as dump().
  if (fast.error.empty()) {
    EXPECT_EQ(rw::codec::DumpJson(fast.value), fast.value.dump()) << text;
  }
}

TEST(ParseJson, NumbersKeepNlohmannsTypesAndBits) {
  for (const char* text : {"0",
                           "-0",
                           "7",
                           "-7",
                           "1.5",
                           "-0.0",
                           "1e2",
                           "1E+2",
                           "2e-3",
                           "0.1",
                           "123456789.123456789",
                           "9223372036854775807",
                           "9223372036854775808",
                           "-9223372036854775808",
                           "-9223372036854775809",
                           "18446744073709551615",
                           "18446744073709551616",
                           "123456789012345678901234567890",
                           "1e-400",
                           "4.9e-324",
                           "1.7976931348623157e308",
                           "[1, -1, 1.0, 3e0, 18446744073709551616]"}) {
    SCOPED_TRACE(text);
    ExpectSameAsNlohmann(text);
  }
  EXPECT_TRUE(Parse("7").is_number_unsigned());
  EXPECT_TRUE(Parse("-7").is_number_integer() && !Parse("-7").is_number_unsigned());
  EXPECT_TRUE(Parse("18446744073709551616").is_number_float());
}

TEST(ParseJson, StringsKeysAndEscapes) {
  for (const char* text :
       {R"("")", R"("plain")", R"("tab\tnew\nline \"quoted\" back\\slash \/")",
        R"("\u00e9\u4e2d\ud83d\ude00 \u0000 end")", "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"",
        R"({"a": 1, "b": {"c": [true, false, null]}, "": "empty key"})",
        R"({"k\u0065y": "escaped key", "key": "same key, last wins"})",
        R"({"dup": 1, "dup": {"x": 2}})", R"({"z": 1, "a": 2, "m": 3})", R"([[], {}, [[{}]]])"}) {
    SCOPED_TRACE(text);
    ExpectSameAsNlohmann(text);
  }
  EXPECT_EQ(Parse(R"({"dup": 1, "dup": 2})")["dup"], 2);
  const std::string long_string(100000, 'x');
  ExpectSameAsNlohmann("{\"" + long_string + "\": \"" + long_string + "\"}");
}

TEST(ParseJson, RefusesWhatNlohmannRefusesWithItsMessage) {
  for (const std::string& text : std::initializer_list<std::string>{"",
                                                                    " ",
                                                                    "{",
                                                                    "[1,]",
                                                                    R"({"a":1,})",
                                                                    "{'a': 1}",
                                                                    "tru",
                                                                    "nul",
                                                                    "01",
                                                                    "1.",
                                                                    ".5",
                                                                    "-",
                                                                    "1e",
                                                                    "+1",
                                                                    "[1 2]",
                                                                    R"({"a" 1})",
                                                                    "{} {}",
                                                                    "[] x",
                                                                    "\"unterminated",
                                                                    "\"\x01\"",
                                                                    "\"\xff\"",
                                                                    "\"\xc3\"",
                                                                    "\"\xed\xa0\x80\"",
                                                                    R"("\ud800")",
                                                                    R"("\udc00 x")",
                                                                    R"("\x")",
                                                                    "// comment\n{}",
                                                                    "[1] // trailing",
                                                                    "NaN",
                                                                    "Infinity",
                                                                    "1e400",
                                                                    "-1e400",
                                                                    "[1e99999999999]",
                                                                    "[1e-99999999999]",
                                                                    std::string("{\"a\":\0}", 7)}) {
    SCOPED_TRACE(text);
    ExpectSameAsNlohmann(text);
  }
  EXPECT_THROW(Parse("1e400"), json::out_of_range);
  EXPECT_THROW(Parse("{\"a\": }"), json::parse_error);
}

TEST(ParseJson, AcceptsWhatNlohmannAcceptsAroundTheValue) {
  // A byte order mark and surrounding whitespace, as nlohmann reads them.
  for (const char* text :
       {"\xef\xbb\xbf{\"a\": 1}", " \t\r\n{\"a\": 1} \n", "\xef\xbb\xbf", "[]"}) {
    SCOPED_TRACE(text);
    ExpectSameAsNlohmann(text);
  }
}

TEST(ParseJson, RefusesNestingDeeperThanAskedBeforeBuildingIt) {
  const auto nested = [](std::size_t depth, const std::string& prefix = "") {
    return prefix + std::string(depth, '[') + std::string(depth, ']');
  };
  EXPECT_TRUE(Parse(nested(kMaxNestingDepth)).is_array());
  EXPECT_THROW(Parse(nested(kMaxNestingDepth + 1)), JsonTooDeep);
  EXPECT_THROW(Parse(nested(100000)), JsonTooDeep);
  EXPECT_THROW(rw::codec::ParseJson(nested(3), 2), JsonTooDeep);
  // Where nlohmann reads on past the fast parser's stop (a byte order mark), or an error comes
  // first, depth is still refused as the bracket count says.
  EXPECT_THROW(Parse(nested(kMaxNestingDepth + 1, "\xef\xbb\xbf")), JsonTooDeep);
  EXPECT_THROW(Parse("x" + nested(kMaxNestingDepth + 1)), JsonTooDeep);
  for (const std::string& text :
       {nested(kMaxNestingDepth), nested(kMaxNestingDepth + 1), nested(600, "\xef\xbb\xbf"),
        "[\"" + std::string(1000, '[') + "\"]", "{\"a\": " + nested(kMaxNestingDepth - 1) + "}",
        "{\"a\": " + nested(kMaxNestingDepth) + "}"}) {
    SCOPED_TRACE(text.substr(0, 40));
    ExpectSameAsNlohmann(text);
  }
}

TEST(ParseJson, EveryBenchAndGoldenReviewReadsTheSame) {
  namespace fs = std::filesystem;
  std::size_t files = 0;
  for (const char* dir : {"tests/fuzz/corpus/webhook", "tests/golden", "bench"}) {
    const fs::path root = fs::path(RW_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.file_size() > (1u << 20)) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      SCOPED_TRACE(entry.path().string());
      ExpectSameAsNlohmann(text.str());
      ++files;
    }
  }
  EXPECT_GT(files, 20u);
}

// The answer's patch is DumpJson's text, which the API server applies: byte for byte dump()'s,
// escapes, non-ASCII text, numbers of every type and the error on a string that is no UTF-8.
TEST(DumpJson, WritesWhatDumpWrites) {
  json value = {
      {"plain", "abc"},
      {"escapes", "quote \" backslash \\ tab \t newline \n nul " + std::string(1, '\0')},
      {"utf8", "caf\u00e9 \u2026"},
      {"del", "\x7f"},
      {"numbers",
       {0, -1, 18446744073709551615ull, -9223372036854775807ll - 1, 0.1, -0.0, 1e300, 2.5e-8, 3.0}},
      {"nested", {{"a", json::array()}, {"b", json::object()}, {"c", nullptr}}},
      {"flags", {true, false}},
      {"", "empty key"}};
  EXPECT_EQ(rw::codec::DumpJson(value), value.dump());
  EXPECT_EQ(rw::codec::DumpJson(json("x")), "\"x\"");
  EXPECT_EQ(rw::codec::DumpJson(json::array()), "[]");

  const json bad = {{"value", std::string("\xff\xfe")}};
  std::string dumped, ours;
  try {
    (void)bad.dump();
  } catch (const json::type_error& e) {
    dumped = e.what();
  }
  try {
    (void)rw::codec::DumpJson(bad);
  } catch (const json::type_error& e) {
    ours = e.what();
  }
  EXPECT_FALSE(dumped.empty());
  EXPECT_EQ(ours, dumped);
}

// The request path frees every review's objects with ReleaseJson: whatever the value, it ends
// null, and a value far deeper than a review (which the parser bounds) must not overflow the call
// stack, since below kReleaseDepth nlohmann's own iterative destructor takes over.
TEST(ReleaseJson, FreesAnyValueAndAnyDepthToNull) {
  json review = Parse(R"({"request": {"object": {"spec": {"containers": [{"name": "a",
      "env": [{"name": "X", "value": "a string long enough for the heap"}]}]}}}, "n": [1, 2.5]})");
  rw::codec::ReleaseJson(review);
  EXPECT_TRUE(review.is_null());

  json deep = json::array();
  for (int i = 0; i < 1'000'000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(deep));
    outer.push_back("leaf");
    deep = std::move(outer);
  }
  rw::codec::ReleaseJson(deep);
  EXPECT_TRUE(deep.is_null());

  json scalar = "text";
  rw::codec::ReleaseJson(scalar);
  EXPECT_TRUE(scalar.is_null());
}

}  // namespace
