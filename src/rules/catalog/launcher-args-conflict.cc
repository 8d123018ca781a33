// launcher-args-conflict: NCCL values in the launch command contradict the container's env.
// Its reference and example: ../docs/launcher-args-conflict.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void LauncherArgsConflict(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& l : ctx.launcher) {
    const auto& a = l.assignment;
    if (a.name.rfind("NCCL_", 0) != 0) continue;
    for (const auto& f : ctx.templates) {
      for (const auto* c : f.rdma_containers) {
        const auto* v = c->FindEnv(a.name);
        std::string meaning;
        if (v != nullptr && v->value) {
          if (SameEnvValue(a.name, a.value, *v->value, f.interfaces, f.t->host_network)) continue;
          meaning = "container '" + c->name + "' sets " + a.name + "=" + std::string(*v->value);
        } else if (a.name == "NCCL_IB_DISABLE" && nccl::NcclReadsInteger(a.value) != 0) {
          meaning = "container '" + c->name + "' is on the " +
                    std::string(policy::ToString(f.path)) + " RDMA path";
        } else {
          continue;
        }
        rule.Report(out, l.container->ArgvPointer(a.argv_index),
                    "the launcher arguments set " + a.name + "=" + a.value + " (" + a.origin +
                        ") but " + meaning +
                        ": the launcher's value reaches the ranks and silently overrides the "
                        "manifest's.",
                    "make the launcher's " + a.name + " agree with the container env, or drop it");
        goto next_assignment;
      }
    }
  next_assignment:;
  }
}

}  // namespace

namespace catalog {
extern const Rule launcher_args_conflict;
const Rule launcher_args_conflict = {.id = "launcher-args-conflict",
                                     .severity = Severity::kWarning,
                                     .check = LauncherArgsConflict,
                                     .position = 240};
}  // namespace catalog

}  // namespace rw::rules
