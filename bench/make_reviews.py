#!/usr/bin/env python3
"""Writes the bench's AdmissionReview bodies: a ~3 KB Pod, a ~10 KB Job and a ~30 KB
PyTorchJob, each a GPU workload in a namespace the default policy mutates (rdma-sriov-bench).
Sizes come from realistic padding: environment variables and labels, as real jobs carry.

  bench/make_reviews.py OUT_DIR
"""
import json
import sys
import uuid
from pathlib import Path

NS = "rdma-sriov-bench"


def container(name, env_count):
    return {
        "name": name,
        "image": "registry.example.com/ml/llama-train:2.3",
        "command": ["torchrun"],
        "args": ["--nproc_per_node=8", "train.py", "--config", "llama70b.yaml"],
        "env": [{"name": f"TRAIN_SETTING_{i:03d}", "value": f"value-{i:03d}-" + "x" * 20}
                for i in range(env_count)],
        "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "32", "memory": "512Gi"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }


def template(env_count):
    return {"metadata": {"labels": {"app": "train", "team": "llm"}},
            "spec": {"restartPolicy": "OnFailure",
                     "containers": [container("trainer", env_count)],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}


def review(obj):
    api = obj["apiVersion"]
    group, _, version = api.rpartition("/")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": str(uuid.uuid4()),
                        "kind": {"group": group, "version": version, "kind": obj["kind"]},
                        "resource": {"group": group, "version": version,
                                     "resource": obj["kind"].lower() + "s"},
                        "operation": "CREATE", "namespace": NS, "name": obj["metadata"]["name"],
                        "userInfo": {"username": "system:serviceaccount:kubeflow:training-operator",
                                     "groups": ["system:serviceaccounts"]},
                        "object": obj, "dryRun": False}}


def fit(make, target):
    """The smallest padding whose review reaches `target` bytes."""
    n = 0
    while len(json.dumps(review(make(n)))) < target:
        n += 1
    return review(make(n))


def pod(n):
    t = template(n)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "bench", "namespace": NS, **t["metadata"]}, "spec": t["spec"]}


def job(n):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "bench", "namespace": NS},
            "spec": {"completions": 4, "parallelism": 4, "template": template(n)}}


def pytorchjob(n):
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "bench", "namespace": NS},
            "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template(n)},
                "Worker": {"replicas": 15, "template": template(n)}}}}


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, make, size in (("pod-3k", pod, 3 * 1024), ("job-10k", job, 10 * 1024),
                             ("pytorchjob-30k", pytorchjob, 30 * 1024)):
        body = json.dumps(fit(make, size))
        (out / f"{name}.json").write_text(body)
        print(f"{name}: {len(body)} bytes")


if __name__ == "__main__":
    main()
