"""`mutate -o yaml` keeps the manifest's layout so that a GitOps diff shows only what changed
(issue 10, point 8): each mapping's key order (added keys last), comments, documents the webhook
leaves alone as written; and the YAML still reads back as exactly the mutated object (`-o json`).
"""
import json
import re

import pytest
import yaml

from conftest import GOLDEN, INPUTS, KINDS, PATHS, POLICIES, canon, rw

REAL = GOLDEN / "real"
INPUT_FILES = sorted(p for d in (KINDS, PATHS, INPUTS, REAL) for p in d.glob("*.yaml"))
POLICY_NAMES = sorted(p.name for p in POLICIES.glob("*.yaml"))


def ordered_mappings(before, after, path=""):
    """(path, keys before, keys after) of every mapping present in both, depth first."""
    if isinstance(before, dict) and isinstance(after, dict):
        yield path, list(before), list(after)
        for k in before:
            if k in after:
                yield from ordered_mappings(before[k], after[k], f"{path}/{k}")
    elif isinstance(before, list) and isinstance(after, list):
        for i, (b, a) in enumerate(zip(before, after)):
            yield from ordered_mappings(b, a, f"{path}/{i}")


def assert_order_kept(before, after):
    for path, keys_before, keys_after in ordered_mappings(before, after):
        kept = [k for k in keys_before if k in keys_after]
        added = [k for k in keys_after if k not in keys_before]
        assert keys_after == kept + added, f"{path or '/'}: {keys_before} became {keys_after}"


def mutate_yaml(path, policy, *extra):
    args = ["mutate", *extra] + (["--policy", POLICIES / policy] if policy else []) + [path]
    return rw(*args), rw("mutate", "-o", "json", *args[1:])


@pytest.mark.parametrize("policy", [None] + POLICY_NAMES)
@pytest.mark.parametrize("path", INPUT_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_key_order_kept_and_same_object_as_json(path, policy):
    ry, rj = mutate_yaml(path, policy)
    assert ry.rc == rj.rc, (ry, rj)
    docs = [d for d in yaml.safe_load_all(ry.out) if d is not None]
    results = rj.json_lines()
    assert [canon(d) for d in docs] == [canon(j) for j in results], "-o yaml and -o json differ"
    text = path.read_text()
    inputs = [d for d in yaml.safe_load_all(text) if d is not None]
    if "<<:" in text or any(d.get("kind") == "List" for d in inputs):
        return  # PyYAML puts merged keys first; a List is written as its items
    assert len(inputs) == len(docs)
    for before, after in zip(inputs, docs):
        assert_order_kept(before, after)


COMMENTED = """\
# Training job of team A (this header stays).
apiVersion: batch/v1
kind: Job
metadata:
  name: train  # the job's name
  namespace: team-a

spec:
  # three attempts, then give up
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers:
      # the trainer container
      - name: trainer
        image: registry.example.com/ml/train:1.0   # pinned
        command: ["python", "train.py"]
        args:
        - |
          set -e
          # not a comment: part of the script
          torchrun train.py
        resources:
          limits: {nvidia.com/gpu: 8}
# end of the job
"""


def test_comments_key_order_and_layout_kept(write):
    p = write(COMMENTED, "job.yaml")
    ry, rj = mutate_yaml(p, "hostnetwork.yaml")
    assert ry.rc == rj.rc, (ry, rj)
    out = ry.out
    assert yaml.safe_load(out) == rj.json_lines()[0]
    lines = out.splitlines()
    assert lines[0] == "# Training job of team A (this header stays).", out
    assert lines[lines.index("spec:") - 1] == "", out  # a blank line stays
    assert "  name: train  # the job's name" in lines, out
    at = lines.index("  # three attempts, then give up")
    assert lines[at + 1] == "  backoffLimit: 3", out
    at = lines.index("      # the trainer container")
    assert lines[at + 1] == "      - name: trainer", out
    assert "        image: registry.example.com/ml/train:1.0   # pinned" in lines, out
    assert '        command: ["python", "train.py"]' in lines, out  # flow list, quotes kept
    assert "          # not a comment: part of the script" in lines, out
    assert out.count("# not a comment") == 1, out
    assert lines[-1] == "# end of the job", out
    # The sequence style of the input (dashes under their key) is kept for added items too.
    assert re.search(r"^( *)add:\n\1- IPC_LOCK$", out, re.M), out
    # The mutation is there: keys it adds come after the mapping's own.
    spec = yaml.safe_load(out)["spec"]["template"]["spec"]
    assert list(spec)[:2] == ["restartPolicy", "containers"] and spec["hostNetwork"] is True


@pytest.mark.parametrize("path", INPUT_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_file_the_webhook_leaves_alone_comes_out_byte_for_byte(path):
    text = path.read_text()
    if any(d.get("kind") == "List" for d in yaml.safe_load_all(text) if d is not None):
        pytest.skip("a List is written as its items")
    r = rw("mutate", "--policy", POLICIES / "off.yaml", path)
    assert r.out == text, r


def test_documents_left_alone_are_written_as_they_are(write):
    service = ("apiVersion: v1\nkind: Service   # not a workload\nmetadata: {name: svc}\n"
               "spec:\n  ports: [{port: 80}]\n")
    cpu_job = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: cpu\n"
               "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n"
               "        image: busybox  # no GPU: nothing to do\n")
    gpu = COMMENTED.replace("# end of the job\n", "")
    text = "# the header of the file\n---\n" + service + "---\n" + gpu + "---\n" + cpu_job
    p = write(text, "all.yaml")
    ry, rj = mutate_yaml(p, "hostnetwork.yaml")
    assert [canon(d) for d in yaml.safe_load_all(ry.out)] == [canon(j) for j in rj.json_lines()]
    assert ry.out.startswith("# the header of the file\n---\n" + service + "---\n"), ry.out
    assert ry.out.endswith("---\n" + cpu_job), ry.out
    assert ry.out.count("\n---\n") == 3, ry.out  # after the header, between the three


@pytest.mark.parametrize("path", INPUT_FILES + [None], ids=lambda p: p.name if p else "commented")
def test_mutating_the_output_again_changes_nothing(path, tmp_path):
    if path is None:
        path = tmp_path / "job.yaml"
        path.write_text(COMMENTED)
    once = rw("mutate", "--policy", POLICIES / "hostnetwork.yaml", path)
    assert once.rc in (0, 1), once
    again = rw("mutate", "--policy", POLICIES / "hostnetwork.yaml", "-", input=once.out)
    assert again.out == once.out
    patches = rw("mutate", "-o", "patch", "--policy", POLICIES / "hostnetwork.yaml", "-",
                 input=once.out).json_lines()
    assert all(p == [] for p in patches), patches


def test_what_is_lost_is_said_in_the_help():
    r = rw("mutate", "--help")
    assert "key order with its comments" in r.out and "Lost in a changed" in r.out, r


def test_json_input_is_written_as_plain_yaml_in_its_key_order(write):
    obj = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"namespace": "rdma-host-a", "name": "j"},
           "spec": {"containers": [{"name": "c", "image": "x",
                                    "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}
    p = write(json.dumps(obj), "pod.json")
    ry, rj = rw("mutate", p), rw("mutate", "-o", "json", p)
    assert yaml.safe_load(ry.out) == rj.json_lines()[0], ry
    assert ry.out.startswith("kind: Pod\napiVersion: v1\nmetadata:\n  namespace: rdma-host-a\n"), ry
