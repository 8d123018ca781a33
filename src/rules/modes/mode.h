#pragma once
// A mode of the namespace policy as the planner sees it: one unit per mode (one file in this
// folder) and one row in the table of mode_plan.cc. A unit says what is the mode's own: how a
// template already on its path is recognised, the NCCL variables it sets first, whether it runs
// NCCL over RDMA, and the template edits, attachments, claims and conflicts only it makes. The
// common part of the plan (mode_plan.cc) adds what every mode shares and turns the result into
// edits; TemplatePath (diagnose.cc) tries every unit's signs in the order of their precedence.
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/rules/mode_plan.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {
struct TemplateFacts;
}

namespace rw::rules::modes {

// A sign that a GPU template as written is on a path already. TemplatePath tries the signs of
// every unit and of the paths no mode owns (plugin) by ascending precedence, and the first
// that holds decides: a sign of one path can outrank another's (GKE's platform NICs are sriov
// before hostNetwork is looked at, a VF claim only after a DRA claim of NICs). Precedences are
// unique (PathSigns, a unit test says which two collide).
struct Sign {
  int precedence;
  bool (*holds)(const workload::PodTemplate& t, const policy::Policy& policy,
                const policy::NamespacePolicy& ns, const TemplateNetworks& nets);
};

struct EnvWant {
  std::string name;
  std::string value;
  bool extra = false;  // from nccl.extraEnv: added when absent, a user value is never a conflict
};

struct Rename {
  std::size_t item = 0;  // index of the attachment item in the annotation value
  std::string interface;
};

// The plan of one template while it is made.
struct Draft {
  Draft(const workload::PodTemplate& t_, const policy::Policy& policy_,
        const policy::NamespacePolicy& ns_, std::string_view pod_ns_, const TemplateNetworks& nets_)
      : t(t_), policy(policy_), ns(ns_), pod_ns(pod_ns_), nets(nets_) {}

  const workload::PodTemplate& t;
  const policy::Policy& policy;
  const policy::NamespacePolicy& ns;
  std::string_view pod_ns;
  const TemplateNetworks& nets;
  // The template brings its own NICs: no attachment, VF or ifname.
  bool own_rails = false;
  bool host_network = false;                    // the pod runs on the host network once planned
  std::vector<nccl::NetworkAttachment> attach;  // items to append to the annotation
  std::vector<Rename> renames;                  // onConflict: override renames
  std::map<std::string, long long> claims;      // resource -> count the template must claim in all
  std::vector<bool> used;                       // annotation items that serve a wanted attachment
  std::vector<std::string> interfaces;          // interfaces the mode's own devices bring
  TemplatePlan plan;                            // the edits and conflicts made so far

  // Records a conflict when the namespace's onConflict reports it: every one under reject,
  // under override only those no override can resolve (`always`).
  void Conflict(std::string pointer, std::string message, bool always);
  // Plans one wanted attachment against the annotation: kept, renamed, in conflict or appended.
  void Attach(const nccl::NetworkAttachment& want);
};

// The policy-conflict warning of a user value an override replaces.
Finding Override(std::string pointer, const std::string& what, std::string fix);

struct Unit {
  policy::Mode mode;
  // NCCL runs over RDMA: GPU containers get IPC_LOCK, /dev/shm when injectShm, and the
  // fabric's NCCL variables and extraEnv after the mode's own. A template found on the mode's
  // path uses RDMA (the RDMA rules judge it) when this is true, unless IB is disabled ...
  bool rdma;
  // ... and, where the path alone does not say so, this holds (nullptr: the path says so).
  bool (*rdma_shown)(const TemplateFacts& f);
  // How a template already on the mode's path is recognised (any order; precedence decides).
  std::span<const Sign> signs;
  // The mode's own variables, first in the order new entries are written.
  std::vector<EnvWant> (*env)(const policy::NamespacePolicy& ns);
  // What only this mode does to the template (spec edits go first among the edits).
  void (*plan)(Draft& d);
};

// One sign TemplatePath tries: the path it decides and its precedence (lower first).
struct PathSign {
  policy::Path path;
  int precedence;
};
// Every sign, in the order TemplatePath tries them (docs/design.md#paths): each mode unit's
// and those of the paths no mode owns (diagnose.cc).
std::vector<PathSign> PathSigns();

// Every mode's unit (the table of mode_plan.cc, which declares each unit's function); `off` has
// none.
std::span<const Unit* const> Units();
const Unit* UnitOf(policy::Mode mode);

}  // namespace rw::rules::modes
