#include "judge.h"

#include <iterator>
#include <utility>

#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/reading_findings.h"
#include "rdma_webhook/rules/suppression.h"
#include "rdma_webhook/rules/trainjob.h"
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
  for (const auto& s : c.diagnosis.suppressed)
    for (const auto* pointer : {&s.finding.pointer, &s.annotation})
      if (const auto p = c.Where(*pointer)) kept.emplace(*pointer, *p);
  return kept;
}

}  // namespace

Checked Judge(InputDocument&& doc, const policy::Policy& policy, const std::string& default_ns,
              bool count_changes, const catalogue::Catalogue& catalogue) {
  const auto w = workload::Workload::Read(*doc.object, policy, default_ns);
  Checked c{doc.source, doc.file, w.api_version, w.kind, w.ns, w.name, {}};
  if (workload::IsTrainJob(*doc.object)) {
    // No pod template of its own: judged through what Trainer builds from it and its runtime.
    c.diagnosis = rules::DiagnoseTrainJob(*doc.object, policy, default_ns, catalogue);
    c.judged = true;
    if (count_changes)
      c.changes = mutate::MutateTrainJob(*doc.object, policy, default_ns, catalogue).patch.size();
  } else {
    rules::Assessment a = rules::Assess(w, policy, catalogue);
    c.diagnosis = rules::Diagnose(a);
    c.judged = w.kind_row != nullptr || !w.templates.empty();
    if (count_changes) c.changes = Changes(std::move(a), *doc.object);
  }
  // What errors do in the cluster, as the webhook's own verdict says (a controller-owned Pod
  // only warns); the findings are reported whatever it says, as the exit code does not depend on
  // it.
  c.diagnosis.enforcement = rules::Judge(c.diagnosis, *doc.object).enforcement;
  c.positions = std::move(doc.positions);
  // Reading problems first: they may explain the findings that follow.
  std::vector<rules::Finding> findings;
  for (const auto& d : doc.duplicate_keys) findings.push_back(rules::DuplicateKeyFinding(d));
  rules::ApplyRuleLevels(findings, policy.ForNamespace(w.ns));  // e.g. duplicate-key: off
  std::vector<rules::Suppressed> suppressed;
  rules::Suppress(w, findings, suppressed);  // as the diagnosis did with its own findings
  suppressed.insert(suppressed.end(), std::make_move_iterator(c.diagnosis.suppressed.begin()),
                    std::make_move_iterator(c.diagnosis.suppressed.end()));
  c.diagnosis.suppressed = std::move(suppressed);
  findings.insert(findings.end(), std::make_move_iterator(c.diagnosis.findings.begin()),
                  std::make_move_iterator(c.diagnosis.findings.end()));
  c.diagnosis.findings = std::move(findings);
  c.positions = PositionsOfFindings(c);
  return c;
}

}  // namespace rw::cli
