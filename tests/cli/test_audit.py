"""`rdma-webhook audit` against a fake kubectl on PATH (tests/cli/fake_kubectl.py): flags reach
kubectl, objects are judged as `check` judges them, the per-namespace summary, json and sarif,
the policy from the chart's ConfigMap, kinds the cluster does not serve, kubectl failures."""
import json
import os
import subprocess

import pytest
import yaml

import manifests as m
from conftest import POLICIES, REPO, Run, binary, rw

# The columns of `kubectl api-resources -o wide` (padded with spaces, empty SHORTNAMES cells).
API_RESOURCES = """\
NAME           SHORTNAMES   APIVERSION   NAMESPACED   KIND          VERBS                        CATEGORIES
configmaps     cm           v1           true         ConfigMap     create,delete,get,list       
pods           po           v1           true         Pod           create,delete,get,list       all
deployments    deploy       apps/v1      true         Deployment    create,delete,get,list       all
replicasets    rs           apps/v1      true         ReplicaSet    create,delete,get,list       all
jobs                        batch/v1     true         Job           create,delete,get,list       all
"""
SERVED = "pods,jobs.batch,deployments.apps,replicasets.apps"  # in the policy's kind order


def bad_pod(name, ns):
    """A GPU pod that uses SR-IOV but does not add IPC_LOCK: ipc-lock-missing."""
    d = m.sriov()
    m.c0(d).pop("securityContext")
    d["metadata"].update(name=name, namespace=ns)
    return d


def good_pod(name, ns):
    d = m.sriov()
    d["metadata"].update(name=name, namespace=ns)
    return d


def owned_pod(name, ns):
    d = bad_pod(name, ns)
    d["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "1", "controller": True}]
    return d


def service(name, ns):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns}}


def kubectl_list(items):
    # kubectl writes members in key order: items before kind, as the streaming reader expects.
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List",
                       "metadata": {"resourceVersion": ""}}, indent=4)


class Cluster:
    def __init__(self, tmp_path):
        self.dir = tmp_path / "kubectl"
        self.dir.mkdir()
        bindir = tmp_path / "bin"
        bindir.mkdir()
        (bindir / "kubectl").symlink_to(REPO / "tests" / "cli" / "fake_kubectl.py")
        self.env = dict(os.environ, FAKE_KUBECTL_DIR=str(self.dir),
                        PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        self.put("api-resources.txt", API_RESOURCES)
        self.workloads([])

    def put(self, name, text):
        (self.dir / name).write_text(text)

    def workloads(self, items):
        self.put("workloads.json", kubectl_list(items))

    def calls(self):
        p = self.dir / "calls.jsonl"
        return [json.loads(l) for l in p.read_text().splitlines()] if p.exists() else []

    def get_call(self):
        gets = [c for c in self.calls() if "get" in c and c[c.index("get") + 1] not in
                ("configmaps", "configmap")]
        assert len(gets) == 1, self.calls()
        return gets[0]

    def audit(self, *args):
        proc = subprocess.run([str(binary()), "audit", *map(str, args)], capture_output=True,
                              text=True, timeout=60, env=self.env)
        return Run(["audit", *args], proc)


@pytest.fixture
def cluster(tmp_path):
    return Cluster(tmp_path)


def test_flags_reach_kubectl(cluster):
    r = cluster.audit("-A", "-l", "app=train", "--context", "prod", "--kubeconfig", "/k/config",
                      "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 0, r
    get = cluster.get_call()
    assert get[:4] == ["--context", "prod", "--kubeconfig", "/k/config"]
    assert get[4:8] == ["get", SERVED, "-o", "json"]
    assert "--all-namespaces" in get and get[get.index("--selector") + 1] == "app=train"
    discovery = [c for c in cluster.calls() if "api-resources" in c]
    assert discovery == [["--context", "prod", "--kubeconfig", "/k/config", "api-resources",
                          "-o", "wide"]]


def test_namespace_flag(cluster):
    r = cluster.audit("-n", "team-a", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 0, r
    get = cluster.get_call()
    assert get[get.index("--namespace") + 1] == "team-a" and "--all-namespaces" not in get


def test_namespace_and_all_namespaces_is_a_usage_error(cluster):
    r = cluster.audit("-A", "-n", "team-a")
    assert r.rc == 2 and "excludes" in r.err, r


def test_judged_as_check_judges_with_a_summary_per_namespace(cluster, tmp_path):
    items = [bad_pod("a", "team-a"), good_pod("b", "team-a"), bad_pod("c", "team-b"),
             service("svc", "team-b")]
    cluster.workloads(items)
    policy = POLICIES / "sriov.yaml"
    r = cluster.audit("-A", "-o", "json", "--policy", policy)
    assert r.rc == 1, r
    out = r.json()
    # The same judgement as `check` of the same objects.
    f = tmp_path / "objects.json"
    f.write_text(kubectl_list(items))
    checked = rw("check", "-o", "json", "--policy", policy, f).json()
    strip = lambda res: [{k: v for k, v in x.items() if k != "source"} for x in res]
    assert strip(out["results"]) == strip(checked["results"])
    assert [x["source"] for x in out["results"]] == ["team-a/Pod/a", "team-a/Pod/b",
                                                     "team-b/Pod/c", "team-b/Service/svc"]
    assert out["summary"] == checked["summary"]
    by_ns = {n["namespace"]: n for n in out["namespaces"]}
    assert by_ns["team-a"]["objects"] == 2 and by_ns["team-a"]["errors"] >= 1
    assert by_ns["team-a"]["paths"] == {"sriov": 2}
    assert by_ns["team-b"]["paths"] == {"sriov": 1, "none": 1}
    assert out["policy"] == f"file {policy}"
    assert "skipped" in out["kinds"] and SERVED.split(",") == out["kinds"]["listed"]


def test_text_shows_findings_and_the_table(cluster):
    cluster.workloads([bad_pod("a", "team-a"), good_pod("b", "team-b")])
    r = cluster.audit("-A", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 1, r
    assert "team-a/Pod/a" in r.out and "ipc-lock-missing" in r.out
    assert "team-b/Pod/b" not in r.out  # no findings: only counted
    lines = r.out.splitlines()
    header = next(i for i, l in enumerate(lines) if l.startswith("NAMESPACE"))
    assert lines[header].split() == ["NAMESPACE", "OBJECTS", "ERRORS", "WARNINGS", "PATHS"]
    assert lines[header + 1].split()[:2] == ["team-a", "1"]
    assert lines[header + 2].split()[:4] == ["team-b", "1", "0", "0"]
    assert "2 objects" in r.out and "2 namespaces" in r.out


def test_sarif_shape(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    r = cluster.audit("-A", "-o", "sarif", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 1, r
    run = r.json()["runs"][0]
    results = run["results"]
    assert {x["ruleId"] for x in results} >= {"ipc-lock-missing"}
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "team-a/Pod/a"
    assert run["properties"]["namespaces"][0]["namespace"] == "team-a"


def test_objects_a_listed_workload_controls_are_judged_through_it(cluster):
    cluster.workloads([owned_pod("rs-pod", "team-a"), good_pod("b", "team-a")])
    r = cluster.audit("-A", "-o", "json", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 0, r
    assert [x["name"] for x in r.json()["results"]] == ["b"] and r.json()["owned"] == 1
    r = cluster.audit("-A", "-o", "json", "--include-owned", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 1 and len(r.json()["results"]) == 2, r


def configmap(ns, name, policy_text):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"app.kubernetes.io/name": "rdma-webhook"}},
            "data": {"policy.yaml": policy_text}}


# A policy under which the bad pod has no finding: it tells which policy was used.
LENIENT = "apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults:\n  rules: {ipc-lock-missing: off}\n"


def test_policy_from_the_charts_configmap(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    default = cluster.audit("-A")
    assert default.rc == 1 and "policy: the embedded default" in default.err, default
    assert "--all-namespaces" in [c for c in cluster.calls() if "configmaps" in c][0]
    cluster.put("configmaps.json", kubectl_list([
        configmap("rdma-system", "rdma-webhook-policy", LENIENT),
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "rdma-webhook-dashboard", "namespace": "rdma-system"},
         "data": {"dashboard.json": "{}"}}]))
    r = cluster.audit("-A", "-o", "json")
    assert r.rc == 0, r
    assert r.json()["policy"] == "ConfigMap rdma-system/rdma-webhook-policy"


def test_policy_configmap_flag(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    cluster.put("configmap-ops-mine.json", json.dumps(configmap("ops", "mine", LENIENT)))
    r = cluster.audit("-A", "--policy-configmap", "ops/mine", "-o", "json")
    assert r.rc == 0 and r.json()["policy"] == "ConfigMap ops/mine", r
    missing = cluster.audit("-A", "--policy-configmap", "ops/other")
    assert missing.rc == 2
    assert "kubectl get configmap other -n ops -o json" in missing.err
    assert 'configmaps "other" not found' in missing.err


def test_broken_policy_in_configmap_names_it(cluster):
    cluster.put("configmaps.json", kubectl_list([
        configmap("rdma-system", "rdma-webhook-policy", "apiVersion: rdma-webhook/v1\nkind: Policy\n"
                  "defaults: {mode: bogus}\n")]))
    r = cluster.audit("-A")
    assert r.rc == 2
    assert "ConfigMap rdma-system/rdma-webhook-policy" in r.err and "mode" in r.err, r


def test_kinds_the_cluster_does_not_serve_are_skipped_and_named(cluster):
    policy = {"apiVersion": "rdma-webhook/v1", "kind": "Policy",
              "kinds": [{"group": "example.com", "kind": "Trainer", "templates": ["/spec/template"]}]}
    cluster.put("configmap-ops-p.json",
                json.dumps(configmap("ops", "p", yaml.safe_dump(policy))))
    r = cluster.audit("-A", "--policy-configmap", "ops/p", "-o", "json")
    assert r.rc == 0, r
    skipped = {(k["group"], k["kind"]) for k in r.json()["kinds"]["skipped"]}
    assert ("example.com", "Trainer") in skipped and ("kubeflow.org", "PyTorchJob") in skipped
    assert ("apps", "Deployment") not in skipped
    text = cluster.audit("-A", "--policy-configmap", "ops/p")
    assert "skipped: " in text.out and "Trainer.example.com" in text.out


def test_kubectl_failure_names_the_command_and_its_stderr(cluster):
    cluster.put("fail-get", "error: You must be logged in to the server (Unauthorized)\n")
    r = cluster.audit("-A", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 2, r
    assert f"kubectl get {SERVED} -o json --all-namespaces" in r.err
    assert "Unauthorized" in r.err and "exit code 1" in r.err


def test_kubectl_missing(cluster):
    cluster.env["PATH"] = "/nonexistent"
    r = cluster.audit("-A", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 2 and "kubectl" in r.err and "PATH" in r.err, r


def test_truncated_output_reports_the_objects_before_and_names_the_item(cluster):
    text = kubectl_list([good_pod("a", "team-a"), good_pod("b", "team-a")])
    cluster.put("workloads.json", text[: text.rindex('"b"')])
    r = cluster.audit("-A", "-o", "json", "--policy", POLICIES / "sriov.yaml")
    assert r.rc == 2, r
    out = r.json()
    assert [x["name"] for x in out["results"]] == ["a"]
    assert out["errors"][0]["source"].endswith("#0/items/1")


def test_as_kubectl_plugin(cluster, tmp_path):
    link = tmp_path / "bin" / "kubectl-rdma"
    link.symlink_to(binary().resolve())
    proc = subprocess.run([str(link), "audit", "--help"], capture_output=True, text=True,
                          env=cluster.env, timeout=30)
    assert proc.returncode == 0 and "kubectl rdma audit" in proc.stdout


# A CRD's row under API_RESOURCES' header: the cells start at the header's offsets (APIVERSION at
# 28, KIND at 54), as the parser reads them.
INFERENCE_POOLS = ("inferencepools".ljust(28) + "serving.example.com/v1".ljust(26) +
                   "InferencePool\n")


def inference_pool(name, ns):
    """An object of a kind no row knows, its pod template found by shape (docs/policy.md#kinds):
    a GPU container on the shared device without IPC_LOCK."""
    c = {"name": "engine", "image": "registry.example.com/serve:1",
         "resources": {"limits": {"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1}},
         "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}
    spec = {"containers": [c], "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}
    return {"apiVersion": "serving.example.com/v1", "kind": "InferencePool",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"engine": {"template": {"spec": spec}}}}


@pytest.mark.parametrize("named", ["InferencePool.serving.example.com",
                                   "inferencepools.serving.example.com"])
def test_kinds_outside_the_table_are_listed_and_judged_by_shape(cluster, named):
    cluster.put("api-resources.txt", API_RESOURCES + INFERENCE_POOLS)
    cluster.workloads([inference_pool("pool", "team-a")])
    r = cluster.audit("-A", "-o", "json", "--policy", POLICIES / "off.yaml",
                      "--kinds", f"{named},Widget.example.com")
    assert r.rc == 1, r
    get = cluster.get_call()
    assert get[get.index("get") + 1] == SERVED + ",inferencepools.serving.example.com", get
    (res,) = r.json()["results"]
    assert res["source"] == "team-a/InferencePool/pool", res
    assert [f["rule"] for f in res["findings"]] == ["ipc-lock-missing"], res
    assert any("found by shape at /spec/engine/template" in e for e in res["evidence"]), res
    kinds = r.json()["kinds"]
    assert "inferencepools.serving.example.com" in kinds["listed"], kinds
    assert {"group": "example.com", "kind": "Widget",
            "reason": "not served by the cluster"} in kinds["skipped"], kinds


def test_without_kinds_a_kind_outside_the_table_is_not_listed(cluster):
    cluster.put("api-resources.txt", API_RESOURCES + INFERENCE_POOLS)
    r = cluster.audit("-A", "-o", "json", "--policy", POLICIES / "off.yaml")
    assert r.rc == 0, r
    get = cluster.get_call()
    assert "inferencepools" not in get[get.index("get") + 1], get


@pytest.mark.parametrize("bad", ["", ".example.com", "Widget."])
def test_a_kinds_entry_that_names_no_kind_is_an_error(cluster, bad):
    r = cluster.audit("-A", "--kinds", bad)
    assert r.rc == 2 and "--kinds" in r.err, r
    assert not [c for c in cluster.calls() if "get" in c], cluster.calls()
