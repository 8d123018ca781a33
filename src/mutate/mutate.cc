#include <algorithm>
#include <iterator>

#include "patch_builder.h"
#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/json_text.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/assessment.h"

namespace rw::mutate {
namespace {

using nlohmann::json;

// The plan decided everything; applying it only records its edits, in order, with the
// warnings of the user values they replace.
void Apply(rules::TemplatePlan& plan, PatchBuilder& patch, std::vector<rules::Finding>& overrides) {
  for (auto& edit : plan.edits) {
    if (edit.kind == rules::Edit::Kind::kAppend)
      patch.Append(edit.pointer, std::move(edit.value));
    else
      patch.Set(edit.pointer, std::move(edit.value));
    std::move(edit.overrides.begin(), edit.overrides.end(), std::back_inserter(overrides));
  }
}

}  // namespace

Mutation Mutate(const json& object, const policy::Policy& policy, std::string_view default_ns,
                const catalogue::Catalogue& catalogue) {
  return Mutate(workload::Workload::Read(object, policy, default_ns), object, policy, catalogue);
}

Mutation Mutate(const workload::Workload& w, json object, const policy::Policy& policy,
                const catalogue::Catalogue& catalogue) {
  return Mutate(rules::Assess(w, policy, catalogue), std::move(object));
}

Mutation Mutate(rules::Assessment&& a, json object) {
  boost::json::value document = codec::ToDom(object);
  codec::ReleaseJson(object);
  Mutation m = MutateInPlace(std::move(a), document);
  m.result = codec::FromDom(document);
  return m;
}

Mutation MutateInPlace(const workload::Workload& w, boost::json::value& object,
                       const policy::Policy& policy, const catalogue::Catalogue& catalogue) {
  return MutateInPlace(rules::Assess(w, policy, catalogue), object);
}

// The assessment decided whether to edit and what; the edits are only recorded here.
Mutation MutateInPlace(rules::Assessment&& a, boost::json::value& object) {
  Mutation m;
  m.skipped = a.opted_out;
  m.waits_on_claims = a.waits_on_claims && !a.mutates;
  m.path = a.path_after;
  PatchBuilder patch(object);
  if (a.mutates)
    for (auto& ta : a.templates) Apply(ta.plan, patch, m.overrides);
  m.patch = std::move(patch.operations());
  return m;
}

}  // namespace rw::mutate
