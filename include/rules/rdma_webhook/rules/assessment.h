#pragma once
// One assessment per workload: its templates' networks, paths and plans, computed once and read
// by both Diagnose (the rules) and Mutate (which only applies the edits). It also holds the one
// decision of whether the webhook may edit the workload at all, so that the mutator decides
// nothing and a caller that needs both a diagnosis and a mutation (`check`) reads and plans the
// object once. Pure.
#include <memory>
#include <vector>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/mode_plan.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

struct TemplateAssessment {
  const workload::PodTemplate* t = nullptr;
  TemplateNetworks networks;
  policy::Path path = policy::Path::kNone;  // as written
  TemplatePlan plan;                        // empty when opted out or the mode plans nothing
};

struct Assessment {
  // `w`, `policy` and `catalogue` must outlive the assessment: it points into them. When a
  // DRA claim makes a container a GPU container, `w` is `adjusted`: the workload as read, with
  // those containers' `gpu` set.
  const workload::Workload* w = nullptr;
  std::shared_ptr<const workload::Workload> adjusted;
  const policy::Policy* policy = nullptr;
  const catalogue::Catalogue* catalogue = nullptr;
  const policy::NamespacePolicy* ns = nullptr;
  std::vector<TemplateAssessment> templates;  // one per template of `w`, in its order
  bool opted_out = false;
  // The webhook applies the plans' edits: the mode plans something, the workload did not opt
  // out, no plan is blocked (a reported conflict, an annotation Multus cannot read) and no GPU
  // template chose another path. Otherwise the workload is left as written, so that /validate
  // judges what the user wrote and never denies for a field the webhook wrote.
  bool mutates = false;
  // The mode planned nothing for a GPU template because one of its DRA claims could not be
  // read (its devices may be the NICs): the workload is left as written until they can be.
  bool waits_on_claims = false;
  // The access path of the workload once the edits are applied (as written when none are).
  policy::Path path_after = policy::Path::kNone;
};

// `catalogue`: the cluster objects the workload's claims and networks name (an empty one
// judges the manifest and the policy alone).
Assessment Assess(const workload::Workload& w, const policy::Policy& policy,
                  const catalogue::Catalogue& catalogue = catalogue::Catalogue::Empty());

// Runs every rule over the assessment (Diagnose(w, policy, c) is Diagnose(Assess(w, policy, c))).
Diagnosis Diagnose(const Assessment& a);

}  // namespace rw::rules
