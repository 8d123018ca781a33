"""Builders of small, clean manifests for rule cases; each case changes one thing."""
import copy
from pathlib import Path

import yaml

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"

NET_KEY = "k8s.v1.cni.cncf.io/networks"
LEGACY_KEY = "kubernetes.v1.cni.cncf.io/networks"


def _trainer(limits, env, caps=("IPC_LOCK",)):
    c = {
        "name": "trainer",
        "image": "registry.example.com/ml/train:1.0",
        "command": ["torchrun", "--nproc_per_node=8", "train.py"],
        "env": [{"name": k, "value": v} for k, v in env],
        "resources": {"limits": dict(limits)},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if caps is not None:
        c["securityContext"] = {"capabilities": {"add": list(caps)}}
    return c


def _pod(name, containers, annotations=None, **spec):
    meta = {"name": name, "namespace": "team-a"}
    if annotations:
        meta["annotations"] = dict(annotations)
    body = dict(spec)
    body["containers"] = containers
    body["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


# A DeviceClass of dranet's NICs and a claim template that asks for the RDMA ones (team-a),
# which `check` reads beside the pod that claims them (docs/dra.md).
DRA_OBJECTS = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "dranet"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "dra.net"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "rdma-nics", "namespace": "team-a"},
     "spec": {"spec": {"devices": {"requests": [{"name": "nic", "exactly": {
         "deviceClassName": "dranet", "allocationMode": "All",
         "selectors": [{"cel": {"expression": 'device.attributes["dra.net"].rdma == true'}}]}}]}}}},
]


def dra():
    """Clean DRA pod: GPUs, a claim of RDMA NICs (DRA_OBJECTS), IPC_LOCK, /dev/shm."""
    c = _trainer({"nvidia.com/gpu": 8}, [])
    c["resources"]["claims"] = [{"name": "nics"}]
    return _pod("dra", [c], resourceClaims=[{"name": "nics",
                                             "resourceClaimTemplateName": "rdma-nics"}])


def sriov():
    """Clean SR-IOV pod: claim + plug + IPC_LOCK + matching NCCL env + /dev/shm."""
    return _pod("sriov", [_trainer({"nvidia.com/gpu": 8, "rdma/vf": 1},
                                   [("NCCL_SOCKET_IFNAME", "eth1"), ("NCCL_IB_DISABLE", "0")])],
                annotations={NET_KEY: "sriov-rdma-net@eth1"})


def host():
    """Clean hostNetwork pod with the shared device plugin mounting /dev/infiniband."""
    return _pod("host", [_trainer({"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1},
                                  [("NCCL_SOCKET_IFNAME", "bond0"), ("NCCL_IB_DISABLE", "0")])],
                hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")


def shared():
    """Clean shared-HCA pod with a macvlan interface for sockets."""
    return _pod("shared", [_trainer({"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1},
                                    [("NCCL_SOCKET_IFNAME", "net1")])],
                annotations={NET_KEY: "macvlan-rdma@net1"})


def tcp():
    """Clean TCP pod: IB disabled, sockets over eth0, no capability needed."""
    return _pod("tcp", [_trainer({"nvidia.com/gpu": 8},
                                 [("NCCL_IB_DISABLE", "1"), ("NCCL_SOCKET_IFNAME", "eth0")],
                                 caps=None)])


def unknown():
    """GPU pod whose NCCL settings come only from a ConfigMap."""
    doc = _pod("unknown", [_trainer({"nvidia.com/gpu": 8}, [], caps=None)])
    c = doc["spec"]["containers"][0]
    c["env"] = [{"name": "NCCL_SOCKET_IFNAME",
                 "valueFrom": {"configMapKeyRef": {"name": "nccl", "key": "ifname"}}}]
    c["envFrom"] = [{"configMapRef": {"name": "nccl"}}]
    return doc


def cpu_only():
    doc = _pod("cpu", [_trainer({"cpu": "2"}, [], caps=None)])
    return doc


# ---- small edits ---------------------------------------------------------------------------

def c0(doc, i=0):
    """The i-th container of a Pod."""
    return doc["spec"]["containers"][i]


def set_env(c, name, value):
    for e in c.setdefault("env", []):
        if e["name"] == name:
            e.clear()
            e.update({"name": name, "value": value})
            return
    c["env"].append({"name": name, "value": value})


def del_env(c, name):
    c["env"] = [e for e in c.get("env", []) if e["name"] != name]


def drop_shm(doc):
    for c in doc["spec"]["containers"]:
        c.pop("volumeMounts", None)
    doc["spec"].pop("volumes", None)


def edit(base, *edits):
    """A fresh base manifest with `edits` (functions of the document) applied."""
    doc = base() if callable(base) else copy.deepcopy(base)
    for e in edits:
        e(doc)
    return doc


def golden(rel):
    docs = [d for d in yaml.safe_load_all((GOLDEN / rel).read_text()) if d is not None]
    assert len(docs) == 1, rel
    return docs[0]


def pytorchjob(master, worker):
    """A PyTorchJob whose Master and Worker pod templates are the given Pods' metadata+spec."""
    def tmpl(pod):
        t = {"spec": copy.deepcopy(pod["spec"])}
        ann = pod["metadata"].get("annotations")
        if ann:
            t["metadata"] = {"annotations": dict(ann)}
        return t
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "pj", "namespace": "team-a"},
        "spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": tmpl(master)},
            "Worker": {"replicas": 3, "template": tmpl(worker)},
        }},
    }


def mpijob(launcher_cmd, worker):
    job = pytorchjob(cpu_only(), worker)
    specs = job["spec"].pop("pytorchReplicaSpecs")
    launcher = specs["Master"]
    launcher["template"]["spec"]["containers"][0]["command"] = list(launcher_cmd)
    job.update({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob"})
    job["spec"] = {"slotsPerWorker": 8,
                   "mpiReplicaSpecs": {"Launcher": launcher, "Worker": specs["Worker"]}}
    return job


# Where each kind's pod templates are (DOMAIN.md section 5).
TEMPLATES = {
    "pod.yaml": [""],
    "job.yaml": ["/spec/template"],
    "cronjob.yaml": ["/spec/jobTemplate/spec/template"],
    "deployment.yaml": ["/spec/template"],
    "statefulset.yaml": ["/spec/template"],
    "pytorchjob.yaml": ["/spec/pytorchReplicaSpecs/Master/template",
                        "/spec/pytorchReplicaSpecs/Worker/template"],
    "tfjob.yaml": ["/spec/tfReplicaSpecs/Chief/template", "/spec/tfReplicaSpecs/Worker/template",
                   "/spec/tfReplicaSpecs/PS/template"],
    "mpijob-v1.yaml": ["/spec/mpiReplicaSpecs/Launcher/template",
                       "/spec/mpiReplicaSpecs/Worker/template"],
    "mpijob-v2beta1.yaml": ["/spec/mpiReplicaSpecs/Launcher/template",
                            "/spec/mpiReplicaSpecs/Worker/template"],
    "volcano-job.yaml": ["/spec/tasks/0/template", "/spec/tasks/1/template"],
    "jobset.yaml": ["/spec/replicatedJobs/0/template/spec/template"],
    "leaderworkerset.yaml": ["/spec/leaderWorkerTemplate/leaderTemplate",
                             "/spec/leaderWorkerTemplate/workerTemplate"],
    "rayjob.yaml": ["/spec/rayClusterSpec/headGroupSpec/template",
                    "/spec/rayClusterSpec/workerGroupSpecs/0/template"],
    "raycluster.yaml": ["/spec/headGroupSpec/template", "/spec/workerGroupSpecs/0/template",
                        "/spec/workerGroupSpecs/1/template"],
}


def resolve(doc, pointer):
    node = doc
    for t in pointer.split("/")[1:] if pointer else []:
        t = t.replace("~1", "/").replace("~0", "~")
        node = node[int(t)] if isinstance(node, list) else node[t]
    return node


def is_gpu(c):
    res = c.get("resources") or {}
    return any("nvidia.com/gpu" in (res.get(k) or {}) for k in ("limits", "requests"))
