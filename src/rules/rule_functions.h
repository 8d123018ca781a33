#pragma once
#include "context.h"

namespace rw::rules {
// A device resource to name in fixes: the namespace's own, else a plain name of the policy.
std::string ExampleDeviceResource(const Context& ctx);
}  // namespace rw::rules

namespace rw::rules {
void HostnetworkDns(const Context&, const Rule&, Findings&);
void IfnameNotAttached(const Context&, const Rule&, Findings&);
void LegacyNetworkKey(const Context&, const Rule&, Findings&);
void VfWithoutNetwork(const Context&, const Rule&, Findings&);
void NetworkWithoutVf(const Context&, const Rule&, Findings&);
void IbDisabledWithRdma(const Context&, const Rule&, Findings&);
void HostnetworkWithNetworkAnnotation(const Context&, const Rule&, Findings&);
void InvalidNetworkAnnotation(const Context&, const Rule&, Findings&);
// workload_rules.cc
void MixedPaths(const Context&, const Rule&, Findings&);
void PathNotAllowed(const Context&, const Rule&, Findings&);
void PolicyConflict(const Context&, const Rule&, Findings&);
void GangIncomplete(const Context&, const Rule&, Findings&);
void HostnetworkFixedPort(const Context&, const Rule&, Findings&);
void LauncherArgsConflict(const Context&, const Rule&, Findings&);
// nccl_rules.cc
void GidIndexMismatch(const Context&, const Rule&, Findings&);
void InvalidNcclValue(const Context&, const Rule&, Findings&);
void GidIndexOnIb(const Context&, const Rule&, Findings&);
// security_rules.cc
void IpcLockMissing(const Context&, const Rule&, Findings&);
void PrivilegedRdma(const Context&, const Rule&, Findings&);
void NonRootIpcLock(const Context&, const Rule&, Findings&);
void RdmaDeviceMissing(const Context&, const Rule&, Findings&);
void RdmaDeviceHostpath(const Context&, const Rule&, Findings&);
void ShmTooSmall(const Context&, const Rule&, Findings&);
// resource_rules.cc
void UnknownNicResource(const Context&, const Rule&, Findings&);
}  // namespace rw::rules
