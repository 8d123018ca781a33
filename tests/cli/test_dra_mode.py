"""`mutate` in a namespace of `mode: dra` (docs/dra.md#mode-dra): a GPU Job gets the policy's
ResourceClaimTemplate as a pod claim, its GPU containers name the claim and get IPC_LOCK, the
/dev/shm volume and NCCL's variables, never hostNetwork; mutating the result changes nothing;
a template with a device-plugin VF is left as written for validation to deny."""
import pytest

from conftest import dump_docs, rw
from test_catalogue import DRANET_CLASS, RDMA_TEMPLATE

POLICY = """apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: off, validation: warn}
namespaces:
  - names: [team-a]
    mode: dra
    injectShm: true
    dra: {claimTemplate: rdma-nics%s}
"""


def job(limits=None):
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "team-a"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "trainer", "image": "trainer:1",
             "resources": {"limits": limits or {"nvidia.com/gpu": 8}}},
            {"name": "sidecar", "image": "log:1"}]}}}}


def mutate(tmp_path, docs, extra="", output="json"):
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY % extra)
    p = tmp_path / "job.yaml"
    p.write_text(dump_docs(docs))
    return rw("mutate", "-o", output, "--policy", policy, p), policy


def mutated_job(r):
    assert r.rc == 0, r
    (j,) = [d for d in r.json_lines() if d.get("kind") == "Job"]
    return j


@pytest.mark.parametrize("ifname", ["", "net1"])
def test_a_job_in_a_dra_namespace_claims_the_policys_template(tmp_path, ifname):
    extra = f", socketIfname: {ifname}" if ifname else ""
    r, policy = mutate(tmp_path, [DRANET_CLASS, RDMA_TEMPLATE, job()], extra)
    spec = mutated_job(r)["spec"]["template"]["spec"]
    assert spec["resourceClaims"] == [{"name": "rdma-nics",
                                       "resourceClaimTemplateName": "rdma-nics"}], spec
    assert "hostNetwork" not in spec
    trainer, sidecar = spec["containers"]
    assert trainer["resources"]["claims"] == [{"name": "rdma-nics"}]
    assert trainer["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert {"name": "rdma-webhook-shm", "mountPath": "/dev/shm"} in trainer["volumeMounts"]
    env = {e["name"]: e["value"] for e in trainer["env"]}
    assert env == ({"NCCL_SOCKET_IFNAME": ifname} if ifname else {}) | {"NCCL_IB_DISABLE": "0"}
    assert sidecar == {"name": "sidecar", "image": "log:1"}, "only GPU containers change"

    again = tmp_path / "mutated.yaml"
    again.write_text(dump_docs(r.json_lines()))
    twice = rw("mutate", "-o", "patch", "--policy", policy, again)
    assert twice.rc == 0 and twice.json_lines()[-1] == [], twice
    checked = rw("check", "-o", "json", "--policy", policy, again)
    (res,) = [x for x in checked.json()["results"] if x["kind"] == "Job"]
    assert (res["path"], res["rdma"], res["findings"]) == ("dra", True, []), checked


def test_a_device_plugin_vf_in_a_dra_namespace_is_left_for_validation(tmp_path):
    r, policy = mutate(tmp_path, [DRANET_CLASS, RDMA_TEMPLATE,
                                  job({"nvidia.com/gpu": 8, "rdma/vf": 1})], output="patch")
    # Nothing is changed, and mutate exits 1: the result keeps the error validation denies.
    assert r.rc == 1 and r.json_lines()[-1] == [], r
    checked = rw("check", "-o", "json", "--policy", policy, tmp_path / "job.yaml")
    (res,) = [x for x in checked.json()["results"] if x["kind"] == "Job"]
    assert res["path"] == "sriov", checked
    errors = {f["rule"] for f in res["findings"] if f["severity"] == "error"}
    assert "path-not-allowed" in errors, checked
