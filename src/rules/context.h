#pragma once
// Facts about a workload that several rules read, computed once per diagnosis.
#include <optional>
#include <string>
#include <vector>

#include "rdma_webhook/nccl/grammar.h"
#include "rdma_webhook/rules/assessment.h"
#include "rdma_webhook/rules/diagnosis.h"
#include "rdma_webhook/rules/mode_plan.h"

namespace rw::rules {

// What the rules read of one template: its assessment (networks, path, plan; computed once
// for Diagnose and Mutate alike) and the facts only the rules need.
struct TemplateFacts {
  explicit TemplateFacts(const TemplateAssessment& a)
      : t(a.t), path(a.path), networks(a.networks), plan(a.plan) {}

  const workload::PodTemplate* t;
  policy::Path path;
  bool rdma = false;      // path uses an RDMA NIC and IB is not disabled
  std::string rdma_sign;  // hostNetwork: what shows RDMA is used ("" = nothing does)
  long long replicas = 1;
  const TemplateNetworks& networks;
  std::vector<std::string> interfaces;  // eth0, lo and the attached interfaces
  std::size_t rdma_attachments = 0;     // attachments of RDMA networks
  long long vf_claimed = 0;
  long long shared_claimed = 0;
  std::vector<const workload::Container*> gpu;
  std::vector<const workload::Container*> rdma_containers;
  // Why the template's RDMA is assumed, "" when it is stated: "NAD ns/name: sriov, RDMA assumed:
  // ..." when it rests only on NADs that do not say RDMA (AttachedNetwork::rdma_assumed), or the
  // privileged path's reading from NCCL's variables. Its errors are warnings.
  std::string rdma_assumed;
  const TemplatePlan& plan;
};

// What TemplateFacts::rdma_assumed says, from the facts Diagnose has filled before it
// (nad_networks.cc).
std::string RdmaAssumed(const TemplateFacts& f, const policy::Policy& policy,
                        const policy::NamespacePolicy& ns);

// The template's NICs come from the platform (GKE) or a DRA claim of RDMA NICs: their driver
// passes the devices to every container (FindDeviceGrant's `platform_nics`).
inline bool PlatformOrDraNics(const TemplateFacts& f) {
  return !f.networks.platform.empty() || !f.networks.dra.nic.empty();
}

// The template's DRA claims (or DRA extended resources) that may hold NICs without being known
// to be RDMA NICs: unknown claims, NICs of a driver whose RDMA attribute they do not require,
// devices of a driver the policy does not list (TemplateDra::unnamed_interfaces). Such a claim
// may be the VF a network annotation plugs in (dra-driver-sriov's Multus mode) or the pod's RDMA
// NIC itself, so a rule that counts device-plugin VFs cannot be sure: "" when there is none,
// else "DRA claim 'nic' may hold NICs" for the message.
inline std::string DraMayHoldNics(const TemplateFacts& f) {
  const auto& claims = f.networks.dra.unnamed_interfaces;
  if (claims.empty()) return {};
  std::string named;
  for (const auto& c : claims)  // pod-level claim names, or "container '<name>' <resource>"
    named +=
        (named.empty() ? "" : ", ") + (c.rfind("container '", 0) == 0 ? c : "claim '" + c + "'");
  return "DRA " + named + " may hold NICs";
}

struct LauncherValue {
  nccl::LauncherAssignment assignment;
  const workload::Container* container = nullptr;
};

struct Context {
  const workload::Workload& w;
  const policy::Policy& policy;
  const policy::NamespacePolicy& ns;
  std::vector<TemplateFacts> templates;
  policy::Path path = policy::Path::kNone;
  std::vector<LauncherValue> launcher;

  bool IsRdmaNetwork(std::string_view name) const;
};

// A network that carries RDMA VFs: one of the policy's rdmaNetworks or the namespace's rails.
bool IsRdmaNetwork(const policy::Policy& policy, const policy::NamespacePolicy& ns,
                   std::string_view name);

using Findings = std::vector<Finding>;

// One rule: a file of src/rules/catalog/ holds its check and this row, and
// src/rules/docs/<id>.yaml its reference (docs/design.md, "Where a rule, a mode and a kind live").
struct Rule {
  std::string_view id;  // the file names: catalog/<id>.cc and docs/<id>.yaml
  Severity severity;
  // Runs over a workload's facts. nullptr for a rule whose findings are made where the document
  // is read (duplicate-key, malformed-manifest: reading_findings.h).
  void (*check)(const Context&, const Rule&, Findings&) = nullptr;
  // Where the rule stands in docs/rules.md and the order its findings come in; unique (a unit
  // test says which two collide). Steps of 10 leave room to put a rule beside a related one.
  int position = 0;

  Finding Make(Severity s, std::string pointer, std::string message, std::string fix) const {
    return {std::string(id), s, std::move(message), std::move(fix), std::move(pointer)};
  }
  void Report(Findings& out, std::string pointer, std::string message, std::string fix) const {
    ReportAs(severity, out, std::move(pointer), std::move(message), std::move(fix));
  }
  // A finding that rests on the template's RDMA: an error is a warning naming the assumption
  // when only NADs that do not say RDMA make the template RDMA (never deny on a guess).
  void ReportOnRdma(const TemplateFacts& f, Findings& out, std::string pointer, std::string message,
                    std::string fix) const {
    ReportOnRdma(f.rdma_assumed, out, std::move(pointer), std::move(message), std::move(fix));
  }
  void ReportOnRdma(const std::string& rdma_assumed, Findings& out, std::string pointer,
                    std::string message, std::string fix) const {
    if (rdma_assumed.empty() || severity != Severity::kError) {
      Report(out, std::move(pointer), std::move(message), std::move(fix));
      return;
    }
    ReportAs(Severity::kWarning, out, std::move(pointer),
             std::move(message) + " (" + rdma_assumed + ")", std::move(fix));
  }
  // For rules whose severity depends on a condition (`error / warning` in docs/rules.md).
  void ReportAs(Severity s, Findings& out, std::string pointer, std::string message,
                std::string fix) const {
    out.push_back(Make(s, std::move(pointer), std::move(message), std::move(fix)));
  }
};
// Every rule of src/rules/catalog/, by position (registry.cc).
const std::vector<const Rule*>& Rules();

// A device resource to name in fixes: the namespace's own, else a plain name of the policy.
std::string ExampleDeviceResource(const Context& ctx);

// Values equal as NCCL reads them (numbers compare as numbers; NCCL_SOCKET_IFNAME values are
// equal when `value` selects exactly `wanted` among `interfaces`, under hostNetwork when they
// are equal after removing one leading `=`).
bool SameEnvValue(std::string_view name, std::string_view value, std::string_view wanted,
                  const std::vector<std::string>& interfaces, bool host_network);

// Whether NCCL would disable IB for this container (plain value only).
bool DisablesIb(const workload::Container& c);
// The plain variable that keeps this container's NCCL off verbs: NCCL_IB_DISABLE non-zero, else
// NCCL_NET=Socket (ncclNetInit starts only the transport it names, compared ignoring case, so
// the IB plugin never starts); nullptr when neither. The path (docs/design.md, rule 8) reads only
// NCCL_IB_DISABLE; whether the template uses RDMA reads both.
const workload::EnvVar* KeepsNcclOffVerbs(const workload::Container& c);
// The container's plain NCCL_NET when it is Socket (any case), else nullptr.
const workload::EnvVar* SocketOnlyNet(const workload::Container& c);
std::string EnvPointer(const workload::Container& c, const workload::EnvVar& v);

// The dnsPolicy a template's pods get: the template's, unless the kind's controller sets one on
// hostNetwork pods, where it is left out (Volcano's webhook) or over it (mpi-operator's
// v2beta1). `policy` nullopt: left out, the API server's ClusterFirst. One reading for
// hostnetwork-dns and the evidence.
struct GivenDnsPolicy {
  std::optional<std::string> policy;
  bool by_controller = false;
};
GivenDnsPolicy DnsPolicyGiven(const workload::PodTemplate& t, const policy::WorkloadKind* row);

}  // namespace rw::rules
