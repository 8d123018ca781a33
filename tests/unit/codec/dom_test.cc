// The request path reads Boost.JSON values (codec/dom.h) where the CLI and the tests read
// nlohmann's: the crossings must be exact, and the helpers the core walks with must answer as
// nlohmann's equivalents did, or a review and `check` of the same object could disagree.
#include "rdma_webhook/codec/dom.h"

#include "rdma_webhook/codec/yaml.h"

#include <string>

#include <gtest/gtest.h>
#include <boost/json/monotonic_resource.hpp>

namespace {

namespace bj = boost::json;
using nlohmann::json;
using rw::codec::Find;
using rw::codec::FromDom;
using rw::codec::SameValue;
using rw::codec::ToDom;

const json kObject = json::parse(R"({
  "kind": "Job",
  "metadata": {"name": "a/b~c", "labels": {"z": "1", "a": "2"}},
  "spec": {"parallelism": 4, "offset": -3, "ratio": 0.5, "big": 18446744073709551615,
           "template": {"spec": {"containers": [{"name": "c0"}, {"name": "c1"}]}}},
  "flag": true, "none": null, "empty": {}, "list": []
})");

TEST(Dom, RoundTripsEveryValueAndNumberType) {
  const bj::value dom = ToDom(kObject);
  EXPECT_TRUE(dom.at("spec").at("parallelism").is_uint64());
  EXPECT_TRUE(dom.at("spec").at("offset").is_int64());
  EXPECT_TRUE(dom.at("spec").at("ratio").is_double());
  const json back = FromDom(dom);
  EXPECT_EQ(back, kObject);
  EXPECT_TRUE(back["spec"]["parallelism"].is_number_unsigned());
  EXPECT_TRUE(back["spec"]["offset"].is_number_integer());
  EXPECT_EQ(back["spec"]["big"].get<std::uint64_t>(), 18446744073709551615u);
}

TEST(Dom, ToDomPutsEveryValueInTheGivenStorage) {
  bj::monotonic_resource arena;
  const bj::value dom = ToDom(kObject, &arena);
  EXPECT_EQ(dom.storage().get(), &arena);
  EXPECT_EQ(dom.at("metadata").at("labels").storage().get(), &arena);
}

TEST(Dom, FindFollowsRfc6901) {
  const bj::value dom = ToDom(kObject);
  EXPECT_EQ(Find(dom, ""), &dom);
  ASSERT_NE(Find(dom, "/spec/template/spec/containers/1/name"), nullptr);
  EXPECT_EQ(Find(dom, "/spec/template/spec/containers/1/name")->as_string(), "c1");
  EXPECT_EQ(Find(dom, "/spec/template/spec/containers/2"), nullptr);   // past the end
  EXPECT_EQ(Find(dom, "/spec/template/spec/containers/01"), nullptr);  // not a plain index
  EXPECT_EQ(Find(dom, "/spec/template/spec/containers/-"), nullptr);
  EXPECT_EQ(Find(dom, "/kind/x"), nullptr);  // a step into a string
  EXPECT_EQ(Find(dom, "/missing"), nullptr);
  bj::value escaped = ToDom(json::parse(R"({"a/b": {"c~d": 1}})"));
  ASSERT_NE(Find(escaped, "/a~1b/c~0d"), nullptr);
  EXPECT_EQ(Find(escaped, "/a~1b/c~0d")->as_uint64(), 1u);
}

TEST(Dom, SameValueComparesNumbersAsNlohmannDoes) {
  for (const auto& [a, b] : std::initializer_list<std::pair<const char*, const char*>>{
           {"1", "1.0"}, {"[1, -2]", "[1.0, -2]"}, {R"({"a": {"b": 3}})", R"({"a": {"b": 3}})"}}) {
    SCOPED_TRACE(std::string(a) + " vs " + b);
    EXPECT_EQ(json::parse(a), json::parse(b));
    EXPECT_TRUE(SameValue(ToDom(json::parse(a)), ToDom(json::parse(b))));
  }
  for (const auto& [a, b] :
       std::initializer_list<std::pair<const char*, const char*>>{{"1", "2"},
                                                                  {R"("1")", "1"},
                                                                  {"[1]", "[1, 2]"},
                                                                  {R"({"a": 1})", R"({"b": 1})"},
                                                                  {"null", "false"}}) {
    SCOPED_TRACE(std::string(a) + " vs " + b);
    EXPECT_NE(json::parse(a), json::parse(b));
    EXPECT_FALSE(SameValue(ToDom(json::parse(a)), ToDom(json::parse(b))));
  }
  // One deliberate difference: nlohmann casts the unsigned integer to a signed one and finds
  // -1 and 2^64-1 equal; they are different values, and no edit of the core writes either.
  EXPECT_FALSE(SameValue(ToDom(json::parse("-1")), ToDom(json::parse("18446744073709551615"))));
  // A signed and an unsigned integer are compared exactly, not through a double.
  bj::value big = std::uint64_t{9007199254740993};
  bj::value near = std::int64_t{9007199254740992};
  EXPECT_FALSE(SameValue(big, near));
}

TEST(Dom, SortedMembersWalkInNlohmannsOrder) {
  bj::value dom = bj::object{{"z", 1}, {"a", 2}, {"m", 3}};
  std::string order;
  for (const auto* m : rw::codec::SortedMembers(dom.as_object())) order += std::string(m->key());
  EXPECT_EQ(order, "amz");
  std::string nlohmann_order;
  const json same = FromDom(dom);
  for (const auto& [k, v] : same.items()) nlohmann_order += k;
  EXPECT_EQ(order, nlohmann_order);
}

TEST(Dom, TypeNamesMatchTheCoresErrors) {
  EXPECT_EQ(rw::codec::TypeName(bj::value(nullptr)), "null");
  EXPECT_EQ(rw::codec::TypeName(bj::value(bj::object())), "a mapping");
  EXPECT_EQ(rw::codec::TypeName(bj::value(bj::array())), "a list");
  EXPECT_EQ(rw::codec::TypeName(bj::value("x")), "a string");
  EXPECT_EQ(rw::codec::TypeName(bj::value(1.5)), "a number");
  EXPECT_EQ(rw::codec::TypeName(bj::value(-1)), "a number");
  EXPECT_EQ(rw::codec::TypeName(bj::value(true)), "a boolean");
}

TEST(Dom, ParseDomParsesIntoTheArena) {
  const std::string text = kObject.dump();
  rw::codec::DomArena arena(text.size());
  const bj::value dom = rw::codec::ParseDom(text, rw::codec::kMaxNestingDepth, arena.storage());
  EXPECT_EQ(FromDom(dom), kObject);
  EXPECT_EQ(dom.storage().get(), arena.storage().get());
}

}  // namespace
