#include "rule_functions.h"

namespace rw::rules {

// Every rule id of docs/rules.md, with its table severity and its documentation. Adding a rule is
// one function and one row here (and its id in policy::KnownRuleIds, which a unit test keeps
// equal to this table). The documentation is what `rdma-webhook rules` prints and docs/rules.md
// holds (regenerate: `build/rdma-webhook rules -o markdown > docs/rules.md`); each example is
// run through `check` by tests/cli/test_rules_reference.py and must fire exactly its rule.
const std::vector<Rule>& Rules() {
  using S = Severity;
  static const std::vector<Rule> kRules = {
      {"hostnetwork-dns",
       S::kError,
       HostnetworkDns,
       {.summary = "a hostNetwork pod resolves names with the node's DNS",
        .severity_note = "error when the template uses RDMA; a warning for a GPU pod on "
                         "hostNetwork without a sign of RDMA (e.g. an inference demo)",
        .fires = "`hostNetwork: true` and `dnsPolicy` absent, `ClusterFirst` or `Default` "
                 "(`None` is the user's explicit DNS); absent does not fire on Volcano Job "
                 "tasks, whose webhook sets `ClusterFirstWithHostNet` itself",
        .why = "with hostNetwork, `ClusterFirst` silently falls back to the node's resolver: "
               "the workers cannot resolve the service names of their peers (MASTER_ADDR, the "
               "headless service), so the rendezvous never happens and NCCL never starts",
        .fix = "set `dnsPolicy: ClusterFirstWithHostNet` in the pod spec",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  hostNetwork: true
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/hca_shared_devices_a: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kError}},
      {"ipc-lock-missing",
       S::kError,
       IpcLockMissing,
       {.summary = "an RDMA container cannot lock memory",
        .severity_note = "a warning when the container adds only `CAP_IPC_LOCK`: CRI-O grants "
                         "it, containerd does not, and the manifest does not say which runs",
        .fires = "an RDMA container neither adds `IPC_LOCK` (any case, or `ALL`) nor is "
                 "privileged; `CAP_IPC_LOCK` and `CAP_ALL` are not those names: containerd's "
                 "CRI writes `CAP_` before every name it is given (`CAP_CAP_IPC_LOCK`, which "
                 "grants nothing), CRI-O adds it only to names without it",
        .why = "RDMA registers (pins) its buffers with the NIC; without `IPC_LOCK` the "
               "RLIMIT_MEMLOCK of the container (often 64 KiB) makes `ibv_reg_mr` fail, and NCCL "
               "falls back to sockets or aborts",
        .fix = "add `IPC_LOCK` to the container's `securityContext.capabilities.add`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"ifname-not-attached",
       S::kError,
       IfnameNotAttached,
       {.summary = "NCCL_SOCKET_IFNAME names no interface the pod will have",
        .fires = "not hostNetwork, and `NCCL_SOCKET_IFNAME` (not `^`) matches no interface the "
                 "pod will have (`eth0`, `lo`, and those the network annotation attaches)",
        .why = "NCCL finds no interface for its bootstrap and out-of-band connections and fails "
               "at initialisation (`no socket interface found`)",
        .fix = "name an interface the pod has: the one the network annotation attaches "
               "(`net@eth1` gives `eth1`), or `eth0`; or drop the variable",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_SOCKET_IFNAME, value: eth2}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"legacy-network-key",
       S::kError,
       LegacyNetworkKey,
       {.summary = "the pod uses the network annotation key current Multus ignores",
        .fires = "the pod template uses `kubernetes.v1.cni.cncf.io/networks`, which current "
                 "Multus ignores",
        .why = "the network named there is never attached: the pod starts with `eth0` only, "
               "and RDMA traffic has no NIC to use",
        .fix = "rename the annotation to `k8s.v1.cni.cncf.io/networks`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    kubernetes.v1.cni.cncf.io/networks: macvlan-rdma@net1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/hca_shared_devices_a: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"vf-without-network",
       S::kError,
       VfWithoutNetwork,
       {.summary = "a VF is claimed but no network is attached to plug it in",
        .severity_note = "error on `fabric: roce`; a warning on InfiniBand and where the fabric "
                         "is not known (`fabric: auto`, the default)",
        .fires = "a `resources.vf` resource is claimed but the template attaches no network at "
                 "all (a network the policy does not know may be the one that plugs the VF "
                 "in: only its absence is certain)",
        .why = "the VF is allocated to the pod but no CNI moves its netdev into the pod: RoCE "
               "needs the VF's netdev and its IP for the GID, so NCCL finds no usable GID; on "
               "InfiniBand the verbs reach the VF through the device plugin's character "
               "devices, so it may still work",
        .fix = "attach the RDMA network: annotation `k8s.v1.cni.cncf.io/networks: "
               "sriov-rdma-net@eth1`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"network-without-vf",
       S::kError,
       NetworkWithoutVf,
       {.summary = "more RDMA networks are attached than VFs are claimed",
        .fires = "fewer VFs are claimed than `rdmaNetworks` attachments the annotation makes",
        .why = "the SR-IOV CNI needs one allocated VF per attachment: without one the pod "
               "sandbox cannot be created and the pod stays in "
               "ContainerCreating",
        .fix = "claim one VF per RDMA attachment in `resources.limits` (e.g. `rdma/vf: 1` per "
               "rail)",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"ib-disabled-with-rdma",
       S::kError,
       IbDisabledWithRdma,
       {.summary = "NCCL_IB_DISABLE turns off the RDMA the pod claims",
        .fires = "`NCCL_IB_DISABLE` non-zero while RDMA resources are claimed or an RDMA "
                 "network is attached",
        .why = "NCCL never uses the RDMA NIC the pod holds: all traffic goes over TCP sockets, "
               "many times slower, while the VF or HCA share is wasted",
        .fix = "remove `NCCL_IB_DISABLE` (or set it to 0), or drop the RDMA claim and network "
               "if TCP is meant",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_IB_DISABLE, value: "1"}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"hostnetwork-with-network-annotation",
       S::kError,
       HostnetworkWithNetworkAnnotation,
       {.summary = "a hostNetwork pod asks Multus for networks",
        .fires = "`hostNetwork: true` together with a network annotation (Multus does not act "
                 "on hostNetwork pods)",
        .why = "the networks are never attached: the pod has the node's interfaces only, so "
               "whatever the annotation (and NCCL_SOCKET_IFNAME) expects is missing",
        .fix = "choose one: drop `hostNetwork` to use the attached networks, or drop the "
               "annotation and use the node's interfaces",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: macvlan-rdma@net1
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/hca_shared_devices_a: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"mixed-paths",
       S::kError,
       MixedPaths,
       {.summary = "the templates of one workload take different network paths",
        .fires = "the templates of one workload take different paths",
        .why = "NCCL needs every rank on the same transport: ranks on RDMA and ranks on TCP (or "
               "on another RDMA path) fail to connect or fall back to the slowest path for the "
               "whole job",
        .fix = "give every replica type the same path: the same RDMA claim, network and NCCL "
               "settings",
        .example = R"y(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/ml/train:1.0
              env:
                - {name: NCCL_IB_DISABLE, value: "1"}
              resources:
                limits:
                  nvidia.com/gpu: 8
    Worker:
      replicas: 3
      template:
        metadata:
          annotations:
            k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/ml/train:1.0
              securityContext:
                capabilities:
                  add: [IPC_LOCK]
              resources:
                limits:
                  nvidia.com/gpu: 8
                  rdma/vf: 1
              volumeMounts:
                - {name: dshm, mountPath: /dev/shm}
          volumes:
            - name: dshm
              emptyDir: {medium: Memory}
)y"}},
      {"path-not-allowed",
       S::kError,
       PathNotAllowed,
       {.summary = "the namespace does not allow the workload's path",
        .fires = "the workload's path (not `none`, `unknown` or `plugin`) is not in the "
                 "namespace's `allowedPaths`",
        .why = "the cluster admin reserved this namespace for other paths (e.g. only SR-IOV "
               "nodes and networks exist for it): the workload would not get the RDMA it "
               "expects there",
        .fix = "use a path the namespace allows (`rdma-webhook policy default` shows "
               "`allowedPaths`), or move the workload to a namespace that allows its path",
        .example = R"y(# The embedded policy allows only sriov and tcp in rdma-sriov-* namespaces.
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: rdma-sriov-demo
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/hca_shared_devices_a: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"gid-index-mismatch",
       S::kError,
       GidIndexMismatch,
       {.summary = "NCCL_IB_GID_INDEX differs from the GID index measured on the nodes",
        .fires = "RoCE, policy `gidIndex` is a number, and `NCCL_IB_GID_INDEX` is another number",
        .why = "on RoCE the GID index selects the address family and RoCE version: a wrong "
               "index gives RoCE v1 or an IPv6 link-local GID, and connections between nodes "
               "hang or time out",
        .fix = "remove `NCCL_IB_GID_INDEX` (the webhook sets the policy's) or set it to the "
               "policy's `gidIndex` (`rdma-webhook gids` on a node shows the right one)",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_IB_GID_INDEX, value: "5"}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_policy = R"y(apiVersion: rdma-webhook/v1
kind: Policy
rdmaNetworks: [sriov-rdma-net]
defaults:
  mode: off
  nccl:
    fabric: roce
    gidIndex: 3
)y"}},
      {"policy-conflict",
       S::kError,
       PolicyConflict,
       {.summary = "the manifest sets a field the namespace's mode manages to another meaning",
        .fires = "mode not `off`, `onConflict: reject`, and the manifest sets a field the mode "
                 "manages to a value that means something else (docs/policy.md, \"What each "
                 "mode writes\", Conflicts)",
        .why = "the webhook will not silently overwrite the user's value, and the value as "
               "written contradicts the namespace's RDMA setup (e.g. the RDMA network on "
               "another interface than the one the nodes' NCCL settings expect)",
        .fix = "remove the field and let the webhook set it, or set it to the policy's value; "
               "`onConflict: override` in the policy makes the webhook replace it",
        .example =
            R"y(# The embedded policy attaches sriov-rdma-net@eth1 in rdma-sriov-* namespaces.
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: rdma-sriov-demo
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth2
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"invalid-nccl-value",
       S::kError,
       InvalidNcclValue,
       {.summary = "an NCCL variable holds a value NCCL does not read as meant",
        .fires = "`NCCL_IB_DISABLE`, `NCCL_IB_GID_INDEX` or `NCCL_NET_GDR_LEVEL` outside the "
                 "grammar NCCL parses (integers; GDR level also `LOC`, `PIX`, `PXB`, `PHB`, "
                 "`SYS`)",
        .why = "NCCL reads such a value as 0 or ignores it: `NCCL_IB_DISABLE=true` leaves IB "
               "enabled, a word as GID index selects index 0",
        .fix = "use the integer form (`NCCL_IB_DISABLE: \"1\"`, `NCCL_IB_GID_INDEX: \"3\"`) or "
               "an upper-case GDR level name",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_IB_DISABLE, value: "true"}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y"}},
      {"invalid-network-annotation",
       S::kError,
       InvalidNetworkAnnotation,
       {.summary = "the network annotation cannot be parsed as Multus parses it",
        .fires = "the network annotation cannot be parsed as Multus parses it",
        .why = "Multus attaches no network at all: the pod never starts (the sandbox fails) or "
               "runs without its VF",
        .fix = "write the annotation as `net@if, net2@if2` or as a JSON list of "
               "`{\"name\": ..., \"interface\": ...}` objects",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: '[{"name": "macvlan-net"'
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_IB_DISABLE, value: "1"}
      resources:
        limits:
          nvidia.com/gpu: 8
)y"}},
      {"rdma-device-hostpath",
       S::kError,
       RdmaDeviceHostpath,
       {.summary = "/dev/infiniband comes only from a hostPath mount",
        .fires = "an RDMA container gets `/dev/infiniband` only through a hostPath mount: not "
                 "privileged, no RDMA device resource, no DRA claim (`resources.claims`), no "
                 "NRI device-injection annotation (`devices.nri.io/...`, "
                 "`devices.gke.io/container.<name>`)",
        .why = "the device nodes appear, but a mount does not pass the container's device "
               "cgroup: it still denies the verbs devices, so NCCL reports `NET/IB : No device "
               "found` and uses sockets",
        .fix = "claim an RDMA device resource (e.g. `rdma/hca_shared_devices_a: 1`) instead of "
               "the hostPath mount",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
        - {name: ib, mountPath: /dev/infiniband}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
    - name: ib
      hostPath: {path: /dev/infiniband}
)y"}},
      {"privileged-rdma",
       S::kWarning,
       PrivilegedRdma,
       {.summary = "an RDMA container runs privileged",
        .fires = "an RDMA container is privileged",
        .why = "privileged works (it grants every device and capability) but gives the "
               "container the whole node; RDMA needs only `IPC_LOCK` and the verbs devices",
        .fix = "replace `privileged` with `IPC_LOCK`, and with an RDMA device resource when "
               "nothing else grants the devices; never only drop `privileged`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        privileged: true
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"non-root-ipc-lock",
       S::kWarning,
       NonRootIpcLock,
       {.summary = "IPC_LOCK may not reach a non-root process",
        .fires = "an RDMA container's effective `runAsUser` is not 0, or `runAsNonRoot: true`",
        .why = "`IPC_LOCK` in the container's bounding set does not reach a non-root "
               "process's effective set (unless the runtime grants it as an ambient "
               "capability), so memlock stays limited and memory registration can fail",
        .fix = "run the RDMA container as root, or raise RLIMIT_MEMLOCK for the runtime "
               "(containerd/CRI-O `LimitMEMLOCK=infinity`) and set this rule to `off` for the "
               "namespace in the policy",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  securityContext:
    runAsUser: 1000
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"rdma-device-missing",
       S::kWarning,
       RdmaDeviceMissing,
       {.summary = "a hostNetwork RDMA pod has no access to the RDMA devices",
        .fires = "hostNetwork path with RDMA, no RDMA resource claimed, not privileged, no DRA "
                 "claim or NRI device annotation, no `/dev/infiniband` mount (with such a "
                 "mount, `rdma-device-hostpath` fires instead)",
        .why = "hostNetwork shows the node's netdevs, not `/dev/infiniband`: without the verbs "
               "devices NCCL reports `NET/IB : No device found` and uses sockets",
        .fix = "claim the shared RDMA device resource (e.g. `rdma/hca_shared_devices_a: 1`)",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      // Found while reading YAML, before any object exists: the CLI reports it (no function).
      {"duplicate-key",
       S::kWarning,
       nullptr,
       {.summary = "a YAML mapping repeats a key",
        .fires = "(CLI) a YAML mapping repeats a key; the last value is used, as kubectl "
                 "silently does",
        .why = "the earlier value, perhaps the one meant (an RDMA claim, an NCCL variable, a "
               "capability), is lost without a word: the API server never sees it",
        .fix = "remove one of the two keys, or merge them into one",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:0.9
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"hostnetwork-fixed-port",
       S::kWarning,
       HostnetworkFixedPort,
       {.summary = "a hostNetwork pod uses a fixed port",
        .fires = "hostNetwork, declared container ports or a fixed `MASTER_PORT`, and not "
                 "`exclusiveNodes` (the message says which: pending pod or bind collision)",
        .why = "on hostNetwork ports are the node's: a declared port keeps a second such pod "
               "Pending on that node, and a fixed `MASTER_PORT` collides with another job's "
               "rendezvous (`address already in use`)",
        .fix = "drop the fixed port (let the launcher choose one), or set `exclusiveNodes: "
               "true` for the namespace when each node runs one job",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      ports:
        - containerPort: 29500
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/hca_shared_devices_a: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"shm-too-small",
       S::kWarning,
       ShmTooSmall,
       {.summary = "an RDMA container keeps the default 64 MiB /dev/shm",
        .fires = "an RDMA container has no memory `emptyDir` at `/dev/shm` and the pod is not "
                 "`hostIPC`",
        .why = "NCCL puts its intra-node buffers in /dev/shm: with the runtime's 64 MiB it "
               "fails with `No space left on device` (bus error) once the job scales",
        .fix = "mount an `emptyDir: {medium: Memory}` volume at `/dev/shm`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
)y",
        .example_severity = S::kWarning}},
      {"gang-incomplete",
       S::kWarning,
       GangIncomplete,
       {.summary = "the Volcano gang is smaller than the job",
        .fires = "Volcano `minAvailable` is above 0 and below the total replica count "
                 "(Volcano's own webhook turns an absent or 0 `minAvailable` into the sum of the "
                 "tasks' `minAvailable`, each defaulting to its replicas)",
        .why = "Volcano starts the job once `minAvailable` pods are placed: the ranks already "
               "running wait in NCCL's init for peers that may never be scheduled, holding "
               "their GPUs",
        .fix = "set `minAvailable` to the total replica count (or leave it out)",
        .example = R"y(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: train
spec:
  schedulerName: volcano
  minAvailable: 2
  tasks:
    - name: worker
      replicas: 4
      template:
        spec:
          containers:
            - name: trainer
              image: registry.example.com/ml/train:1.0
              resources:
                limits:
                  nvidia.com/gpu: 8
)y",
        .example_severity = S::kWarning}},
      {"gid-index-on-ib",
       S::kWarning,
       GidIndexOnIb,
       {.summary = "NCCL_IB_GID_INDEX is set on an InfiniBand fabric",
        .fires = "`NCCL_IB_GID_INDEX` is set on an InfiniBand fabric",
        .why = "InfiniBand addresses by LID, not GID index: the setting is ignored at best and, "
               "copied from a RoCE manifest, hides which fabric the job was written for",
        .fix = "remove `NCCL_IB_GID_INDEX`",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_IB_GID_INDEX, value: "3"}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning,
        .example_policy = R"y(apiVersion: rdma-webhook/v1
kind: Policy
rdmaNetworks: [sriov-rdma-net]
defaults:
  mode: off
  nccl:
    fabric: ib
)y"}},
      {"launcher-args-conflict",
       S::kWarning,
       LauncherArgsConflict,
       {.summary = "NCCL values in the launch command contradict the container's env",
        .fires = "NCCL values in launcher args (`mpirun -x`, `export`) contradict the RDMA "
                 "containers' env",
        .why = "the value in the command wins at run time, so what the manifest's env (and the "
               "webhook) set is not what NCCL uses: e.g. `export NCCL_IB_DISABLE=1` turns RDMA "
               "off behind the env's back",
        .fix = "set each NCCL variable in one place: remove it from the command, or make the "
               "two agree",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      command: [bash, -c, "export NCCL_SOCKET_IFNAME=eth0; torchrun --nproc_per_node=8 train.py"]
      env:
        - {name: NCCL_SOCKET_IFNAME, value: eth1}
      securityContext:
        capabilities:
          add: [IPC_LOCK]
      resources:
        limits:
          nvidia.com/gpu: 8
          rdma/vf: 1
      volumeMounts:
        - {name: dshm, mountPath: /dev/shm}
  volumes:
    - name: dshm
      emptyDir: {medium: Memory}
)y",
        .example_severity = S::kWarning}},
      {"unknown-nic-resource",
       S::kWarning,
       UnknownNicResource,
       {.summary = "a GPU container claims a NIC-looking resource the policy does not know",
        .fires = "a GPU container claims an extended resource whose name looks like an RDMA NIC "
                 "or VF (`*/rdma*`, `*erdma*`, `*/hca*`, `*sriov*`, `*/vf`, `*/nic*`, `roce`, "
                 "`mlnx`, `hostdev`, an `ib` word, any case) that is in none of the policy's "
                 "`gpuResources`, `resources.vf` or `resources.shared`; silent when a network "
                 "plugin (EFA, GPUDirect-TCPX) is the template's path",
        .why = "the policy's lists are what tell a VF from a shared device: a cluster's own "
               "device-plugin name that they miss leaves the template's path undecided, so "
               "`ipc-lock-missing` and the other RDMA rules never judge it and the webhook "
               "plans nothing for it, while the result looks clean",
        .fix = "add the resource to the policy's `resources.vf` (a VF moved into the pod with "
               "its netdev) or `resources.shared` (an RDMA device shared with the host)",
        .example = R"y(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      resources:
        limits:
          nvidia.com/gpu: 8
          example.com/rdma_nic: 1
)y",
        .example_severity = S::kWarning}},
  };
  return kRules;
}

const std::vector<RuleReference>& RuleReferences() {
  static const std::vector<RuleReference> kReferences = [] {
    std::vector<RuleReference> out;
    for (const auto& r : Rules()) out.push_back({r.id, r.severity, &r.doc});
    return out;
  }();
  return kReferences;
}

}  // namespace rw::rules
