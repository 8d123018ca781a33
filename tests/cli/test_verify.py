"""`rdma-webhook verify` (docs/verify.md, docs/cli.md#verify): log files and stdin, the exit
codes, the manifest tie-in, the output formats, and a workload's pods, containers and events
read through the fake kubectl (tests/cli/fake_kubectl.py). The logs are written here from
NCCL's formats (2.26: `Bootstrap: Using`, `comm ... nNodes`); hosts and addresses are made up.
"""
import json
import subprocess

import pytest

from conftest import GOLDEN, Run, binary, rw
from test_audit import Cluster as AuditCluster

# Two pods, SR-IOV RoCE VFs, GPUDirect RDMA, nccl-tests' summary: the proven fast path.
OK_LOG = """\
train-worker-0:31:31 [0] NCCL INFO Bootstrap: Using eth0:10.60.1.4<0>
train-worker-0:31:31 [0] NCCL INFO NCCL version 2.26.6+cuda12.9
train-worker-0:31:77 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE [RO]; OOB eth0:10.60.1.4<0>
train-worker-0:31:77 [0] NCCL INFO Using network IB
train-worker-0:31:77 [0] NCCL INFO comm 0x5a rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
train-worker-0:31:77 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
train-worker-0:31:77 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA
# Avg bus bandwidth    : 23.1
"""
# The same job where the pods got no VF: NET/IB finds nothing and Socket carries the data.
FALLBACK_LOG = """\
train-worker-0:31:31 [0] NCCL INFO Bootstrap: Using eth0:10.60.1.4<0>
train-worker-0:31:77 [0] NCCL INFO NET/IB : No device found.
train-worker-0:31:77 [0] NCCL INFO NET/Socket : Using [0]eth0:10.60.1.4<0>
train-worker-0:31:77 [0] NCCL INFO Using network Socket
train-worker-0:31:77 [0] NCCL INFO comm 0x5a rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
"""
INIT_ONLY = OK_LOG.rsplit("# Avg", 1)[0]
SOCKET_NO_REASON = """\
a-0:1:1 [0] NCCL INFO Using network Socket
a-0:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_proven_fast_path_exits_0(tmp_path):
    r = rw("verify", "-o", "json", write(tmp_path, "ok.log", OK_LOG))
    assert r.rc == 0, r
    d = r.json()
    assert (d["outcome"], d["cause"], d["interNode"], d["gdr"]) == ("ok", "none", "RoCE", "on")
    assert d["ncclVersion"] == "2.26.6" and d["nodes"] == 2
    assert any("GDRDMA" in p["text"] for p in d["proofs"])


def test_fallback_exits_1_with_cause_proof_and_fix(tmp_path):
    r = rw("verify", write(tmp_path, "fb.log", FALLBACK_LOG))
    assert r.rc == 1, r
    assert "outcome: fell-back (cause: no-rdma-device)" in r.out
    assert "fb.log:2: train-worker-0:31:77 [0] NCCL INFO NET/IB : No device found." in r.out
    assert "fix" in r.out and "SR-IOV VF" in r.out


def test_not_enough_evidence_has_its_own_exit_code(tmp_path):
    for text in (INIT_ONLY, SOCKET_NO_REASON, "epoch 1 loss 2.3\n"):
        r = rw("verify", "-o", "json", write(tmp_path, "x.log", text))
        assert r.rc == 3, r
        assert r.json()["outcome"] == "unknown"


def test_reads_stdin_and_several_files_as_one_job(tmp_path):
    r = rw("verify", "-o", "json", "-", input=FALLBACK_LOG)
    assert r.rc == 1 and r.json()["cause"] == "no-rdma-device", r
    other = FALLBACK_LOG.replace("train-worker-0", "train-worker-1").replace("10.60.1.4", "10.60.2.9")
    r = rw("verify", "-o", "json", write(tmp_path, "a.log", FALLBACK_LOG),
           write(tmp_path, "b.log", other))
    hosts = {p["host"] for p in r.json()["processes"]}
    assert hosts == {"train-worker-0", "train-worker-1"}, r


def test_bad_input_exits_2(tmp_path):
    r = rw("verify", tmp_path / "missing.log")
    assert r.rc == 2 and "missing.log" in r.err, r
    r = rw("verify", "-o", "yaml", write(tmp_path, "ok.log", OK_LOG))
    assert r.rc == 2, r
    r = rw("verify", write(tmp_path, "ok.log", OK_LOG), "--manifest", tmp_path / "nope.yaml")
    assert r.rc == 2 and "nope.yaml" in r.err, r


def test_manifest_on_rdma_path_turns_a_socket_run_into_a_fallback(tmp_path):
    # No reason in the log, but the manifest meant SR-IOV: TCP carrying the data is a fallback.
    r = rw("verify", "-o", "json", "--manifest", GOLDEN / "paths" / "sriov.yaml",
           write(tmp_path, "s.log", SOCKET_NO_REASON))
    assert r.rc == 1, r
    d = r.json()
    assert d["outcome"] == "fell-back"
    assert d["manifest"]["decided"] and not d["manifest"]["matches"]
    assert "sriov path" in d["manifest"]["text"] and "Socket" in d["manifest"]["text"]


def test_manifest_matching_the_run_exits_0_and_a_mismatch_1(tmp_path):
    log = write(tmp_path, "ok.log", OK_LOG)
    r = rw("verify", "--manifest", GOLDEN / "paths" / "sriov.yaml", log)
    assert r.rc == 0 and "sriov path" in r.out, r
    r = rw("verify", "-o", "json", "--manifest", GOLDEN / "paths" / "tcp.yaml", log)
    assert r.rc == 1 and not r.json()["manifest"]["matches"], r


def test_single_node_run_is_not_a_fallback_even_against_an_rdma_manifest(tmp_path):
    log = write(tmp_path, "one.log", """\
box:9:9 [0] NCCL INFO Failed to open libibverbs.so[.1]
box:9:9 [0] NCCL INFO Using network Socket
box:9:9 [0] NCCL INFO comm 0x2 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0
# Avg bus bandwidth    : 451.3
""")
    r = rw("verify", "-o", "json", "--manifest", GOLDEN / "paths" / "sriov.yaml", log)
    d = r.json()
    assert d["outcome"] == "ok" and d["cause"] == "not-applicable" and r.rc == 0, r


def test_sarif_locates_the_proof_lines(tmp_path):
    r = rw("verify", "-o", "sarif", write(tmp_path, "fb.log", FALLBACK_LOG))
    assert r.rc == 1, r
    run = r.json()["runs"][0]
    assert {x["id"] for x in run["tool"]["driver"]["rules"]} >= {"no-rdma-device", "hca-filter"}
    res = run["results"][0]
    assert res["ruleId"] == "no-rdma-device" and res["level"] == "error"
    lines = {l["physicalLocation"]["region"]["startLine"] for l in res["locations"]}
    assert 2 in lines


# ---- the cluster: `verify KIND/NAME` through kubectl ----

def kubectl_list(items):
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List"})


def pod(name, owner_uid, containers, restarts=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "uid": "uid-" + name,
                         "ownerReferences": [{"kind": "Job", "name": "x", "uid": owner_uid}]},
            "spec": {"containers": [{"name": c} for c in containers]},
            "status": {"containerStatuses": [{"name": c, "restartCount": (restarts or {}).get(c, 0)}
                                             for c in containers]}}


class Cluster(AuditCluster):
    """audit's fake cluster, with `verify` run from the test's directory."""

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.cwd = tmp_path

    def verify(self, *args):
        proc = subprocess.run([str(binary()), "verify", *map(str, args)], capture_output=True,
                              text=True, timeout=60, env=self.env, cwd=self.cwd)
        return Run(["verify", *args], proc)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "namespace": "ml", "uid": "job-uid"},
           "spec": {"template": {"spec": {"containers": [{"name": "trainer", "image": "x"}]}}}}
    c.put("object-job-train.json", json.dumps(job))
    other = pod("unrelated-0", "someone-else", ["main"])
    c.put("pods.json", kubectl_list([pod("train-worker-0", "job-uid", ["trainer", "sidecar"],
                                         {"trainer": 1}),
                                     pod("train-worker-1", "job-uid", ["trainer"]), other]))
    return c


def test_cluster_reads_every_container_of_the_owned_pods(cluster):
    cluster.put("logs-train-worker-0-trainer.txt", FALLBACK_LOG)
    cluster.put("logs-train-worker-0-sidecar.txt", "sidecar ready\n")
    cluster.put("logs-train-worker-1-trainer.txt",
                FALLBACK_LOG.replace("train-worker-0", "train-worker-1").replace("10.60.1.4", "10.60.2.9"))
    r = cluster.verify("job/train", "-n", "ml", "--context", "prod", "-o", "json")
    assert r.rc == 1, r
    d = r.json()
    assert d["cause"] == "no-rdma-device"
    assert {p["host"] for p in d["processes"]} == {"train-worker-0", "train-worker-1"}
    assert any(p["source"] == "pod/train-worker-1/trainer" for p in d["proofs"])
    logs = [c for c in cluster.calls() if "logs" in c]
    assert sorted((c[1], c[3]) for c in logs) == [("train-worker-0", "sidecar"),
                                                 ("train-worker-0", "trainer"),
                                                 ("train-worker-1", "trainer")]
    assert all("--context" in c and c[c.index("-n") + 1] == "ml" for c in logs)
    assert not any("unrelated-0" in c for c in cluster.calls())
    assert not any("--previous" in c for c in logs)


def test_cluster_previous_reads_restarted_containers_too(cluster):
    cluster.put("logs-previous-train-worker-0-trainer.txt", OK_LOG)
    r = cluster.verify("job/train", "-n", "ml", "--previous", "-o", "json")
    prev = [c for c in cluster.calls() if "--previous" in c]
    assert [(c[1], c[3]) for c in prev] == [("train-worker-0", "trainer")], cluster.calls()
    assert r.json()["outcome"] == "ok", r
    # Containers that never started are notes, not errors.
    assert any("waiting to start" in n for n in r.json()["notes"]), r


def test_cluster_events_explain_a_pod_that_never_started(cluster):
    events = [{"type": "Warning", "reason": "FailedCreatePodSandBox",
               "involvedObject": {"kind": "Pod", "name": "train-worker-0", "uid": "uid-train-worker-0"},
               "message": "Failed to create pod sandbox: ... SRIOV-CNI failed to load netconf: "
                          "LoadConf(): VF pci addr is required"},
              {"type": "Warning", "reason": "FailedCreatePodSandBox",
               "involvedObject": {"kind": "Pod", "name": "unrelated-0", "uid": "uid-unrelated-0"},
               "message": "not ours"}]
    cluster.put("events.json", kubectl_list(events))
    r = cluster.verify("job/train", "-n", "ml", "-o", "json")
    assert r.rc == 1, r
    d = r.json()
    assert (d["outcome"], d["cause"]) == ("error", "k8s-cni")
    assert d["interNode"] == "none (pod never started)"
    assert all("not ours" not in p["text"] for p in d["proofs"])
    # The Job's own manifest was diagnosed with the same core as check.
    assert "manifest" in d and "Job ml/train" in d["manifest"]["text"]


def test_cluster_workload_not_found_is_exit_2(cluster):
    r = cluster.verify("job/absent", "-n", "ml")
    assert r.rc == 2 and "absent" in r.err, r


def test_an_existing_file_with_a_slash_is_a_file(cluster, tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "train").write_text(FALLBACK_LOG)
    r = cluster.verify("job/train", "-o", "json")
    assert r.rc == 1 and r.json()["cause"] == "no-rdma-device", r
    assert cluster.calls() == []


# ---- nccl.debugForVerify: the webhook makes the proof available ----

def mutated_env(tmp_path, policy_text, manifest):
    pol = write(tmp_path, "policy.yaml", policy_text)
    r = rw("mutate", "-o", "json", "--policy", pol, manifest)
    assert r.rc in (0, 1), r
    doc = r.json()
    doc = doc["items"][0] if "items" in doc else doc
    spec = doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    return {e["name"]: e.get("value") for e in spec["containers"][0].get("env", [])}


def test_debug_for_verify_adds_the_debug_env_where_unset(tmp_path):
    base = (GOLDEN / "policies" / "sriov.yaml").read_text()
    on = base.replace("      gdrLevel: PHB\n", "      gdrLevel: PHB\n      debugForVerify: true\n")
    assert on != base
    env = mutated_env(tmp_path, on, GOLDEN / "paths" / "sriov.yaml")
    assert env["NCCL_DEBUG"] == "INFO"
    assert env["NCCL_DEBUG_SUBSYS"] == "INIT,BOOTSTRAP,ENV,NET"
    assert "NCCL_DEBUG" not in mutated_env(tmp_path, base, GOLDEN / "paths" / "sriov.yaml")
    # A user's own level is kept.
    manifest = (GOLDEN / "paths" / "sriov.yaml").read_text().replace(
        "                - name: NCCL_IB_DISABLE\n",
        "                - name: NCCL_DEBUG\n                  value: WARN\n"
        "                - name: NCCL_IB_DISABLE\n", 1)
    env = mutated_env(tmp_path, on, write(tmp_path, "m.yaml", manifest))
    assert env["NCCL_DEBUG"] == "WARN" and env["NCCL_DEBUG_SUBSYS"] == "INIT,BOOTSTRAP,ENV,NET"


def test_debug_for_verify_must_be_a_boolean(tmp_path):
    bad = (GOLDEN / "policies" / "sriov.yaml").read_text().replace(
        "      gdrLevel: PHB\n", "      gdrLevel: PHB\n      debugForVerify: maybe\n")
    r = rw("policy", "validate", write(tmp_path, "bad.yaml", bad))
    assert r.rc == 1 and "debugForVerify" in (r.out + r.err), r


def test_cluster_finds_pods_through_a_replicaset(tmp_path):
    c = Cluster(tmp_path)
    c.put("object-deployment-infer.json", json.dumps(
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "infer", "namespace": "ml", "uid": "dep-uid"},
         "spec": {"template": {"spec": {"containers": [{"name": "server", "image": "x"}]}}}}))
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "infer-7d9", "uid": "rs-uid",
                       "ownerReferences": [{"kind": "Deployment", "name": "infer", "uid": "dep-uid"}]}}
    c.put("owners.json", kubectl_list([rs]))
    c.put("pods.json", kubectl_list([pod("infer-7d9-x2kqp", "rs-uid", ["server"])]))
    c.put("logs-infer-7d9-x2kqp-server.txt", FALLBACK_LOG.replace("train-worker-0", "infer-7d9-x2kqp"))
    r = c.verify("deployment/infer", "-n", "ml", "-o", "json")
    assert r.rc == 1 and r.json()["cause"] == "no-rdma-device", r
    assert ["logs", "infer-7d9-x2kqp", "-c", "server"] == [x for x in c.calls() if "logs" in x][0][:4]
