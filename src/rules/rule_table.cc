#include "rule_functions.h"

namespace rw::rules {

// Every rule id of docs/rules.md, with its table severity. Adding a rule is one function and one
// row here (and its id in policy::KnownRuleIds, which a unit test keeps equal to this table).
const std::vector<Rule>& Rules() {
  using S = Severity;
  static const std::vector<Rule> kRules = {
      {"hostnetwork-dns", S::kError, HostnetworkDns},
      {"ipc-lock-missing", S::kError, IpcLockMissing},
      {"ifname-not-attached", S::kError, IfnameNotAttached},
      {"legacy-network-key", S::kError, LegacyNetworkKey},
      {"vf-without-network", S::kError, VfWithoutNetwork},
      {"network-without-vf", S::kError, NetworkWithoutVf},
      {"ib-disabled-with-rdma", S::kError, IbDisabledWithRdma},
      {"hostnetwork-with-network-annotation", S::kError, HostnetworkWithNetworkAnnotation},
      {"mixed-paths", S::kError, MixedPaths},
      {"path-not-allowed", S::kError, PathNotAllowed},
      {"gid-index-mismatch", S::kError, GidIndexMismatch},
      {"policy-conflict", S::kError, PolicyConflict},
      {"invalid-nccl-value", S::kError, InvalidNcclValue},
      {"invalid-network-annotation", S::kError, InvalidNetworkAnnotation},
      {"rdma-device-hostpath", S::kError, RdmaDeviceHostpath},
      {"privileged-rdma", S::kWarning, PrivilegedRdma},
      {"non-root-ipc-lock", S::kWarning, NonRootIpcLock},
      {"rdma-device-missing", S::kWarning, RdmaDeviceMissing},
      // Found while reading YAML, before any object exists: the CLI reports it (no function).
      {"duplicate-key", S::kWarning, nullptr},
      {"hostnetwork-fixed-port", S::kWarning, HostnetworkFixedPort},
      {"shm-too-small", S::kWarning, ShmTooSmall},
      {"gang-incomplete", S::kWarning, GangIncomplete},
      {"gid-index-on-ib", S::kWarning, GidIndexOnIb},
      {"launcher-args-conflict", S::kWarning, LauncherArgsConflict},
  };
  return kRules;
}

}  // namespace rw::rules
