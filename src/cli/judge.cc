#include "judge.h"

#include <iterator>
#include <utility>

#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/reading_findings.h"
#include "rdma_webhook/rules/verdict.h"

namespace rw::cli {
namespace {

// How many patch operations the webhook would apply to the object (0 when it cannot tell),
// from the assessment the diagnosis read: the object is read and planned once.
std::size_t Changes(rules::Assessment&& a, const nlohmann::json& object) {
  try {
    return mutate::Mutate(std::move(a), object).patch.size();
  } catch (const workload::ManifestError&) {
    return 0;  // the diagnosis reports what is wrong with the object
  }
}

// Results are held until the end of the input for the machine formats: of a document's
// positions, only those where its findings are (and its start) are kept, so that a large input
// costs little memory per document.
codec::PositionMap PositionsOfFindings(const Checked& c) {
  codec::PositionMap kept;
  if (c.positions.empty()) return kept;
  if (const auto p = c.Where("")) kept.emplace("", *p);
  for (const auto& f : c.diagnosis.findings)
    if (const auto p = c.Where(f.pointer)) kept.emplace(f.pointer, *p);
  return kept;
}

}  // namespace

Checked Judge(InputDocument&& doc, const policy::Policy& policy, const std::string& default_ns,
              bool count_changes, const catalogue::Catalogue& catalogue) {
  const auto w = workload::Workload::Read(*doc.object, policy, default_ns);
  rules::Assessment a = rules::Assess(w, policy, catalogue);
  Checked c{doc.source, doc.file, w.api_version, w.kind, w.ns, w.name, rules::Diagnose(a)};
  c.judged = w.kind_row != nullptr || !w.templates.empty();
  // What errors do in the cluster, as the webhook's own verdict says (a controller-owned Pod
  // only warns); the findings are reported whatever it says, as the exit code does not depend on
  // it.
  c.diagnosis.enforcement = rules::Judge(c.diagnosis, *doc.object).enforcement;
  c.positions = std::move(doc.positions);
  if (count_changes) c.changes = Changes(std::move(a), *doc.object);
  // Reading problems first: they may explain the findings that follow.
  std::vector<rules::Finding> findings;
  for (const auto& d : doc.duplicate_keys) findings.push_back(rules::DuplicateKeyFinding(d));
  rules::ApplyRuleLevels(findings, policy.ForNamespace(w.ns));  // e.g. duplicate-key: off
  findings.insert(findings.end(), std::make_move_iterator(c.diagnosis.findings.begin()),
                  std::make_move_iterator(c.diagnosis.findings.end()));
  c.diagnosis.findings = std::move(findings);
  c.positions = PositionsOfFindings(c);
  return c;
}

}  // namespace rw::cli
