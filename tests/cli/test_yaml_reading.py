"""YAML as kubectl reads it (docs/cli.md#inputs-of-check-and-mutate): a repeated mapping key keeps its last
value and `check` warns `duplicate-key`; documents are numbered as PyYAML's safe_load_all
counts them; `mutate -o patch` prints one line per document, `null` for an unreadable one.
"""
import json
import re

import pytest
import yaml

import manifests as m
from conftest import POLICIES, check, dump_docs, rw

# The container repeats `resources` (as in GKE's gpudirect-rdma example): kubectl keeps the
# second one, which claims the GPU and the VF.
DUPLICATE_RESOURCES = """\
apiVersion: v1
kind: Pod
metadata:
  name: dup
  namespace: team-a
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      resources:
        limits: {cpu: 1}
      securityContext: {capabilities: {add: [IPC_LOCK]}}
      env: [{name: NCCL_SOCKET_IFNAME, value: eth1}]
      volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      resources:
        limits: {nvidia.com/gpu: 8, rdma/vf: 1}
  volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""

CONFIGMAP_DUPLICATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
  a: "2"
"""


def duplicate_findings(result):
    return [f for f in result["findings"] if f["rule"] == "duplicate-key"]


def test_duplicate_key_last_value_wins_and_warns(write):
    p = write(DUPLICATE_RESOURCES)
    r, data = check(p)
    assert r.rc == 0, r
    [res] = data["results"]
    assert res["source"] == f"{p}#0", r
    # The last `resources` is the one read: a GPU container with a VF.
    assert res["path"] == "sriov", r
    [f] = duplicate_findings(res)
    assert f["severity"] == "warning", f
    assert f["pointer"] == "/spec/containers/0/resources", f
    assert "resources" in f["message"] and "line 17" in f["message"], f
    assert "kubectl" in f["message"], f
    assert "line 12" in f["fix"] and "resources" in f["fix"], f
    assert data["summary"]["warnings"] >= 1, data["summary"]
    assert data["summary"]["errors"] == 0, data["summary"]
    assert "errors" not in data, data


def test_duplicate_key_is_never_an_error_exit(write):
    # The default policy with validation deny: still exit 0 for a warning.
    r, data = check(write(CONFIGMAP_DUPLICATE), policy=None)
    assert r.rc == 0, r
    [res] = data["results"]
    assert res["path"] == "none", r
    # Not a workload: the duplicate is its only finding.
    assert [f["rule"] for f in res["findings"]] == ["duplicate-key"], res
    assert res["findings"][0]["pointer"] == "/data/a", res
    assert data["summary"] == {"documents": 1, "errors": 0, "warnings": 1,
                               "suppressed": 0}, data


def test_duplicate_key_three_times_is_two_findings(write):
    text = CONFIGMAP_DUPLICATE + '  a: "3"\n'
    _, data = check(write(text))
    fs = duplicate_findings(data["results"][0])
    assert [f["pointer"] for f in fs] == ["/data/a", "/data/a"], fs
    # Each names the occurrence it overrides.
    assert "line 6" in fs[0]["fix"] and "line 7" in fs[1]["fix"], fs


def test_duplicate_key_text_output_prints_message_and_fix(write):
    r = rw("check", "--policy", POLICIES / "off.yaml", write(CONFIGMAP_DUPLICATE))
    assert r.rc == 0, r
    assert "duplicate-key" in r.out and "at /data/a" in r.out, r
    [fix] = [l for l in r.out.splitlines() if l.strip().startswith("fix:")]
    assert "remove the earlier 'a' at line 6" in fix, r
    assert "Fix:" not in r.out, r


def test_duplicate_key_in_a_list_item_stays_on_its_item(write):
    text = """\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: clean}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: dup}
    data:
      k: x
      k: y
"""
    p = write(text)
    r, data = check(p)
    assert r.rc == 0, r
    clean, dup = data["results"]
    assert clean["source"] == f"{p}#0/items/0" and dup["source"] == f"{p}#0/items/1", r
    assert clean["findings"] == [], clean
    [f] = duplicate_findings(dup)
    assert f["pointer"] == "/data/k", f  # into the item, as every pointer of an item


def test_kubectl_yaml_list_is_read_item_by_item_with_its_lines(write):
    # `kubectl get -o yaml`: items at column 0, `kind: List` after them; streamed item by item.
    items = "".join(
        f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n"
        f"    k: x\n" + ("    k: y\n" if i == 2 else "") for i in range(4))
    text = f"apiVersion: v1\nitems:\n{items}kind: List\nmetadata:\n  resourceVersion: \"\"\n"
    p = write(text)
    r, data = check(p)
    assert r.rc == 0, r
    assert [x["source"] for x in data["results"]] == [f"{p}#0/items/{i}" for i in range(4)], r
    [f] = duplicate_findings(data["results"][2])
    assert f["pointer"] == "/data/k" and "line 21" in f["message"], f
    r2, from_stdin = check("-", input=text)
    assert [x["findings"] for x in from_stdin["results"]] == \
        [x["findings"] for x in data["results"]], r2


def test_duplicate_inside_an_anchor_is_reported_once_per_line(write):
    text = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: anchors
  labels: &l
    app: a
    app: b
  annotations: *l
"""
    _, data = check(write(text))
    fs = duplicate_findings(data["results"][0])
    assert [f["pointer"] for f in fs] == ["/metadata/labels/app"], fs


def test_merge_key_override_is_no_duplicate(write):
    text = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: merged
  labels: &l {app: a, tier: x}
  annotations:
    <<: *l
    app: b
"""
    r, data = check(write(text))
    assert r.rc == 0, r
    assert data["results"][0]["findings"] == [], r


def test_mutate_reads_duplicate_keys(write):
    p = write(DUPLICATE_RESOURCES)
    for out in ("json", "patch", "yaml"):
        r = rw("mutate", "-o", out, "--policy", POLICIES / "sriov.yaml", p)
        assert r.rc in (0, 1), r  # read, not refused
        assert "duplicate" not in r.err, r
    r = rw("mutate", "-o", "json", "--policy", POLICIES / "off.yaml", p)
    [obj] = r.json_lines()
    assert obj["spec"]["containers"][0]["resources"] == {
        "limits": {"nvidia.com/gpu": 8, "rdma/vf": 1}}, r


# -- document indices ----------------------------------------------------------------------------

LICENCE = """\
# Copyright 2024 Example Inc. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
"""


def test_index_after_a_licence_header(write):
    p = write(LICENCE + "---\n" + dump_docs([m.sriov(), m.tcp()]))
    r, data = check(p)
    assert [x["source"] for x in data["results"]] == [f"{p}#0", f"{p}#1"], r


@pytest.mark.parametrize("text", [
    LICENCE + "---\nkind: A\n---\nkind: B\n",
    LICENCE + "kind: A\n---\nkind: B\n",
    "---\nkind: A\n",
    "--- # first\nkind: A\n--- # second\n\n---\nkind: B\n",
    "kind: A\n---\n---\n# nothing\n---\nkind: B\n---\n",
    "kind: A\n...\n---\nkind: B\n...\n",
    "kind: A\n...\n# trailing comment\n",
    "# only a comment\n",
], ids=["header-then-marker", "header-then-content", "marker-first-line", "marker-comments",
        "empty-between-and-trailing", "document-end", "document-end-then-comment",
        "comment-only"])
def test_indices_match_pyyaml(write, text):
    p = write(text)
    r, data = check(p)
    assert r.rc == 0, r
    want = [f"{p}#{i}" for i, d in enumerate(yaml.safe_load_all(text)) if d is not None]
    assert [x["source"] for x in data["results"]] == want, r


# -- mutate -o patch: one line per document ------------------------------------------------------

def test_patch_prints_null_for_a_broken_middle_document(write):
    text = dump_docs([m.tcp()]) + "---\nkind: [\n---\n" + dump_docs([m.cpu_only()])
    p = write(text)
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "off.yaml", p)
    assert r.rc == 2, r
    lines = r.out.splitlines()
    assert len(lines) == 3, r
    assert json.loads(lines[0]) == [] and lines[1] == "null" and json.loads(lines[2]) == [], r
    assert re.search(re.escape(f"{p}#1") + r".*line \d+", r.err), r


def test_patch_prints_null_for_wrong_types(write):
    bad = m.edit(m.sriov, lambda d: m.c0(d).update(env="x"))
    p = write(dump_docs([bad, m.sriov()]))
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", p)
    assert r.rc == 2, r
    lines = r.out.splitlines()
    assert len(lines) == 2 and lines[0] == "null", r
    assert isinstance(json.loads(lines[1]), list), r
    assert f"{p}#0" in r.err and "env" in r.err, r


def test_patch_lines_skip_empty_documents_and_unreadable_files(write, tmp_path):
    p = write(LICENCE + "---\n" + dump_docs([m.tcp(), None]) + "---\nkind: [\n")
    missing = tmp_path / "missing.yaml"
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "off.yaml", p, missing)
    assert r.rc == 2, r
    # #0 the pod, #1 empty (no line), #2 broken; the missing file has no document.
    assert r.out.splitlines() == ["[]", "null"], r
    assert f"{p}#2" in r.err and "missing.yaml" in r.err, r


def test_duplicate_key_in_a_json_file(write):
    p = write('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"},\n'
              ' "data": {"k": "1",\n          "k": "2"}}\n', "cm.json")
    r, data = check(p)
    assert r.rc == 0, r
    [f] = duplicate_findings(data["results"][0])
    assert f["pointer"] == "/data/k" and "line 3" in f["message"], f
