// How Trainer turns a TrainJob and its runtime into a JobSet, for the versions checked against
// Trainer's source (kubeflow/trainer v2.0.0 to v2.3.0; docs/trainer.md):
// - pkg/runtime/core/trainingruntime.go: the overrides of each version as strategic merge
//   patches on the runtime's JobSet spec, then resourcesPerNode on the trainer's `node`
//   container (replaced in v2.0 to v2.2, merged per resource name from v2.3.0);
// - pkg/runtime/framework/plugins/jobset/builder.go: image, command and args replace the
//   `node` container's, env is upserted by name;
// - the ML policy plugins (torch, mpi, plainml, ...): numNodes becomes the trainer job's
//   parallelism and completions; MPI gives it to the job named `node` instead, one less when
//   mlPolicy.mpi.runLauncherAsNode makes the launcher a node (plugins/mpi/mpi.go).
#include <algorithm>
#include <set>

#include "rdma_webhook/codec/yaml.h"
#include "rdma_webhook/workload/trainjob.h"
#include "strategic_merge.h"

namespace rw::workload {
namespace {

using nlohmann::json;
using trainjob::Shape;

std::string Ptr(std::string_view base, std::string_view token) {
  return std::string(base) + "/" + EscapePointerToken(token);
}
std::string Ptr(std::string_view base, std::size_t index) {
  return std::string(base) + "/" + std::to_string(index);
}

// Typed access that names the field of a wrong type; `where` prefixes the runtime's errors.
class Fields {
 public:
  explicit Fields(std::string prefix = "") : prefix_(std::move(prefix)) {}

  const json* Get(const json& parent, std::string_view key) const {
    if (!parent.is_object()) return nullptr;
    auto it = parent.find(key);
    return it == parent.end() || it->is_null() ? nullptr : &*it;
  }
  const json* Object(const json& parent, std::string_view key, const std::string& at) const {
    return Typed(parent, key, at, &json::is_object, "an object");
  }
  const json* Array(const json& parent, std::string_view key, const std::string& at) const {
    return Typed(parent, key, at, &json::is_array, "a list");
  }
  std::optional<std::string> String(const json& parent, std::string_view key,
                                    const std::string& at) const {
    const json* v = Typed(parent, key, at, &json::is_string, "a string");
    return v ? std::optional<std::string>(v->get<std::string>()) : std::nullopt;
  }
  std::optional<long long> Integer(const json& parent, std::string_view key,
                                   const std::string& at) const {
    const json* v = Typed(parent, key, at, &json::is_number_integer, "an integer");
    return v ? std::optional<long long>(v->get<long long>()) : std::nullopt;
  }
  void Fail(const std::string& at, const std::string& message) const {
    if (prefix_.empty()) throw ManifestError(at, message);
    throw ManifestError("/spec/runtimeRef", prefix_ + at + ": " + message);
  }

 private:
  using Test = bool (json::*)() const noexcept;
  const json* Typed(const json& parent, std::string_view key, const std::string& at, Test test,
                    const char* what) const {
    const json* v = Get(parent, key);
    if (v && !((*v).*test)())
      Fail(Ptr(at, key), std::string("must be ") + what + ", got " + codec::TypeName(*v));
    return v;
  }
  std::string prefix_;
};

// The fields each override type lets through. Trainer decodes the TrainJob into its typed
// structs, so any other field written there never reaches the JobSet.
const std::set<std::string, std::less<>> kPodSpecOverride = {  // v2.0 PodSpecOverride
    "serviceAccountName", "nodeSelector", "tolerations",    "volumes",
    "initContainers",     "containers",   "schedulingGates"};
const std::set<std::string, std::less<>> kPodTemplateSpecOverride = {  // v2.1
    "serviceAccountName", "nodeSelector", "affinity",        "tolerations",     "volumes",
    "initContainers",     "containers",   "schedulingGates", "imagePullSecrets"};
const std::set<std::string, std::less<>> kPodSpecPatch = {  // v2.2 on (runtimePatches)
    "serviceAccountName",
    "volumes",
    "initContainers",
    "containers",
    "imagePullSecrets",
    "securityContext",
    "nodeSelector",
    "affinity",
    "tolerations",
    "schedulingGates",
    "terminationGracePeriodSeconds"};
const std::set<std::string, std::less<>> kContainerOverride = {"name", "env", "volumeMounts"};
const std::set<std::string, std::less<>> kContainerPatch = {"name", "env", "volumeMounts",
                                                            "securityContext"};

json Allowed(const json& patch, const std::set<std::string, std::less<>>& fields) {
  json out = json::object();
  if (!patch.is_object()) return out;
  for (auto it = patch.begin(); it != patch.end(); ++it)
    if (fields.count(it.key()) && !it->is_null()) out[it.key()] = *it;
  return out;
}

json AllowedMetadata(const json* meta) {
  json out = json::object();
  if (meta == nullptr || !meta->is_object()) return out;
  for (const char* key : {"labels", "annotations"})
    if (auto it = meta->find(key); it != meta->end() && it->is_object()) out[key] = *it;
  return out;
}

class Builder {
 public:
  Builder(const json& trainjob, const json& runtime, const RuntimeRef& ref, ResourcesPerNode rule,
          std::string_view skip_manager)
      : job_(trainjob),
        runtime_(runtime),
        rule_(rule),
        skip_manager_(skip_manager),
        in_runtime_(ref.Describe() + " ") {
    out_.facts.runtime = ref;
  }

  TrainJobTemplates Build() {
    json spec = RuntimeSpec();
    out_.jobset = std::make_unique<json>(json::object());
    json& js = *out_.jobset;
    out_.api_version = job_.value("apiVersion", "");
    out_.kind = job_.value("kind", "");
    js["apiVersion"] = "jobset.x-k8s.io/v1alpha2";
    js["kind"] = "JobSet";
    js["metadata"] = Metadata();
    js["spec"] = std::move(spec);
    Record("/spec", {Origin::kRuntime, "/spec/template/spec"});
    const json* jspec = tj_.Object(job_, "spec", "");
    if (jspec) {
      Overrides(*jspec, "podSpecOverrides", false);
      Overrides(*jspec, "podTemplateOverrides", true);
      RuntimePatches(*jspec);
    }
    Trainer(jspec);
    return std::move(out_);
  }

 private:
  json& Jobs() { return (*out_.jobset)["spec"]["replicatedJobs"]; }
  static std::string JobPointer(std::size_t i) {
    return "/spec/replicatedJobs/" + std::to_string(i);
  }
  static std::string PodTemplatePointer(std::size_t i) {
    return JobPointer(i) + "/template/spec/template";
  }

  void Record(std::string prefix, Origin origin, bool same_shape = true) {
    out_.origins.push_back({std::move(prefix), std::move(origin), same_shape});
  }

  json Metadata() {
    json md = json::object();
    if (const json* m = tj_.Object(job_, "metadata", ""))
      for (const char* key : {"name", "generateName", "namespace", "labels", "annotations"})
        if (auto it = m->find(key); it != m->end()) md[key] = *it;
    return md;
  }

  // The runtime's JobSet spec, checked where the merge and the readers rely on its shape.
  json RuntimeSpec() {
    const json* spec = rt_.Object(runtime_, "spec", "");
    const json* tmpl = spec ? rt_.Object(*spec, "template", "/spec") : nullptr;
    const json* js = tmpl ? rt_.Object(*tmpl, "spec", "/spec/template") : nullptr;
    if (js == nullptr) rt_.Fail("/spec/template/spec", "is missing: the runtime has no JobSet");
    const json* jobs = rt_.Array(*js, "replicatedJobs", "/spec/template/spec");
    if (jobs == nullptr) rt_.Fail("/spec/template/spec/replicatedJobs", "is missing");
    for (std::size_t i = 0; i < jobs->size(); ++i) {
      const std::string at = Ptr("/spec/template/spec/replicatedJobs", i);
      if (!(*jobs)[i].is_object()) rt_.Fail(at, "must be an object");
      if (!rt_.String((*jobs)[i], "name", at)) rt_.Fail(at + "/name", "is missing");
      const json* jt = rt_.Object((*jobs)[i], "template", at);
      const json* js2 = jt ? rt_.Object(*jt, "spec", at + "/template") : nullptr;
      if (jt) rt_.Object(*jt, "metadata", at + "/template");
      if (js2) rt_.Object(*js2, "template", at + "/template/spec");
    }
    if (const json* ml = rt_.Object(*spec, "mlPolicy", "/spec")) {
      ml_policy_ = true;
      runtime_num_nodes_ = rt_.Integer(*ml, "numNodes", "/spec/mlPolicy");
      for (const char* framework : {"torch", "mpi"})
        if (const json* f = rt_.Object(*ml, framework, "/spec/mlPolicy"))
          if (const json* n = rt_.Get(*f, "numProcPerNode")) runtime_nproc_ = ProcCount(*n);
      if (const json* mpi = rt_.Object(*ml, "mpi", "/spec/mlPolicy")) {
        mpi_ = true;
        if (const json* v = rt_.Get(*mpi, "runLauncherAsNode")) {
          if (!v->is_boolean())
            rt_.Fail("/spec/mlPolicy/mpi/runLauncherAsNode",
                     "must be a boolean, got " + codec::TypeName(*v));
          launcher_as_node_ = v->get<bool>();
        }
      }
    }
    return *js;
  }

  // numProcPerNode as a count, when it is one: an integer or a string of digits (torch's
  // IntOrString); "auto", "gpu" and "cpu" let torchrun decide.
  static std::optional<long long> ProcCount(const json& v) {
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      if (!s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), ::isdigit))
        return std::stoll(s);
    }
    return std::nullopt;
  }

  std::optional<std::size_t> JobIndex(std::string_view name) {
    json& jobs = Jobs();
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].value("name", "") == name) return i;
    return std::nullopt;
  }

  static std::optional<std::size_t> ContainerIndex(const json& pod_spec, std::string_view list,
                                                   std::string_view name) {
    auto it = pod_spec.find(list);
    if (it == pod_spec.end() || !it->is_array()) return std::nullopt;
    for (std::size_t i = 0; i < it->size(); ++i)
      if ((*it)[i].is_object() && (*it)[i].value("name", "") == name) return i;
    return std::nullopt;
  }

  // Merges one pod patch (metadata and spec, already limited to what the type allows) into
  // the pod template of job `i`, recording the origin of what it wrote.
  void ApplyPodPatch(std::size_t i, const json& meta, const std::string& meta_at, const json& spec,
                     const std::string& spec_at) {
    json& pod = Jobs()[i]["template"]["spec"]["template"];
    if (!pod.is_object()) pod = json::object();
    const std::string pt = PodTemplatePointer(i);
    if (!meta.empty()) {
      if (!pod.contains("metadata") || !pod["metadata"].is_object())
        pod["metadata"] = json::object();
      trainjob::StrategicMerge(pod["metadata"], meta, Shape::kOther);
      for (auto it = meta.begin(); it != meta.end(); ++it)
        for (auto kv = it->begin(); kv != it->end(); ++kv)
          Record(Ptr(Ptr(pt + "/metadata", it.key()), kv.key()),
                 {Origin::kTrainJob, Ptr(Ptr(meta_at, it.key()), kv.key())});
    }
    if (spec.empty()) return;
    if (!pod.contains("spec") || !pod["spec"].is_object()) pod["spec"] = json::object();
    trainjob::StrategicMerge(pod["spec"], spec, Shape::kPodSpec);
    const json& merged = pod["spec"];
    for (auto it = spec.begin(); it != spec.end(); ++it) {
      const std::string key = it.key();
      if ((key == "containers" || key == "initContainers") && it->is_array()) {
        for (std::size_t j = 0; j < it->size(); ++j) {
          const json& c = (*it)[j];
          if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) continue;
          const auto k = ContainerIndex(merged, key, c["name"].get<std::string>());
          if (!k) continue;
          const std::string eff = Ptr(Ptr(pt + "/spec", key), *k);
          const std::string src = Ptr(Ptr(spec_at, key), j);
          for (auto f = c.begin(); f != c.end(); ++f)
            if (f.key() != "name")
              Record(Ptr(eff, f.key()), {Origin::kTrainJob, Ptr(src, f.key())},
                     f->is_object());  // env and volumeMounts merge: their indices differ
        }
      } else if (key == "volumes" && it->is_array()) {
        for (std::size_t j = 0; j < it->size(); ++j) {
          const json& v = (*it)[j];
          if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) continue;
          const auto k = ContainerIndex(merged, "volumes", v["name"].get<std::string>());
          if (k)
            Record(Ptr(pt + "/spec/volumes", *k),
                   {Origin::kTrainJob, Ptr(spec_at + "/volumes", j)});
        }
      } else {
        Record(Ptr(pt + "/spec", key), {Origin::kTrainJob, Ptr(spec_at, key)}, !it->is_array());
      }
    }
  }

  // podSpecOverrides (v2.0) and podTemplateOverrides (v2.1): a list of {targetJobs, ...}.
  void Overrides(const json& jspec, const char* field, bool with_template) {
    const json* list = tj_.Array(jspec, field, "/spec");
    if (list == nullptr) return;
    const std::string at = Ptr("/spec", field);
    for (std::size_t o = 0; o < list->size(); ++o) {
      const json& ov = (*list)[o];
      const std::string ov_at = Ptr(at, o);
      if (!ov.is_object()) tj_.Fail(ov_at, "must be an object, got " + codec::TypeName(ov));
      const json* targets = tj_.Array(ov, "targetJobs", ov_at);
      json meta = json::object(), spec = json::object();
      std::string spec_at = ov_at, meta_at = ov_at + "/metadata";
      if (with_template) {
        meta = AllowedMetadata(tj_.Object(ov, "metadata", ov_at));
        if (const json* s = tj_.Object(ov, "spec", ov_at))
          spec = Allowed(*s, kPodTemplateSpecOverride);
        spec_at = ov_at + "/spec";
      } else {
        spec = Allowed(ov, kPodSpecOverride);
      }
      LimitContainers(spec, kContainerOverride);
      if (targets == nullptr) continue;
      for (const auto& t : *targets)
        if (t.is_object() && t.contains("name") && t["name"].is_string())
          if (const auto i = JobIndex(t["name"].get<std::string>()))
            ApplyPodPatch(*i, meta, meta_at, spec, spec_at);
    }
  }

  static void LimitContainers(json& spec, const std::set<std::string, std::less<>>& fields) {
    for (const char* list : {"containers", "initContainers"})
      if (auto it = spec.find(list); it != spec.end() && it->is_array())
        for (auto& c : *it) c = Allowed(c, fields);
  }

  // runtimePatches (v2.2 on): one entry per manager, applied in list order.
  void RuntimePatches(const json& jspec) {
    const json* list = tj_.Array(jspec, "runtimePatches", "/spec");
    if (list == nullptr) return;
    for (std::size_t p = 0; p < list->size(); ++p) {
      const std::string p_at = Ptr("/spec/runtimePatches", p);
      const json& patch = (*list)[p];
      if (!patch.is_object()) tj_.Fail(p_at, "must be an object, got " + codec::TypeName(patch));
      if (!skip_manager_.empty() && tj_.String(patch, "manager", p_at) == skip_manager_) continue;
      const json* trs = tj_.Object(patch, "trainingRuntimeSpec", p_at);
      const json* tmpl =
          trs ? tj_.Object(*trs, "template", p_at + "/trainingRuntimeSpec") : nullptr;
      const std::string t_at = p_at + "/trainingRuntimeSpec/template";
      const json* spec = tmpl ? tj_.Object(*tmpl, "spec", t_at) : nullptr;
      const json* jobs = spec ? tj_.Array(*spec, "replicatedJobs", t_at + "/spec") : nullptr;
      if (jobs == nullptr) continue;
      for (std::size_t r = 0; r < jobs->size(); ++r) {
        const std::string r_at = Ptr(t_at + "/spec/replicatedJobs", r);
        const json& rj = (*jobs)[r];
        if (!rj.is_object()) tj_.Fail(r_at, "must be an object, got " + codec::TypeName(rj));
        const auto name = tj_.String(rj, "name", r_at);
        const auto i = name ? JobIndex(*name) : std::nullopt;
        if (!i) continue;  // Trainer refuses a patch naming a job the runtime does not have
        const json* jt = tj_.Object(rj, "template", r_at);
        if (jt == nullptr) continue;
        if (const json* jm = tj_.Object(*jt, "metadata", r_at + "/template")) {
          json& job_meta = Jobs()[*i]["template"]["metadata"];
          if (!job_meta.is_object()) job_meta = json::object();
          trainjob::StrategicMerge(job_meta, AllowedMetadata(jm), Shape::kOther);
        }
        const json* js = tj_.Object(*jt, "spec", r_at + "/template");
        const json* pt = js ? tj_.Object(*js, "template", r_at + "/template/spec") : nullptr;
        if (pt == nullptr) continue;
        const std::string pt_at = r_at + "/template/spec/template";
        json pod_spec = json::object();
        if (const json* ps = tj_.Object(*pt, "spec", pt_at)) pod_spec = Allowed(*ps, kPodSpecPatch);
        LimitContainers(pod_spec, kContainerPatch);
        ApplyPodPatch(*i, AllowedMetadata(tj_.Object(*pt, "metadata", pt_at)), pt_at + "/metadata",
                      pod_spec, pt_at + "/spec");
      }
    }
  }

  static bool HasAny(const json& resources) {
    for (const char* k : {"limits", "requests"})
      if (auto it = resources.find(k); it != resources.end() && it->is_object()) return true;
    return false;
  }

  // spec.trainer onto the `node` container of every job labelled for the trainer (and of an
  // MPI runtime's `node` job when its launcher runs as a node), numNodes onto the job counts.
  void Trainer(const json* jspec) {
    const json* trainer = jspec ? tj_.Object(*jspec, "trainer", "/spec") : nullptr;
    const std::string tr = "/spec/trainer";
    const json* rpn = trainer ? tj_.Object(*trainer, "resourcesPerNode", tr) : nullptr;
    const json* env = trainer ? tj_.Array(*trainer, "env", tr) : nullptr;
    const auto num_nodes = trainer ? tj_.Integer(*trainer, "numNodes", tr) : std::nullopt;
    if (trainer) {
      if (const json* n = tj_.Get(*trainer, "numProcPerNode")) {
        out_.facts.num_proc_per_node = ProcCount(*n);
        out_.facts.num_proc_per_node_pointer = tr + "/numProcPerNode";
      }
      for (const char* f : {"image"}) tj_.String(*trainer, f, tr);
      for (const char* f : {"command", "args"}) tj_.Array(*trainer, f, tr);
    }
    if (!out_.facts.num_proc_per_node && runtime_nproc_)
      out_.facts.num_proc_per_node = runtime_nproc_;
    out_.facts.resources_per_node = rpn != nullptr;
    out_.facts.resources_per_node_replaces = rpn && HasAny(*rpn);
    out_.facts.num_nodes = num_nodes.value_or(runtime_num_nodes_.value_or(1));
    if (num_nodes) out_.facts.num_nodes_pointer = tr + "/numNodes";
    if (env)
      for (std::size_t j = 0; j < env->size(); ++j)
        if (!(*env)[j].is_object() || !(*env)[j].contains("name") || !(*env)[j]["name"].is_string())
          tj_.Fail(Ptr(tr + "/env", j), "must be an object with a string name");

    json& jobs = Jobs();
    long long nodes = 0;
    bool counted = false;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const bool trainer_job = IsTrainerJob(jobs[i]);
      const std::string name = jobs[i].value("name", "");
      // spec.trainer feeds the trainer job; from v2.1 also the `node` job of an MPI runtime
      // that runs its launcher as a node (env and resourcesPerNode, not image or command).
      const bool fed = trainer_job || (launcher_as_node_ && name == kNodeJob);
      const auto count = PodCount(trainer_job, name, num_nodes);
      const bool node = IsNode(trainer_job, name);
      if (!fed && !count && !node) continue;
      json& job_spec = jobs[i]["template"]["spec"];
      if (trainer_job) jobs[i]["replicas"] = 1;
      if (count) {
        job_spec["parallelism"] = *count;
        job_spec["completions"] = *count;
        if (num_nodes && (!mpi_ || name == kNodeJob))
          for (const char* f : {"parallelism", "completions"})
            Record(JobPointer(i) + "/template/spec/" + f, {Origin::kTrainJob, tr + "/numNodes"});
      }
      if (node) {
        nodes += count.value_or(ParallelismOf(job_spec));
        counted = true;
      }
      if (!fed) continue;
      const std::string pt = PodTemplatePointer(i);
      json& pod_spec = job_spec["template"]["spec"];
      if (out_.facts.node_template.empty()) out_.facts.node_template = pt;
      if (!pod_spec.is_object()) continue;
      const auto found = ContainerIndex(pod_spec, "containers", kNodeContainer);
      if (!found.has_value()) continue;
      const std::size_t k = found.value();
      const std::string cp = Ptr(pt + "/spec/containers", k);
      if (out_.facts.node_container.empty()) out_.facts.node_container = cp;
      out_.facts.trainer_containers.push_back(cp);
      json& c = pod_spec["containers"][k];
      if (rpn) Resources(c, *rpn, cp);
      if (trainer && trainer_job) {
        for (const char* f : {"image", "command", "args"})
          if (const json* v = tj_.Get(*trainer, f)) {
            c[f] = *v;
            Record(cp + "/" + f, {Origin::kTrainJob, tr + "/" + f});
          }
      }
      // The node container's env is set only through spec.trainer.env (Trainer refuses env for
      // it in the overrides), so a finding about its env points there; what the runtime wrote
      // keeps its own origin.
      if (c.contains("env") && c["env"].is_array())
        for (std::size_t e = 0; e < c["env"].size(); ++e) {
          const std::string ep = Ptr(cp + "/env", e);
          Record(ep, out_.OriginOf(ep));
        }
      Record(cp + "/env", {Origin::kTrainJob, tr + "/env"}, false);
      if (env) UpsertEnv(c, *env, cp, tr + "/env");
    }
    if (counted) out_.facts.num_nodes = nodes;
  }

  // The pods Trainer gives replicated job `name` (its parallelism and completions), when it
  // sets them. Every ML policy but MPI gives the trainer job numNodes (the TrainJob's, else
  // the runtime's mlPolicy.numNodes, else 1). MPI (plugins/mpi EnforceMLPolicy) gives the job
  // named `node` the TrainJob's numNodes, one less when the launcher runs as a node (at least
  // 1), and leaves the trainer job (the launcher in Trainer's MPI runtimes) at the runtime's
  // numNodes.
  std::optional<long long> PodCount(bool trainer_job, const std::string& name,
                                    std::optional<long long> num_nodes) const {
    if (!mpi_) {
      if (!trainer_job) return std::nullopt;
      return num_nodes.value_or(runtime_num_nodes_.value_or(1));
    }
    if (name == kNodeJob && num_nodes)
      return launcher_as_node_ ? std::max(*num_nodes - 1, 1LL) : *num_nodes;
    if (trainer_job) return runtime_num_nodes_.value_or(1);
    return std::nullopt;
  }

  // Whether the job's pods are training nodes: the trainer job's, or for MPI the `node` job's
  // and, when the launcher runs as a node, the launcher's (the hostfile Trainer writes lists
  // exactly these).
  bool IsNode(bool trainer_job, const std::string& name) const {
    if (!mpi_) return trainer_job;
    return name == kNodeJob || (launcher_as_node_ && name == kLauncherJob);
  }

  static long long ParallelismOf(const json& job_spec) {
    auto it = job_spec.find("parallelism");
    return it != job_spec.end() && it->is_number_integer() ? it->get<long long>() : 1;
  }

  // The replicated job Trainer feeds spec.trainer into: labelled trainjob-ancestor-step=trainer.
  static bool IsTrainerJob(const json& job) {
    const json* labels = &job;
    for (const char* key : {"template", "metadata", "labels"}) {
      if (!labels->is_object() || !labels->contains(key)) return false;
      labels = &(*labels)[key];
    }
    auto it = labels->find(kAncestorLabel);
    return labels->is_object() && it != labels->end() && it->is_string() &&
           it->get<std::string>() == kAncestorTrainer;
  }

  void UpsertEnv(json& c, const json& env, const std::string& cp, const std::string& at) {
    if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
    json& list = c["env"];
    for (std::size_t j = 0; j < env.size(); ++j) {
      const auto& name = env[j]["name"];
      std::size_t e = 0;
      while (e < list.size() && !(list[e].is_object() && list[e].value("name", json()) == name))
        ++e;
      if (e == list.size())
        list.push_back(env[j]);
      else
        list[e] = env[j];
      Record(Ptr(cp + "/env", e), {Origin::kTrainJob, Ptr(at, j)});
    }
  }

  // A claims-only resourcesPerNode changes nothing on v2.0 to v2.2 (kReplace); v2.3.0 (kMerge)
  // still rewrites the container's resources from limits and requests, so its claims go. But
  // v2.3.0 applies resourcesPerNode only under a runtime with an mlPolicy
  // (core/trainingruntime.go tests mlPolicy != nil); v2.0 to v2.2 do not ask.
  void Resources(json& c, const json& rpn, const std::string& cp) {
    const bool replaces = HasAny(rpn);
    const bool v23_applies = ml_policy_;
    if (!replaces && (rule_ == ResourcesPerNode::kReplace || !v23_applies)) return;
    const json base = c.value("resources", json::object());
    const std::string at = "/spec/trainer/resourcesPerNode";
    auto named = [&](const char* part, const std::string& r) {
      auto it = rpn.find(part);
      return it != rpn.end() && it->is_object() && it->contains(r);
    };
    std::set<std::string> seen;
    // The facts describe the first container fed (an MPI `node` job's resources come from the
    // same resourcesPerNode).
    const bool first = cp == out_.facts.node_container;
    for (const char* part : {"limits", "requests"}) {
      auto it = base.find(part);
      if (!first || !replaces || it == base.end() || !it->is_object()) continue;
      for (auto r = it->begin(); r != it->end(); ++r) {
        if (named("limits", r.key()) || named("requests", r.key()) || !seen.insert(r.key()).second)
          continue;
        long long count = 0;
        if (auto q = ParseQuantity(*r)) count = *q;
        const std::string ptr = Ptr(Ptr(cp + "/resources", part), r.key());
        const Origin o = out_.OriginOf(ptr);
        out_.facts.replaced.push_back({r.key(), count, o.pointer});
      }
    }
    if (auto cl = base.find("claims"); first && cl != base.end() && cl->is_array())
      for (const auto& claim : *cl)
        if (claim.is_object() && claim.contains("name") && claim["name"].is_string())
          out_.facts.dropped_claims.push_back(claim["name"].get<std::string>());
    // Past the facts (what v2.0 to v2.2 erase and drop), v2.3.0 leaves such a container alone.
    if (rule_ == ResourcesPerNode::kMerge && !v23_applies) return;
    json merged = json::object();
    if (rule_ == ResourcesPerNode::kMerge) {
      for (const char* part : {"limits", "requests"})
        if (auto it = base.find(part); it != base.end() && it->is_object()) merged[part] = *it;
    } else {
      Record(cp + "/resources", {Origin::kTrainJob, at});
    }
    for (const char* part : {"limits", "requests"})
      if (auto it = rpn.find(part); it != rpn.end() && it->is_object())
        for (auto r = it->begin(); r != it->end(); ++r) {
          merged[part][r.key()] = *r;
          Record(Ptr(Ptr(cp + "/resources", part), r.key()),
                 {Origin::kTrainJob, Ptr(Ptr(at, part), r.key())});
        }
    c["resources"] = std::move(merged);
  }

  static std::optional<long long> ParseQuantity(const json& v) {
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      if (!s.empty() && s.size() < 15 && std::all_of(s.begin(), s.end(), ::isdigit))
        return std::stoll(s);
    }
    return std::nullopt;
  }

  const json& job_;
  const json& runtime_;
  ResourcesPerNode rule_;
  std::string_view skip_manager_;
  Fields tj_;
  std::string in_runtime_;
  Fields rt_{in_runtime_};
  std::optional<long long> runtime_num_nodes_;
  std::optional<long long> runtime_nproc_;
  bool ml_policy_ = false;         // the runtime has an mlPolicy at all
  bool mpi_ = false;               // the runtime's ML policy is MPI
  bool launcher_as_node_ = false;  // mlPolicy.mpi.runLauncherAsNode
  TrainJobTemplates out_;
};

}  // namespace

bool IsTrainJob(const json& object) {
  if (!object.is_object()) return false;
  const auto av = object.find("apiVersion"), k = object.find("kind");
  return av != object.end() && k != object.end() && av->is_string() && k->is_string() &&
         *k == "TrainJob" && av->get<std::string>().rfind(std::string(kTrainerGroup) + "/", 0) == 0;
}

std::string RuntimeRef::Describe() const { return kind + " '" + name + "'"; }

RuntimeRef ReadRuntimeRef(const json& trainjob, std::string_view default_ns) {
  const Fields f;
  const json* spec = f.Object(trainjob, "spec", "");
  const json* ref = spec ? f.Object(*spec, "runtimeRef", "/spec") : nullptr;
  if (ref == nullptr) f.Fail("/spec/runtimeRef", "is missing: a TrainJob names its runtime");
  RuntimeRef out;
  out.name = f.String(*ref, "name", "/spec/runtimeRef").value_or("");
  if (out.name.empty()) f.Fail("/spec/runtimeRef/name", "is missing");
  out.group = f.String(*ref, "apiGroup", "/spec/runtimeRef").value_or(std::string(kTrainerGroup));
  out.kind = f.String(*ref, "kind", "/spec/runtimeRef").value_or("ClusterTrainingRuntime");
  if (out.kind == "TrainingRuntime") {
    out.ns = std::string(default_ns);
    if (const json* md = f.Object(trainjob, "metadata", ""))
      if (auto ns = f.String(*md, "namespace", "/metadata"); ns && !ns->empty()) out.ns = *ns;
  }
  return out;
}

Origin TrainJobTemplates::OriginOf(std::string_view p) const {
  const Recorded* best = nullptr;
  for (const auto& r : origins) {
    const bool prefix = p.size() >= r.prefix.size() &&
                        p.compare(0, r.prefix.size(), r.prefix) == 0 &&
                        (p.size() == r.prefix.size() || p[r.prefix.size()] == '/');
    // Later records win at equal length: they were written later.
    if (prefix && (best == nullptr || r.prefix.size() >= best->prefix.size())) best = &r;
  }
  if (best == nullptr) return {Origin::kTrainJob, ""};
  Origin o = best->origin;
  if (best->same_shape) o.pointer += std::string(p.substr(best->prefix.size()));
  return o;
}

TrainJobTemplates EffectiveTemplates(const json& trainjob, const json& runtime,
                                     const RuntimeRef& ref, ResourcesPerNode rule,
                                     std::string_view skip_manager) {
  return Builder(trainjob, runtime, ref, rule, skip_manager).Build();
}

Workload ReadTrainJob(const TrainJobTemplates& t, const policy::Policy& policy,
                      std::string_view default_ns) {
  Workload w = Workload::Read(*t.jobset, policy, default_ns);
  w.api_version = t.api_version;
  w.kind = t.kind;
  w.trainjob = &t.facts;
  return w;
}

}  // namespace rw::workload
