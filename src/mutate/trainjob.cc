// The webhook's edits to a TrainJob's effective pod templates, written where Trainer lets a
// webhook write them (docs/trainer.md#what-the-webhook-writes): the `node` container's env
// into spec.trainer.env and its resources into spec.trainer.resourcesPerNode (the only ways
// Trainer lets anyone set them); capabilities, /dev/shm, other containers' env and the pod's
// annotations into one runtimePatches entry of the webhook's own manager. What no Trainer
// field can carry (hostNetwork, dnsPolicy, claims) becomes a finding naming the runtime.
#include <algorithm>
#include <optional>
#include <set>

#include "patch_builder.h"
#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/mutate/mutation.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/trainjob.h"
#include "rdma_webhook/workload/trainjob.h"

namespace rw::mutate {
namespace {

using nlohmann::json;
using workload::EscapePointerToken;

const json& Member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

const json* ByKey(const json& list, const char* key, const json& value) {
  if (!list.is_array()) return nullptr;
  for (const auto& item : list)
    if (item.is_object() && item.contains(key) && item[key] == value) return &item;
  return nullptr;
}

// Items of `after` (a list merged by `key`) that `before` lacks or holds otherwise.
json NewItems(const json& before, const json& after, const char* key) {
  json out = json::array();
  if (!after.is_array()) return out;
  for (const auto& item : after) {
    if (!item.is_object() || !item.contains(key)) continue;
    const json* was = ByKey(before, key, item[key]);
    if (was == nullptr || *was != item) out.push_back(item);
  }
  return out;
}

class Translation {
 public:
  Translation(const workload::TrainJobTemplates& t, const json& trainjob,
              const policy::Policy& policy, TrainJobOperation operation)
      : t_(t),
        original_(trainjob),
        policy_(policy),
        update_(operation == TrainJobOperation::kUpdate),
        doc_(codec::ToDom(trainjob)),
        patch_(doc_) {}

  void Template(const std::string& pod_pointer, const json& before, const json& after) {
    // The replicated job the template belongs to: /spec/replicatedJobs/<i>/template/spec/template.
    const auto tokens = workload::PointerTokens(pod_pointer);
    const json& job = t_.jobset->at("spec").at("replicatedJobs").at(std::stoul(tokens[2]));
    json pod_patch = json::object();
    const json &ab = Member(Member(before, "metadata"), "annotations"),
               &aa = Member(Member(after, "metadata"), "annotations");
    if (aa.is_object())
      for (auto it = aa.begin(); it != aa.end(); ++it)
        if (Member(ab, it.key().c_str()) != *it)
          pod_patch["metadata"]["annotations"][it.key()] = *it;
    const json &sb = Member(before, "spec"), &sa = Member(after, "spec");
    // The mode puts the pod on the host network, which only the runtime can do: the interface
    // it names for NCCL is the host's, absent from the pod's own network namespace, so writing
    // it would break NCCL's bootstrap (and the validating webhook refuses it).
    off_host_ = Member(sa, "hostNetwork") == true && Member(sb, "hostNetwork") != true;
    if (sa.is_object())
      for (auto it = sa.begin(); it != sa.end(); ++it) {
        const json& was = Member(sb, it.key().c_str());
        if (was == *it) continue;
        if (it.key() == "volumes") {
          const json items = NewItems(was, *it, "name");
          if (!items.empty()) pod_patch["spec"]["volumes"] = items;
        } else if (it.key() == "containers") {
          Containers(pod_pointer, was, *it, pod_patch);
        } else {
          RuntimeOnly(pod_pointer + "/spec/" + EscapePointerToken(it.key()), it.key());
        }
      }
    if (pod_patch.empty()) return;
    json entry = {{"name", job.at("name")}};
    entry["template"]["spec"]["template"] = std::move(pod_patch);
    jobs_.push_back(std::move(entry));
  }

  // The webhook's one runtimePatches entry, last in the list: its edits were planned on the
  // templates every other entry made, and Trainer applies the entries in list order, so an
  // entry after it could undo them (a later capabilities.add replaces the list). Replaced in
  // place when it is already last, else moved there; other managers' entries are never
  // touched. The `time` Trainer's own webhook stamps (v2.3) stays while the entry is the same.
  // An entry that would hold nothing new is left as it is: what it holds is why the templates
  // needed no edit. On UPDATE an existing entry is left as it is (its containers and volumes
  // are immutable).
  void Finish() {
    if (jobs_.empty()) return;
    json entry = {{"manager", kRuntimePatchManager}};
    entry["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"] = jobs_;
    const json& list = Member(Member(original_, "spec"), "runtimePatches");
    if (list.is_array())
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (Member(list[i], "manager") != kRuntimePatchManager) continue;
        if (update_) return;
        if (const json& time = Member(list[i], "time"); !time.is_null()) {
          json was = list[i];
          was.erase("time");
          if (was == entry) entry["time"] = time;
        }
        const std::string at = "/spec/runtimePatches/" + std::to_string(i);
        if (i + 1 == list.size()) {
          patch_.Set(at, std::move(entry));
          return;
        }
        patch_.Remove(at);
        break;
      }
    patch_.Append("/spec/runtimePatches", std::move(entry));
  }

  PatchBuilder& builder() { return patch_; }
  nlohmann::json Document() const { return codec::FromDom(doc_); }
  std::vector<rules::Finding>& findings() { return findings_; }

 private:
  void Containers(const std::string& pod_pointer, const json& before, const json& after,
                  json& pod_patch) {
    if (!after.is_array()) return;
    for (std::size_t k = 0; k < after.size(); ++k) {
      const json& ca = after[k];
      const json* cb = ByKey(before, "name", Member(ca, "name"));
      if (cb == nullptr || *cb == ca) continue;
      const std::string cp = pod_pointer + "/spec/containers/" + std::to_string(k);
      const auto& fed = t_.facts.trainer_containers;
      const bool node = std::find(fed.begin(), fed.end(), cp) != fed.end();
      json c = {{"name", ca["name"]}};
      for (auto it = ca.begin(); it != ca.end(); ++it) {
        const json& was = Member(*cb, it.key().c_str());
        if (was == *it) continue;
        const std::string& key = it.key();
        if (key == "env") {
          json items = NewItems(was, *it, "name");
          if (off_host_)
            items.erase(std::remove_if(items.begin(), items.end(),
                                       [](const json& e) {
                                         return Member(e, "name") == "NCCL_SOCKET_IFNAME";
                                       }),
                        items.end());
          if (node)
            TrainerEnv(items);
          else if (!items.empty())
            c["env"] = items;
        } else if (key == "volumeMounts") {
          const json items = NewItems(was, *it, "mountPath");
          if (!items.empty()) c["volumeMounts"] = items;
        } else if (key == "securityContext") {
          c["securityContext"] = *it;  // capabilities.add is replaced whole: carry all of it
        } else if (key == "resources" && node) {
          ResourcesPerNode(cp, *cb, ca);
        } else {
          RuntimeOnly(cp + "/" + EscapePointerToken(key),
                      "containers[" + ca.value("name", "") + "]." + key);
        }
      }
      if (c.size() > 1) pod_patch["spec"]["containers"].push_back(std::move(c));
    }
  }

  // spec.trainer.env is a map keyed by name: a name already there is replaced in place.
  void TrainerEnv(const json& items) {
    if (update_) return;
    const json& env = Member(Member(Member(original_, "spec"), "trainer"), "env");
    for (const auto& e : items) {
      std::optional<std::size_t> at;
      if (env.is_array())
        for (std::size_t j = 0; j < env.size(); ++j)
          if (Member(env[j], "name") == e["name"]) at = j;
      if (at)
        patch_.Set("/spec/trainer/env/" + std::to_string(*at), e);
      else
        patch_.Append("/spec/trainer/env", e);
    }
  }

  // resourcesPerNode takes what the webhook adds to the `node` container. Trainer v2.0 to v2.2
  // replace the container's resources with it, so a new resourcesPerNode starts as a copy of
  // the runtime's. Every release drops the container's resources.claims once resourcesPerNode
  // is set (v2.3.0 keeps only limits and requests), so over a runtime container that claims
  // DRA devices (its GPUs, say) none is created: the runtime must carry the resource.
  void ResourcesPerNode(const std::string& cp, const json& before, const json& after) {
    if (update_) return;
    const std::string at = "/spec/trainer/resourcesPerNode";
    const json& claims = Member(Member(before, "resources"), "claims");
    // A resourcesPerNode of claims only is no replacement yet on v2.0 to v2.2; the limits the
    // webhook would add make it one, so it counts as absent here.
    const bool replaces = t_.facts.resources_per_node_replaces;
    if (!replaces && claims.is_array() && !claims.empty()) {
      std::set<std::string> added;
      for (const char* part : {"limits", "requests"}) {
        const json& pa = Member(Member(after, "resources"), part);
        const json& pb = Member(Member(before, "resources"), part);
        if (pa.is_object())
          for (auto it = pa.begin(); it != pa.end(); ++it)
            if (Member(pb, it.key().c_str()) != *it) added.insert(it.key());
      }
      std::string names;
      for (const auto& r : added) names += (names.empty() ? "" : ", ") + r;
      RuntimeOnly(cp + "/resources",
                  names + " in containers[" + after.value("name", "") + "].resources",
                  "which only spec.trainer.resourcesPerNode could carry, and Trainer drops the "
                  "container's resources.claims (its DRA devices) once that is set");
      return;
    }
    if (!replaces) {
      json start = json::object();
      for (const char* part : {"limits", "requests"})
        if (const json& p = Member(Member(before, "resources"), part); p.is_object())
          start[part] = p;
      // The user's own resourcesPerNode (its claims) stays; the copy goes in beside them.
      if (!t_.facts.resources_per_node) {
        if (!start.empty()) patch_.Set(at, start);
      } else {
        for (auto it = start.begin(); it != start.end(); ++it) patch_.Set(at + "/" + it.key(), *it);
      }
    }
    for (const char* part : {"limits", "requests"}) {
      const json& pa = Member(Member(after, "resources"), part);
      const json& pb = Member(Member(before, "resources"), part);
      if (!pa.is_object()) continue;
      for (auto it = pa.begin(); it != pa.end(); ++it)
        if (Member(pb, it.key().c_str()) != *it)
          patch_.Set(at + "/" + part + "/" + EscapePointerToken(it.key()), *it);
    }
  }

 public:
  // The runtime's RDMA resources that the user's resourcesPerNode would erase on v2.0 to v2.2,
  // written into it: the pods keep their device on every release.
  void CarryErasedRdmaResources() {
    if (!t_.facts.resources_per_node_replaces || update_) return;
    for (const auto& r : t_.facts.replaced)
      if (policy_.IsRdmaDeviceResource(r.resource) && r.count > 0)
        patch_.Set("/spec/trainer/resourcesPerNode/limits/" + EscapePointerToken(r.resource),
                   std::to_string(r.count));  // a quantity, as the mutator writes them
  }

 private:
  void RuntimeOnly(const std::string& effective_pointer, const std::string& field,
                   const std::string& why =
                       "which no TrainJob field can carry (Trainer takes it "
                       "only from the runtime)") {
    if (!runtime_only_.insert(field).second) return;
    const workload::Origin o = t_.OriginOf(effective_pointer);
    const std::string runtime = t_.facts.runtime.Describe();
    findings_.push_back(
        {"trainer-runtime-no-rdma-path", rules::Severity::kWarning,
         "the namespace's mode sets " + field + " in the trainer's pods, " + why + ": " + runtime +
             " must set it" +
             (o.document == workload::Origin::kRuntime ? " (" + o.pointer + ")" : ""),
         "set " + field + " in " + runtime, "/spec/runtimeRef"});
  }

  const workload::TrainJobTemplates& t_;
  const json& original_;
  const policy::Policy& policy_;
  bool update_;             // spec.trainer and an existing entry's containers are immutable
  bool off_host_ = false;   // the template being translated needs hostNetwork it cannot get
  boost::json::value doc_;  // the TrainJob, patched as the operations are recorded
  PatchBuilder patch_;
  json jobs_ = json::array();
  std::set<std::string> runtime_only_;
  std::vector<rules::Finding> findings_;
};

}  // namespace

Mutation MutateTrainJob(const json& trainjob, const json& runtime, const workload::RuntimeRef& ref,
                        const policy::Policy& policy, std::string_view default_ns,
                        const catalogue::Catalogue& catalogue, TrainJobOperation operation) {
  // The effective templates without the webhook's own entry: the edits planned on them are all
  // the entry must hold, so a reinvocation writes the same entry again (no operation).
  const auto t = workload::EffectiveTemplates(
      trainjob, runtime, ref, workload::ResourcesPerNode::kMerge, kRuntimePatchManager);
  const auto w = workload::ReadTrainJob(t, policy, default_ns);
  rules::Assessment a = rules::Assess(w, policy, catalogue);
  std::vector<policy::Path> written;
  for (const auto& ta : a.templates) written.push_back(ta.path);
  const bool mutates = a.mutates;
  Mutation effective = Mutate(std::move(a), *t.jobset);
  Mutation m;
  m.skipped = effective.skipped;
  Translation tr(t, trainjob, policy, operation);
  if (mutates) tr.CarryErasedRdmaResources();
  if (!effective.patch.empty()) {
    for (const auto& tp : w.templates) {
      const json::json_pointer p(tp.pointer);
      if (t.jobset->at(p) != effective.result.at(p))
        tr.Template(tp.pointer, t.jobset->at(p), effective.result.at(p));
    }
    tr.Finish();
  }
  m.patch = std::move(tr.builder().operations());
  m.result = tr.Document();
  for (auto& f : effective.overrides) {
    if (f.pointer.rfind("/spec/replicatedJobs", 0) == 0) {
      const auto o = t.OriginOf(f.pointer);
      f.pointer = o.document == workload::Origin::kTrainJob ? o.pointer : "/spec/runtimeRef";
    }
    m.overrides.push_back(std::move(f));
  }
  // Edits Trainer cannot take leave the pods on the path they had.
  m.path = tr.findings().empty() ? effective.path : rules::WorkloadPath(written);
  for (auto& f : tr.findings()) m.overrides.push_back(std::move(f));
  return m;
}

Mutation MutateTrainJob(const json& trainjob, const policy::Policy& policy,
                        std::string_view default_ns, const catalogue::Catalogue& catalogue,
                        TrainJobOperation operation) {
  const auto ref = workload::ReadRuntimeRef(trainjob, default_ns);
  const auto runtime = rules::FindRuntime(ref, catalogue);
  if (runtime.object == nullptr) {
    Mutation m;
    m.result = trainjob;
    m.path = policy::Path::kUnknown;
    return m;
  }
  return MutateTrainJob(trainjob, *runtime.object, ref, policy, default_ns, catalogue, operation);
}

}  // namespace rw::mutate
