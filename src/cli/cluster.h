#pragma once
// What `audit` asks the cluster through kubectl before it lists workloads: which of the
// policy's kinds the cluster serves, and the policy the chart installed.
#include <memory>
#include <string>
#include <vector>

#include "rdma_webhook/policy/policy.h"

namespace rw::cli {

// kubectl's global flags that pick the cluster: passed to every kubectl run.
struct ClusterFlags {
  std::string context;
  std::string kubeconfig;
  std::vector<std::string> Args() const;
};

// One row of `kubectl api-resources -o wide`.
struct ApiResource {
  std::string name;   // plural resource name: "deployments"
  std::string group;  // "" for the core group
  std::string kind;   // "Deployment"
};

// Parses `kubectl api-resources -o wide` (columns found by the header's offsets: kubectl pads
// with spaces, cells hold none). Throws std::runtime_error when the header is not there.
std::vector<ApiResource> ParseApiResources(const std::string& text);

// The policy's workload kinds split into those the cluster serves (with the resource name
// kubectl takes, "deployments.apps") and those it does not.
struct KindPlan {
  struct Served {
    const policy::WorkloadKind* kind;
    std::string resource;
  };
  std::vector<Served> served;
  std::vector<const policy::WorkloadKind*> skipped;  // the cluster does not serve them
  std::string warning;                               // discovery was partial: what kubectl said
};

// `extra`: kinds outside the policy's table to list too (`audit --kinds`), planned after the
// policy's; an entry whose `kind` names a resource (`rolebasedgroups`) takes the kind the
// cluster serves under it. Their objects are judged by shape, as `check` judges such kinds.
KindPlan PlanKinds(const policy::Policy& policy, const std::vector<ApiResource>& served,
                   std::vector<policy::WorkloadKind>* extra = nullptr);

// `--kinds` entries: `Kind` (the core group) or `Kind.group`, the kind or its plural resource
// name (`RoleBasedGroup.workloads.x-k8s.io`, `rolebasedgroups.workloads.x-k8s.io`). Throws
// std::invalid_argument naming an empty entry.
std::vector<policy::WorkloadKind> ParseKindList(const std::vector<std::string>& entries);

// What the cluster serves (kubectl api-resources); a partial discovery (an aggregated API down)
// sets `warning`, no discovery at all is an error (KubectlError).
struct Discovery {
  std::vector<ApiResource> served;
  std::string warning;
};
Discovery Discover(const ClusterFlags& cluster);

// The policy audit judges with, and where it came from (said in the output).
struct ClusterPolicy {
  std::shared_ptr<const policy::Policy> policy;
  std::string from;  // "file x", "ConfigMap ns/name", "the embedded default"
};

// Which namespaces the audit reads: all (-A), or one (`ns`; empty: kubectl's current one).
struct AuditScope {
  bool all_namespaces = false;
  std::string ns;
};

// `--policy FILE`, else `--policy-configmap NS/NAME`, else the chart's ConfigMap found by its
// label (app.kubernetes.io/name=rdma-webhook, key policy.yaml): for a one-namespace audit in
// that namespace first, then in any namespace; else the embedded default. Throws
// std::runtime_error (KubectlError for kubectl's failures) naming the file or ConfigMap; several
// chart ConfigMaps are an error listing them; a forbidden cluster-wide list says which flag
// names the policy instead.
ClusterPolicy ResolveClusterPolicy(const std::string& file, const std::string& configmap,
                                   const ClusterFlags& cluster, const AuditScope& scope);

// The key of the chart's policy ConfigMap that holds the policy.
inline constexpr const char* kPolicyKey = "policy.yaml";

}  // namespace rw::cli
