#pragma once
// What a template's DRA claims and DRA extended resources hold, read through the catalogue
// (docs/dra.md): each claim's template or claim object, the DeviceClass of each request, and
// the driver and attributes its selectors require, judged against the policy's `dra` lists.
// Never from a name: a claim whose objects cannot be found is unknown, with the reason. Pure.
#include <string>
#include <string_view>
#include <vector>

#include "rdma_webhook/catalogue/catalogue.h"
#include "rdma_webhook/policy/policy.h"
#include "rdma_webhook/workload/workload.h"

namespace rw::rules {

struct TemplateDra {
  std::string nic;     // evidence of the first claim of RDMA NICs (path dra), "" when none
  std::string plugin;  // evidence of the first claim of plugin NICs (EFA), "" when none
  std::vector<std::string> nic_claims;  // pod-level claim names that hold RDMA NICs
  std::vector<std::string> gpu_claims;  // pod-level claim names that hold GPUs
  // Containers (by index) that get GPUs or RDMA NICs through a claim they name or a DRA
  // extended resource.
  std::vector<std::size_t> gpu_containers;
  std::vector<std::size_t> nic_containers;
  // Claims that hold both GPUs and RDMA NICs with no constraint matching a pcieRoot or
  // numaNode attribute across them: the scheduler may pick them far apart.
  std::vector<std::string> unaligned_claims;
  // Pod-level claim names whose template is the IMEX channel template of a ComputeDomain of the
  // pod's namespace (its spec.channel.resourceClaimTemplate.name).
  std::vector<std::string> channel_claims;
  std::vector<std::string> compute_domains;  // ComputeDomains of the pod's namespace, by name
  bool unknown = false;                      // some claim's devices could not be read
  // Pod-level claims (and "container '<name>' <resource>" for DRA extended resources) whose
  // devices may be network interfaces: unknown ones, NICs of any driver and devices of a driver
  // the policy does not list. Their drivers name the interfaces per allocation (`vfnet0`,
  // dranet's host names), so the pod's interface list is not known. GPU claims and the IMEX
  // channel claims of a ComputeDomain bring none.
  std::vector<std::string> unnamed_interfaces;
  std::vector<std::string> evidence;  // one line per claim and per extended resource
  bool Empty() const { return evidence.empty(); }
};

// `ns`: the pod's namespace, where its claims and templates are. `policy_nics`: the
// ResourceClaimTemplate the namespace's policy (mode dra) gives its pods their RDMA NICs from;
// a claim of it reads as RDMA NICs when the catalogue does not hold it (the policy is the
// fallback: the server without --watch-cluster, `check` without the template among the inputs).
// What the catalogue holds decides over the policy.
TemplateDra ReadTemplateDra(const workload::PodTemplate& t, const policy::Policy& policy,
                            const catalogue::Catalogue& catalogue, std::string_view ns,
                            std::string_view policy_nics = {});

}  // namespace rw::rules
