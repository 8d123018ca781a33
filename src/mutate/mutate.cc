#include <algorithm>

#include "patch_builder.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/mode_plan.h"

namespace rw::mutate {
namespace {

using nlohmann::json;
using policy::Mode;
using policy::OnConflict;
using workload::EscapePointerToken;

constexpr std::string_view kShmVolume = "rdma-webhook-shm";

std::string Key(std::string_view k) { return EscapePointerToken(k); }

rules::Finding Override(const std::string& pointer, const std::string& what,
                        const std::string& fix) {
  return {"policy-conflict", rules::Severity::kWarning, what + " (onConflict: override)", fix,
          pointer};
}

// The annotation value after the plan: renamed items rewritten, new items appended, in the
// value's own form. In JSON form the user's text is kept as written when only items are
// appended; a rename re-serialises the list keeping every item's keys in the user's order
// and changes only the key that gave the renamed item's interface (e.g. the legacy
// "interfaceRequest", or "Interface": Multus matches keys case-insensitively), or adds
// "interface" when none did.
std::string NewAnnotationValue(const rules::TemplateNetworks& nets, const rules::TemplatePlan& plan,
                               const policy::NamespacePolicy& ns, std::string_view pod_ns) {
  const std::string old = nets.value != nullptr ? *nets.value : std::string();
  if (nets.parsed.json_form) {
    using ordered_json = nlohmann::ordered_json;
    std::vector<ordered_json> added;
    for (const auto& a : plan.attach) {
      ordered_json item = ordered_json::object();
      item["name"] = a.name;
      if (a.ns != pod_ns) item["namespace"] = a.ns;
      if (a.explicit_interface) item["interface"] = a.interface;
      added.push_back(std::move(item));
    }
    const std::size_t close = old.find_last_not_of(" \t\r\n");
    if (plan.renames.empty() && close != std::string::npos && old[close] == ']') {
      std::string items;
      for (const auto& item : added)
        items += (items.empty() && nets.parsed.attachments.empty() ? "" : ",") + item.dump();
      return old.substr(0, close) + items + old.substr(close);
    }
    ordered_json list = ordered_json::parse(old);
    for (const auto& r : plan.renames) {
      const std::string& key = nets.parsed.attachments[r.item].interface_key;
      list[r.item][key.empty() ? std::string("interface") : key] = r.interface;
    }
    for (auto& item : added) list.push_back(std::move(item));
    return list.dump();
  }
  std::vector<std::string> items;
  if (nets.value == nullptr || old.find_first_not_of(" \t") == std::string::npos) {
    items = ns.sriov.default_networks;
  } else {
    // Keep the user's items as written; only renamed items are re-rendered.
    std::size_t pos = 0;
    while (pos <= old.size()) {
      std::size_t end = old.find(',', pos);
      if (end == std::string::npos) end = old.size();
      std::string item = old.substr(pos, end - pos);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      items.push_back(item);
      pos = end + 1;
    }
    for (const auto& r : plan.renames) {
      auto a = nets.parsed.attachments[r.item];
      a.interface = r.interface;
      a.explicit_interface = true;
      items[r.item] = nccl::FormatAttachmentItem(a, pod_ns);
    }
  }
  for (const auto& a : plan.attach) items.push_back(nccl::FormatAttachmentItem(a, pod_ns));
  const std::string joiner = old.find(", ") != std::string::npos ? ", " : ",";
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : joiner) + i;
  return out;
}

struct PlannedTemplate {
  const workload::PodTemplate* t = nullptr;
  rules::TemplateNetworks nets;
  rules::TemplatePlan plan;
  policy::Path path;  // as written
};

void MutateTemplate(const PlannedTemplate& planned, const policy::NamespacePolicy& ns,
                    std::string_view pod_ns, PatchBuilder& patch,
                    std::vector<rules::Finding>& overrides) {
  const auto& t = *planned.t;
  const auto& nets = planned.nets;
  const auto& plan = planned.plan;
  if (!plan.applies) return;
  const bool override = ns.on_conflict == OnConflict::kOverride;
  const std::string spec = t.SpecPointer();

  if (plan.host_network) {
    if (!t.host_network) patch.Set(spec + "/hostNetwork", true);
    const auto& dns = t.dns_policy;
    if (!dns || *dns == "ClusterFirst") {
      patch.Set(spec + "/dnsPolicy", "ClusterFirstWithHostNet");
    } else if (*dns == "Default" && override) {
      patch.Set(spec + "/dnsPolicy", "ClusterFirstWithHostNet");
      overrides.push_back(Override(spec + "/dnsPolicy",
                                   "replaced dnsPolicy Default with ClusterFirstWithHostNet",
                                   "set dnsPolicy: ClusterFirstWithHostNet"));
    }
  }

  if (nets.errors.empty() && (!plan.attach.empty() || !plan.renames.empty())) {
    patch.Set(nets.pointer, NewAnnotationValue(nets, plan, ns, pod_ns));
    for (const auto& r : plan.renames)
      overrides.push_back(
          Override(nets.pointer,
                   "renamed the interface of network '" + nets.parsed.attachments[r.item].name +
                       "' to " + r.interface,
                   "attach it as " + nets.parsed.attachments[r.item].name + "@" + r.interface));
  }

  const workload::Container* first_gpu = nullptr;
  for (const auto& c : t.containers)
    if (c.gpu && first_gpu == nullptr) first_gpu = &c;
  for (const auto& [resource, needed] : plan.claims) {
    const long long claimed = t.TotalClaim(resource);
    if (claimed >= needed || first_gpu == nullptr) continue;
    const std::string count = std::to_string(first_gpu->Claim(resource) + needed - claimed);
    patch.Set(first_gpu->pointer + "/resources/limits/" + Key(resource), count);
    patch.Set(first_gpu->pointer + "/resources/requests/" + Key(resource), count);
  }

  bool shm_volume = t.volumes.count(std::string(kShmVolume)) > 0;
  for (const auto& c : t.containers) {
    if (!c.gpu) continue;
    if (plan.ipc_lock && !c.HasCapability("IPC_LOCK"))
      patch.Append(c.pointer + "/securityContext/capabilities/add", "IPC_LOCK");
    for (const auto& want : plan.env) {
      const workload::EnvVar* have = c.FindEnv(want.name);
      if (have == nullptr) {
        patch.Append(c.pointer + "/env", json{{"name", want.name}, {"value", want.value}});
        continue;
      }
      if (have->from_ref || !have->value) continue;
      if (want.name == "NCCL_SOCKET_IFNAME") continue;  // set only when absent, never replaced
      if (rules::SameEnvValue(want.name, *have->value, want.value, plan.interfaces,
                              plan.host_network))
        continue;
      if (!override) continue;  // reject: left for validation to deny
      const std::string ptr = c.pointer + "/env/" + std::to_string(have->index) + "/value";
      patch.Set(ptr, want.value);
      overrides.push_back(Override(ptr,
                                   "replaced " + want.name + "=" + *have->value + " with " +
                                       want.value + " in container '" + c.name + "'",
                                   "set " + want.name + "=" + want.value));
    }
    if (plan.shm && !t.HasMemoryShm(c)) {
      const bool has_shm_mount = std::any_of(c.mounts.begin(), c.mounts.end(), [](const auto& m) {
        return m.mount_path == "/dev/shm" || m.mount_path == "/dev/shm/";
      });
      if (has_shm_mount) continue;  // the user mounts something else there on purpose
      if (!shm_volume) {
        patch.Append(spec + "/volumes",
                     json{{"name", kShmVolume}, {"emptyDir", {{"medium", "Memory"}}}});
        shm_volume = true;
      }
      patch.Append(c.pointer + "/volumeMounts",
                   json{{"name", kShmVolume}, {"mountPath", "/dev/shm"}});
    }
  }
}

}  // namespace

Mutation Mutate(const json& object, const policy::Policy& policy, std::string_view default_ns) {
  return Mutate(workload::Workload::Read(object, policy, default_ns), object, policy);
}

Mutation Mutate(const workload::Workload& w, json object, const policy::Policy& policy) {
  const auto& ns = policy.ForNamespace(w.ns);
  Mutation m;
  std::vector<PlannedTemplate> planned;
  for (const auto& t : w.templates) {
    PlannedTemplate p{&t, rules::ReadNetworks(t, ns, w.ns), {}, policy::Path::kNone};
    p.path = rules::TemplatePath(t, policy, ns, p.nets);
    planned.push_back(std::move(p));
  }
  const auto workload_path = [&](bool mutated) {
    std::vector<policy::Path> paths;
    for (const auto& p : planned)
      paths.push_back(mutated && p.plan.applies ? policy::ModePath(ns.mode) : p.path);
    return rules::WorkloadPath(paths);
  };
  if (rules::OptedOut(w, ns)) {
    m.skipped = true;
    m.result = std::move(object);
    m.path = workload_path(false);
    return m;
  }
  PatchBuilder patch(std::move(object));
  bool mutated = false;
  if (ns.mode != Mode::kOff) {
    for (auto& p : planned) p.plan = rules::PlanTemplate(*p.t, policy, ns, w.ns, p.nets, p.path);
    // No self-denial: a conflict left for validation leaves the whole workload as written, so
    // that /validate denies it for what the user wrote, never for a field the webhook wrote.
    // So does an annotation the plan must edit but Multus cannot read (it is left as written):
    // attaching nothing while setting NCCL_SOCKET_IFNAME and claiming VFs for the policy's
    // interface would add ifname-not-attached to the user's invalid-network-annotation.
    const bool conflict = std::any_of(planned.begin(), planned.end(), [&](const auto& p) {
      const bool edits_annotation = !p.plan.attach.empty() || !p.plan.renames.empty();
      return p.plan.applies &&
             (rules::ReportsConflict(p.plan, ns) || (edits_annotation && !p.nets.errors.empty()));
    });
    // A GPU template that already chose another path (or a plugin) keeps it, and so does the
    // rest of its workload: moving its siblings onto the mode's path would split one job over
    // two paths (mixed-paths). allowedPaths decides whether the workload may keep its path.
    const bool other_path = std::any_of(planned.begin(), planned.end(), [](const auto& p) {
      return p.t->HasGpu() && !p.plan.applies;
    });
    mutated = !conflict && !other_path;
    if (mutated)
      for (const auto& p : planned) MutateTemplate(p, ns, w.ns, patch, m.overrides);
  }
  m.path = workload_path(mutated);
  m.patch = std::move(patch.operations());
  m.result = patch.TakeDocument();
  return m;
}

}  // namespace rw::mutate
