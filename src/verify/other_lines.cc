// Lines that are not NCCL records but still explain a job: Kubernetes events (`kubectl describe`
// rows, `kubectl get events`, or the CLI's own rendering of the Events API), RDMA device plugin
// logs, and the framework's exceptions (docs/verify.md#what-is-read).
#include <string_view>

#include "evidence.h"

namespace rw::verify {
namespace {

bool Has(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

// Extended resources an RDMA job asks for (docs/verify.md#kubernetes-events).
bool RdmaResource(std::string_view s) {
  return Has(s, "rdma/") || Has(s, "vpc.amazonaws.com/efa") || Has(s, "networking.gke.io") ||
         Has(s, "nvidia.com/") || Has(s, "openshift.io/") || Has(s, "mellanox.com/") ||
         Has(s, "intel.com/");
}

}  // namespace

bool ObserveOther(Evidence& e, std::string_view t) {
  // Pods that never start: CNI (Multus, SR-IOV CNI, IB SR-IOV CNI) refusing the sandbox.
  if (Has(t, "FailedCreatePodSandBox") || Has(t, "SRIOV-CNI failed") ||
      Has(t, "VF pci addr is required") || Has(t, "GUID is not valid") ||
      (Has(t, "error adding container to network") && Has(t, "multus"))) {
    e.Note(Signal::kK8sCni);
    return true;
  }
  // The device plugin (or DRA driver) advertises or prepares nothing.
  if (Has(t, "error creating new device") || Has(t, "missing RDMA device spec") ||
      Has(t, "FailedPrepareDynamicResources") || (Has(t, "Insufficient ") && RdmaResource(t)) ||
      (Has(t, "UnexpectedAdmissionError") && RdmaResource(t))) {
    e.Note(Signal::kK8sDevicePlugin);
    return true;
  }
  // libibverbs' own stderr: the provider is missing, or the device is not in the container.
  if (Has(t, "libibverbs: Warning: couldn't load driver") ||
      Has(t, "no userspace device-specific driver found")) {
    e.Note(Signal::kLibibverbsMissing);
    return true;
  }
  if (Has(t, "libibverbs: Warning: couldn't stat '/sys/class/infiniband")) {
    e.Note(Signal::kUnableToOpen);
    return true;
  }
  // PyTorch ProcessGroupNCCL: a watchdog timeout is a stall, not a transport proof.
  if (Has(t, "Watchdog caught collective operation timeout")) {
    e.Note(Signal::kWatchdog);
    return true;
  }
  if (Has(t, "NCCL error in:") || Has(t, "DistBackendError") || Has(t, "ncclSystemError") ||
      Has(t, "ncclInternalError:") || Has(t, "ncclRemoteError:") ||
      Has(t, "ncclUnhandledCudaError") || Has(t, "NCCL communicator was aborted")) {
    e.Note(Signal::kFrameworkError);
    return true;
  }
  // Success: nccl-tests' summary, or the application reporting collectives that completed or
  // a throughput figure (docs/verify.md#ok).
  // Anywhere in the line: srun --label (`0: `) and pdsh (`host: `) put their own prefix first.
  if (Has(t, "# Avg bus bandwidth")) {
    e.Note(Signal::kSuccess);
    return true;
  }
  const bool collective = Has(t, "allreduce") || Has(t, "all_reduce") || Has(t, "allgather") ||
                          Has(t, "all_gather") || Has(t, "reduce_scatter") || Has(t, "alltoall") ||
                          Has(t, "broadcast");
  if ((collective && (Has(t, " ok") || Has(t, "passed"))) ||
      ((Has(t, "GB/s") || Has(t, "Gbit/s")) && Has(t, "(done)"))) {
    e.Note(Signal::kSuccess);
    return true;
  }
  return false;
}

}  // namespace rw::verify
