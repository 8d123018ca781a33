"""The VF-counting rules next to devices they cannot count: DRA claims whose devices are not
known, and NIC-looking resources the policy does not know.

dra-driver-sriov (k8snetworkplumbingwg/dra-driver-sriov, its Multus integration demos) allocates
an SR-IOV VF through a ResourceClaimTemplate of its DeviceClass and lets Multus attach a `sriov`
NAD that takes its VF from the claim: the pod claims no device-plugin resource at all. A claim
whose class `check` cannot read (not among the inputs, no --cluster) may be exactly that, so
`network-without-vf` cannot be sure the sandbox fails, and `vf-without-network` cannot be sure
NCCL lacks an RDMA NIC: both warn. Koordinator's GPU and RDMA joint allocation claims its VFs
as `koordinator.sh/rdma` (koordinator-sh/website, user manual "GPU & RDMA Joint Allocation"); a
policy that does not list such a name cannot count those VFs either. Without such a claim the
rules stay as before. Manifests written here from the documented formats (resource.k8s.io/v1,
k8s.cni.cncf.io/v1, docs/dra.md).
"""
import pytest

from conftest import POLICIES, rw, workload_results

SRIOV_NAD = {
    "apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
    "metadata": {"name": "vf-net", "namespace": "team-a",
                 "annotations": {"k8s.v1.cni.cncf.io/resourceName": "example.com/pool_a"}},
    "spec": {"config": '{"cniVersion":"1.0.0","name":"vf-net","type":"sriov",'
                       '"ipam":{"type":"host-local","subnet":"10.56.0.0/24"}}'}}

# A claim template of the SR-IOV DRA driver's class; the class itself is not among the inputs.
VF_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-vf", "namespace": "team-a"},
    "spec": {"spec": {"devices": {"requests": [
        {"name": "vf", "exactly": {"deviceClassName": "sriovnetwork.k8snetworkplumbingwg.io"}}]}}}}


def gpu_pod(ns="team-a", networks=None, limits=None, claim=True):
    limits = {"nvidia.com/gpu": 8, **(limits or {})}
    resources = {"limits": limits}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train", "namespace": ns},
           "spec": {"containers": [{
               "name": "trainer", "image": "registry.example.com/ml/train:1.0",
               "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
               "resources": resources,
               "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
               "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}}
    if networks:
        pod["metadata"]["annotations"] = {"k8s.v1.cni.cncf.io/networks": networks}
    if claim:
        pod["spec"]["resourceClaims"] = [{"name": "vf", "resourceClaimTemplateName": "one-vf"}]
        resources["claims"] = [{"name": "vf"}]
    return pod


def judged(write, docs, policy=None, ns=None):
    args = ["check", "-o", "json"]
    if policy:
        args += ["--policy", POLICIES / policy]
    if ns:
        args += ["-n", ns]
    r = rw(*args, write(docs))
    results = workload_results(r.json())
    assert len(results) == 1, r
    return r, results[0]


def severities(result, rule):
    return [f["severity"] for f in result["findings"] if f["rule"] == rule]


def test_a_nad_vf_the_dra_claim_may_allocate_is_a_warning(write):
    r, res = judged(write, [SRIOV_NAD, VF_TEMPLATE, gpu_pod(networks="vf-net")])
    assert severities(res, "network-without-vf") == ["warning"], r
    f = next(f for f in res["findings"] if f["rule"] == "network-without-vf")
    assert "claim 'vf' may hold NICs" in f["message"], f
    assert r.rc == 0, r


def test_a_policy_rdma_network_next_to_an_unknown_claim_is_a_warning(write):
    # The embedded default's rdmaNetworks names sriov-rdma-net; no NAD is known.
    r, res = judged(write, [VF_TEMPLATE, gpu_pod(networks="sriov-rdma-net@eth1")])
    assert severities(res, "network-without-vf") == ["warning"], r
    assert r.rc == 0, r


def test_without_a_dra_claim_a_missing_vf_still_denies(write):
    r, res = judged(write, [SRIOV_NAD, gpu_pod(networks="vf-net", claim=False)])
    assert severities(res, "network-without-vf") == ["error"], r
    assert r.rc == 1, r
    r, res = judged(write, [gpu_pod(networks="sriov-rdma-net@eth1", claim=False)])
    assert severities(res, "network-without-vf") == ["error"], r


@pytest.mark.parametrize("claim, expected", [(True, "warning"), (False, "error")])
def test_an_unplugged_vf_on_roce_is_an_error_only_without_dra_nics(write, claim, expected):
    # rdma-sriov-* is fabric: roce in the embedded default: an unplugged VF has no GID there,
    # unless the NICs NCCL uses come from the claim.
    ns = "rdma-sriov-demo"
    tmpl = dict(VF_TEMPLATE, metadata={"name": "one-vf", "namespace": ns})
    docs = [tmpl, gpu_pod(ns=ns, limits={"rdma/vf": 1}, claim=claim)]
    r, res = judged(write, docs)
    assert severities(res, "vf-without-network") == [expected], r


def test_an_unknown_nic_resource_may_be_the_vf_a_policy_network_plugs_in(write):
    pod = gpu_pod(networks="sriov-rdma-net@net1", limits={"koordinator.sh/rdma": 1}, claim=False)
    r, res = judged(write, [pod])
    assert severities(res, "network-without-vf") == ["warning"], r
    f = next(f for f in res["findings"] if f["rule"] == "network-without-vf")
    assert "koordinator.sh/rdma, which the policy does not know" in f["message"], f
    assert "unknown-nic-resource" in [f["rule"] for f in res["findings"]], r
    assert r.rc == 0, r


def test_mutate_says_it_waits_for_a_claim_it_cannot_read(write):
    # The mode plans nothing while a DRA claim may hold the NICs; mutate says so rather than
    # calling it a conflict that check would never show.
    pod = gpu_pod(ns="rdma-sriov-a")
    del pod["spec"]["containers"][0]["securityContext"]
    r = rw("mutate", "-o", "patch", write([pod]))
    assert r.out.strip() == "[]", r
    assert "a DRA claim of the pod could not be read" in r.err, r
    assert "conflicts with" not in r.err, r
