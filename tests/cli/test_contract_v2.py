"""Contract v2 through the CLI: one case per behaviour the v2 changes name, and the property that
mutation never makes validation deny for a rule the input did not already break.

Cases run under the embedded default policy unless they bring their own; each asserts what a
user reads in `check -o json` (path, rdma, rules by severity, evidence) or `mutate -o patch`.
"""
import copy
import json
import random

import pytest
import yaml

from conftest import GOLDEN, POLICIES, check, dump_docs, rw
from rfc6902 import apply_patch

NET_KEY = "k8s.v1.cni.cncf.io/networks"


def gpu(name="trainer", limits=None, env=(), caps=None, privileged=None, mounts=(), **extra):
    c = {"name": name, "image": extra.pop("image", "example.com/train:1"),
         "resources": {"limits": {"nvidia.com/gpu": 8, **(limits or {})}}}
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env]
    sc = {}
    if caps:
        sc["capabilities"] = {"add": list(caps)}
    if privileged is not None:
        sc["privileged"] = privileged
    if sc:
        c["securityContext"] = sc
    c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}] + list(mounts)
    c.update(extra)
    return c


def spec(containers, volumes=(), **kv):
    s = dict(kv)
    s["containers"] = containers
    s["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}] + list(volumes)
    return s


def pod(containers, annotations=None, volumes=(), **kv):
    meta = {"name": "p"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec(containers, volumes, **kv)}


def mpijob(worker_spec, replicas=2, annotations=None):
    tmpl = {"spec": worker_spec}
    if annotations:
        tmpl["metadata"] = {"annotations": annotations}
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "j"},
            "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "launcher", "image": "mpi"}]}}},
                "Worker": {"replicas": replicas, "template": tmpl}}}}


IB_HOSTPATH = {"name": "ib", "hostPath": {"path": "/dev/infiniband"}}
IB_MOUNT = {"name": "ib", "mountPath": "/dev/infiniband"}
HOST = {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}


def result(tmp_path, doc, policy=None, ns="default", name="m.yaml"):
    f = tmp_path / name
    f.write_text(dump_docs(doc if isinstance(doc, list) else [doc]))
    pol = None
    if policy is not None:
        pol = tmp_path / "policy.yaml"
        pol.write_text(policy)
    r, data = check(f, policy=pol, extra=("--namespace", ns))
    assert data is not None, r
    return r, data["results"]


def errors(res):
    return sorted(f["rule"] for f in res["findings"] if f["severity"] == "error")


def warnings(res):
    return sorted(f["rule"] for f in res["findings"] if f["severity"] == "warning")


# name -> (document, expected path, rdma, error rules, warnings that must appear, evidence part)
CASES = {
    # 1. Real resource names, as globs; unknown NIC-like names get a hint.
    "shared-glob-network-operator-name": (
        pod([gpu(limits={"rdma/rdma_shared_device_b": 1}, caps=["IPC_LOCK"])]),
        "shared", True, [], [], "limits rdma/rdma_shared_device_b=1"),
    "vf-glob-openshift-pool": (
        pod([gpu(limits={"openshift.io/mlxnics": 1}, caps=["IPC_LOCK"])],
            annotations={NET_KEY: "rdma-net@net1"}),
        "sriov", True, [], [], "limits openshift.io/mlxnics=1"),
    "amd-gpu-with-coreweave-ib": (
        pod([{"name": "w", "image": "rocm", "resources": {"limits": {
            "amd.com/gpu": 8, "rdma/ib": 1}}}]),
        "shared", True, ["ipc-lock-missing"], ["shm-too-small"], "limits rdma/ib=1"),
    "unknown-nic-resource-hint": (
        pod([gpu(limits={"example.com/rdma_nic": 1})]), "none", False, [], [],
        "claims example.com/rdma_nic, which the policy does not know"),
    # 2. The plugin path: never RDMA findings.
    "plugin-tcpx-env": (
        pod([gpu(env=[("NCCL_GPUDIRECTTCPX_FORCE_ACK", "0")])], **HOST), "plugin", False, [], [],
        "plugin:"),
    "plugin-efa-claim-without-ipc-lock": (
        mpijob(spec([gpu(limits={"vpc.amazonaws.com/efa": 4})])), "plugin", False, [], [],
        "vpc.amazonaws.com/efa"),
    "plugin-nccl-net-libfabric": (
        pod([gpu(env=[("NCCL_NET", "AWS Libfabric")])]), "plugin", False, [], [], "NCCL_NET="),
    "plugin-tcpxo-daemon-init-image": (
        pod([gpu()], initContainers=[{"name": "rx", "image": "x/tcpgpudmarxd-dev:v1"}], **HOST),
        "plugin", False, [], [], "receive-datapath"),
    # 12. Platform-attached NICs (GKE multi-networking): sriov, Multus rules silent.
    "gke-gib-interfaces": (
        pod([gpu(env=[("NCCL_SOCKET_IFNAME", "eth2")])], annotations={
            "networking.gke.io/interfaces": json.dumps([
                {"interfaceName": "eth0", "network": "default"},
                {"interfaceName": "eth2", "network": "rdma-0"}])}),
        "sriov", True, ["ipc-lock-missing"], [], "GKE multi-networking"),
    "gke-nccl-net-gib": (
        pod([gpu(env=[("NCCL_NET", "gIB")], caps=["IPC_LOCK"])]), "sriov", True, [], [],
        "NCCL_NET=gIB"),
    # 11. RDMA needs a sign on hostNetwork.
    "hostnet-gpu-inference-no-sign": (
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"},
         "spec": {"replicas": 3, "template": {"spec": spec([gpu()], hostNetwork=True)}}},
        "hostNetwork", False, [], ["hostnetwork-dns"], "without a sign of RDMA"),
    "hostnet-nccl-net-ib-is-a-sign": (
        pod([gpu(env=[("NCCL_NET", "IB")])], **HOST), "hostNetwork", True,
        ["ipc-lock-missing"], ["rdma-device-missing"], "NCCL_NET=IB"),
    "hostnet-multinode-mpijob-is-a-sign": (
        mpijob(spec([gpu()], **HOST), replicas=2), "hostNetwork", True, ["ipc-lock-missing"],
        [], "multi-node MPIJob"),
    "hostnet-single-worker-mpijob-no-sign": (
        mpijob(spec([gpu()], **HOST), replicas=1), "hostNetwork", False, [], [],
        "without a sign of RDMA"),
    # 3. Device access as the device cgroup sees it.
    "hostpath-infiniband-without-grant": (
        pod([gpu(caps=["IPC_LOCK"], mounts=[IB_MOUNT])], volumes=[IB_HOSTPATH], **HOST),
        "hostNetwork", True, ["rdma-device-hostpath"], [], "IPC_LOCK added"),
    "hostpath-infiniband-privileged": (
        pod([gpu(caps=["IPC_LOCK"], privileged=True, mounts=[IB_MOUNT])], volumes=[IB_HOSTPATH],
            **HOST),
        "hostNetwork", True, [], ["privileged-rdma"], "privileged: true"),
    "hostpath-infiniband-with-dra-claim": (
        pod([gpu(caps=["IPC_LOCK"], mounts=[IB_MOUNT])], volumes=[IB_HOSTPATH],
            resourceClaims=[{"name": "nic", "resourceClaimTemplateName": "rdma"}], **HOST),
        "hostNetwork", True, [], [], "IPC_LOCK added"),
    "hostpath-infiniband-with-nri-annotation": (
        pod([gpu(caps=["IPC_LOCK"], mounts=[IB_MOUNT])], volumes=[IB_HOSTPATH],
            annotations={"devices.nri.io/container.trainer": "- path: /dev/infiniband/uverbs0"},
            **HOST),
        "hostNetwork", True, [], [], "IPC_LOCK added"),
    # 9. vf-without-network needs the absence of any attachment; its severity follows the fabric.
    "vf-with-unknown-network-is-fine": (
        pod([gpu(limits={"rdma/vf": 1}, caps=["IPC_LOCK"])], annotations={NET_KEY: "other@net1"}),
        "sriov", True, [], [], "annotation attaches other@net1"),
    "vf-without-any-network-unknown-fabric": (
        pod([gpu(limits={"rdma/vf": 1}, caps=["IPC_LOCK"])]), "sriov", True, [],
        ["vf-without-network"], "limits rdma/vf=1"),
    # 10. Trainer runtimes are workloads.
    "training-runtime-judged": (
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
         "metadata": {"name": "torch"}, "spec": {"template": {"spec": {"replicatedJobs": [
             {"name": "node", "template": {"spec": {"template": {"spec": spec([gpu(
                 limits={"rdma/vf": 1})], )}}}}]}}}},
        "sriov", True, ["ipc-lock-missing"], ["vf-without-network"], "limits rdma/vf=1"),
    # What a DRA claim holds is read from its template and DeviceClass (tests/cli/
    # test_catalogue.py), never from its name: without them the claim is unknown, quietly,
    # whether it is called rdma-nics or channel.
    "dra-nic-named-claim-without-its-template-is-unknown": (
        mpijob(spec([gpu(caps=["IPC_LOCK"], resources={
            "limits": {"nvidia.com/gpu": 8}, "claims": [{"name": "rdma-nics"}]})],
            resourceClaims=[{"name": "rdma-nics", "resourceClaimTemplateName": "8nic-all"}])),
        "unknown", False, [], [], "8nic-all unknown: not among the inputs"),
    "dra-claim-without-its-template-is-unknown": (
        mpijob(spec([gpu(caps=["IPC_LOCK"], resources={
            "limits": {"nvidia.com/gpu": 8}, "claims": [{"name": "channel"}]})],
            resourceClaims=[{"name": "channel", "resourceClaimTemplateName": "imex-channel"}])),
        "unknown", False, [], [], "imex-channel unknown: not among the inputs"),
    # The API server takes a resource written without a value.
    "null-quantity-is-absent": (
        pod([gpu(limits={"rdma/vf": None, "rdma/rdma_shared_device_a": 1}, caps=["IPC_LOCK"])]),
        "shared", True, [], [], "limits rdma/rdma_shared_device_a=1"),
    # 6. A none result says why.
    "not-a-workload-says-so": (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "none", False, [],
        [], "is not a workload kind"),
    "dra-only-gpus-say-so": (
        pod([{"name": "t", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpus"}]),
        "none", False, [], [], "GPUs only through DRA claims"),
    "cpu-daemonset-no-findings": (
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "dp"},
         "spec": {"template": {"spec": {"hostNetwork": True, "containers": [
             {"name": "dp", "image": "plugin", "securityContext": {"privileged": True}}]}}}},
        "none", False, [], [], "no GPU container"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_v2_case(name, tmp_path):
    doc, path, rdma, errs, warns, evidence = CASES[name]
    r, [res] = result(tmp_path, doc)
    assert res["path"] == path, r
    assert res["rdma"] == rdma, r
    assert errors(res) == sorted(errs), r
    for w in warns:
        assert w in warnings(res), r
    assert any(evidence in e for e in res["evidence"]), r
    if path == "plugin":
        rdma_rules = {"ipc-lock-missing", "privileged-rdma", "rdma-device-missing",
                      "rdma-device-hostpath", "shm-too-small", "non-root-ipc-lock"}
        assert not rdma_rules & {f["rule"] for f in res["findings"]}, r
    assert r.rc == (1 if errs else 0), r


def test_privileged_rdma_fix_never_only_drops_privileged(tmp_path):
    doc = CASES["hostpath-infiniband-privileged"][0]
    _, [res] = result(tmp_path, doc)
    [f] = [f for f in res["findings"] if f["rule"] == "privileged-rdma"]
    assert "claim an RDMA device resource" in f["fix"], f
    # Once a device resource grants the devices, dropping privileged is the whole fix.
    doc = copy.deepcopy(doc)
    doc["spec"]["containers"][0]["resources"]["limits"]["rdma/rdma_shared_device_a"] = 1
    _, [res] = result(tmp_path, doc)
    [f] = [f for f in res["findings"] if f["rule"] == "privileged-rdma"]
    assert f["fix"].startswith("drop privileged"), f


def test_privileged_rdma_fix_keeps_privileged_for_a_claim_that_may_not_grant_devices(tmp_path):
    """An IMEX-channel DRA claim does not pass the verbs devices: with a /dev/infiniband hostPath,
    privileged is what makes RDMA work, so the fix never says to drop it on that claim's word."""
    doc = pod([gpu(caps=["IPC_LOCK"], privileged=True, mounts=[IB_MOUNT],
                   resources={"limits": {"nvidia.com/gpu": 4}, "claims": [{"name": "channel"}]})],
              volumes=[IB_HOSTPATH], **HOST,
              resourceClaims=[{"name": "channel", "resourceClaimTemplateName": "imex-channel"}])
    _, [res] = result(tmp_path, doc)
    [f] = [f for f in res["findings"] if f["rule"] == "privileged-rdma"]
    assert not f["fix"].startswith("drop privileged"), f
    assert "rdma/rdma_shared_device_a" in f["fix"], f


POLICY_HEAD = """apiVersion: rdma-webhook/v1
kind: Policy
resources: {vf: [rdma/vf, intel.com/sriov*], shared: [rdma/rdma_shared_device_*]}
defaults: {mode: off, validation: deny}
"""


def test_rules_levels_lower_and_drop_a_rule_per_namespace(tmp_path):
    policy = POLICY_HEAD + """namespaces:
  - names: [memlock-raised]
    rules: {ipc-lock-missing: warning, shm-too-small: off}
"""
    doc = pod([{"name": "w", "image": "x",
                "resources": {"limits": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1}}}])
    r, [res] = result(tmp_path, doc, policy, ns="memlock-raised")
    assert errors(res) == [] and warnings(res) == ["ipc-lock-missing"], r
    assert r.rc == 0, r
    r, [res] = result(tmp_path, doc, policy, ns="elsewhere")
    assert errors(res) == ["ipc-lock-missing"] and "shm-too-small" in warnings(res), r


def test_unknown_rule_id_is_a_policy_error_naming_it(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text(POLICY_HEAD + "namespaces:\n  - names: [a]\n    rules: {ipc-lock-mising: off}\n")
    r = rw("policy", "validate", p)
    assert r.rc == 1, r
    assert "namespaces[0].rules.ipc-lock-mising" in r.err + r.out, r


def test_entries_take_omitted_fields_from_defaults(tmp_path):
    policy = POLICY_HEAD.replace("validation: deny", "validation: warn") + """namespaces:
  - names: [team]
    mode: sriov
    sriov: {network: rdma-net, interface: net1}
"""
    doc = pod([gpu(limits={"rdma/vf": 1})], annotations={NET_KEY: "rdma-net@net1"})
    _, [res] = result(tmp_path, doc, policy, ns="team")
    assert res["enforcement"] == "warn", res


def test_volcano_defaults_are_respected(tmp_path):
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v"},
           "spec": {"minAvailable": 0, "tasks": [
               {"name": "w", "replicas": 4,
                "template": {"spec": spec([gpu(caps=["IPC_LOCK"])], hostNetwork=True)}}]}}
    r, [res] = result(tmp_path, job)
    assert "hostnetwork-dns" not in {f["rule"] for f in res["findings"]}, r
    assert "gang-incomplete" not in warnings(res), r
    job["spec"]["minAvailable"] = 2
    r, [res] = result(tmp_path, job)
    assert "gang-incomplete" in warnings(res), r


def mutate_patch(tmp_path, doc, policy, ns):
    f = tmp_path / "in.yaml"
    f.write_text(dump_docs([doc]))
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    r = rw("mutate", "-o", "patch", "--policy", pol, "--namespace", ns, f)
    [line] = [l for l in r.out.splitlines() if l.strip()]
    return r, json.loads(line)


MODES = POLICY_HEAD + """namespaces:
  - names: [host]
    mode: hostNetwork
    hostNetwork: {deviceResource: rdma/rdma_shared_device_a}
  - names: [sriov]
    mode: sriov
    sriov: {network: sriov-rdma-net, interface: eth1, resource: rdma/vf}
  - names: [sriov-over]
    mode: sriov
    onConflict: override
    sriov: {network: sriov-rdma-net, interface: eth1, resource: rdma/vf}
"""


def assert_keeps_own_rails(patch, mode_resource):
    # no attachment, no claim of the mode's resource, no ifname; the rest of the mode still
    paths = [op["path"] for op in patch]
    assert not any("networks" in p or mode_resource in p for p in paths), patch
    assert "NCCL_SOCKET_IFNAME" not in json.dumps(patch), patch
    assert "IPC_LOCK" in json.dumps(patch), patch


def test_own_rails_are_kept(tmp_path):
    doc = pod([gpu(limits={"intel.com/sriov_a": 1, "intel.com/sriov_b": 1})],
              annotations={NET_KEY: "rail-a, rail-b"})
    r, patch = mutate_patch(tmp_path, doc, MODES, "sriov")
    assert_keeps_own_rails(patch, "rdma~1vf")


def test_own_rails_beside_a_shared_claim_are_kept(tmp_path):
    # a shared HCA already claimed, with the template's own attachment (an IPoIB network) on
    # the interface the mode would use: kept as written, not a conflict over net1
    policy = MODES + """  - names: [shared]
    mode: shared
    validation: deny
    onConflict: reject
    shared: {resource: rdma/rdma_shared_device_a, network: macvlan-net, interface: net1}
"""
    doc = pod([gpu(limits={"rdma/rdma_shared_device_b": 1})],
              annotations={NET_KEY: "ipoib-net@net1"})
    r, patch = mutate_patch(tmp_path, doc, policy, "shared")
    assert_keeps_own_rails(patch, "rdma_shared_device_a")
    r, [res] = result(tmp_path, doc, policy, ns="shared")
    assert "policy-conflict" not in errors(res), r
    # without a shared claim of its own the mode still attaches its network
    r, patch = mutate_patch(tmp_path, pod([gpu()]), policy, "shared")
    assert any("networks" in op["path"] or "annotations" in json.dumps(op) for op in patch), patch


def test_injector_claims_the_vfs(tmp_path):
    policy = MODES.replace("defaults:", "networkResourcesInjector: true\ndefaults:")
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": spec([gpu()])}}}
    _, patch = mutate_patch(tmp_path, job, policy, "sriov")
    assert patch and not any("rdma~1vf" in op["path"] for op in patch), patch
    # The injector fills the template's pods; the template itself may lack the claim.
    job["spec"]["template"]["metadata"] = {"annotations": {NET_KEY: "sriov-rdma-net@eth1"}}
    p = tmp_path / "policy.yaml"
    p.write_text(policy)
    r, [res] = result(tmp_path, job, policy, ns="sriov")
    assert "network-without-vf" not in errors(res), r
    r, [res] = result(tmp_path, pod([gpu()], annotations={NET_KEY: "sriov-rdma-net@eth1"}),
                      policy, ns="sriov")
    assert "network-without-vf" in errors(res), r


def test_an_unstated_injector_is_named_in_a_templates_fix(tmp_path):
    # The default says no injector runs (docs/policy.md), so a template lacking its VF is
    # an error; a policy that never wrote the field may not know the cluster runs one
    # (OpenShift's SR-IOV operator deploys it by default), so the fix names the field. A
    # policy that wrote `false` knows, and a bare Pod has been through any injector already.
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"metadata": {"annotations": {NET_KEY: "sriov-rdma-net@eth1"}},
                                 "spec": spec([gpu()])}}}

    def finding(doc, policy=None, ns="default"):
        r, [res] = result(tmp_path, doc, policy, ns=ns)
        assert "network-without-vf" in errors(res), r
        return next(f for f in res["findings"] if f["rule"] == "network-without-vf")

    assert "networkResourcesInjector: true" in finding(job)["fix"]
    stated = MODES.replace("defaults:", "networkResourcesInjector: false\ndefaults:")
    assert "networkResourcesInjector" not in finding(job, stated, "sriov")["fix"]
    bare = pod([gpu()], annotations={NET_KEY: "sriov-rdma-net@eth1"})
    assert "networkResourcesInjector" not in finding(bare)["fix"]


def test_an_rdma_mode_never_plumbs_rdma_under_nccl_net_socket(tmp_path):
    # NCCL_NET=Socket starts only NCCL's socket transport: a VF, network and IPC_LOCK would
    # sit idle. The mode does not own NCCL_NET, so it changes nothing and validation says why.
    doc = pod([gpu(env=[("NCCL_NET", "Socket")])])
    for ns in ("sriov", "host"):
        r, patch = mutate_patch(tmp_path, doc, MODES, ns)
        assert patch == [], (ns, patch)
        assert "conflicts with" in r.err, r
        r, [res] = result(tmp_path, doc, MODES, ns=ns)
        assert "policy-conflict" in errors(res), r
        f = next(f for f in res["findings"] if f["rule"] == "policy-conflict")
        assert "NCCL_NET=Socket" in f["message"] and f["pointer"].endswith("/env/0/value"), f
    r, patch = mutate_patch(tmp_path, pod([gpu(env=[("NCCL_NET", "IB")])]), MODES, "sriov")
    assert patch, r


def test_hostnetwork_mode_never_writes_what_it_then_denies(tmp_path):
    # A macvlan attachment leaves the template on path none: the mode manages it, and Multus
    # would not act on it once on the host network.
    doc = pod([gpu()], annotations={NET_KEY: "macvlan-net@net1"})
    _, patch = mutate_patch(tmp_path, doc, MODES, "host")
    assert patch == [], patch
    r, [res] = result(tmp_path, doc, MODES, ns="host")
    assert "policy-conflict" in errors(res), r
    assert "hostnetwork-with-network-annotation" not in errors(res), r


def test_override_never_renames_onto_a_taken_interface(tmp_path):
    doc = pod([gpu(limits={"rdma/vf": 1})], annotations={NET_KEY: "sriov-rdma-net@net1, x@eth1"})
    _, patch = mutate_patch(tmp_path, doc, MODES, "sriov-over")
    assert patch == [], patch
    r, [res] = result(tmp_path, doc, MODES, ns="sriov-over")
    assert "policy-conflict" in errors(res), r


# -- No self-denial: the property, in every mode ------------------------------------------------

PROPERTY_POLICIES = ["sriov.yaml", "hostnetwork.yaml", "shared.yaml", "tcp.yaml", "override.yaml",
                     "sriov-multirail.yaml", "vendor-key.yaml", "sriov-short.yaml"]


def property_corpus():
    docs = []
    for p in sorted(GOLDEN.rglob("*")):
        if p.suffix not in (".yaml", ".yml", ".json") or "policies" in p.parts:
            continue
        try:
            docs += [d for d in yaml.safe_load_all(p.read_text()) if isinstance(d, dict)]
        except yaml.YAMLError:
            pass
    real = GOLDEN.parents[2].parent / "shared" / "realworld" / "manifests"
    if real.is_dir():
        for p in sorted(real.glob("*.yaml")):
            docs += [d for d in yaml.safe_load_all(p.read_text()) if isinstance(d, dict)]
    # One input document per result: List items stand alone, as the CLI expands them.
    flat = []
    for d in docs:
        if d.get("kind") == "List" and isinstance(d.get("items"), list):
            flat += [i for i in d["items"] if isinstance(i, dict)]
        else:
            flat.append(d)
    docs = flat
    # Seeded variants that flip the knobs the modes manage.
    rng = random.Random(20261201)
    knobs = [("hostNetwork", True), ("hostNetwork", False), ("dnsPolicy", "Default"),
             ("dnsPolicy", "None")]
    envs = [("NCCL_SOCKET_IFNAME", "eth0"), ("NCCL_SOCKET_IFNAME", "=eth1"),
            ("NCCL_IB_DISABLE", "0"), ("NCCL_IB_GID_INDEX", "5"), ("NCCL_IB_HCA", "mlx5"),
            ("NCCL_NET_GDR_LEVEL", "SYS")]
    base = [json.loads(json.dumps(d)) for d in docs]
    for _ in range(120):
        d = copy.deepcopy(rng.choice(base))
        for node in list(walk_pod_specs(d)):
            if not isinstance(node.get("containers"), list):
                continue
            k, v = rng.choice(knobs)
            node[k] = v
            for c in node.get("containers") or []:
                if (isinstance(c, dict) and isinstance(c.get("env", []), list)
                        and rng.random() < 0.6):
                    name, value = rng.choice(envs)
                    c.setdefault("env", []).append({"name": name, "value": value})
        docs.append(d)
    return docs


def walk_pod_specs(doc):
    if isinstance(doc, dict):
        if isinstance(doc.get("containers"), list):
            yield doc
        for v in list(doc.values()):
            yield from walk_pod_specs(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from walk_pod_specs(v)


@pytest.mark.parametrize("policy", PROPERTY_POLICIES)
def test_mutation_never_adds_an_error_the_input_did_not_have(policy, tmp_path):
    docs = [json.loads(json.dumps(d, default=str)) for d in property_corpus()]
    src = tmp_path / "in.yaml"
    src.write_text("\n---\n".join(json.dumps(d) for d in docs))
    pol = POLICIES / policy
    before = rw("check", "-o", "json", "--policy", pol, "--namespace", "team-a", src, timeout=120)
    patches = rw("mutate", "-o", "patch", "--policy", pol, "--namespace", "team-a", src,
                 timeout=120)
    lines = [l for l in patches.out.splitlines() if l.strip()]
    assert len(lines) == len(docs), patches
    results, kept = [], []
    for i, (doc, line) in enumerate(zip(docs, lines)):
        patch = json.loads(line)
        if patch is None:
            continue
        results.append(apply_patch(doc, patch))
        kept.append(i)
    out = tmp_path / "out.yaml"
    out.write_text("\n---\n".join(json.dumps(d) for d in results))
    after = rw("check", "-o", "json", "--policy", pol, "--namespace", "team-a", out, timeout=120)
    by_index = {int(r["source"].split("#")[1]): r for r in json.loads(before.out)["results"]}
    after_results = {int(r["source"].split("#")[1]): r for r in json.loads(after.out)["results"]}
    bad = []
    for j, i in enumerate(kept):
        new = set(errors(after_results[j])) - set(errors(by_index[i]))
        if new:
            bad.append((i, sorted(new), lines[i][:300]))
    assert not bad, f"{policy}: mutation added errors (doc, rules, patch): {bad[:5]}"
