// Every rule of the table carries its reference documentation (`rdma-webhook rules`,
// docs/rules.md); the CLI tests run the examples through check.
#include <gtest/gtest.h>

#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {
namespace {

TEST(RuleReferences, EveryRuleOfTheTableInItsOrderWithItsSeverity) {
  const auto& table = RuleTable();
  const auto& refs = RuleReferences();
  ASSERT_EQ(refs.size(), table.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    EXPECT_EQ(refs[i].id, table[i].id);
    EXPECT_EQ(refs[i].severity, table[i].severity);
  }
}

TEST(RuleReferences, EveryRuleIsDocumentedWithAnExample) {
  for (const auto& r : RuleReferences()) {
    SCOPED_TRACE(std::string(r.id));
    ASSERT_NE(r.doc, nullptr);
    EXPECT_FALSE(r.doc->summary.empty());
    EXPECT_FALSE(r.doc->fires.empty());
    EXPECT_FALSE(r.doc->why.empty());
    EXPECT_FALSE(r.doc->fix.empty());
    EXPECT_NE(r.doc->example.find("kind: "), std::string_view::npos);
    EXPECT_EQ(r.doc->example.back(), '\n');  // markdown fences close on their own line
    // An example at another severity than the table's needs a condition that says when.
    if (r.doc->example_severity != r.severity) {
      EXPECT_FALSE(r.doc->severity_note.empty());
    }
  }
}

TEST(RuleReferences, ConditionalSeveritiesAreNamed) {
  for (const auto& r : RuleReferences()) {
    const bool conditional =
        r.id == "hostnetwork-dns" || r.id == "vf-without-network" || r.id == "ipc-lock-missing";
    EXPECT_EQ(!r.doc->severity_note.empty(), conditional) << r.id;
  }
}

}  // namespace
}  // namespace rw::rules
