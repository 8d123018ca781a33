"""The cluster catalogue as the CLI reads it: `check`/`mutate --cluster` and `audit` list the
DRA and NAD kinds the cluster serves through kubectl (tests/cli/fake_kubectl.py), where the
workloads are; a kind kubectl cannot list is a warning, never a failure; without --cluster no
kubectl runs. What the catalogue decides is tested with the rules that read it."""
import subprocess

import pytest

import manifests as m
from conftest import POLICIES, Run, binary, dump_docs
from test_audit import Cluster, kubectl_list

def api_resources(rows):
    """`kubectl api-resources -o wide` of (name, apiVersion, namespaced, kind) rows: columns
    padded with spaces to the widest cell, as kubectl writes them."""
    table = [("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS")]
    table += [(n, "", v, ns, k, "get,list,watch") for n, v, ns, k in rows]
    widths = [max(len(r[i]) for r in table) + 3 for i in range(6)]
    return "".join("".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n"
                   for r in table)


DRA_RESOURCES = api_resources([
    ("pods", "v1", "true", "Pod"),
    ("jobs", "batch/v1", "true", "Job"),
    ("deployments", "apps/v1", "true", "Deployment"),
    ("replicasets", "apps/v1", "true", "ReplicaSet"),
    ("deviceclasses", "resource.k8s.io/v1", "false", "DeviceClass"),
    ("resourceclaimtemplates", "resource.k8s.io/v1", "true", "ResourceClaimTemplate"),
    ("resourceclaims", "resource.k8s.io/v1", "true", "ResourceClaim"),
])

DEVICECLASSES = "deviceclasses.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
CLAIMS = "resourceclaims.resource.k8s.io"
NADS = "network-attachment-definitions.k8s.cni.cncf.io"


class CatalogueCluster(Cluster):
    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.put("api-resources.txt", DRA_RESOURCES)

    def run(self, *args, input=None):
        proc = subprocess.run([str(binary()), *map(str, args)], input=input,
                              capture_output=True, text=True, timeout=60, env=self.env)
        return Run(list(args), proc)

    def gets_of(self, resource):
        return [c for c in self.calls() if "get" in c and c[c.index("get") + 1] == resource]


@pytest.fixture
def cluster(tmp_path):
    return CatalogueCluster(tmp_path)


@pytest.fixture
def pod_file(tmp_path):
    p = tmp_path / "pod.yaml"
    p.write_text(dump_docs([m.sriov()]))
    return p


@pytest.mark.parametrize("command", ["check", "mutate"])
def test_cluster_lists_the_served_catalogue_kinds_in_all_namespaces(cluster, pod_file, command):
    r = cluster.run(command, "--cluster", "--context", "prod", "--kubeconfig", "/k/config",
                    "--policy", POLICIES / "sriov.yaml", pod_file)
    assert r.rc == 0, r
    assert "warning" not in r.err, r
    for resource in (DEVICECLASSES, TEMPLATES, CLAIMS):
        (call,) = cluster.gets_of(resource)
        assert call[:4] == ["--context", "prod", "--kubeconfig", "/k/config"], call
        assert ("--all-namespaces" in call) == (resource != DEVICECLASSES), call
        assert call[call.index("-o") + 1] == "json", call
    # The cluster serves no NADs: they are not asked for (and stay unknown).
    assert cluster.gets_of(NADS) == []


def test_a_forbidden_cluster_wide_list_falls_back_to_the_namespace(cluster, pod_file):
    cluster.put(f"forbid-all-{TEMPLATES}", "")
    r = cluster.run("check", "--cluster", "-n", "team-a", "--policy", POLICIES / "sriov.yaml",
                    pod_file)
    assert r.rc == 0, r
    assert "warning" not in r.err, r
    calls = cluster.gets_of(TEMPLATES)
    assert len(calls) == 2, calls
    assert "--all-namespaces" in calls[0]
    assert calls[1][calls[1].index("--namespace") + 1] == "team-a", calls


def test_a_kind_kubectl_cannot_list_is_a_warning_not_a_failure(cluster, pod_file):
    cluster.put(f"fail-{CLAIMS}", "error: the server is currently unable to handle the request\n")
    r = cluster.run("check", "--cluster", "--policy", POLICIES / "sriov.yaml", pod_file)
    assert r.rc == 0, r
    assert f"warning: cannot list {CLAIMS}" in r.err, r
    assert "unable to handle the request" in r.err, r


def test_no_discovery_with_cluster_is_an_error_naming_kubectl(cluster, pod_file):
    cluster.put("api-resources.txt", "")
    r = cluster.run("check", "--cluster", pod_file)
    assert r.rc == 2, r
    assert "api-resources" in r.err, r


def test_without_cluster_no_kubectl_runs(cluster, pod_file):
    cluster.put(f"{DEVICECLASSES}.json", kubectl_list([]))
    r = cluster.run("check", "--policy", POLICIES / "sriov.yaml", pod_file)
    assert r.rc == 0, r
    assert cluster.calls() == []


@pytest.mark.parametrize("flag", [["--context", "prod"], ["--kubeconfig", "/k/config"]])
def test_cluster_flags_need_cluster(cluster, pod_file, flag):
    r = cluster.run("check", *flag, pod_file)
    assert r.rc != 0 and r.rc != 1, r
    assert "--cluster" in r.err, r


@pytest.mark.parametrize("scope, expected", [(["-A"], ["--all-namespaces"]),
                                             (["-n", "team-a"], ["--namespace", "team-a"])])
def test_audit_lists_the_catalogue_where_it_audits(cluster, scope, expected):
    cluster.workloads([m.sriov()])
    r = cluster.audit(*scope, "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 0, r
    (call,) = cluster.gets_of(TEMPLATES)
    assert all(x in call for x in expected), call
    (call,) = cluster.gets_of(DEVICECLASSES)  # cluster-scoped: no namespace flags
    assert "--all-namespaces" not in call and "--namespace" not in call, call


def test_stdin_is_read_for_the_catalogue_and_again_for_the_workloads(cluster):
    # A pipe can be read once: the catalogue's pass must not leave the judging pass empty.
    bad = m.sriov()
    m.c0(bad).pop("securityContext")
    r = cluster.run("check", "-o", "json", "--policy", POLICIES / "sriov.yaml", "-",
                    input=dump_docs([bad]))
    assert r.rc == 1, r
    assert [f["rule"] for f in r.json()["results"][0]["findings"]] == ["ipc-lock-missing"], r
    r = cluster.run("mutate", "--policy", POLICIES / "sriov.yaml", "-", input=dump_docs([bad]))
    assert r.rc == 0, r
    assert "IPC_LOCK" in r.out, r


# --- What the catalogue decides: DRA claims read from their template and DeviceClass ---

DRANET_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": "dranet"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "dra.net"'}}]}}
RDMA_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "rdma-nics", "namespace": "team-a"},
    "spec": {"spec": {"devices": {"requests": [{"name": "nic", "exactly": {
        "deviceClassName": "dranet", "allocationMode": "All",
        "selectors": [{"cel": {"expression": 'device.attributes["dra.net"].rdma == true'}}]}}]}}}}


def dra_pod(caps=("IPC_LOCK",)):
    """A GPU pod whose NICs come from a claim named `devices` (no name to guess from)."""
    d = m.sriov()
    d["metadata"]["namespace"] = "team-a"
    d["metadata"].pop("annotations", None)  # no SR-IOV network: the claim alone decides
    c = m.c0(d)
    c["resources"] = {"limits": {"nvidia.com/gpu": 8}, "claims": [{"name": "devices"}]}
    c["env"] = []
    if caps:
        c["securityContext"] = {"capabilities": {"add": list(caps)}}
    else:
        c.pop("securityContext", None)
    d["spec"]["resourceClaims"] = [{"name": "devices", "resourceClaimTemplateName": "rdma-nics"}]
    return d


def checked(r):
    assert r.rc in (0, 1), r
    (res,) = [x for x in r.json()["results"] if x["kind"] == "Pod"]
    return res


@pytest.mark.parametrize("order", ["objects-first", "pod-first"])
def test_a_claim_template_in_the_same_file_puts_the_pod_on_the_dra_path(cluster, tmp_path, order):
    docs = [DRANET_CLASS, RDMA_TEMPLATE, dra_pod(caps=None)]
    if order == "pod-first":
        docs = docs[::-1]
    p = tmp_path / "job.yaml"
    p.write_text(dump_docs(docs))
    r = cluster.run("check", "-o", "json", p)
    res = checked(r)
    assert (res["path"], res["rdma"]) == ("dra", True), r
    assert [f["rule"] for f in res["findings"]] == ["ipc-lock-missing"], r
    assert any("DeviceClass 'dranet' (the inputs), driver dra.net with rdma: RDMA NICs" in e
               for e in res["evidence"]), r
    assert cluster.calls() == []


def test_objects_in_other_files_of_the_directory_count(cluster, tmp_path):
    (tmp_path / "a-pod.yaml").write_text(dump_docs([dra_pod()]))
    (tmp_path / "b-dra.yaml").write_text(dump_docs([DRANET_CLASS, RDMA_TEMPLATE]))
    res = checked(cluster.run("check", "-o", "json", tmp_path))
    assert (res["path"], res["rdma"], res["findings"]) == ("dra", True, []), res


def test_without_the_template_the_claim_is_unknown_and_quiet(cluster, tmp_path):
    p = tmp_path / "pod.yaml"
    p.write_text(dump_docs([dra_pod(caps=None)]))
    r = cluster.run("check", "-o", "json", p)
    res = checked(r)
    assert (res["path"], res["rdma"], res["findings"]) == ("unknown", False, []), r
    assert any("ResourceClaimTemplate team-a/rdma-nics unknown: not among the inputs" in e
               for e in res["evidence"]), r


@pytest.mark.parametrize("ifname", ["vfnet0", "net1", "ens8f0v1"])
def test_an_interface_an_unknown_claim_may_bring_is_not_reported_as_not_attached(
        cluster, tmp_path, ifname):
    """dra-driver-sriov names the VFs it moves in vfnet0, vfnet1; any name may be a driver's."""
    d = dra_pod()
    m.c0(d)["env"] = [{"name": "NCCL_SOCKET_IFNAME", "value": ifname}]
    p = tmp_path / "pod.yaml"
    p.write_text(dump_docs([d]))
    res = checked(cluster.run("check", "-o", "json", p))
    assert (res["path"], res["findings"]) == ("unknown", []), res


def test_cluster_supplies_the_class_and_the_file_the_template(cluster, tmp_path):
    cluster.put(f"{DEVICECLASSES}.json", kubectl_list([DRANET_CLASS]))
    p = tmp_path / "job.yaml"
    p.write_text(dump_docs([RDMA_TEMPLATE, dra_pod()]))
    r = cluster.run("check", "-o", "json", "--cluster", p)
    res = checked(r)
    assert (res["path"], res["rdma"]) == ("dra", True), r
    assert any("ResourceClaimTemplate team-a/rdma-nics, the inputs" in e and
               "DeviceClass 'dranet' (the cluster)" in e for e in res["evidence"]), r


def test_a_template_the_cluster_lacks_says_so(cluster, tmp_path):
    cluster.put(f"{DEVICECLASSES}.json", kubectl_list([DRANET_CLASS]))
    p = tmp_path / "pod.yaml"
    p.write_text(dump_docs([dra_pod()]))
    r = cluster.run("check", "-o", "json", "--cluster", p)
    res = checked(r)
    assert res["path"] == "unknown", r
    assert any("rdma-nics unknown: the cluster has none of that name" in e
               for e in res["evidence"]), r


def test_audit_reads_claims_from_the_cluster(cluster):
    cluster.put(f"{DEVICECLASSES}.json", kubectl_list([DRANET_CLASS]))
    cluster.put(f"{TEMPLATES}.json", kubectl_list([RDMA_TEMPLATE]))
    cluster.workloads([dra_pod(caps=None)])
    r = cluster.audit("-n", "team-a", "-o", "json", "--policy", POLICIES / "off.yaml")
    assert r.rc == 1, r
    (res,) = r.json()["results"]
    assert (res["path"], [f["rule"] for f in res["findings"]]) == ("dra", ["ipc-lock-missing"]), r


def dpdk_nad(config):
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": "dpdk-net", "namespace": "team-a", "annotations": {
                "k8s.v1.cni.cncf.io/resourceName": "intel.com/intel_sriov_dpdk"}},
            "spec": {"config": config}}


def pod_on_dpdk_net():
    """A GPU pod on a VF pool the policy does not know, with NCCL's IB off and no IPC_LOCK."""
    d = m.sriov()
    d["metadata"]["annotations"] = {m.NET_KEY: "dpdk-net"}
    c = m.c0(d)
    c["resources"] = {"limits": {"nvidia.com/gpu": 1, "intel.com/intel_sriov_dpdk": 1}}
    c["env"] = [{"name": "NCCL_IB_DISABLE", "value": "1"}]
    c.pop("securityContext")
    return d


@pytest.mark.parametrize("config, severity", [
    ('{"cniVersion":"1.0.0","name":"dpdk-net","type":"sriov","vlan":100}', "warning"),
    ('{"cniVersion":"1.0.0","name":"dpdk-net","type":"ib-sriov"}', "error"),
])
def test_an_sriov_nad_that_does_not_say_rdma_never_denies(cluster, tmp_path, config, severity):
    """sriov-cni's config is the same for a VF bound to vfio-pci (DPDK), which has no RDMA: what
    rests on that NAD alone is a warning; an InfiniBand VF is RDMA, and its errors stay."""
    p = tmp_path / "pod.yaml"
    p.write_text(dump_docs([dpdk_nad(config), pod_on_dpdk_net()]))
    r = cluster.run("check", "-o", "json", p)
    assert r.rc == (1 if severity == "error" else 0), r
    res = checked(r)
    assert res["path"] == "sriov", res
    assert [(f["rule"], f["severity"]) for f in res["findings"]] == [
        ("ib-disabled-with-rdma", severity)], res
    assumed = "RDMA assumed" in res["findings"][0]["message"]
    assert assumed == (severity == "warning"), res
    assert any("NAD team-a/dpdk-net (the inputs) says sriov, resource "
               "intel.com/intel_sriov_dpdk: RDMA assumed" in e
               for e in res["evidence"]) == (severity == "warning"), res
