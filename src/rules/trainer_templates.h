#pragma once
// What the Trainer rules read of a TrainJob's effective templates (workload/trainjob.h).
#include "context.h"
#include "rdma_webhook/workload/trainjob.h"

namespace rw::rules {

// The template whose `node` container spec.trainer feeds; nullptr when not a TrainJob or the
// runtime has no trainer job.
inline const TemplateFacts* TrainerNodeTemplate(const Context& ctx) {
  const auto* facts = ctx.w.trainjob;
  if (facts == nullptr || facts->node_template.empty()) return nullptr;
  for (const auto& f : ctx.templates)
    if (f.t->pointer == facts->node_template) return &f;
  return nullptr;
}

inline const workload::Container* TrainerNodeContainer(const TemplateFacts& f) {
  for (const auto& c : f.t->containers)
    if (c.name == workload::kNodeContainer) return &c;
  return nullptr;
}

}  // namespace rw::rules
