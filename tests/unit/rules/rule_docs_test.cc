// The rule registry: every file of src/rules/catalog/ is a rule named by its file, with its
// reference from src/rules/docs/ (`rdma-webhook rules`, docs/rules.md); the CLI tests run the
// examples through check.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "../../../src/rules/registry.h"
#include "rdma_webhook/rules/diagnosis.h"

namespace rw::rules {
namespace {

std::set<std::string> FileStems(const char* folder, const char* extension) {
  std::set<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(RW_SOURCE_DIR) + folder))
    if (e.path().extension() == extension) stems.insert(e.path().stem().string());
  return stems;
}

TEST(RuleRegistry, EveryCatalogFileIsARuleNamedByItsFile) {
  std::set<std::string> registered;
  for (const Rule* r : Rules()) registered.emplace(r->id);
  // A file whose row has another id (or is not collected) shows here by name.
  EXPECT_EQ(registered, FileStems("/src/rules/catalog", ".cc"));
  EXPECT_EQ(registered, FileStems("/src/rules/docs", ".yaml"));
  EXPECT_EQ(registered.size(), Rules().size()) << "two files register the same id";
}

TEST(RuleRegistry, PositionsAreUniqueAndOrderTheRules) {
  std::map<int, std::string_view> taken;
  for (const Rule* r : Rules()) {
    const auto [it, fresh] = taken.emplace(r->position, r->id);
    EXPECT_TRUE(fresh) << r->id << " and " << it->second << " share position " << r->position;
  }
  for (std::size_t i = 1; i < Rules().size(); ++i)
    EXPECT_LT(Rules()[i - 1]->position, Rules()[i]->position);
}

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
    // The last four are warnings where only a NAD not saying RDMA makes the pod RDMA;
    // network-without-vf is one where the VFs may come from what it cannot count.
    const bool conditional = r.id == "hostnetwork-dns" || r.id == "vf-without-network" ||
                             r.id == "network-without-vf" || r.id == "ipc-lock-missing" ||
                             r.id == "ib-disabled-with-rdma" || r.id == "rdma-device-hostpath" ||
                             r.id == "mixed-paths" || r.id == "path-not-allowed";
    EXPECT_EQ(!r.doc->severity_note.empty(), conditional) << r.id;
  }
}

std::string DocError(std::string_view text) {
  try {
    ReadRuleDoc({"x", "src/rules/docs/x.yaml", text});
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

constexpr std::string_view kDoc = R"(summary: s
fires: f
why: w
fix: x
example:
  severity: warning
  manifest: |
    kind: Pod
)";

TEST(RuleDocFile, ReadsEveryField) {
  const auto d = ReadRuleDoc({"x", "src/rules/docs/x.yaml", kDoc});
  EXPECT_EQ(d.summary, "s");
  EXPECT_EQ(d.fix, "x");
  EXPECT_EQ(d.example, "kind: Pod\n");
  EXPECT_EQ(d.example_severity, Severity::kWarning);
  EXPECT_TRUE(d.severity_note.empty());
  EXPECT_TRUE(d.example_policy.empty());
}

TEST(RuleDocFile, AMistakeNamesTheFileAndTheKey) {
  EXPECT_EQ(DocError(std::string(kDoc) + "fixes: y\n"),
            "src/rules/docs/x.yaml: unknown key 'fixes'");
  EXPECT_EQ(DocError("summary: s\nfires: f\nwhy: w\nexample: {severity: error, manifest: m}\n"),
            "src/rules/docs/x.yaml: 'fix' is missing");
  EXPECT_EQ(DocError("summary: s\nfires: f\nwhy: w\nfix: x\nexample: {severity: fatal, "
                     "manifest: m}\n"),
            "src/rules/docs/x.yaml: example: 'severity' must be error or warning, not 'fatal'");
  EXPECT_EQ(DocError("summary: s\nfires: f\nwhy: w\nfix: x\nexample: m\n"),
            "src/rules/docs/x.yaml: 'example' must be a mapping");
  EXPECT_EQ(DocError("- a\n"), "src/rules/docs/x.yaml: must be one YAML mapping");
}

}  // namespace
}  // namespace rw::rules
