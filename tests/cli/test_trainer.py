"""Kubeflow Trainer TrainJobs through the CLI (docs/trainer.md): judged with the runtime found
among the inputs, `unknown` without it, mutated in Trainer's terms, and the mutated TrainJob
judged clean and left alone by a second mutation.

The manifests follow Trainer's v1alpha1 API (field names from kubeflow/trainer v2.3.0,
pkg/apis/trainer/v1alpha1); they are written for these tests.
"""
import copy
import json

import pytest

from conftest import check, rules_of, rw

RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch-rdma"},
    "spec": {"mlPolicy": {"numNodes": 2, "torch": {}}, "template": {"spec": {"replicatedJobs": [{
        "name": "node",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [{
                "name": "node", "image": "registry.example.com/ml/torch:2.5",
                "resources": {"limits": {"rdma/hca_shared_devices_a": 1}}}]}}}}}]}}},
}


# The same runtime without an RDMA device: its pods take whatever path the namespace gives them.
PLAIN = copy.deepcopy(RUNTIME)
del PLAIN["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
    "containers"][0]["resources"]


# The runtime's node container lists a DRA claim beside its GPUs (the claim's template is not
# among the inputs: what it holds is unknown).
WITH_CLAIM = copy.deepcopy(PLAIN)
_POD = WITH_CLAIM["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
_POD["spec"]["resourceClaims"] = [{"name": "nic", "resourceClaimTemplateName": "rdma-nics"}]
_POD["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 8},
                                              "claims": [{"name": "nic"}]}


def trainjob(ns="default", generate=False, **trainer):
    md = {"generateName": "llama-"} if generate else {"name": "llama"}
    md["namespace"] = ns
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": md,
            "spec": {"runtimeRef": {"name": "torch-rdma"}, "trainer": trainer}}


GPUS = {"limits": {"nvidia.com/gpu": 8}}
GPUS_RDMA = {"limits": {"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1}}

# (documents, policy, expected rules of the TrainJob, pointer of the first expected rule)
CASES = {
    "resources-per-node-erases-the-runtimes-hca": (
        [RUNTIME, trainjob(resourcesPerNode=GPUS)], "off.yaml",
        ["ipc-lock-missing", "shm-too-small", "trainer-rdma-resource-erased"],
        {"trainer-rdma-resource-erased": "/spec/trainer/resourcesPerNode",
         "ipc-lock-missing": "/spec/runtimeRef"}),
    "resources-per-node-repeats-it": (
        [RUNTIME, trainjob(resourcesPerNode=GPUS_RDMA)], "off.yaml",
        ["ipc-lock-missing", "shm-too-small"], {}),
    "fewer-processes-than-gpus": (
        [RUNTIME, trainjob(numProcPerNode=2, resourcesPerNode=GPUS_RDMA)], "off.yaml",
        ["ipc-lock-missing", "shm-too-small", "trainer-procs-gpu-mismatch"],
        {"trainer-procs-gpu-mismatch": "/spec/trainer/numProcPerNode"}),
    "trainer-env-value-points-into-spec-trainer-env": (
        [RUNTIME, trainjob(resourcesPerNode=GPUS_RDMA,
                           env=[{"name": "NCCL_IB_DISABLE", "value": "true"}])], "off.yaml",
        ["invalid-nccl-value", "ipc-lock-missing", "shm-too-small"],
        {"invalid-nccl-value": "/spec/trainer/env/0"}),
    # Trainer writes the node container's resources from limits and requests: its claims go.
    "resources-per-node-drops-the-runtimes-claims": (
        [WITH_CLAIM, trainjob(resourcesPerNode=GPUS)], "off.yaml",
        ["trainer-claims-dropped"], {"trainer-claims-dropped": "/spec/trainer/resourcesPerNode"}),
    "no-resources-per-node-keeps-the-claims": (
        [WITH_CLAIM, trainjob(numNodes=4)], "off.yaml", [], {}),
    "runtime-after-the-trainjob-in-the-stream": (
        [trainjob(resourcesPerNode=GPUS), RUNTIME], "off.yaml",
        ["ipc-lock-missing", "shm-too-small", "trainer-rdma-resource-erased"], {}),
}
# every Trainer rule has a case here or in the rules reference examples
FIRED = {r for _, _, rules, _ in CASES.values() for r in rules} | {"trainer-runtime-no-rdma-path"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_trainjob_case(case, write):
    docs, policy, expected, pointers = CASES[case]
    r, data = check(write(docs), policy=policy)
    jobs = [res for res in data["results"] if res["kind"] == "TrainJob"]
    assert len(jobs) == 1, r
    assert rules_of(jobs[0]) == sorted(expected), r
    for rule, pointer in pointers.items():
        hits = [f["pointer"] for f in jobs[0]["findings"] if f["rule"] == rule]
        assert hits and all(p == pointer or p.startswith(pointer + "/") for p in hits), (rule, hits)
    assert jobs[0]["evidence"][0] == "runtime ClusterTrainingRuntime 'torch-rdma' (inputs)", r


def test_runtime_not_among_the_inputs_is_unknown_naming_it(write):
    r, data = check(write([trainjob(resourcesPerNode=GPUS)]), policy="sriov.yaml")
    res = data["results"][0]
    assert res["path"] == "unknown" and res["findings"] == [], r
    assert "ClusterTrainingRuntime 'torch-rdma' not found" in res["evidence"][0], r
    assert r.rc == 0, r


def test_runtime_from_another_file_of_the_inputs(write):
    runtime = write([RUNTIME], name="runtime.yaml")
    job = write([trainjob(generate=True, resourcesPerNode=GPUS)], name="job.yaml")
    r, data = check(job, runtime)
    res = [x for x in data["results"] if x["kind"] == "TrainJob"][0]
    assert res["name"] == "llama-" and res["path"] == "shared", r
    assert "trainer-rdma-resource-erased" in rules_of(res), r


@pytest.mark.parametrize("policy,runtime,resource", [("sriov.yaml", PLAIN, "rdma/vf"),
                                                     ("shared.yaml", RUNTIME, "rdma/hca_shared_devices_a")])
def test_mutated_trainjob_is_clean_and_stays_as_it_is(policy, runtime, resource, write):
    from conftest import POLICIES
    path = write([runtime, trainjob(numNodes=4, resourcesPerNode=GPUS)])
    r = rw("mutate", "-o", "json", "--policy", POLICIES / policy, path)
    assert r.rc in (0, 1), r
    docs = [json.loads(line) for line in r.out.splitlines()]
    job = [d for d in docs if d["kind"] == "TrainJob"][0]
    spec = job["spec"]
    own = [p for p in spec["runtimePatches"] if p["manager"] == "rdma-webhook.io/mutator"]
    assert len(own) == 1, spec
    limits = spec["trainer"]["resourcesPerNode"]["limits"]
    assert limits["nvidia.com/gpu"] == 8, limits  # the user's GPUs kept
    assert resource in limits, limits  # the mode's device (shared: the runtime's, carried)
    again = write([runtime, job], name="again.yaml")
    r2 = rw("mutate", "-o", "patch", "--policy", POLICIES / policy, again)
    assert r2.out.splitlines()[1] == "[]", r2
    r3, data = check(again, policy=policy)
    res = [x for x in data["results"] if x["kind"] == "TrainJob"][0]
    assert rules_of(res, "error") == [], r3


def test_other_managers_entries_are_untouched(write):
    from conftest import POLICIES
    job = trainjob(resourcesPerNode=GPUS)
    kueue = {"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
            "nodeSelector": {"pool": "a"}}}}}}]}}}}
    job["spec"]["runtimePatches"] = [copy.deepcopy(kueue)]
    r = rw("mutate", "-o", "json", "--policy", POLICIES / "sriov.yaml", write([PLAIN, job]))
    out = [json.loads(line) for line in r.out.splitlines()][1]
    assert out["spec"]["runtimePatches"][0] == kueue, out
    assert out["spec"]["runtimePatches"][1]["manager"] == "rdma-webhook.io/mutator", out


def test_host_network_mode_names_the_runtime_instead_of_patching(write):
    from conftest import POLICIES
    r = rw("mutate", "-o", "json", "--policy", POLICIES / "hostnetwork.yaml",
           write([PLAIN, trainjob(numNodes=4, resourcesPerNode=GPUS)]))
    assert "hostNetwork" not in r.out.splitlines()[1], r
    assert "trainer-runtime-no-rdma-path" in r.err and "ClusterTrainingRuntime 'torch-rdma'" in r.err, r
