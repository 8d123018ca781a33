#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/ from the repository's own test data
(tests/golden, tests/unit/nccl, tests/cli/verify_logs, deploy/examples, deploy/policies). Run it
again when those change; the output is committed so the fuzz stage needs no Python. Files are
named by content hash."""
import glob
import hashlib
import json
import os
import re
import shutil

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def rel(*parts):
    return os.path.join(REPO, *parts)


def files(*patterns):
    out = []
    for p in patterns:
        out += sorted(glob.glob(rel(p), recursive=True))
    return out


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def objects():
    for path in files("tests/golden/kinds/*.yaml", "tests/golden/paths/*.yaml",
                      "tests/golden/inputs/*.yaml", "tests/golden/broken/*.yaml",
                      "deploy/examples/*.yaml"):
        try:
            docs = list(yaml.safe_load_all(open(path)))
        except yaml.YAMLError:
            continue
        for d in docs:
            if isinstance(d, dict):
                yield d
            elif isinstance(d, list):
                yield from (x for x in d if isinstance(x, dict))


def review(request, version="admission.k8s.io/v1"):
    return json.dumps({"apiVersion": version, "kind": "AdmissionReview", "request": request},
                      separators=(",", ":"))


def main():
    shutil.rmtree(os.path.join(HERE, "corpus"), ignore_errors=True)
    namespaces = ["hn", "sriov", "sriov-override", "shared", "tcp", "default", "opt-out"]
    objs = list(objects())
    for i, o in enumerate(objs):
        ns = namespaces[i % len(namespaces)]
        text = json.dumps(o, separators=(",", ":"))
        write("mutate", text)
        write("webhook", review({"uid": f"uid-{i}", "operation": "CREATE", "namespace": ns,
                                 "object": o}))
        if i % 3 == 0:
            write("webhook", review({"uid": f"upd-{i}", "operation": "UPDATE", "namespace": ns,
                                     "object": o, "oldObject": o}, "admission.k8s.io/v1beta1"))
    write("webhook", review({"uid": "del", "operation": "DELETE", "namespace": "hn",
                             "oldObject": objs[0]}))
    for path in files("deploy/examples/*.json", "tests/golden/broken/*.json"):
        write("webhook", open(path, "rb").read())
    # issue 11: a number no double holds, inside a review that is otherwise well formed.
    write("webhook", review({"uid": "big", "operation": "CREATE", "namespace": "hn",
                             "object": {"kind": "Pod", "spec": {"n": 0}}}).replace('"n":0',
                                                                                  '"n":1e400'))
    write("webhook", "{nope")

    for path in files("tests/golden/**/*.yaml", "tests/golden/**/*.json",
                      "deploy/examples/*", "deploy/policies/*.yaml"):
        write("yaml", open(path, "rb").read())
    for path in files("tests/golden/policies/*.yaml", "deploy/policies/*.yaml"):
        write("policy", open(path, "rb").read())
    src = open(rel("src/policy/default_policy.cc")).read()
    m = re.search(r'R"\((.*?)\)"', src, re.S)
    if m:
        write("policy", m.group(1))

    # A knob naming an interface Multus names by position (net1) while the policy attaches the
    # same network as eth1: a rename under onConflict: override must not orphan the knob.
    for knob in ({"env": [{"name": "NCCL_SOCKET_IFNAME", "value": "net1"}]},
                 {"env": [{"name": "NCCL_SOCKET_IFNAME", "value": "^net"}]},
                 {"command": ["bash", "-c", "export NCCL_SOCKET_IFNAME=net1; python train.py"]}):
        container = {"name": "t", "image": "i",
                     "resources": {"limits": {"nvidia.com/gpu": 8, "rdma/vf": 1}},
                     "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}, **knob}
        write("mutate", json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p",
                         "annotations": {"k8s.v1.cni.cncf.io/networks": "sriov-rdma-net"}},
            "spec": {"containers": [container]}}, separators=(",", ":")))

    vectors = json.load(open(rel("tests/unit/nccl/multus_vectors.json")))
    for v in vectors:
        write("nccl", v["input"])
    # Values the grammar tests use (tests/unit/nccl/grammar_test.cc).
    for v in ["eth", "=eth1", "^eth,ib", "^=eth0", "0", "1", "-1", "08", "0x1", "true", "PHB",
              "SYS", "phb", "mlx5_0:1,mlx5_1:1", "^=mlx5_2", "mlx5_0:x",
              "net-a, ns2/net-b@eth1,net-c", "net1 @eth1, ns2/ net2\r, /net3, net4@",
              "mpirun\0-x\0NCCL_IB_HCA=mlx5\0python\0train.py",
              "bash\0-c\0export NCCL_SOCKET_IFNAME=eth0 && python train.py"]:
        write("nccl", v)

    # Raw bytes of a connection (fuzz_http): request shapes of RFC 9112 with one of the reviews.
    body = review({"uid": "http-0", "operation": "CREATE", "namespace": "hn",
                   "object": objs[0] if objs else {}}).encode()

    def post(path, data, *lines):
        return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "".join(line + "\r\n" for line in lines)
                + f"Content-Length: {len(data)}\r\n\r\n").encode() + data

    def chunked(path, data, ext=b"", trailer=b""):
        return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\n").encode() + b"%x" % len(data) + ext \
            + b"\r\n" + data + b"\r\n0\r\n" + trailer + b"\r\n"

    for seed in [post("/mutate", body), post("/validate", body, "Expect: 100-continue"),
                 chunked("/validate", body), chunked("/mutate", body, b";n=v", b"X-T: t\r\n"),
                 b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"GET /healthz HTTP/1.0\r\n\r\n",
                 post("/validate", body, "Transfer-Encoding: gzip") + post("/validate", body),
                 post("https://localhost/validate", body, "Connection: close"),
                 post("/mutate", b"{}", "Content-Encoding: gzip")]:
        write("http", seed)

    # verify: the constructed logs of the CLI suite, each after one byte that picks the size of
    # the Feed calls (fuzz_verify.cc); logs over libFuzzer's -max_len (64 KiB) are left out.
    for i, path in enumerate(files("tests/cli/verify_logs/*.log")):
        data = open(path, "rb").read()
        if len(data) < 60000:
            write("verify", bytes([i % 61]) + data)


if __name__ == "__main__":
    main()
