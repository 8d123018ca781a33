"""Every rule of docs/rules.md fires on a manifest that breaks it and stays silent on a
close variant that does not. One row per case; the row's id says the situation.

Each row: (manifest, policy, expected rule ids (a sorted list: duplicates count), pointers).
`pointers` maps a rule id to the prefix its pointer must have.
"""
import pytest

import manifests as m
from conftest import check, rules_of, workload_results

# v2: hostnetwork-dns is a warning for a GPU pod without a sign of RDMA; vf-without-network is
# an error on RoCE and a warning where the fabric is InfiniBand or not known. Errors that rest on
# the pod's RDMA are warnings where only a NAD that does not say RDMA makes it so (docs/dra.md).
SEVERITY = {
    "hostnetwork-dns": ("error", "warning"), "ipc-lock-missing": ("error", "warning"),
    "ifname-not-attached": "error", "legacy-network-key": "error",
    "vf-without-network": ("error", "warning"), "rdma-device-hostpath": ("error", "warning"),
    "network-without-vf": ("error", "warning"), "ib-disabled-with-rdma": ("error", "warning"),
    "hostnetwork-with-network-annotation": "error", "mixed-paths": ("error", "warning"),
    "path-not-allowed": ("error", "warning"), "gid-index-mismatch": "error",
    "policy-conflict": "error",
    "invalid-nccl-value": "error", "privileged-rdma": "warning", "non-root-ipc-lock": "warning",
    "rdma-device-missing": "warning", "hostnetwork-fixed-port": "warning",
    "shm-too-small": "warning", "gang-incomplete": "warning", "gid-index-on-ib": "warning",
    "launcher-args-conflict": "warning", "dra-host-network": "error",
    "invalid-ignore-check": "warning",
    "trainer-rdma-resource-erased": "warning", "trainer-procs-gpu-mismatch": "warning",
    "trainer-claims-dropped": "warning",
    "trainer-runtime-no-rdma-path": "warning", "unknown-nic-resource": "warning",
    "network-not-found": "warning", "dra-fixed-ib-hca": "warning",
    "dra-unaligned-claims": "warning", "mnnvl-without-imex": "warning",
}

C0 = "/spec/containers/0"

# A GPU DeviceClass and a claim template of GPUs beside DRA_OBJECTS' NICs; a ComputeDomain and a
# two-pod GPU Job in its namespace that claims no IMEX channel.
GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
             "metadata": {"name": "gpu.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]}}
GPU_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpus", "namespace": "team-a"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
COMPUTE_DOMAIN = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
                  "metadata": {"name": "nvl72", "namespace": "team-a"},
                  "spec": {"numNodes": 2,
                           "channel": {"resourceClaimTemplate": {"name": "nvl72-channel"}}}}
GPU_JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "team-a"},
           "spec": {"parallelism": 2, "template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "t", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 4}}}]}}}}
SC0 = "/spec/containers/0/securityContext"


def env(name, value, i=0):
    return lambda d: m.set_env(m.c0(d, i), name, value)


def no_env(name, i=0):
    return lambda d: m.del_env(m.c0(d, i), name)


def spec(**kv):
    def f(d):
        for k, v in kv.items():
            if v is None:
                d["spec"].pop(k, None)
            else:
                d["spec"][k] = v
    return f


def limit(resource, count, i=0):
    return lambda d: m.c0(d, i)["resources"]["limits"].__setitem__(resource, count)


def container(i=0, **kv):
    def f(d):
        for k, v in kv.items():
            if v is None:
                m.c0(d, i).pop(k, None)
            else:
                m.c0(d, i)[k] = v
    return f


def caps(*names):
    return container(securityContext={"capabilities": {"add": list(names)}})


def annotations(value):
    def f(d):
        if value is None:
            d["metadata"].pop("annotations", None)
        else:
            d["metadata"]["annotations"] = dict(value)
    return f


def limits(**kv):
    def f(d):
        lim = m.c0(d)["resources"]["limits"]
        for k, v in kv.items():
            k = k.replace("__", "/")
            if v is None:
                lim.pop(k, None)
            else:
                lim[k] = v
    return f


def sidecar(with_gpu=False):
    def f(d):
        c = {"name": "sidecar", "image": "busybox:1.36"}
        if with_gpu:
            c = m._trainer({"nvidia.com/gpu": 1}, [])
            c["name"] = "second"
            c.pop("securityContext")
        d["spec"]["containers"].append(c)
    return f


def volcano(min_available):
    doc = m.golden("kinds/volcano-job.yaml")
    doc["spec"]["minAvailable"] = min_available
    return doc


def mpi(launcher_cmd):
    return m.mpijob(launcher_cmd, m.sriov())


NO_CAPS = container(securityContext=None)
LAUNCHER_OK = ["mpirun", "-np", "16", "-x", "NCCL_SOCKET_IFNAME=eth1", "-x", "NCCL_DEBUG=INFO",
               "all_reduce_perf"]
LAUNCHER_BAD = ["mpirun", "-np", "16", "-x", "NCCL_SOCKET_IFNAME=eth0", "all_reduce_perf"]
LAUNCHER_IB_OFF = ["mpirun", "-np", "16", "-x", "NCCL_IB_DISABLE=1", "all_reduce_perf"]
SH_EXPORT = ["bash", "-c", "export NCCL_IB_DISABLE=1; torchrun --nproc_per_node=8 train.py"]

# id: (manifest, policy, expected rules, {rule: pointer prefix})
def annotate(key, value="a reason"):
    def _edit(doc):
        doc["metadata"].setdefault("annotations", {})[key] = value
    return _edit


CASES = {
    # -- clean baselines: every path, no findings ------------------------------------------
    "clean-sriov": (m.sriov(), "off.yaml", [], {}),
    "clean-hostnetwork": (m.host(), "off.yaml", [], {}),
    "clean-shared": (m.shared(), "off.yaml", [], {}),
    "clean-tcp": (m.tcp(), "off.yaml", [], {}),
    "clean-unknown": (m.unknown(), "off.yaml", [], {}),
    "clean-cpu-only": (m.cpu_only(), "off.yaml", [], {}),

    # -- hostnetwork-dns --------------------------------------------------------------------
    "dns-absent": (m.edit(m.host, spec(dnsPolicy=None)), "off.yaml", ["hostnetwork-dns"],
                   {"hostnetwork-dns": "/spec"}),
    "dns-clusterfirst": (m.edit(m.host, spec(dnsPolicy="ClusterFirst")), "off.yaml",
                         ["hostnetwork-dns"], {"hostnetwork-dns": "/spec"}),
    "dns-default": (m.edit(m.host, spec(dnsPolicy="Default")), "off.yaml", ["hostnetwork-dns"],
                    {}),
    "dns-none-is-explicit": (m.edit(m.host, spec(dnsPolicy="None",
                                                 dnsConfig={"nameservers": ["10.0.0.10"]})),
                             "off.yaml", [], {}),

    # -- ipc-lock-missing -------------------------------------------------------------------
    "ipc-no-security-context": (m.edit(m.sriov, NO_CAPS), "off.yaml", ["ipc-lock-missing"],
                                {"ipc-lock-missing": SC0}),
    "ipc-other-capability": (m.edit(m.sriov, caps("NET_ADMIN")), "off.yaml",
                             ["ipc-lock-missing"], {"ipc-lock-missing": SC0}),
    "ipc-hostnetwork": (m.edit(m.host, NO_CAPS), "off.yaml", ["ipc-lock-missing"],
                        {"ipc-lock-missing": SC0}),
    "ipc-shared": (m.edit(m.shared, NO_CAPS), "off.yaml", ["ipc-lock-missing"],
                   {"ipc-lock-missing": SC0}),
    "ipc-second-gpu-container": (m.edit(m.sriov, sidecar(with_gpu=True)), "off.yaml",
                                 ["ipc-lock-missing"],
                                 {"ipc-lock-missing": "/spec/containers/1"}),
    "ipc-all": (m.edit(m.sriov, caps("ALL")), "off.yaml", [], {}),
    # containerd's CRI prepends CAP_ again (CAP_CAP_IPC_LOCK); CRI-O strips it: a warning.
    "ipc-cap-prefix": (m.edit(m.sriov, caps("CAP_IPC_LOCK")), "off.yaml", ["ipc-lock-missing"],
                       {"ipc-lock-missing": SC0 + "/capabilities/add"}),
    "ipc-cap-prefix-and-bare": (m.edit(m.sriov, caps("CAP_IPC_LOCK", "IPC_LOCK")), "off.yaml",
                                [], {}),
    "ipc-lower-case": (m.edit(m.sriov, caps("ipc_lock")), "off.yaml", [], {}),
    "ipc-privileged-instead": (m.edit(m.sriov, container(securityContext={"privileged": True})),
                               "off.yaml", ["privileged-rdma"], {"privileged-rdma": C0}),
    "ipc-not-needed-on-tcp": (m.tcp(), "off.yaml", [], {}),
    "ipc-not-needed-on-cpu-sidecar": (m.edit(m.sriov, sidecar()), "off.yaml", [], {}),

    # -- ifname-not-attached ----------------------------------------------------------------
    "ifname-other-interface": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth2")), "off.yaml",
                               ["ifname-not-attached"], {"ifname-not-attached": C0}),
    "ifname-exact-longer": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "=eth10")), "off.yaml",
                            ["ifname-not-attached"], {}),
    "ifname-on-tcp": (m.edit(m.tcp, env("NCCL_SOCKET_IFNAME", "ib0")), "off.yaml",
                      ["ifname-not-attached"], {}),
    "ifname-default-net1": (m.edit(m.sriov, annotations({m.NET_KEY: "sriov-rdma-net"})),
                            "off.yaml", ["ifname-not-attached"], {}),
    "ifname-json-form-other": (m.edit(m.sriov, annotations(
        {m.NET_KEY: '[{"name":"sriov-rdma-net","interface":"eth3"}]'})), "off.yaml",
        ["ifname-not-attached"], {}),
    "ifname-position-not-shifted": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "other-net@eth5, sriov-rdma-net"}), env("NCCL_SOCKET_IFNAME", "net1")),
        "off.yaml", ["ifname-not-attached"], {}),
    "ifname-prefix-matches": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth")), "off.yaml", [],
                              {}),
    "ifname-exclusion-list": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "^docker,lo")),
                              "off.yaml", [], {}),
    "ifname-eth0": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth0")), "off.yaml", [], {}),
    "ifname-exact": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "=eth1")), "off.yaml", [], {}),
    "ifname-default-net1-used": (m.edit(m.sriov, annotations({m.NET_KEY: "sriov-rdma-net"}),
                                        env("NCCL_SOCKET_IFNAME", "net1")), "off.yaml", [], {}),
    "ifname-position-net2": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "other-net@eth5, sriov-rdma-net"}), env("NCCL_SOCKET_IFNAME", "net2")),
        "off.yaml", [], {}),
    "ifname-json-form": (m.edit(m.sriov, annotations(
        {m.NET_KEY: '[{"name":"sriov-rdma-net","namespace":"team-a","interface":"eth1"}]'})),
        "off.yaml", [], {}),
    "ifname-namespaced-item": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "team-a/sriov-rdma-net@eth1"})), "off.yaml", [], {}),
    "ifname-hostnetwork-any": (m.edit(m.host, env("NCCL_SOCKET_IFNAME", "ib0")), "off.yaml",
                               [], {}),

    # -- legacy-network-key -----------------------------------------------------------------
    "legacy-key-only": (m.edit(m.sriov, annotations({m.LEGACY_KEY: "sriov-rdma-net@eth1"}),
                               no_env("NCCL_SOCKET_IFNAME")), "off.yaml",
                        ["legacy-network-key", "vf-without-network"],
                        {"legacy-network-key": "/metadata"}),
    "legacy-key-beside-current": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "sriov-rdma-net@eth1", m.LEGACY_KEY: "sriov-rdma-net@eth1"})), "off.yaml",
        ["legacy-network-key"], {"legacy-network-key": "/metadata"}),

    # -- vf-without-network -----------------------------------------------------------------
    "vf-no-annotation": (m.edit(m.sriov, annotations(None), no_env("NCCL_SOCKET_IFNAME")),
                         "off.yaml", ["vf-without-network"], {}),
    # v2: any attachment may be the one that plugs the VF in; only its absence is certain.
    "vf-non-rdma-network": (m.edit(m.sriov, annotations({m.NET_KEY: "macvlan-rdma@eth1"})),
                            "off.yaml", [], {}),

    # -- network-without-vf -----------------------------------------------------------------
    "net-no-vf": (m.edit(m.sriov, limits(rdma__vf=None)), "off.yaml", ["network-without-vf"],
                  {}),
    "net-two-rails-one-vf": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "sriov-rdma-net@eth1, sriov-rdma-net@eth2"})), "off.yaml",
        ["network-without-vf"], {}),
    "net-two-rails-two-vfs": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "sriov-rdma-net@eth1, sriov-rdma-net@eth2"}), limits(rdma__vf=2)),
        "off.yaml", [], {}),

    # -- ib-disabled-with-rdma --------------------------------------------------------------
    "ib-off-with-vf": (m.edit(m.sriov, env("NCCL_IB_DISABLE", "1")), "off.yaml",
                       ["ib-disabled-with-rdma"], {"ib-disabled-with-rdma": C0}),
    "ib-off-with-shared": (m.edit(m.host, env("NCCL_IB_DISABLE", "2")), "off.yaml",
                           ["ib-disabled-with-rdma"], {}),
    "ib-off-with-network-only": (m.edit(m.tcp, annotations({m.NET_KEY: "sriov-rdma-net@eth1"}),
                                        caps("IPC_LOCK")),
                                 "off.yaml", ["ib-disabled-with-rdma", "network-without-vf"],
                                 {}),
    "ib-off-without-rdma": (m.edit(m.tcp, env("NCCL_IB_DISABLE", "2")), "off.yaml", [], {}),

    # -- hostnetwork-with-network-annotation --------------------------------------------------
    "hostnet-annotation": (m.edit(m.host, annotations({m.NET_KEY: "macvlan-rdma@net1"})),
                           "off.yaml", ["hostnetwork-with-network-annotation"], {}),

    # -- dra-host-network: the claim's template and class ride in the same stream ------------
    "dra-host-network": ([*m.DRA_OBJECTS, m.edit(m.dra, spec(hostNetwork=True,
                                                              dnsPolicy="ClusterFirstWithHostNet"))],
                         "off.yaml", ["dra-host-network"], {"dra-host-network": "/spec/hostNetwork"}),
    "dra-pod-network": ([*m.DRA_OBJECTS, m.dra()], "off.yaml", [], {}),

    # -- dra-fixed-ib-hca, dra-unaligned-claims, mnnvl-without-imex ---------------------------
    "dra-fixed-hca": ([*m.DRA_OBJECTS, m.edit(m.dra, env("NCCL_IB_HCA", "mlx5_0,mlx5_1"))],
                      "off.yaml", ["dra-fixed-ib-hca"], {"dra-fixed-ib-hca": C0 + "/env/"}),
    "dra-family-hca": ([*m.DRA_OBJECTS, m.edit(m.dra, env("NCCL_IB_HCA", "mlx5"))],
                       "off.yaml", [], {}),
    "dra-unaligned": ([*m.DRA_OBJECTS, GPU_CLASS, GPU_TEMPLATE,
                       m.edit(m.dra, spec(resourceClaims=[
                           {"name": "nics", "resourceClaimTemplateName": "rdma-nics"},
                           {"name": "gpus", "resourceClaimTemplateName": "gpus"}]))],
                      "off.yaml", ["dra-unaligned-claims"],
                      {"dra-unaligned-claims": "/spec/resourceClaims"}),
    "mnnvl-without-channel": ([COMPUTE_DOMAIN, GPU_JOB], "off.yaml", ["mnnvl-without-imex"],
                              {"mnnvl-without-imex": "/spec/template/spec"}),

    # -- mixed-paths -------------------------------------------------------------------------
    "mixed-host-and-sriov": (m.pytorchjob(m.host(), m.sriov()), "off.yaml", ["mixed-paths"], {}),
    "mixed-tcp-and-sriov": (m.pytorchjob(m.tcp(), m.sriov()), "off.yaml", ["mixed-paths"], {}),
    "mixed-same-path": (m.pytorchjob(m.sriov(), m.sriov()), "off.yaml", [], {}),
    "mixed-unknown-agrees": (m.pytorchjob(m.unknown(), m.sriov()), "off.yaml", [], {}),
    "mixed-launcher-does-not-count": (mpi(LAUNCHER_OK), "off.yaml", [], {}),

    # -- path-not-allowed --------------------------------------------------------------------
    "path-host-under-sriov": (m.edit(m.host, no_env("NCCL_SOCKET_IFNAME")), "sriov.yaml",
                              ["path-not-allowed"], {}),
    "path-sriov-under-sriov": (m.sriov(), "sriov.yaml", [], {}),
    "path-unknown-always-passes": (m.unknown(), "sriov.yaml", [], {}),
    "path-none-always-passes": (m.cpu_only(), "sriov.yaml", [], {}),
    "path-host-under-host": (m.host(), "hostnetwork.yaml", [], {}),

    # -- gid-index-mismatch (sriov.yaml: gidIndex 3, RoCE) ------------------------------------
    "gid-mismatch": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "5")), "sriov.yaml",
                     ["gid-index-mismatch"], {"gid-index-mismatch": C0}),
    "gid-same": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "3")), "sriov.yaml", [], {}),
    "gid-policy-auto": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "5")), "off.yaml", [], {}),

    # -- policy-conflict ---------------------------------------------------------------------
    # v2: a user's NCCL_SOCKET_IFNAME is never a conflict (eth0 may carry the bootstrap while
    # the VF carries RDMA); ifname-not-attached judges a value that selects no interface.
    "conflict-ifname-eth0": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth0")), "sriov.yaml",
                             [], {}),
    "conflict-ifname-prefix": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth")), "sriov.yaml",
                               [], {}),
    "conflict-ifname-exclusion": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "^lo")),
                                  "sriov.yaml", [], {}),
    "ifname-names-no-interface": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "ib9")),
                                  "sriov.yaml", ["ifname-not-attached"], {}),
    "conflict-network-renamed": (m.edit(m.sriov, annotations(
        {m.NET_KEY: "sriov-rdma-net@eth2"}), no_env("NCCL_SOCKET_IFNAME")), "sriov.yaml",
        ["policy-conflict"], {}),
    "conflict-hostnet-ifname-prefix": (m.edit(m.host, env("NCCL_SOCKET_IFNAME", "bond")),
                                       "hostnetwork.yaml", [], {}),
    "conflict-ifname-exact-equal": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "=eth1")),
                                    "sriov.yaml", [], {}),
    "conflict-hostnet-exact-equal": (m.edit(m.host, env("NCCL_SOCKET_IFNAME", "=bond0")),
                                     "hostnetwork.yaml", [], {}),
    "conflict-override-is-silent": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth0")),
                                    "override.yaml", [], {}),
    "conflict-mode-off-is-silent": (m.edit(m.sriov, env("NCCL_SOCKET_IFNAME", "eth0")),
                                    "off.yaml", [], {}),
    "conflict-api-defaults-are-unset": (m.edit(m.tcp, no_env("NCCL_IB_DISABLE"),
                                               no_env("NCCL_SOCKET_IFNAME"),
                                               spec(hostNetwork=False, dnsPolicy="ClusterFirst")),
                                        "hostnetwork.yaml", [], {}),
    "conflict-tcp-same-values": (m.tcp(), "tcp.yaml", [], {}),

    # -- invalid-nccl-value ------------------------------------------------------------------
    "invalid-ib-disable-true": (m.edit(m.sriov, env("NCCL_IB_DISABLE", "true")), "off.yaml",
                                ["invalid-nccl-value"], {"invalid-nccl-value": C0}),
    "invalid-ib-disable-yes": (m.edit(m.tcp, env("NCCL_IB_DISABLE", "yes")), "off.yaml",
                               ["invalid-nccl-value"], {}),
    "invalid-gid-word": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "abc")), "off.yaml",
                         ["invalid-nccl-value"], {}),
    "invalid-gid-minus-two": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "-2")), "off.yaml",
                              ["invalid-nccl-value"], {}),
    "invalid-gdr-lower-case": (m.edit(m.sriov, env("NCCL_NET_GDR_LEVEL", "pix")), "off.yaml",
                               ["invalid-nccl-value"], {}),
    "invalid-gdr-negative": (m.edit(m.sriov, env("NCCL_NET_GDR_LEVEL", "-1")), "off.yaml",
                             ["invalid-nccl-value"], {}),
    "valid-gid-auto": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "-1")), "off.yaml", [], {}),
    "valid-gid-zero": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "0")), "off.yaml", [], {}),
    "valid-gdr-names": (m.edit(m.sriov, env("NCCL_NET_GDR_LEVEL", "SYS")), "off.yaml", [], {}),
    "valid-gdr-phb": (m.edit(m.sriov, env("NCCL_NET_GDR_LEVEL", "PHB")), "off.yaml", [], {}),
    "valid-gdr-number": (m.edit(m.sriov, env("NCCL_NET_GDR_LEVEL", "2")), "off.yaml", [], {}),

    # -- privileged-rdma ---------------------------------------------------------------------
    "privileged-with-ipc-lock": (m.edit(m.sriov, container(securityContext={
        "privileged": True, "capabilities": {"add": ["IPC_LOCK"]}})), "off.yaml",
        ["privileged-rdma"], {"privileged-rdma": C0}),
    "privileged-on-tcp": (m.edit(m.tcp, container(securityContext={"privileged": True})),
                          "off.yaml", [], {}),

    # -- non-root-ipc-lock -------------------------------------------------------------------
    "nonroot-container-uid": (m.edit(m.sriov, container(securityContext={
        "runAsUser": 1000, "capabilities": {"add": ["IPC_LOCK"]}})), "off.yaml",
        ["non-root-ipc-lock"], {"non-root-ipc-lock": C0}),
    "nonroot-pod-uid": (m.edit(m.sriov, spec(securityContext={"runAsUser": 1000})), "off.yaml",
                        ["non-root-ipc-lock"], {}),
    "nonroot-run-as-non-root": (m.edit(m.sriov, spec(securityContext={"runAsNonRoot": True})),
                                "off.yaml", ["non-root-ipc-lock"], {}),
    "nonroot-container-overrides-pod": (m.edit(m.sriov, spec(securityContext={
        "runAsUser": 1000}), container(securityContext={
            "runAsUser": 0, "capabilities": {"add": ["IPC_LOCK"]}})), "off.yaml", [], {}),
    "nonroot-root": (m.edit(m.sriov, spec(securityContext={"runAsUser": 0})), "off.yaml", [], {}),
    "nonroot-on-tcp": (m.edit(m.tcp, spec(securityContext={"runAsUser": 1000})), "off.yaml", [],
                       {}),

    # -- rdma-device-missing -----------------------------------------------------------------
    "device-missing": (m.edit(m.host, limits(rdma__hca_shared_devices_a=None)), "off.yaml",
                       ["rdma-device-missing"], {}),
    "device-privileged": (m.edit(m.host, limits(rdma__hca_shared_devices_a=None), container(
        securityContext={"privileged": True})), "off.yaml", ["privileged-rdma"], {}),
    "device-host-path-mount": (m.edit(m.host, limits(rdma__hca_shared_devices_a=None), lambda d: (
        d["spec"]["volumes"].append({"name": "ib", "hostPath": {"path": "/dev/infiniband"}}),
        m.c0(d)["volumeMounts"].append({"name": "ib", "mountPath": "/dev/infiniband"}))),
        "off.yaml", ["rdma-device-hostpath"], {"rdma-device-hostpath": C0 + "/volumeMounts"}),
    # privileged is what grants the devices there: no hostpath error, and privileged-rdma's fix
    # names the device resource instead of advising to drop privileged alone.
    "device-host-path-mount-privileged": (m.edit(
        m.host, limits(rdma__hca_shared_devices_a=None), lambda d: (
            d["spec"]["volumes"].append({"name": "ib", "hostPath": {"path": "/dev/infiniband"}}),
            m.c0(d)["volumeMounts"].append({"name": "ib", "mountPath": "/dev/infiniband"}),
            m.c0(d)["securityContext"].update(privileged=True))),
        "off.yaml", ["privileged-rdma"], {}),
    "device-ib-disabled": (m.edit(m.host, limits(rdma__hca_shared_devices_a=None),
                                  env("NCCL_IB_DISABLE", "1")), "off.yaml", [], {}),

    # -- hostnetwork-fixed-port --------------------------------------------------------------
    "port-declared": (m.edit(m.host, container(ports=[{"containerPort": 29500}])), "off.yaml",
                      ["hostnetwork-fixed-port"], {}),
    "port-master-port": (m.edit(m.host, env("MASTER_PORT", "23456")), "off.yaml",
                         ["hostnetwork-fixed-port"], {}),
    "port-exclusive-nodes": (m.edit(m.host, container(ports=[{"containerPort": 29500}])),
                             "hostnetwork.yaml", [], {}),
    "port-not-hostnetwork": (m.edit(m.sriov, container(ports=[{"containerPort": 29500}]),
                                    env("MASTER_PORT", "23456")), "off.yaml", [], {}),

    # -- shm-too-small -----------------------------------------------------------------------
    "shm-missing": (m.edit(m.sriov, m.drop_shm), "off.yaml", ["shm-too-small"],
                    {"shm-too-small": C0}),
    "shm-disk-backed": (m.edit(m.sriov, spec(volumes=[{"name": "dshm", "emptyDir": {}}])),
                        "off.yaml", ["shm-too-small"], {}),
    "shm-host-ipc": (m.edit(m.sriov, m.drop_shm, spec(hostIPC=True)), "off.yaml", [], {}),
    "shm-not-rdma": (m.edit(m.tcp, m.drop_shm), "off.yaml", [], {}),

    # -- gang-incomplete ---------------------------------------------------------------------
    "gang-below-replicas": (volcano(2), "off.yaml", ["gang-incomplete"], {}),
    "gang-equal": (volcano(4), "off.yaml", [], {}),

    # -- gid-index-on-ib (gid-ib.yaml: fabric ib) ---------------------------------------------
    "gid-on-ib": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "3")), "gid-ib.yaml",
                  ["gid-index-on-ib"], {}),
    "gid-on-ib-unset": (m.sriov(), "gid-ib.yaml", [], {}),
    "gid-on-roce": (m.edit(m.sriov, env("NCCL_IB_GID_INDEX", "3")), "off.yaml", [], {}),

    # -- launcher-args-conflict --------------------------------------------------------------
    "launcher-mpirun-x-conflict": (mpi(LAUNCHER_BAD), "off.yaml", ["launcher-args-conflict"],
                                   {}),
    "launcher-mpirun-x-ib-off": (mpi(LAUNCHER_IB_OFF), "off.yaml", ["launcher-args-conflict"],
                                 {}),
    "launcher-export-conflict": (m.edit(m.sriov, container(command=SH_EXPORT)), "off.yaml",
                                 ["launcher-args-conflict"], {}),
    "launcher-agrees": (mpi(LAUNCHER_OK), "off.yaml", [], {}),

    # -- invalid-ignore-check ----------------------------------------------------------------
    "ignore-check-typo": (m.edit(m.sriov, annotate("ignore-check.rdma-webhook.io/shm-to-small")),
                          "off.yaml", ["invalid-ignore-check"],
                          {"invalid-ignore-check": "/metadata/annotations/"}),
    "ignore-check-policy-rule": (m.edit(m.sriov,
                                        annotate("ignore-check.rdma-webhook.io/path-not-allowed")),
                                 "off.yaml", ["invalid-ignore-check"], {}),
    "ignore-check-known-rule": (m.edit(m.sriov,
                                       annotate("ignore-check.rdma-webhook.io/shm-too-small")),
                                "off.yaml", [], {}),
    # -- unknown-nic-resource ----------------------------------------------------------------
    "nic-resource-unknown": (m.edit(m.tcp, limit("example.com/sriov_rail0", 1)), "off.yaml",
                             ["unknown-nic-resource"],
                             {"unknown-nic-resource": C0 + "/resources/limits/example.com~1"}),
    "nic-resource-known": (m.edit(m.tcp, limit("rdma/hca_shared_devices_a", 1)), "off.yaml",
                           ["ib-disabled-with-rdma"], {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_case(case, write):
    doc, policy, expected, pointers = CASES[case]
    r, data = check(write(doc), policy=policy)
    assert data is not None, r
    results = workload_results(data)
    assert len(results) == 1, r
    res = results[0]
    assert rules_of(res) == sorted(expected), r
    for f in res["findings"]:
        allowed = SEVERITY[f["rule"]]
        assert f["severity"] in (allowed if isinstance(allowed, tuple) else (allowed,)), f
        assert isinstance(f["message"], str) and len(f["message"]) > 20, f
        assert isinstance(f["pointer"], str), f
        assert f["pointer"] == "" or f["pointer"].startswith("/"), f
    for rule, prefix in pointers.items():
        hits = [f["pointer"] for f in res["findings"] if f["rule"] == rule]
        assert hits and all(p.startswith(prefix) for p in hits), (rule, prefix, hits)
    errors = [f for f in res["findings"] if f["severity"] == "error"]
    assert r.rc == (1 if errors else 0), r
    assert data["summary"]["errors"] == len(errors), r


def test_every_rule_has_a_firing_case():
    from test_trainer import FIRED as TRAINER  # TrainJobs need their runtime beside them
    # network-not-found needs a cluster's listing: its example runs through `check --cluster`
    # (test_rules_reference.py).
    fired = {rule for _, _, expected, _ in CASES.values() for rule in expected} | TRAINER
    assert fired | {"network-not-found"} == set(SEVERITY)


PATH_CASES = {
    "sriov": (m.sriov(), "sriov", True),
    "hostnetwork": (m.host(), "hostNetwork", True),
    "shared": (m.shared(), "shared", True),
    "tcp": (m.tcp(), "tcp", False),
    "unknown": (m.unknown(), "unknown", False),
    "cpu-only": (m.cpu_only(), "none", False),
    "gpu-no-signal": (m.edit(m.tcp, no_env("NCCL_IB_DISABLE"), no_env("NCCL_SOCKET_IFNAME")),
                      "none", False),
    "ib-disabled-keeps-sriov-path": (m.edit(m.sriov, env("NCCL_IB_DISABLE", "1")), "sriov",
                                     False),
    "hostnetwork-beats-vf": (m.edit(m.host, limits(rdma__vf=1)), "hostNetwork", True),
    "network-without-claim-is-sriov": (m.edit(m.sriov, limits(rdma__vf=None)), "sriov", True),
    "vf-in-second-container": (m.edit(m.sriov, limits(rdma__vf=None), lambda d: d["spec"][
        "containers"].append({"name": "vf-holder", "image": "busybox",
                              "resources": {"limits": {"rdma/vf": 1}}})), "sriov", True),
    "mixed": (m.pytorchjob(m.host(), m.sriov()), "mixed", True),
    "unknown-agrees": (m.pytorchjob(m.unknown(), m.sriov()), "sriov", True),
    "all-unknown": (m.pytorchjob(m.unknown(), m.unknown()), "unknown", False),
    "launcher-args-never-change-path": (mpi(LAUNCHER_IB_OFF), "sriov", True),
    "export-never-changes-path": (m.edit(m.sriov, container(command=SH_EXPORT)), "sriov", True),
    "ib-disable-true-is-not-tcp": (m.edit(m.tcp, env("NCCL_IB_DISABLE", "true")), "none",
                                   False),
}


@pytest.mark.parametrize("case", sorted(PATH_CASES))
def test_path_and_rdma(case, write):
    doc, path, rdma = PATH_CASES[case]
    r, data = check(write(doc))
    assert data is not None, r
    res = data["results"][0]
    assert (res["path"], res["rdma"]) == (path, rdma), r


def test_invalid_ib_disable_message_says_what_nccl_does(write):
    doc = m.edit(m.sriov, env("NCCL_IB_DISABLE", "true"))
    r, data = check(write(doc))
    [f] = data["results"][0]["findings"]
    assert "NCCL_IB_DISABLE" in f["message"], f
    # NCCL reads "true" with strtoll: 0, so IB stays enabled. The message must say so.
    assert "0" in f["message"] or "enabled" in f["message"].lower(), f


def test_fixed_port_message_says_which(write):
    _, data = check(write(m.edit(m.host, container(ports=[{"containerPort": 29500}]))))
    [f] = data["results"][0]["findings"]
    assert "pending" in f["message"].lower(), f
    _, data = check(write(m.edit(m.host, env("MASTER_PORT", "23456"))))
    [f] = data["results"][0]["findings"]
    assert "bind" in f["message"].lower(), f


def test_contract_example_pointer(write):
    """The exact situation of docs/cli.md's `-o json` example: pointer into the Worker's securityContext."""
    worker = m.edit(m.sriov, NO_CAPS)
    job = m.pytorchjob(m.cpu_only(), worker)
    job["metadata"] = {"name": "llama-70b", "namespace": "team-a"}
    r, data = check(write(job, name="train.yaml"))
    res = data["results"][0]
    assert (res["kind"], res["path"], res["rdma"]) == ("PyTorchJob", "sriov", True)
    [f] = [f for f in res["findings"] if f["rule"] == "ipc-lock-missing"]
    assert f["pointer"] == ("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/"
                            "securityContext"), f
    assert "trainer" in f["message"], f


@pytest.mark.parametrize("kind_file", sorted(m.TEMPLATES))
def test_rules_point_into_each_kinds_templates(kind_file, write):
    """hostNetwork without DNS policy or IPC_LOCK in every GPU template of every kind: one
    finding per template / GPU container, each pointing into its own template."""
    doc = m.golden(f"kinds/{kind_file}")
    expected, gpu_templates = [], []
    for tp in m.TEMPLATES[kind_file]:
        spec = m.resolve(doc, tp)["spec"]
        gpu = [i for i, c in enumerate(spec["containers"]) if m.is_gpu(c)]
        if not gpu:
            continue
        gpu_templates.append(tp + "/")
        spec["hostNetwork"] = True
        if kind_file == "volcano-job.yaml":  # Volcano's webhook fills an absent dnsPolicy
            spec["dnsPolicy"] = "Default"
        for i in gpu:  # v2: a sign of RDMA, so that the host network means RDMA here
            m.set_env(spec["containers"][i], "NCCL_IB_HCA", "mlx5")
        # mpi-operator's v2beta1 controller sets ClusterFirstWithHostNet over any dnsPolicy
        if kind_file != "mpijob-v2beta1.yaml":
            expected.append(("hostnetwork-dns", f"{tp}/spec"))
        expected += [("ipc-lock-missing", f"{tp}/spec/containers/{i}") for i in gpu]
    r, data = check(write(doc))
    [res] = data["results"]
    assert res["path"] == "hostNetwork" and res["rdma"], r
    errors = sorted((f["rule"], f["pointer"]) for f in res["findings"]
                    if f["severity"] == "error")
    assert [rule for rule, _ in errors] == sorted(rule for rule, _ in expected), r
    for rule, prefix in expected:
        hits = [p for rl, p in errors if rl == rule and
                (p == prefix or p.startswith(prefix + "/"))]
        assert hits, (rule, prefix, errors)
    for f in res["findings"]:  # nothing points into a template without GPU containers
        assert any(f["pointer"].startswith(tp) for tp in gpu_templates), f
