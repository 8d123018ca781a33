// Rules about the workload as a whole: one path for all templates, the namespace's policy,
// gang scheduling, host ports and launcher arguments.
#include <algorithm>

#include "rule_functions.h"

namespace rw::rules {

using policy::Path;

void MixedPaths(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.path != Path::kMixed) return;
  std::string list;
  std::string pointer;
  Path first = Path::kNone;
  for (const auto& f : ctx.templates) {
    if (f.path == Path::kNone || f.path == Path::kUnknown) continue;
    list +=
        (list.empty() ? "" : ", ") + f.t->pointer + " → " + std::string(policy::ToString(f.path));
    if (first == Path::kNone)
      first = f.path;
    else if (pointer.empty() && f.path != first)
      pointer = f.t->SpecPointer();
  }
  rule.Report(out, pointer,
              "the GPU templates of this workload take different access paths (" + list +
                  "): ranks on different paths cannot form one NCCL ring over RDMA, so the job "
                  "hangs in rendezvous or falls back to TCP.",
              "give every GPU template the same path (same hostNetwork, resources and network "
              "annotation)");
}

void PathNotAllowed(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.path == Path::kNone || ctx.path == Path::kUnknown || ctx.path == Path::kMixed ||
      ctx.path == Path::kPlugin)
    return;
  if (ctx.ns.Allows(ctx.path)) return;
  std::string allowed;
  for (Path p : ctx.ns.allowed_paths)
    allowed += (allowed.empty() ? "" : ", ") + std::string(policy::ToString(p));
  std::string pointer;
  for (const auto& f : ctx.templates)
    if (pointer.empty() && f.path == ctx.path) pointer = f.t->SpecPointer();
  rule.Report(out, pointer,
              "the workload takes the " + std::string(policy::ToString(ctx.path)) +
                  " path, but namespace '" + ctx.w.ns + "' allows only " + allowed +
                  ": the cluster is not set up for that path here.",
              "remove the fields that select " + std::string(policy::ToString(ctx.path)) +
                  " and let the webhook apply the namespace's mode (" +
                  std::string(policy::ToString(ctx.ns.mode)) + ")");
}

void PolicyConflict(const Context& ctx, const Rule& rule, Findings& out) {
  // The plan holds only the conflicts the namespace's onConflict reports.
  for (const auto& f : ctx.templates)
    for (const auto& c : f.plan.conflicts)
      rule.Report(out, c.pointer,
                  c.message +
                      ": the webhook will not silently change it, and the two values "
                      "cannot both hold.",
                  "remove the field so the namespace's mode sets it, or use a namespace whose "
                  "mode matches");
}

namespace {

long long ReplicaSum(const nlohmann::json& specs, std::string_view field_name) {
  long long total = 0;
  auto add = [&](const nlohmann::json& spec) {
    if (!spec.is_object()) return;
    auto it = spec.find(std::string(field_name));
    total += (it != spec.end() && it->is_number_integer()) ? it->get<long long>() : 1;
  };
  if (specs.is_array())
    for (const auto& s : specs) add(s);
  if (specs.is_object())
    for (const auto& s : specs) add(s);
  return total;
}

}  // namespace

void GangIncomplete(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.w.object == nullptr || ctx.w.kind_row == nullptr) return;
  if (std::none_of(ctx.templates.begin(), ctx.templates.end(),
                   [](const TemplateFacts& f) { return !f.gpu.empty(); }))
    return;
  const auto& obj = *ctx.w.object;
  const auto& group = ctx.w.kind_row->group;
  const nlohmann::json* min = nullptr;
  long long total = 0;
  std::string pointer;
  auto at = [&](const char* ptr) -> const nlohmann::json* {
    const auto p = nlohmann::json::json_pointer(ptr);
    return obj.contains(p) ? &obj.at(p) : nullptr;
  };
  if (group == "batch.volcano.sh" && ctx.w.kind == "Job") {
    min = at("/spec/minAvailable");
    pointer = "/spec/minAvailable";
    if (const auto* tasks = at("/spec/tasks")) total = ReplicaSum(*tasks, "replicas");
  } else if (group == "kubeflow.org") {
    min = at("/spec/runPolicy/schedulingPolicy/minAvailable");
    pointer = "/spec/runPolicy/schedulingPolicy/minAvailable";
    for (const auto& pattern : ctx.w.kind_row->templates) {
      // /spec/<x>ReplicaSpecs/*/template: the replica specs map is two levels up.
      const std::string specs = pattern.substr(0, pattern.find("/*"));
      if (const auto* s = at(specs.c_str())) total += ReplicaSum(*s, "replicas");
    }
  }
  // Volcano's webhook turns an absent or 0 minAvailable into the sum of the tasks' own
  // minAvailable (each defaulting to its replicas): only a positive value below the total is
  // the user's choice of a partial gang.
  if (min == nullptr || !min->is_number_integer() || min->get<long long>() <= 0 ||
      min->get<long long>() >= total)
    return;
  rule.Report(out, pointer,
              "minAvailable is " + std::to_string(min->get<long long>()) + " but the job has " +
                  std::to_string(total) +
                  " replicas: the gang scheduler may start a partial job whose ranks wait forever "
                  "for the missing ones while holding GPUs.",
              "set minAvailable to the total replica count (" + std::to_string(total) + ")");
}

void HostnetworkFixedPort(const Context& ctx, const Rule& rule, Findings& out) {
  if (ctx.ns.exclusive_nodes) return;
  for (const auto& f : ctx.templates) {
    if (f.gpu.empty() || !f.t->host_network) continue;
    for (const auto& c : f.t->containers) {
      if (!c.ports.empty()) {
        rule.Report(out, c.pointer + "/ports",
                    "container '" + c.name + "' declares port " + std::to_string(c.ports.front()) +
                        " on the host network: declared ports become host ports, so a second "
                        "such pod on the node stays Pending.",
                    "allocate whole nodes (policy exclusiveNodes) or drop the declared ports");
      }
      const auto* mp = c.FindEnv("MASTER_PORT");
      if (mp != nullptr && mp->value) {
        rule.Report(out, EnvPointer(c, *mp),
                    "container '" + c.name + "' uses the fixed MASTER_PORT=" + *mp->value +
                        " on the host network: two jobs on one node collide at bind time "
                        "(address already in use).",
                    "allocate whole nodes (policy exclusiveNodes) or pick a free port at start");
      }
    }
  }
}

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
          meaning = "container '" + c->name + "' sets " + a.name + "=" + *v->value;
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

}  // namespace rw::rules
