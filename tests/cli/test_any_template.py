"""Kinds without a row (templates found by shape), the new kind rows, NIC-looking resources the
policy does not know, renamed GPUs, EFA over TCP, launcher values NCCL reads without case, and
template files (docs/policy.md#kinds, docs/rules.md, docs/real-clusters.md, docs/cli.md).
"""
import json

import pytest
import yaml

from conftest import POLICIES, check, rules_of, rw


def container(limits, caps=(), env=None, **extra):
    c = {"name": "trainer", "image": "registry.example.com/ml/train:1.0",
         "resources": {"limits": limits},
         "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}
    if caps:
        c["securityContext"] = {"capabilities": {"add": list(caps)}}
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    c.update(extra)
    return c


def pod_spec(*containers, **spec):
    return {"containers": list(containers),
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}], **spec}


SHARED_NO_IPC = container({"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1})


def unknown_kind(spec):
    return {"apiVersion": "serving.example.com/v1", "kind": "InferencePool",
            "metadata": {"name": "pool", "namespace": "default"},
            "spec": {"engine": {"template": {"spec": spec}}}}


def run_check(tmp_path, doc, policy="off.yaml", extra=()):
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump_all(doc if isinstance(doc, list) else [doc]))
    r, data = check(f, policy=policy, extra=extra)
    assert data is not None, r
    return r, data


def test_unknown_kind_is_judged_through_its_template_shape(tmp_path):
    r, data = run_check(tmp_path, unknown_kind(pod_spec(SHARED_NO_IPC)))
    [res] = data["results"]
    assert res["path"] == "shared" and res["rdma"], r
    assert rules_of(res, "error") == ["ipc-lock-missing"], r
    [f] = [f for f in res["findings"] if f["rule"] == "ipc-lock-missing"]
    assert f["pointer"].startswith("/spec/engine/template/spec/containers/0"), f
    assert any("found by shape at /spec/engine/template" in e and "never mutated" in e
               for e in res["evidence"]), res["evidence"]
    assert res["enforcement"] == "deny" and r.rc == 1, r


def test_unknown_kind_whose_own_spec_has_the_containers(tmp_path):
    # A serving runtime keeps the containers in the object's own spec: the pointer is "/".
    doc = {"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime",
           "metadata": {"name": "srt"}, "spec": pod_spec(SHARED_NO_IPC)}
    r, data = run_check(tmp_path, doc)
    [res] = data["results"]
    assert rules_of(res, "error") == ["ipc-lock-missing"], r
    assert any("found by shape at /" in e for e in res["evidence"]), res["evidence"]


def test_unknown_kind_with_nothing_shaped_stays_not_judged(tmp_path):
    doc = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
           "spec": {"size": 3, "items": [{"name": "a"}]}}
    r, data = run_check(tmp_path, doc)
    [res] = data["results"]
    assert res["path"] == "none" and res["findings"] == [] and r.rc == 0, r
    assert any("not a workload kind the policy knows" in e for e in res["evidence"]), res


def test_a_shaped_object_with_other_types_is_evidence_not_a_reading_error(tmp_path):
    spec = pod_spec(dict(SHARED_NO_IPC, env="NCCL_DEBUG=INFO"))
    r, data = run_check(tmp_path, unknown_kind(spec))
    [res] = data["results"]
    assert r.rc == 0 and res["findings"] == [], r
    assert any("not read as a pod template" in e and "/env" in e for e in res["evidence"]), res


def test_mutate_leaves_an_unknown_kind_alone_and_says_why(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(unknown_kind(pod_spec(container({"nvidia.com/gpu": 8})))))
    r = rw("mutate", "--policy", POLICIES / "sriov.yaml", "-o", "patch", f)
    assert r.rc == 0 and json.loads(r.out) == [], r
    assert "no row in the kinds table" in r.err, r


def test_a_kinds_entry_makes_the_kind_mutable(tmp_path):
    policy = yaml.safe_load((POLICIES / "sriov.yaml").read_text())
    policy["kinds"] = [{"group": "serving.example.com", "kind": "InferencePool",
                        "templates": ["/spec/engine/template"]}]
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump(policy))
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(unknown_kind(pod_spec(container({"nvidia.com/gpu": 8})))))
    r = rw("mutate", "--policy", p, "-o", "patch", f)
    assert r.rc == 0, r
    patch = json.loads(r.out)
    assert any(op["path"].startswith("/spec/engine/template") for op in patch), patch


@pytest.mark.parametrize("doc,pointers", [
    ({"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s"},
      "spec": {"rayClusterConfig": {
          "headGroupSpec": {"template": {"spec": pod_spec(container({"cpu": 1}))}},
          "workerGroupSpecs": [{"replicas": 2, "template": {"spec": pod_spec(SHARED_NO_IPC)}}]}}},
     "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/containers/0"),
    ({"apiVersion": "orchestration.aibrix.ai/v1alpha1", "kind": "RayClusterFleet",
      "metadata": {"name": "f"},
      "spec": {"template": {"spec": {
          "headGroupSpec": {"template": {"spec": pod_spec(SHARED_NO_IPC)}},
          "workerGroupSpecs": []}}}},
     "/spec/template/spec/headGroupSpec/template/spec/containers/0"),
    ({"apiVersion": "workloads.x-k8s.io/v1alpha1", "kind": "RoleBasedGroup",
      "metadata": {"name": "g"},
      "spec": {"roles": [{"name": "router", "template": {"spec": pod_spec(container({"cpu": 1}))}},
                         {"name": "decode", "template": {"spec": pod_spec(SHARED_NO_IPC)}}]}},
     "/spec/roles/1/template/spec/containers/0"),
    # rbg v1alpha2: templates inside each role's pattern, or shared ones in spec.roleTemplates.
    ({"apiVersion": "workloads.x-k8s.io/v1alpha2", "kind": "RoleBasedGroup",
      "metadata": {"name": "g"},
      "spec": {"roleTemplates": [{"name": "base", "template": {"spec": pod_spec(SHARED_NO_IPC)}}],
               "roles": [{"name": "router", "standalonePattern": {
                   "template": {"spec": pod_spec(container({"cpu": 1}))}}},
                   {"name": "prefill", "standalonePattern": {"templateRef": {"name": "base"}}}]}},
     "/spec/roleTemplates/0/template/spec/containers/0"),
    ({"apiVersion": "workloads.x-k8s.io/v1alpha2", "kind": "RoleBasedGroup",
      "metadata": {"name": "g"},
      "spec": {"roles": [{"name": "decode", "leaderWorkerPattern": {
          "size": 2, "template": {"spec": pod_spec(SHARED_NO_IPC)},
          "workerTemplatePatch": {"metadata": {"labels": {"role": "worker"}}}}}]}},
     "/spec/roles/0/leaderWorkerPattern/template/spec/containers/0"),
    # NVIDIA Dynamo v1beta1: components[].podTemplate (deploy/operator/api/v1beta1).
    ({"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
      "metadata": {"name": "d"},
      "spec": {"components": [
          {"name": "Frontend", "type": "frontend",
           "podTemplate": {"spec": pod_spec(container({"cpu": 1}))}},
          {"name": "decode", "type": "decode", "replicas": 2,
           "podTemplate": {"spec": pod_spec(SHARED_NO_IPC)}}]}},
     "/spec/components/1/podTemplate/spec/containers/0"),
])
def test_new_kind_rows_are_judged_where_their_crds_keep_templates(tmp_path, doc, pointers):
    r, data = run_check(tmp_path, doc)
    [res] = data["results"]
    assert rules_of(res, "error") == ["ipc-lock-missing"], r
    assert all(f["pointer"].startswith(pointers) for f in res["findings"]), res["findings"]
    assert not any("found by shape" in e for e in res["evidence"]), res["evidence"]


def test_unknown_nic_resource_on_a_gpu_container_is_a_warning(tmp_path):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": pod_spec(container({"nvidia.com/gpu": 8, "example.com/rdma_nic": 1}))}
    r, data = run_check(tmp_path, pod)
    [res] = data["results"]
    assert rules_of(res) == ["unknown-nic-resource"], r
    [f] = res["findings"]
    assert f["severity"] == "warning"
    assert f["pointer"] == "/spec/containers/0/resources/limits/example.com~1rdma_nic", f
    assert "resources.vf" in f["fix"] and "resources.shared" in f["fix"], f
    # A warning: exit 0 unless --fail-on warning.
    assert r.rc == 0, r


@pytest.mark.parametrize("limits", [
    {"nvidia.com/gpu": 8},                                        # nothing NIC-like
    {"cpu": 4, "example.com/rdma_nic": 1},                        # not a GPU container
    {"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1},        # the policy knows it
    {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4, "example.com/nic": 1},  # EFA plugin path
])
def test_unknown_nic_resource_stays_silent(tmp_path, limits):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": pod_spec(container(limits, caps=["IPC_LOCK"]))}
    r, data = run_check(tmp_path, pod)
    [res] = data["results"]
    assert "unknown-nic-resource" not in rules_of(res), r


@pytest.mark.parametrize("resource,path", [
    ("aliyun/erdma", "shared"), ("rdma/hca", "shared"), ("vke.volcengine.com/rdma", "sriov")])
def test_cloud_nic_names_of_the_embedded_default(tmp_path, resource, path):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": pod_spec(container({"nvidia.com/gpu": 8, resource: 1}))}
    r, data = run_check(tmp_path, pod, policy=None)
    [res] = data["results"]
    assert res["path"] == path and res["rdma"], r
    assert "ipc-lock-missing" in rules_of(res), r
    assert "unknown-nic-resource" not in rules_of(res), r


def test_volcengine_attachment_key_is_an_attachment(tmp_path):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "annotations": {
               "k8s.volcengine.com/pod-networks": '[{"cniConf": {"name": "rdma"}}]'}},
           "spec": pod_spec(container({"nvidia.com/gpu": 8, "vke.volcengine.com/rdma": 1},
                                      caps=["IPC_LOCK"]))}
    r, data = run_check(tmp_path, pod, policy=None)
    [res] = data["results"]
    assert "vf-without-network" not in rules_of(res), r


@pytest.mark.parametrize("gpu", ["nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared",
                                 "koordinator.sh/gpu-core", "aws.amazon.com/neuroncore"])
def test_renamed_gpus_of_the_embedded_default_make_gpu_containers(tmp_path, gpu):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": pod_spec(container({gpu: 1, "rdma/hca_shared_devices_a": 1}))}
    r, data = run_check(tmp_path, pod, policy=None)
    [res] = data["results"]
    assert res["path"] == "shared", r
    assert "ipc-lock-missing" in rules_of(res, "error"), r


@pytest.mark.parametrize("provider,path", [
    ("tcp", "tcp"), ("sockets", "tcp"), ("tcp;ofi_rxm", "tcp"), ("efa", "plugin")])
def test_efa_with_a_tcp_provider_is_tcp(tmp_path, provider, path):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": pod_spec(container({"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4},
                                      env={"FI_PROVIDER": provider}))}
    r, data = run_check(tmp_path, pod)
    [res] = data["results"]
    assert res["path"] == path and not res["rdma"], r
    if path == "tcp":
        assert any("FI_PROVIDER=" + provider in e and "over TCP" in e
                   for e in res["evidence"]), res["evidence"]


def mpijob(launcher_args, worker_env):
    worker = container({"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1}, caps=["IPC_LOCK"],
                       env=worker_env)
    launcher = {"name": "launcher", "image": "registry.example.com/ml/train:1.0",
                "command": ["mpirun"], "args": launcher_args}
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "j"},
            "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [launcher]}}},
                "Worker": {"replicas": 2, "template": {"spec": pod_spec(worker)}}}}}


def test_launcher_debug_level_in_another_case_is_no_conflict(tmp_path):
    r, data = run_check(tmp_path, mpijob(["-x", "NCCL_DEBUG=info", "python", "t.py"],
                                         {"NCCL_DEBUG": "INFO"}))
    [res] = data["results"]
    assert "launcher-args-conflict" not in rules_of(res), r


def test_launcher_conflict_points_at_the_args_entry(tmp_path):
    r, data = run_check(tmp_path, mpijob(["-np", "16", "-x", "NCCL_DEBUG=WARN", "python"],
                                         {"NCCL_DEBUG": "INFO"}))
    [res] = data["results"]
    [f] = [f for f in res["findings"] if f["rule"] == "launcher-args-conflict"]
    assert f["pointer"] == "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/args/3", f


HELM = """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-train
spec:
  containers:
    - name: trainer
      image: {{ .Values.image }}
      resources:
        limits:
          {{- toYaml .Values.resources | nindent 10 }}
"""

# The first seven lines of the broken pods below.
POD_HEAD = """apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: trainer
"""

# A file published in the middle of a merge: YAML fails at `=======`, which is no error of
# the YAML as either side wrote it.
MERGED = POD_HEAD + """<<<<<<< HEAD
      image: registry.example.com/ml/train:1.0
=======
      image: registry.example.com/ml/train:1.1
>>>>>>> upgrade-image
      resources: {limits: {nvidia.com/gpu: 8}}
"""

ENVSUBST = POD_HEAD + """      image: registry.example.com/ml/train:1.0
      args: [--nnodes, ${NNODES}, train.py]
      resources: {limits: {nvidia.com/gpu: 8}}
"""


# `{{ ... }}` alone as a value is YAML (a flow mapping, here a mapping key), so the YAML reader
# passes it and the conversion refuses it; it is still a Helm file.
HELM_VALID_YAML = """apiVersion: v1
kind: Pod
metadata:
  name: {{ include "train.name" . }}
  namespace: {{ .Release.Namespace }}
spec:
  containers: [{name: trainer, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
"""


@pytest.mark.parametrize("text,words", [
    (HELM, "a Helm (Go template) file, not YAML"),
    (HELM_VALID_YAML, "a Helm (Go template) file, not YAML"),
    (ENVSUBST, "an envsubst template, not YAML"),
    (MERGED, "line 8: an unresolved git merge conflict"),
])
def test_a_template_file_says_what_it_is_in_one_line(tmp_path, text, words):
    f = tmp_path / "t.yaml"
    f.write_text(text)
    r = rw("check", "--policy", POLICIES / "off.yaml", f)
    assert r.rc == 2, r
    lines = [l for l in (r.out + r.err).splitlines() if words in l]
    assert len(lines) == 1 and str(f) in lines[0], r


def test_an_unsubstituted_quantity_shows_its_value_and_says_what_it_is(tmp_path):
    # envsubst's ${NAME} as a block mapping's value is a plain string to YAML: the quantity
    # refuses it, and says what it most likely is
    def check_limit(value):
        f = tmp_path / "q.yaml"
        f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                     "    - name: t\n      image: x\n      resources:\n        limits:\n"
                     f"          nvidia.com/gpu: {value}\n")
        r = rw("check", "--policy", POLICIES / "off.yaml", f)
        assert r.rc == 2, r
        return r.err

    for placeholder in ("${GPU_PER_NODE}", "__GPUS_PER_NODE__", "PLACEHOLDER_NUM_GPU", "<gpus>"):
        err = check_limit(placeholder)
        assert (f"'{placeholder}' is not a valid quantity (a template variable not substituted "
                "yet") in err, err
    err = check_limit("eight")
    assert "'eight' is not a valid quantity" in err and "not substituted yet" not in err, err
    # A count field says the same of its placeholder (GKE's JobSet recipes write __NUM_NODES__).
    f = tmp_path / "n.yaml"
    f.write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                 "  parallelism: __NUM_NODES__\n  template:\n    spec:\n      containers:\n"
                 "        - {name: t, image: x}\n")
    r = rw("check", "--policy", POLICIES / "off.yaml", f)
    assert r.rc == 2, r
    assert ("/spec/parallelism: must be an integer, got a string '__NUM_NODES__' (a template "
            "variable not substituted yet") in r.err, r


def test_a_broken_file_without_template_markers_keeps_the_yaml_error(tmp_path):
    f = tmp_path / "b.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nspec: {containers: [\n")
    r = rw("check", "--policy", POLICIES / "off.yaml", f)
    assert r.rc == 2 and "template" not in (r.out + r.err), r


def dynamo_graph(version, spec):
    return {"apiVersion": f"nvidia.com/{version}", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "d", "namespace": "rdma-sriov-a"}, "spec": spec}


def test_a_dynamo_graph_is_mutated_in_its_components_pod_templates(tmp_path):
    f = tmp_path / "dgd.yaml"
    f.write_text(yaml.safe_dump(dynamo_graph("v1beta1", {"components": [
        {"name": "decode", "type": "decode",
         "podTemplate": {"spec": pod_spec(container({"nvidia.com/gpu": 8}))}}]})))
    r = rw("mutate", "--policy", POLICIES / "sriov.yaml", "-o", "patch", f)
    assert r.rc == 0, r
    patch = json.loads(r.out)
    assert patch and all(op["path"].startswith("/spec/components/0/podTemplate") for op in patch), \
        patch


def test_a_dynamo_graph_without_pod_templates_says_where_they_would_be(tmp_path):
    # v1alpha1 keeps a component's pod in spec.services.<name>.extraPodSpec, not a pod template.
    r, data = run_check(tmp_path, dynamo_graph("v1alpha1", {"services": {"decode": {
        "resources": {"limits": {"gpu": "8"}},
        "extraPodSpec": {"mainContainer": {"image": "x"}}}}}))
    [res] = data["results"]
    assert res["path"] == "none" and res["findings"] == [], r
    assert any("keeps its pod templates at /spec/components/*/podTemplate" in e
               for e in res["evidence"]), res["evidence"]
