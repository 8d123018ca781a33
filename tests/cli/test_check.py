"""`check`: the JSON shape scripts rely on, inputs (files, stdin, directories, multi-document
YAML, Lists, anchors), unreadable and malformed inputs, and exit codes (docs/cli.md).
"""
import json
import os
import re

import pytest

import manifests as m
from conftest import (BROKEN, INPUTS, KINDS, PATHS, POLICIES, check, dump_docs, rules_of, rw)

RESULT_KEYS = {"source", "apiVersion", "kind", "namespace", "name", "path", "rdma",
               "enforcement", "evidence", "findings"}
PATHS_ENUM = {"sriov", "hostNetwork", "shared", "tcp", "none", "mixed", "unknown"}


def assert_shape(data):
    assert set(data) >= {"results", "summary"}, data
    assert set(data["summary"]) == {"documents", "errors", "warnings", "suppressed"}, \
        data["summary"]
    errors = warnings = suppressed = 0
    for res in data["results"]:
        assert set(res) >= RESULT_KEYS, res
        assert isinstance(res["source"], str)
        for k in ("apiVersion", "kind", "namespace", "name"):
            assert isinstance(res[k], str), (k, res)
        assert res["path"] in PATHS_ENUM, res
        assert isinstance(res["rdma"], bool), res
        assert res["enforcement"] in {"deny", "warn", "off"}, res
        assert isinstance(res["evidence"], list), res
        assert all(isinstance(e, str) for e in res["evidence"]), res
        for f in res["findings"]:
            assert set(f) >= {"rule", "severity", "message", "pointer"}, f
            assert f["severity"] in {"error", "warning"}, f
            errors += f["severity"] == "error"
            warnings += f["severity"] == "warning"
        assert isinstance(res["suppressed"], list), res
        suppressed += len(res["suppressed"])
    assert data["summary"] == {"documents": len(data["results"]), "errors": errors,
                               "warnings": warnings, "suppressed": suppressed}, data["summary"]


# -- the shape ---------------------------------------------------------------------------------

def test_contract_example_shape(tmp_path):
    """A PyTorchJob like the contract's example (IPC_LOCK missing on the Worker)."""
    job = m.pytorchjob(m.cpu_only(), m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext")))
    job["metadata"] = {"name": "llama-70b", "namespace": "team-a"}
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "train.yaml").write_text(dump_docs([job]))
    r = rw("check", "-o", "json", "--policy", POLICIES / "off.yaml", "jobs/train.yaml",
           cwd=tmp_path)
    data = r.json()
    assert_shape(data)
    [res] = data["results"]
    assert res["source"] == "jobs/train.yaml#0"
    assert (res["apiVersion"], res["kind"], res["namespace"], res["name"]) == (
        "kubeflow.org/v1", "PyTorchJob", "team-a", "llama-70b")
    assert (res["path"], res["rdma"], res["enforcement"]) == ("sriov", True, "deny")
    assert res["evidence"], res
    joined = " ".join(res["evidence"])
    assert "rdma/vf" in joined and "sriov-rdma-net" in joined, res["evidence"]
    assert rules_of(res) == ["ipc-lock-missing"]
    assert data["summary"] == {"documents": 1, "errors": 1, "warnings": 0, "suppressed": 0}
    assert r.rc == 1


@pytest.mark.parametrize("name,path,rdma,errors", [
    ("sriov.yaml", "sriov", True, []),
    ("hostnetwork.yaml", "hostNetwork", True, []),
    ("shared.yaml", "shared", True, []),
    ("tcp.yaml", "tcp", False, []),
    ("mixed.yaml", "mixed", True, ["mixed-paths"]),
    ("unknown.yaml", "unknown", False, []),
])
def test_path_goldens(name, path, rdma, errors):
    r, data = check(PATHS / name)
    assert_shape(data)
    [res] = data["results"]
    assert (res["path"], res["rdma"]) == (path, rdma), r
    assert rules_of(res, "error") == errors, r
    assert r.rc == (1 if errors else 0), r
    if path != "unknown":
        assert res["evidence"], res


def test_non_workloads_are_path_none():
    r, data = check(PATHS / "none.yaml")
    assert_shape(data)
    assert [(x["kind"], x["path"], x["rdma"], x["findings"]) for x in data["results"]] == [
        ("Service", "none", False, []), ("ConfigMap", "none", False, []),
        ("Deployment", "none", False, [])], r
    assert [x["source"] for x in data["results"]] == [
        f"{PATHS / 'none.yaml'}#{i}" for i in range(3)]
    assert r.rc == 0


@pytest.mark.parametrize("kind_file", sorted(p.name for p in KINDS.glob("*.yaml")))
def test_every_kind_is_reported(kind_file):
    doc = m.golden(f"kinds/{kind_file}")
    r, data = check(KINDS / kind_file)
    assert_shape(data)
    [res] = data["results"]
    assert (res["apiVersion"], res["kind"], res["name"], res["namespace"]) == (
        doc["apiVersion"], doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"])
    # The bare goldens carry no RDMA signal; volcano's minAvailable equals its replicas.
    assert res["path"] == "none" and not res["rdma"], r
    assert rules_of(res, "error") == [], r


@pytest.mark.parametrize("ns,enforcement", [
    ("team-a", "deny"), ("llm", "deny"), ("team-b", "warn"), ("team-bx", "warn"),
    ("team-c", "off"), ("elsewhere", "warn")])
def test_enforcement_follows_validation(write, ns, enforcement):
    doc = m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))
    doc["metadata"]["namespace"] = ns
    r, data = check(write(doc), policy="enforcement.yaml")
    [res] = data["results"]
    assert res["enforcement"] == enforcement, r
    # Errors make the exit code 1 whatever the namespace's validation setting.
    assert rules_of(res) == ["ipc-lock-missing"] and r.rc == 1, r


def test_controller_owned_pod_enforcement_is_the_webhooks(write):
    # The webhook only warns on a Pod a controller made (its template was judged at submit), so
    # `check` reports the enforcement the webhook would apply, not the namespace's raw setting.
    doc = m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))
    doc["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u", "controller": True}]
    r, data = check(write(doc))
    [res] = data["results"]
    assert res["enforcement"] == "warn", r
    # The findings and the exit code are the same as for a Pod of its own.
    assert rules_of(res) == ["ipc-lock-missing"] and r.rc == 1, r


def test_namespace_flag_and_default(write):
    doc = m.sriov()
    del doc["metadata"]["namespace"]
    p = write(doc)
    _, data = check(p)
    assert data["results"][0]["namespace"] == "default"
    _, data = check(p, extra=["--namespace", "team-c"], policy="enforcement.yaml")
    assert data["results"][0]["namespace"] == "team-c"
    assert data["results"][0]["enforcement"] == "off"
    # metadata.namespace wins over the flag.
    _, data = check(write(m.sriov(), "with-ns.yaml"), extra=["--namespace", "team-c"])
    assert data["results"][0]["namespace"] == "team-a"


def test_default_policy_is_used_without_flag(write):
    r, data = check(write(m.sriov()), policy=None)
    assert_shape(data)
    assert data["results"][0]["path"] == "sriov"


# -- inputs ------------------------------------------------------------------------------------

def test_stdin():
    r, data = check("-", input=dump_docs([m.sriov(), m.tcp()]))
    assert_shape(data)
    assert [x["source"] for x in data["results"]] == ["-#0", "-#1"], r
    assert [x["path"] for x in data["results"]] == ["sriov", "tcp"]


def test_multi_document_with_empty_documents(write):
    text = ("# leading comment\n---\n" + dump_docs([m.sriov()]) + "---\n# only a comment\n---\n"
            + dump_docs([m.tcp()]) + "---\n")
    p = write(text)
    r, data = check(p)
    assert_shape(data)
    # Empty documents produce no result but keep their place in the numbering.
    assert [x["name"] for x in data["results"]] == ["sriov", "tcp"], r
    srcs = [x["source"] for x in data["results"]]
    assert all(s.startswith(f"{p}#") for s in srcs), srcs
    idx = [int(s.rsplit("#", 1)[1]) for s in srcs]
    assert idx[0] < idx[1], srcs
    assert data["summary"]["documents"] == 2


def test_document_index_counts_empty_documents(write):
    p = write(dump_docs([m.sriov(), None, m.tcp()]))
    _, data = check(p)
    assert [x["source"] for x in data["results"]] == [f"{p}#0", f"{p}#2"]


def test_only_empty_documents(write):
    r, data = check(write("---\n# nothing\n---\n"))
    assert r.rc == 0, r
    assert data["results"] == [] and data["summary"] == {"documents": 0, "errors": 0,
                                                         "warnings": 0, "suppressed": 0}


def test_anchors_and_aliases():
    r, data = check(INPUTS / "anchors.yaml")
    assert_shape(data)
    [res] = data["results"]
    assert res["path"] == "sriov", r
    # Both roles lack IPC_LOCK: the alias really copied the template.
    ptrs = sorted(f["pointer"] for f in res["findings"] if f["rule"] == "ipc-lock-missing")
    assert len(ptrs) == 2, r
    assert ptrs[0].startswith("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0")
    assert ptrs[1].startswith("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0")


def test_merge_key(write):
    text = """
base: &base
  name: trainer
  image: x
  resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}
apiVersion: v1
kind: Pod
metadata:
  name: merged
  annotations: {k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1}
spec:
  containers:
    - <<: *base
      securityContext: {capabilities: {add: [IPC_LOCK]}}
"""
    r, data = check(write(text))
    [res] = data["results"]
    assert res["path"] == "sriov", r


def test_list_items_are_expanded():
    r, data = check(INPUTS / "list.yaml")
    assert_shape(data)
    src = str(INPUTS / "list.yaml")
    assert [x["source"] for x in data["results"]] == [f"{src}#0/items/0", f"{src}#0/items/1"]
    cm, pod = data["results"]
    assert (cm["kind"], cm["path"], cm["findings"]) == ("ConfigMap", "none", [])
    assert (pod["kind"], pod["name"], pod["path"]) == ("Pod", "no-ipc-lock", "sriov")
    # Pointers are into the item, not into the List.
    [f] = [f for f in pod["findings"] if f["rule"] == "ipc-lock-missing"]
    assert f["pointer"].startswith("/spec/containers/0"), f
    assert r.rc == 1


def test_json_input(write):
    p = write(json.dumps(m.sriov()), "pod.json")
    r, data = check(p)
    assert data["results"][0]["source"] == f"{p}#0"
    assert data["results"][0]["path"] == "sriov" and r.rc == 0


def test_directory_inputs(tmp_path):
    d = tmp_path / "manifests"
    (d / "sub").mkdir(parents=True)
    (d / "b.yml").write_text(dump_docs([m.tcp()]))
    (d / "a.yaml").write_text(dump_docs([m.sriov(), m.host()]))
    (d / "c.json").write_text(json.dumps(m.shared()))
    (d / "notes.txt").write_text("not a manifest: [")
    (d / "README.md").write_text("# hi")
    (d / "sub" / "deep.yaml").write_text(dump_docs([m.unknown()]))
    r, data = check(d)
    assert_shape(data)
    assert [x["source"] for x in data["results"]] == [
        f"{d}/a.yaml#0", f"{d}/a.yaml#1", f"{d}/b.yml#0", f"{d}/c.json#0"], r
    assert r.rc == 0


def test_several_files_in_order(write):
    a = write(m.tcp(), "z.yaml")
    b = write(m.sriov(), "a.yaml")
    _, data = check(a, b)
    assert [x["source"] for x in data["results"]] == [f"{a}#0", f"{b}#0"]


# -- unreadable and malformed ------------------------------------------------------------------

def test_missing_file_is_exit_2_and_others_still_reported(write, tmp_path):
    good = write(m.sriov())
    missing = tmp_path / "nope.yaml"
    r, data = check(good, missing)
    assert r.rc == 2, r
    assert str(missing) in r.err or "nope.yaml" in r.err, r
    assert data is not None, r
    assert [x["source"] for x in data["results"]] == [f"{good}#0"], r


def test_two_wins_over_one(write, tmp_path):
    bad = write(m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext")))
    r, data = check(bad, tmp_path / "missing.yaml")
    assert r.rc == 2, r
    assert data["summary"]["errors"] == 1, r


def test_malformed_yaml_names_file_document_and_line():
    f = BROKEN / "malformed.yaml"
    r, data = check(f)
    assert r.rc == 2, r
    assert "malformed.yaml" in r.err, r
    assert re.search(r"#1\b|document 1\b|doc(ument)? ?#?1\b", r.err, re.I), r
    # The broken flow sequence is on line 14 (the parser may notice on 14-15).
    lines = {int(x) for tup in re.findall(r"\bline:? ?(\d+)|:(\d+)(?::\d+)?\b", r.err)
             for x in tup if x}
    assert lines & {13, 14, 15}, r
    sources = [x["source"] for x in data["results"]]
    assert f"{f}#0" in sources and f"{f}#2" in sources, r
    assert f"{f}#1" not in sources, r


def test_malformed_json():
    f = BROKEN / "malformed.json"
    r, data = check(f)
    assert r.rc == 2, r
    assert "malformed.json" in r.err, r


def test_malformed_stdin():
    r, _ = check("-", input="a: [\n")
    assert r.rc == 2, r
    assert "-" in r.err, r


@pytest.mark.parametrize("name,field", [
    ("env-string.yaml", "env"),
    ("containers-map.yaml", "containers"),
])
def test_wrong_types_golden(name, field):
    r, _ = check(BROKEN / name)
    assert r.rc == 2, r
    assert name in r.err and field in r.err, r


WRONG_TYPES = {
    "env-string": (lambda d: m.c0(d).update(env="x"), "env"),
    "containers-map": (lambda d: d["spec"].update(containers={}), "containers"),
    "containers-string": (lambda d: d["spec"].update(containers="trainer"), "containers"),
    "limits-list": (lambda d: m.c0(d)["resources"].update(limits=["nvidia.com/gpu"]), "limits"),
    "capabilities-add-string": (lambda d: m.c0(d).update(
        securityContext={"capabilities": {"add": "IPC_LOCK"}}), "add"),
    "annotations-list": (lambda d: d["metadata"].update(annotations=["a"]), "annotations"),
    "env-item-string": (lambda d: m.c0(d).update(env=["NCCL_IB_DISABLE=0"]), "env"),
    "spec-string": (lambda d: d.update(spec="x"), "spec"),
    "metadata-list": (lambda d: d.update(metadata=[1]), "metadata"),
    "volumes-map": (lambda d: d["spec"].update(volumes={"dshm": {}}), "volumes"),
    "annotation-value-number-list": (lambda d: d["metadata"]["annotations"].update(
        {m.NET_KEY: ["sriov-rdma-net@eth1"]}), "annotations"),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_wrong_types_exit_2_naming_the_field(case, write):
    edit, field = WRONG_TYPES[case]
    doc = m.edit(m.sriov, edit)
    ok = write(m.tcp(), "ok.yaml")
    p = write(dump_docs([m.cpu_only(), doc]), "bad.yaml")
    for cmd in ("check", "mutate"):
        r = rw(cmd, "--policy", POLICIES / "sriov.yaml", ok, p)
        assert r.rc == 2, (cmd, r)
        assert "bad.yaml" in r.err and field in r.err, (cmd, r)
        assert re.search(r"#1\b|document 1\b", r.err), (cmd, r)
    r, data = check(ok, p)
    # The readable documents are still reported.
    srcs = [x["source"] for x in data["results"]]
    assert f"{ok}#0" in srcs and f"{p}#0" in srcs, r


def test_wrong_types_in_a_crd_template(write):
    job = m.golden("kinds/pytorchjob.yaml")
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = 7
    r, _ = check(write(job))
    assert r.rc == 2 and "env" in r.err, r


def test_huge_document_is_handled(write):
    doc = m.sriov()
    m.c0(doc)["env"] += [{"name": f"VAR_{i}", "value": "x" * 100} for i in range(20000)]
    r, data = check(write(doc))
    assert r.rc in (0, 1, 2), r
    if r.rc != 2:
        assert data["results"][0]["path"] == "sriov"


def test_deep_nesting_is_refused_cleanly(write):
    r, _ = check(write("a: " + "[" * 100000 + "]" * 100000 + "\n"))
    assert r.rc == 2, r
    r, _ = check(write("[" * 100000 + "]" * 100000, "deep.json"))
    assert r.rc == 2, r


# -- usage -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["check", "--bogus", "x.yaml"],
    ["check", "-o", "xml", "x.yaml"],
    ["check", "--policy"],
    ["check", "-o"],
    ["check"],
    ["mutate", "--bogus", "x.yaml"],
    ["mutate", "-o", "text", "x.yaml"],
    ["mutate"],
    ["--bogus"],
    ["no-such-command"],
])
def test_usage_errors(args, write):
    write(m.sriov(), "x.yaml")
    r = rw(*args, cwd=write(m.sriov(), "x.yaml").parent)
    assert r.rc == 2, r
    assert r.err.strip(), r
    assert r.out.strip() == "", r


def test_invalid_policy_is_exit_2(write):
    pol = write("apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults: {mode: sideways}\n",
                "pol.yaml")
    r = rw("check", "--policy", pol, write(m.sriov()))
    assert r.rc == 2 and "mode" in r.err, r


def test_text_output_is_readable(write):
    doc = m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))
    p = write(doc)
    r = rw("check", "--policy", POLICIES / "off.yaml", p)
    assert r.rc == 1, r
    assert "\x1b[" not in r.out, "no colour when stdout is not a terminal"
    for word in ("sriov", "ipc-lock-missing", "IPC_LOCK", "rdma/vf"):
        assert word in r.out, (word, r)
    r2 = rw("check", "-o", "text", "--policy", POLICIES / "off.yaml", p)
    assert (r2.rc, r2.out) == (r.rc, r.out)


def test_text_output_has_colour_on_a_terminal(write):
    import os
    import pty
    import subprocess
    from conftest import binary
    doc = m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))
    p = write(doc)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(binary()), "check", "--policy", str(POLICIES / "off.yaml"),
                             str(p)], stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=30)
    os.close(leader)
    assert proc.returncode == 1
    assert b"\x1b[" in out, out[:500]


def test_long_output_flag(write):
    p = write(m.sriov())
    a = rw("check", "--output", "json", "--policy", POLICIES / "off.yaml", p)
    b = rw("check", "-o", "json", "--policy", POLICIES / "off.yaml", p)
    assert a.rc == 0 and a.out == b.out, (a, b)


@pytest.mark.parametrize("variant", ["crlf", "bom", "document-end-marker", "tabs-in-strings"])
def test_text_variants_read_like_kubectl(write, variant):
    text = dump_docs([m.sriov(), m.tcp()])
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "bom":
        text = "\ufeff" + text
    elif variant == "document-end-marker":
        text = text.replace("---\n", "...\n---\n") + "...\n"
    else:
        text = text.replace("image: registry.example.com/ml/train:1.0",
                            "image: \"registry.example.com/ml/train:1.0\\t\"")
    r, data = check(write(text))
    assert r.rc == 0, r
    assert [x["path"] for x in data["results"]] == ["sriov", "tcp"], r


def test_recursive_directory_inputs(tmp_path):
    # -R / --recursive, kubectl's flag: the whole tree, in path order; a symlinked directory is
    # not descended (a link back up would loop), and without -R subdirectories stay unread.
    d = tmp_path / "manifests"
    (d / "team-a" / "jobs").mkdir(parents=True)
    (d / "b.yaml").write_text(dump_docs([m.tcp()]))
    (d / "team-a" / "a.yaml").write_text(dump_docs([m.host()]))
    (d / "team-a" / "jobs" / "deep.yml").write_text(dump_docs([m.unknown()]))
    (d / "team-a" / "notes.txt").write_text("not a manifest: [")
    os.symlink(d, d / "team-a" / "loop")
    for flag in ("-R", "--recursive"):
        r, data = check(flag, d)
        assert [x["source"] for x in data["results"]] == [
            f"{d}/b.yaml#0", f"{d}/team-a/a.yaml#0", f"{d}/team-a/jobs/deep.yml#0"], r
        assert r.rc == 0, r
    r, data = check(d)
    assert [x["source"] for x in data["results"]] == [f"{d}/b.yaml#0"], r
    r = rw("mutate", "-R", "-f", d, "-o", "json")
    assert r.rc in (0, 1) and "deep.yml" in r.out + r.err, r


def test_empty_directory_and_empty_stdin(tmp_path):
    (tmp_path / "empty").mkdir()
    for args, inp in (([tmp_path / "empty"], None), (["-"], "")):
        r, data = check(*args, input=inp)
        assert r.rc == 0, r
        assert data["results"] == [], r


@pytest.mark.parametrize("cmd", [["check", "-o", "json"], ["check", "-o", "text"],
                                 ["mutate", "-o", "json"], ["mutate", "-o", "patch"],
                                 ["mutate", "-o", "yaml"]])
def test_invalid_utf8_is_an_unreadable_document(tmp_path, cmd):
    """Latin-1 bytes are not YAML (which is Unicode): exit 2 naming file and document, the
    other documents still reported, the same way in every output format."""
    p = tmp_path / "latin1.yaml"
    p.write_bytes(b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "caf\xe9"\n---\n'
                  b'apiVersion: v1\nkind: Service\nmetadata:\n  name: ok\n')
    r = rw(*cmd, "--policy", POLICIES / "off.yaml", p)
    assert r.rc == 2, r
    assert "latin1.yaml" in r.err and "#0" in r.err, r
    if cmd[-1] == "patch":  # one line per document: `null` for the unreadable one
        assert r.out.splitlines() == ["null", "[]"], r
    elif cmd[-1] == "text":  # the clean Service prints no block; the summary counts both
        assert r.out.splitlines()[-1] == "2 documents (1 unreadable), 0 errors, 0 warnings", r
    else:
        assert "ok" in r.out, "the readable document is still reported"
