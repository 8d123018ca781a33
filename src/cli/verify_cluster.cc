#include "verify_cluster.h"

#include <sys/stat.h>

#include <map>
#include <set>

#include "kubectl.h"

namespace rw::cli {
namespace {

using nlohmann::json;

std::vector<std::string> Base(const ClusterTarget& t) {
  std::vector<std::string> args = t.cluster.Args();
  if (!t.ns.empty()) args.insert(args.end(), {"-n", t.ns});
  return args;
}

json GetJson(const ClusterTarget& t, std::vector<std::string> what) {
  std::vector<std::string> args = Base(t);
  args.insert(args.begin(), "get");
  args.insert(args.begin() + 1, what.begin(), what.end());
  args.insert(args.end(), {"-o", "json"});
  const std::string out = RunKubectl(args);
  try {
    return json::parse(out);
  } catch (const json::exception& e) {
    throw KubectlError("kubectl get " + what.front() + ": output is not JSON (" + e.what() + ")");
  }
}

std::string Uid(const json& o) {
  const auto* md = o.is_object() && o.contains("metadata") ? &o["metadata"] : nullptr;
  return md && md->contains("uid") && (*md)["uid"].is_string() ? (*md)["uid"].get<std::string>()
                                                               : "";
}

std::vector<std::string> OwnerUids(const json& o) {
  std::vector<std::string> uids;
  if (!o.contains("metadata") || !o["metadata"].contains("ownerReferences")) return uids;
  for (const auto& ref : o["metadata"]["ownerReferences"])
    if (ref.contains("uid") && ref["uid"].is_string()) uids.push_back(ref["uid"]);
  return uids;
}

const json& Items(const json& list) {
  static const json kEmpty = json::array();
  return list.is_object() && list.contains("items") && list["items"].is_array() ? list["items"]
                                                                                : kEmpty;
}

// Streams one `kubectl logs` into the reader as source "pod/NAME/CONTAINER[/previous]".
void ReadLog(const ClusterTarget& t, const std::string& pod, const std::string& container,
             bool previous, verify::Reader& reader, ClusterRead& out) {
  std::vector<std::string> args = Base(t);
  args.insert(args.begin(), {"logs", pod, "-c", container});
  if (previous) args.push_back("--previous");
  reader.Begin("pod/" + pod + "/" + container + (previous ? "/previous" : ""));
  try {
    KubectlRun run(args);
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = run.Read(buffer, sizeof buffer)) > 0) reader.Feed({buffer, n});
    run.Finish();
  } catch (const KubectlError& e) {
    out.notes.push_back(e.what());
  }
  reader.End();
}

}  // namespace

bool LooksLikeWorkload(const std::string& arg) {
  const auto slash = arg.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == arg.size() ||
      arg.find('/', slash + 1) != std::string::npos)
    return false;
  struct stat st {};
  if (stat(arg.c_str(), &st) == 0) return false;
  for (std::size_t i = 0; i < slash; ++i) {
    const char c = arg[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' ||
          (c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

ClusterRead ReadCluster(const ClusterTarget& t, verify::Reader& reader) {
  ClusterRead out;
  out.workload = GetJson(t, {t.ref});
  const std::string uid = Uid(out.workload);
  const bool is_pod = out.workload.value("kind", "") == "Pod";
  std::vector<json> pods;
  if (is_pod) {
    pods.push_back(out.workload);
  } else {
    const json all = GetJson(t, {"pods"});
    // Pods owned by the workload, or by an object it owns (Deployment -> ReplicaSet -> Pod,
    // JobSet -> Job -> Pod, CronJob -> Job -> Pod).
    std::set<std::string> owned{uid};
    bool direct = false;
    for (const auto& p : Items(all))
      for (const auto& o : OwnerUids(p)) direct = direct || o == uid;
    if (!direct) {
      const json middle = GetJson(t, {"replicasets,jobs"});  // kept alive for the loop
      for (const auto& mid : Items(middle))
        for (const auto& o : OwnerUids(mid))
          if (o == uid) owned.insert(Uid(mid));
    }
    for (const auto& p : Items(all))
      for (const auto& o : OwnerUids(p))
        if (owned.count(o)) {
          pods.push_back(p);
          break;
        }
  }
  std::set<std::string> pod_uids{uid};
  for (const auto& p : pods) {
    const std::string name = p["metadata"].value("name", "");
    out.pods.push_back(name);
    pod_uids.insert(Uid(p));
    std::map<std::string, int> restarts;
    if (p.contains("status"))
      for (const char* key : {"initContainerStatuses", "containerStatuses"})
        if (p["status"].contains(key))
          for (const auto& s : p["status"][key])
            restarts[s.value("name", "")] = s.value("restartCount", 0);
    for (const char* key : {"initContainers", "containers"}) {
      if (!p.contains("spec") || !p["spec"].contains(key)) continue;
      for (const auto& c : p["spec"][key]) {
        const std::string container = c.value("name", "");
        if (t.previous && restarts[container] > 0) ReadLog(t, name, container, true, reader, out);
        ReadLog(t, name, container, false, reader, out);
      }
    }
  }
  // The events of the pods and of the workload: what stopped a pod before NCCL ran.
  reader.Begin("events");
  const json events = GetJson(t, {"events"});  // kept alive for the loop
  for (const auto& ev : Items(events)) {
    const auto& inv = ev.contains("involvedObject") ? ev["involvedObject"] : json::object();
    if (!pod_uids.count(inv.value("uid", ""))) continue;
    reader.FeedLine(ev.value("type", "") + "  " + ev.value("reason", "") + "  " +
                    inv.value("kind", "") + "/" + inv.value("name", "") + "  " +
                    ev.value("message", ""));
  }
  reader.End();
  return out;
}

}  // namespace rw::cli
