"""Random byte and structure mutations of the golden corpus through `check` and `mutate`.

Deterministic (fixed seed), bounded in count and time. Each case must end with exit 0, 1 or 2,
never a signal or a hang; on 2 stderr names the source. Structure mutations are written as
JSON, so the test knows the exact input and can also require that the patch of `mutate -o
patch` turns it into `mutate -o json` and that mutating again yields no operations.
"""
import copy
import json
import os
import random
import time

import pytest
import yaml

from conftest import GOLDEN, POLICIES, canon, rw
from rfc6902 import apply_patch

SEED = int(os.environ.get("RW_FUZZ_SEED", "20261130"))
BYTE_CASES = int(os.environ.get("RW_FUZZ_BYTE_CASES", "150"))
STRUCT_CASES = int(os.environ.get("RW_FUZZ_STRUCT_CASES", "150"))
BUDGET_S = float(os.environ.get("RW_FUZZ_SECONDS", "150"))
POLICY_CYCLE = ["sriov.yaml", "hostnetwork.yaml", "shared.yaml", "tcp.yaml", "off.yaml",
                "override.yaml", "sriov-multirail.yaml", "vendor-key.yaml"]


def corpus():
    files = sorted(p for p in GOLDEN.rglob("*") if p.suffix in (".yaml", ".yml", ".json")
                   and "policies" not in p.parts)
    return [(p.name, p.read_bytes()) for p in files]


def docs_of(text):
    try:
        return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []


INTERESTING = [None, True, False, 0, -1, 1 << 62, 1.5, "", "x" * 5000, "0", "off", "true",
               [], {}, [None], {"": None}, "eth1", "^lo", "=eth1", "sriov-rdma-net@eth1",
               '[{"name":"sriov-rdma-net","interface":"eth1"}]', "[{", "IPC_LOCK", "ALL",
               {"limits": {"nvidia.com/gpu": 8, "rdma/vf": "1"}}, ["IPC_LOCK"], "~1/~0",
               {"name": "NCCL_IB_DISABLE", "value": "true"}, [{"name": "A"}], "8Gi", "-3"]


def nodes(doc, path=()):
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from nodes(v, path + (i,))


def set_at(doc, path, value):
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def mutate_structure(rng, doc):
    doc = json.loads(json.dumps(doc))  # no shared subtrees from YAML aliases
    for _ in range(rng.randint(1, 4)):
        all_nodes = list(nodes(doc))
        path, node = rng.choice(all_nodes)
        action = rng.randrange(6)
        if not path:
            continue
        if action == 0:
            set_at(doc, path, copy.deepcopy(rng.choice(INTERESTING)))
        elif action == 1:  # delete
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            del parent[path[-1]]
        elif action == 2 and isinstance(node, list):  # duplicate an element
            node.append(copy.deepcopy(rng.choice(node)) if node else None)
        elif action == 3 and isinstance(node, dict):  # add a strange key
            node[rng.choice(["", "a/b", "~", "env", "containers", "hostNetwork", "x" * 300])] = \
                copy.deepcopy(rng.choice(INTERESTING))
        elif action == 4:  # wrap in a list / dict
            set_at(doc, path, rng.choice([[node], {"v": node}]))
        else:  # swap with another subtree
            _, other = rng.choice(all_nodes)
            set_at(doc, path, copy.deepcopy(other))
    return doc


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not data:
            data += b"{"
        i = rng.randrange(len(data))
        op = rng.randrange(7)
        if op == 0:
            data[i] = rng.randrange(256)
        elif op == 1:
            data.insert(i, rng.choice(b":-[]{}&*!|>#'\"\t\n ,?%@`\\\x00\xff"))
        elif op == 2:
            del data[i:i + rng.randint(1, 40)]
        elif op == 3:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randint(1, 200)]
        elif op == 4:
            data = data[:i]
        elif op == 5:
            data[i:i] = rng.choice([b"\n---\n", b"&a ", b"*a", b"<<: *a\n", b"!!binary ",
                                    b"\n  - ", b"\xef\xbb\xbf", b"\r\n", b"\t"])
        else:
            data[i:i] = b"[" * rng.randint(1, 2000)
    return bytes(data)


def run_one(path, policy, deadline_s=20):
    pol = ["--policy", POLICIES / policy]
    rc = rw("check", "-o", "json", *pol, path, timeout=deadline_s)
    rp = rw("mutate", "-o", "patch", *pol, path, timeout=deadline_s)
    for r in (rc, rp):
        assert r.rc in (0, 1, 2), r
        if r.rc == 2:
            assert path.name in r.err, f"exit 2 must name the source\n{r!r}"
    if rc.rc != 2:
        data = rc.json()
        assert isinstance(data.get("results"), list), rc
    if rp.rc != 2:
        for p in rp.json_lines():
            assert isinstance(p, list), rp
    return rc, rp


def test_byte_mutations(tmp_path):
    rng = random.Random(SEED)
    seeds = corpus()
    start = time.monotonic()
    outcomes = {0: 0, 1: 0, 2: 0}
    for n in range(BYTE_CASES):
        if time.monotonic() - start > BUDGET_S / 2:
            break
        name, data = rng.choice(seeds)
        path = tmp_path / f"fuzz-{n}-{name}"
        path.write_bytes(mutate_bytes(rng, data))
        rc, _ = run_one(path, POLICY_CYCLE[n % len(POLICY_CYCLE)])
        outcomes[rc.rc] += 1
    assert sum(outcomes.values()) >= min(BYTE_CASES, 20), outcomes


def test_structure_mutations(tmp_path):
    rng = random.Random(SEED + 1)
    seed_docs = [d for _, data in corpus() for d in docs_of(data.decode("utf-8", "replace"))]
    assert seed_docs
    start = time.monotonic()
    checked_patches = 0
    for n in range(STRUCT_CASES):
        if time.monotonic() - start > BUDGET_S / 2:
            break
        doc = mutate_structure(rng, rng.choice(seed_docs))
        path = tmp_path / f"struct-{n}.json"
        path.write_text(json.dumps(doc))
        policy = POLICY_CYCLE[n % len(POLICY_CYCLE)]
        _, rp = run_one(path, policy)
        if rp.rc == 2:
            continue
        patches = rp.json_lines()
        if len(patches) != 1:  # a mutated List expands to several documents
            continue
        [patch] = patches
        rj = rw("mutate", "-o", "json", "--policy", POLICIES / policy, path)
        assert rj.rc == rp.rc, (rp, rj)
        [result] = rj.json_lines()
        assert canon(apply_patch(doc, patch)) == canon(result), (path.read_text(), patch)
        again = tmp_path / f"struct-{n}-again.json"
        again.write_text(json.dumps(result))
        r2 = rw("mutate", "-o", "patch", "--policy", POLICIES / policy, again)
        assert r2.json_lines() == [[]], (path.read_text(), r2)
        checked_patches += 1
    assert checked_patches > 0


@pytest.mark.parametrize("data", [b"", b"\x00\x01\x02", b"\xff\xfe", b"---", b"- a\n- b\n",
                                  b"42", b"\"just a string\"", b"null", b"[]", b"{}",
                                  b"kind: List\nitems: 5\n", b"kind: List\nitems: [1, [2]]\n",
                                  b"apiVersion: v1\nkind: Pod\nspec: null\n",
                                  b"apiVersion: 7\nkind: [Pod]\nmetadata: {name: {a: 1}}\n",
                                  b"&a [*a]", b"a: &a\n  b: *a\n", b"? [a]\n: b\n"],
                         ids=lambda b: repr(b)[:40])
def test_odd_documents(tmp_path, data):
    path = tmp_path / "odd.yaml"
    path.write_bytes(data)
    run_one(path, "sriov.yaml")


def test_alias_bomb_is_bounded(tmp_path):
    """Nine levels of ten aliases each: 10^9 nodes if expanded naively."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    run_one(path, "sriov.yaml", deadline_s=30)
