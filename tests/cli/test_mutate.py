"""`mutate`: for every kind and every mode, the patch applied by independent appliers (our own
strict RFC 6902 applier, the `jsonpatch` package, and kubectl's json-patch library) gives
exactly `-o json`; mutating again yields `[]`; `check` of the result has no errors; the
per-mode changes of docs/policy.md#what-each-mode-writes are there and nothing else moved.
"""
import copy
import json
import shutil
import subprocess

import pytest
import yaml

import manifests as m
from conftest import KINDS, POLICIES, canon, check, dump_docs, rw
from manifests import TEMPLATES, is_gpu, resolve
from rfc6902 import apply_patch

try:
    import jsonpatch
except ImportError:  # run.sh installs it; the own applier still runs without it
    jsonpatch = None

KUBECTL = shutil.which("kubectl")

KIND_FILES = sorted(TEMPLATES)
MODE_POLICIES = ["hostnetwork.yaml", "sriov.yaml", "sriov-short.yaml", "sriov-multirail.yaml",
                 "shared.yaml", "tcp.yaml", "off.yaml", "override.yaml", "vendor-key.yaml"]


def test_kind_table_covers_the_goldens():
    assert sorted(p.name for p in KINDS.glob("*.yaml")) == KIND_FILES


def env_of(c):
    return {e["name"]: e.get("value") for e in c.get("env") or []}


def caps_of(c):
    return [x.upper() for x in ((c.get("securityContext") or {}).get("capabilities") or {})
            .get("add") or []]


def items_of(value):
    """Items of a network annotation as `[ns/]name@if` strings (comma or JSON form)."""
    value = value.strip()
    if value.startswith("["):
        out = []
        for o in json.loads(value):
            s = (o["namespace"] + "/" if o.get("namespace") else "") + o["name"]
            out.append(s + ("@" + o["interface"] if o.get("interface") else ""))
        return out
    return [x.strip() for x in value.split(",") if x.strip()]


def mutate_all(path, policy, extra=()):
    """(patch lines, json lines, yaml docs, Run of -o json) for one input."""
    pol = ["--policy", POLICIES / policy]
    rp = rw("mutate", "-o", "patch", *pol, *extra, path)
    rj = rw("mutate", "-o", "json", *pol, *extra, path)
    ry = rw("mutate", *pol, *extra, path)
    assert rp.rc == rj.rc == ry.rc, (rp, rj, ry)
    assert rj.rc in (0, 1), rj
    patches = rp.json_lines()
    results = rj.json_lines()
    docs = [d for d in yaml.safe_load_all(ry.out) if d is not None]
    assert len(patches) == len(results) == len(docs), (rp, rj, ry)
    for p in patches:
        assert isinstance(p, list), rp
    for d, j in zip(docs, results):
        assert canon(d) == canon(j), "-o yaml and -o json disagree"
    return patches, results, rj


def kubectl_apply(tmp_path, original, patch):
    f = tmp_path / "original.json"
    f.write_text(json.dumps(original))
    proc = subprocess.run([KUBECTL, "patch", "--local", "-f", str(f), "--type=json", "-p",
                           json.dumps(patch), "-o", "json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"kubectl rejected the patch: {proc.stderr}\n{patch}"
    return json.loads(proc.stdout)


def assert_no_wholesale_replacement(original, patch):
    """User lists and maps are extended item by item, never replaced as a whole."""
    for op in patch:
        if op["op"] not in ("add", "replace"):
            continue
        try:
            target = resolve(original, op["path"])
        except (KeyError, IndexError, ValueError, TypeError):
            continue  # a new member or a new list item
        if isinstance(target, (list, dict)) and target:
            pytest.fail(f"{op['op']} of existing user data at {op['path']}: {op}")


def assert_patch_gives_result(tmp_path, original, patch, result):
    assert_no_wholesale_replacement(original, patch)
    assert canon(apply_patch(original, patch)) == canon(result), patch
    if jsonpatch is not None:
        # jsonpatch links the patch's values into the document it builds: give it a copy.
        applied = jsonpatch.apply_patch(original, copy.deepcopy(patch))
        assert canon(applied) == canon(result), patch
    if KUBECTL and patch:
        assert canon(kubectl_apply(tmp_path, original, patch)) == canon(result), patch


def assert_idempotent(tmp_path, results, policy):
    again = tmp_path / "mutated.yaml"
    again.write_text(dump_docs(results))
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / policy, again)
    assert r.json_lines() == [[] for _ in results], r


# -- every kind x every mode -------------------------------------------------------------------

@pytest.mark.parametrize("policy", MODE_POLICIES)
@pytest.mark.parametrize("kind_file", KIND_FILES)
def test_kind_mode_patch_roundtrip(kind_file, policy, tmp_path):
    original = m.golden(f"kinds/{kind_file}")
    patches, results, rj = mutate_all(KINDS / kind_file, policy)
    [patch], [result] = patches, results
    assert_patch_gives_result(tmp_path, original, patch, result)
    assert_idempotent(tmp_path, results, policy)

    mutated = tmp_path / "mutated.yaml"
    mutated.write_text(dump_docs(results))
    r, data = check(mutated, policy=policy)
    assert data["summary"]["errors"] == 0, r
    assert rj.rc == 0 and r.rc == 0, (rj, r)
    if policy == "off.yaml":
        assert patch == [] and canon(result) == canon(original)
    else:
        assert patch != [], "every kind golden has a GPU template to mutate"
        assert data["results"][0]["path"] == EXPECTED_PATH[policy], r
    check_mode_effects(kind_file, policy, original, result)


EXPECTED_PATH = {"hostnetwork.yaml": "hostNetwork", "sriov.yaml": "sriov",
                 "sriov-short.yaml": "sriov", "sriov-multirail.yaml": "sriov",
                 "shared.yaml": "shared", "tcp.yaml": "tcp", "override.yaml": "sriov",
                 "vendor-key.yaml": "sriov"}


def check_mode_effects(kind_file, policy, original, result):
    """The per-mode changes on GPU templates; everything else stays as it was."""
    rest_before, rest_after = copy.deepcopy(original), copy.deepcopy(result)
    for tp in TEMPLATES[kind_file]:
        before, after = resolve(original, tp), resolve(result, tp)
        gpu = [i for i, c in enumerate(before["spec"]["containers"]) if is_gpu(c)]
        if not gpu or policy == "off.yaml":
            assert canon(before) == canon(after), f"{tp} has no GPU container: untouched"
            continue
        check_template(policy, before, after, gpu)
        for i, c in enumerate(before["spec"]["containers"]):
            if i not in gpu:
                assert canon(c) == canon(after["spec"]["containers"][i]), "non-GPU container"
        assert canon(before["spec"].get("initContainers")) == canon(
            after["spec"].get("initContainers")), "init containers are left alone"
        # Blank the template out of both copies; what remains must be identical.
        parent, last = tp.rsplit("/", 1) if tp else ("", None)
        if last is None:
            rest_before, rest_after = {}, {}
        else:
            for doc in (rest_before, rest_after):
                node = resolve(doc, parent)
                node[int(last) if isinstance(node, list) else last] = None
    assert canon(rest_before) == canon(rest_after), "only pod templates change"


def check_template(policy, before, after, gpu):
    spec, meta = after["spec"], after.get("metadata") or {}
    ann = meta.get("annotations") or {}
    containers = spec["containers"]
    first = containers[gpu[0]]
    lim = (first.get("resources") or {}).get("limits") or {}
    for i in gpu:
        c, c0 = containers[i], before["spec"]["containers"][i]
        e = env_of(c)
        names_before = [x["name"] for x in c0.get("env") or []]
        assert [x["name"] for x in c.get("env") or []][:len(names_before)] == names_before, \
            "the user's env keeps its order; new entries go after"
        if policy == "tcp.yaml":
            assert (e.get("NCCL_IB_DISABLE"), e.get("NCCL_SOCKET_IFNAME")) == ("1", "eth0"), c
            assert canon(c.get("securityContext")) == canon(c0.get("securityContext")), c
            continue
        assert "IPC_LOCK" in caps_of(c), c
        assert e.get("NCCL_IB_DISABLE") == "0", c
        want_ifname = {"hostnetwork.yaml": "bond0", "shared.yaml": "net1"}.get(policy, "eth1")
        assert e.get("NCCL_SOCKET_IFNAME") == want_ifname, c
        if policy == "sriov.yaml":
            assert (e.get("NCCL_IB_GID_INDEX"), e.get("NCCL_NET_GDR_LEVEL"),
                    e.get("NCCL_IB_QPS_PER_CONNECTION")) == ("3", "PHB", "4"), c
        else:
            assert "NCCL_IB_GID_INDEX" not in e, c
        if policy == "hostnetwork.yaml":
            assert e.get("NCCL_IB_HCA") == "=mlx5_0:1,mlx5_1:1", c
        if policy == "sriov-multirail.yaml":
            assert e.get("NCCL_IB_HCA") == "=mlx5_0,mlx5_1", c
        if policy in ("hostnetwork.yaml", "sriov.yaml"):  # injectShm
            mounts = {v["mountPath"]: v["name"] for v in c.get("volumeMounts") or []}
            assert "/dev/shm" in mounts, c
            vols = {v["name"]: v for v in spec.get("volumes") or []}
            assert (vols[mounts["/dev/shm"]].get("emptyDir") or {}).get("medium") == "Memory"
    if policy == "hostnetwork.yaml":
        assert (spec.get("hostNetwork"), spec.get("dnsPolicy")) == (True,
                                                                     "ClusterFirstWithHostNet")
        assert lim.get("rdma/hca_shared_devices_a") in (1, "1"), first
    else:
        assert not spec.get("hostNetwork"), spec
    if policy in ("sriov.yaml", "override.yaml"):
        assert items_of(ann["k8s.v1.cni.cncf.io/networks"]) == ["sriov-rdma-net@eth1"], ann
        assert lim.get("rdma/vf") in (1, "1"), first
    if policy == "sriov-short.yaml":
        assert items_of(ann["k8s.v1.cni.cncf.io/networks"]) == ["sriov-rdma-net@eth1"], ann
        assert lim.get("rdma/vf") in (2, "2"), first
    if policy == "sriov-multirail.yaml":
        assert items_of(ann["k8s.v1.cni.cncf.io/networks"]) == [
            "rail-a@eth1", "rdma-infra/rail-b@eth2"], ann
        assert (lim.get("rdma/rail_a"), lim.get("rdma/rail_b")) in ((1, 1), ("1", "1")), first
    if policy == "vendor-key.yaml":
        assert items_of(ann["tke.cloud.tencent.com/networks"]) == [
            "tke-bridge", "sriov-rdma-net@eth1"], ann
        assert "k8s.v1.cni.cncf.io/networks" not in ann, ann
    if policy == "shared.yaml":
        assert items_of(ann["k8s.v1.cni.cncf.io/networks"]) == ["macvlan-rdma@net1"], ann
        assert lim.get("rdma/hca_shared_devices_a") in (1, "1"), first
    if policy in ("tcp.yaml", "hostnetwork.yaml"):
        assert "k8s.v1.cni.cncf.io/networks" not in ann, ann
    for i in gpu[1:]:  # only the first GPU container claims
        assert canon((containers[i].get("resources") or {})) == canon(
            before["spec"]["containers"][i].get("resources") or {}), containers[i]


# -- special situations ------------------------------------------------------------------------

def roundtrip(tmp_path, docs, policy):
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs(docs))
    patches, results, rj = mutate_all(p, policy)
    for original, patch, result in zip(docs, patches, results):
        assert_patch_gives_result(tmp_path, original, patch, result)
    assert_idempotent(tmp_path, results, policy)
    return patches, results, rj


def bare_gpu_pod(annotations=None, env=()):
    doc = m.edit(m.tcp, lambda d: m.c0(d).update(env=[{"name": k, "value": v} for k, v in env]))
    if annotations:
        doc["metadata"]["annotations"] = dict(annotations)
    return doc


def test_existing_comma_annotation_is_appended(tmp_path):
    doc = bare_gpu_pod({m.NET_KEY: "team-a/other-net@eth5"})
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == [
        "team-a/other-net@eth5", "sriov-rdma-net@eth1"]
    assert "[" not in res["metadata"]["annotations"][m.NET_KEY], "keeps the comma form"


def test_existing_json_annotation_stays_json(tmp_path):
    doc = bare_gpu_pod({m.NET_KEY: '[{"name":"other-net","interface":"eth5"}]'})
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    value = res["metadata"]["annotations"][m.NET_KEY]
    assert value.strip().startswith("["), value
    assert items_of(value) == ["other-net@eth5", "sriov-rdma-net@eth1"], value


def test_network_already_attached_is_not_added_twice(tmp_path):
    doc = m.sriov()
    patches, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert res["metadata"]["annotations"][m.NET_KEY] == "sriov-rdma-net@eth1"
    assert m.c0(res)["resources"]["limits"]["rdma/vf"] == 1


def test_vf_claimed_elsewhere_is_not_claimed_again(tmp_path):
    doc = m.sriov()
    del m.c0(doc)["resources"]["limits"]["rdma/vf"]
    doc["spec"]["containers"].append({"name": "vf-holder", "image": "busybox",
                                      "resources": {"limits": {"rdma/vf": 1}}})
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert "rdma/vf" not in m.c0(res)["resources"]["limits"], res


def test_vendor_key_present_keeps_defaults_out(tmp_path):
    doc = bare_gpu_pod({"tke.cloud.tencent.com/networks": "tke-bridge"})
    _, [res], _ = roundtrip(tmp_path, [doc], "vendor-key.yaml")
    assert items_of(res["metadata"]["annotations"]["tke.cloud.tencent.com/networks"]) == [
        "tke-bridge", "sriov-rdma-net@eth1"]


def test_reject_conflict_is_left_for_validation(tmp_path):
    """v2, no self-denial: the whole workload stays as written, so validation denies it for the
    user's value (policy-conflict) and never for a field the webhook wrote."""
    doc = m.edit(m.sriov, lambda d: m.set_env(m.c0(d), "NCCL_NET_GDR_LEVEL", "SYS"))
    patches, [res], rj = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert patches == [[]], patches
    assert env_of(m.c0(res))["NCCL_NET_GDR_LEVEL"] == "SYS"
    assert rj.rc == 1, "mutate exits 1 when the mutated result has an error finding"
    out = tmp_path / "out.yaml"
    out.write_text(dump_docs([res]))
    r, data = check(out, policy="sriov.yaml")
    assert [f["rule"] for f in data["results"][0]["findings"]
            if f["severity"] == "error"] == ["policy-conflict"], r


def test_user_socket_ifname_is_kept_even_under_override(tmp_path):
    """v2: the mode sets NCCL_SOCKET_IFNAME only when absent (eth0 may carry the bootstrap while
    the VF carries RDMA); override does not replace it."""
    doc = m.edit(m.sriov, lambda d: m.set_env(m.c0(d), "NCCL_SOCKET_IFNAME", "eth0"))
    _, [res], rj = roundtrip(tmp_path, [doc], "override.yaml")
    names = [e["name"] for e in m.c0(res)["env"]]
    assert names.count("NCCL_SOCKET_IFNAME") == 1
    assert env_of(m.c0(res))["NCCL_SOCKET_IFNAME"] == "eth0"
    assert rj.rc == 0, rj


def test_override_renames_an_attachment(tmp_path):
    doc = m.edit(m.sriov, lambda d: d["metadata"]["annotations"].update(
        {m.NET_KEY: "sriov-rdma-net@eth2"}), lambda d: m.del_env(m.c0(d), "NCCL_SOCKET_IFNAME"))
    _, [res], _ = roundtrip(tmp_path, [doc], "override.yaml")
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == ["sriov-rdma-net@eth1"]


def test_same_values_are_left_alone(tmp_path):
    doc = m.edit(m.sriov, lambda d: m.set_env(m.c0(d), "NCCL_SOCKET_IFNAME", "=eth1"))
    patches, [res], _ = roundtrip(tmp_path, [doc], "override.yaml")
    assert env_of(m.c0(res))["NCCL_SOCKET_IFNAME"] == "=eth1"


def test_mixed_stream_non_workloads_print_unchanged(tmp_path):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"ports": [{"port": 80}], "clusterIP": "None"}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": {"off": "off", "zero": "0", "yes": "yes", "empty": ""}}
    docs = [svc, m.golden("kinds/pod.yaml"), cm, m.cpu_only()]
    patches, results, _ = roundtrip(tmp_path, docs, "sriov.yaml")
    assert patches[0] == [] and patches[2] == [] and patches[3] == []
    assert patches[1] != []
    for i in (0, 2, 3):
        assert canon(results[i]) == canon(docs[i])


def test_stdin_and_empty_documents(tmp_path):
    text = "---\n" + dump_docs([m.cpu_only()]) + "---\n---\n" + dump_docs([m.sriov()])
    r = rw("mutate", "-o", "json", "--policy", POLICIES / "sriov.yaml", "-", input=text)
    assert r.rc == 0, r
    assert [d["metadata"]["name"] for d in r.json_lines()] == ["cpu", "sriov"]


def test_unreadable_document_exit_2_others_printed(tmp_path):
    from conftest import BROKEN
    r = rw("mutate", "-o", "json", "--policy", POLICIES / "sriov.yaml",
           BROKEN / "malformed.yaml")
    assert r.rc == 2, r
    assert [d["metadata"]["name"] for d in r.json_lines()] == ["before", "after"], r
    assert "malformed.yaml" in r.err, r


def test_yaml_output_quotes_what_would_change_type(tmp_path):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": {"a": "off", "b": "0", "c": "yes", "d": "1.5", "e": "null", "f": "~",
                   "g": "0x10", "h": "", "i": "- x", "j": "a: b", "k": "#x", "l": "012"}}
    p = tmp_path / "cm.yaml"
    p.write_text(dump_docs([cm]))
    r = rw("mutate", "--policy", POLICIES / "sriov.yaml", p)
    assert r.rc == 0, r
    assert canon(yaml.safe_load(r.out)) == canon(cm), r.out


def inline_policy(tmp_path, namespace_entry, name="policy.yaml"):
    doc = {"apiVersion": "rdma-webhook/v1", "kind": "Policy",
           "defaults": {"mode": "off", "validation": "warn"}, "namespaces": [namespace_entry]}
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


def test_rails_sharing_a_resource_claim_one_vf_each(tmp_path):
    pol = inline_policy(tmp_path, {"names": ["*"], "mode": "sriov", "sriov": {"networks": [
        {"network": "sriov-rdma-net", "interface": "eth1", "resource": "rdma/vf"},
        {"network": "sriov-rdma-net", "interface": "eth2", "resource": "rdma/vf"}]}})
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([bare_gpu_pod()]))
    r = rw("mutate", "-o", "json", "--policy", pol, p)
    assert r.rc == 0, r
    [res] = r.json_lines()
    assert m.c0(res)["resources"]["limits"]["rdma/vf"] in (2, "2"), res
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == [
        "sriov-rdma-net@eth1", "sriov-rdma-net@eth2"]
    assert env_of(m.c0(res))["NCCL_SOCKET_IFNAME"] == "eth1", "the first interface"


def test_device_resource_claimed_elsewhere_is_not_claimed_again(tmp_path):
    doc = bare_gpu_pod()
    doc["spec"]["containers"].append({"name": "holder", "image": "busybox", "resources": {
        "limits": {"rdma/hca_shared_devices_a": 1}}})
    _, [res], _ = roundtrip(tmp_path, [doc], "hostnetwork.yaml")
    assert "rdma/hca_shared_devices_a" not in m.c0(res)["resources"]["limits"], res


def test_api_defaults_are_replaced_silently(tmp_path):
    doc = bare_gpu_pod()
    doc["spec"].update(hostNetwork=False, dnsPolicy="ClusterFirst")
    _, [res], rj = roundtrip(tmp_path, [doc], "hostnetwork.yaml")
    assert (res["spec"]["hostNetwork"], res["spec"]["dnsPolicy"]) == (
        True, "ClusterFirstWithHostNet")
    assert rj.rc == 0, rj


def test_interface_taken_by_another_network_is_always_a_conflict(tmp_path):
    doc = bare_gpu_pod({m.NET_KEY: "other-net@eth1"})
    _, [res], rj = roundtrip(tmp_path, [doc], "override.yaml")
    assert rj.rc == 1, "even under override, the mutated result keeps an error"
    out = tmp_path / "out.yaml"
    out.write_text(dump_docs([res]))
    _, data = check(out, policy="override.yaml")
    assert "policy-conflict" in [f["rule"] for f in data["results"][0]["findings"]], data


@pytest.mark.parametrize("where", ["object", "template"])
@pytest.mark.parametrize("allowed", [True, False])
def test_opt_out(tmp_path, where, allowed):
    pol = inline_policy(tmp_path, {"names": ["*"], "mode": "sriov", "optOut": allowed,
                                   "sriov": {"networks": [{"network": "sriov-rdma-net"}]}})
    job = m.golden("kinds/job.yaml")
    meta = job["metadata"] if where == "object" else job["spec"]["template"]["metadata"]
    meta.setdefault("annotations", {})["rdma-webhook.io/skip"] = "true"
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([job]))
    r = rw("mutate", "-o", "patch", "--policy", pol, p)
    [patch] = r.json_lines()
    assert (patch == []) == allowed, r


def test_namespace_flag_selects_the_policy_entry(tmp_path):
    pol = inline_policy(tmp_path, {"names": ["train-*"], "mode": "tcp"})
    doc = bare_gpu_pod()
    del doc["metadata"]["namespace"]
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([doc]))
    [patch] = rw("mutate", "-o", "patch", "--policy", pol, "--namespace", "train-7",
                 p).json_lines()
    assert patch != []
    [patch] = rw("mutate", "-o", "patch", "--policy", pol, "--namespace", "serving",
                 p).json_lines()
    assert patch == []
    [patch] = rw("mutate", "-o", "patch", "--policy", pol, p).json_lines()
    assert patch == [], "default namespace is `default`"


def test_long_output_flag(tmp_path):
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([bare_gpu_pod()]))
    a = rw("mutate", "--output", "patch", "--policy", POLICIES / "tcp.yaml", p)
    b = rw("mutate", "-o", "patch", "--policy", POLICIES / "tcp.yaml", p)
    assert a.rc == 0 and a.out == b.out, (a, b)


def test_env_from_a_reference_is_not_duplicated(tmp_path):
    doc = bare_gpu_pod()
    m.c0(doc)["env"] = [{"name": "NCCL_SOCKET_IFNAME", "valueFrom": {
        "configMapKeyRef": {"name": "nccl", "key": "ifname"}}}]
    for policy in ("sriov.yaml", "override.yaml", "tcp.yaml", "hostnetwork.yaml"):
        _, [res], _ = roundtrip(tmp_path, [doc], policy)
        names = [e["name"] for e in m.c0(res)["env"]]
        assert names.count("NCCL_SOCKET_IFNAME") == 1, (policy, names)


def test_user_capabilities_and_env_are_extended(tmp_path):
    doc = bare_gpu_pod(env=[("NCCL_DEBUG", "INFO"), ("OMP_NUM_THREADS", "8")])
    m.c0(doc)["securityContext"] = {"capabilities": {"add": ["NET_ADMIN"], "drop": ["MKNOD"]}}
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    c = m.c0(res)
    assert c["securityContext"]["capabilities"] == {"add": ["NET_ADMIN", "IPC_LOCK"],
                                                    "drop": ["MKNOD"]}
    assert [e["name"] for e in c["env"]][:2] == ["NCCL_DEBUG", "OMP_NUM_THREADS"]


def test_json_annotation_keeps_other_fields(tmp_path):
    first = {"name": "other-net", "interface": "eth5", "ips": ["10.1.0.7/24"],
             "mac": "c2:b0:57:49:47:f1"}
    doc = bare_gpu_pod({m.NET_KEY: json.dumps([first])})
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    items = json.loads(res["metadata"]["annotations"][m.NET_KEY])
    assert items[0] == first, items
    assert list(items[0]) == list(first), "the user's key order is kept"
    assert res["metadata"]["annotations"][m.NET_KEY].startswith(json.dumps([first])[:-1]), \
        "appending keeps the user's text as written"
    assert len(items) == 2 and items[1]["name"] == "sriov-rdma-net", items


def test_json_annotation_rename_changes_only_the_interface_key_the_user_wrote(tmp_path):
    first = {"name": "sriov-rdma-net", "interfaceRequest": "net5", "ips": ["10.1.0.7/24"]}
    doc = bare_gpu_pod({m.NET_KEY: json.dumps([first])})
    _, [res], _ = roundtrip(tmp_path, [doc], "override.yaml")
    items = json.loads(res["metadata"]["annotations"][m.NET_KEY])
    assert items == [dict(first, interfaceRequest="eth1")], items
    assert list(items[0]) == list(first), items


def test_namespaced_item_of_the_pods_namespace_is_the_same_network(tmp_path):
    doc = bare_gpu_pod({m.NET_KEY: "team-a/sriov-rdma-net@eth1"})
    _, [res], _ = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == [
        "team-a/sriov-rdma-net@eth1"]


def test_default_interface_name_is_renamed_under_override(tmp_path):
    doc = bare_gpu_pod({m.NET_KEY: "sriov-rdma-net"})  # Multus names it net1
    _, [res], rj = roundtrip(tmp_path, [doc], "override.yaml")
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == ["sriov-rdma-net@eth1"]
    assert rj.rc == 0, rj
    _, [res], rj = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert items_of(res["metadata"]["annotations"][m.NET_KEY]) == ["sriov-rdma-net"]
    assert rj.rc == 1, "reject: the conflict is left for validation"


def test_policy_kinds_add_a_workload_kind(tmp_path):
    pol = tmp_path / "kinds.yaml"
    pol.write_text(yaml.safe_dump({
        "apiVersion": "rdma-webhook/v1", "kind": "Policy",
        "kinds": [{"group": "example.com", "kind": "Trainer",
                   "templates": ["/spec/roles/*/template"]}],
        "defaults": {"mode": "off", "validation": "warn"},
        "namespaces": [{"names": ["*"], "mode": "tcp"}]}, sort_keys=False))
    pod = bare_gpu_pod()
    trainer = {"apiVersion": "example.com/v1", "kind": "Trainer",
               "metadata": {"name": "t", "namespace": "team-a"},
               "spec": {"roles": {"a": {"template": {"spec": copy.deepcopy(pod["spec"])}},
                                  "b": {"template": {"spec": copy.deepcopy(pod["spec"])}}}}}
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([trainer]))
    patches, [res], _ = mutate_all(p, pol)
    for role in ("a", "b"):
        c = res["spec"]["roles"][role]["template"]["spec"]["containers"][0]
        assert env_of(c) == {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0"}, c
    assert_patch_gives_result(tmp_path, trainer, patches[0], res)
    r = rw("check", "-o", "json", "--policy", pol, p)
    assert r.json()["results"][0]["path"] == "none", "as written: no signal yet"
    out = tmp_path / "out.json"
    out.write_text(json.dumps(res))
    r = rw("check", "-o", "json", "--policy", pol, out)
    assert r.json()["results"][0]["path"] == "tcp", r


def test_gpu_resources_come_from_the_policy(tmp_path):
    pol = inline_policy(tmp_path, {"names": ["*"], "mode": "tcp"})
    text = pol.read_text().replace("apiVersion: rdma-webhook/v1\nkind: Policy\n",
                                   "apiVersion: rdma-webhook/v1\nkind: Policy\n"
                                   "gpuResources: [amd.com/gpu]\n")
    pol.write_text(text)
    nvidia = bare_gpu_pod()
    amd = bare_gpu_pod()
    amd["metadata"]["name"] = "amd"
    m.c0(amd)["resources"]["limits"] = {"amd.com/gpu": 8}
    p = tmp_path / "in.yaml"
    p.write_text(dump_docs([nvidia, amd]))
    [pn, pa] = rw("mutate", "-o", "patch", "--policy", pol, p).json_lines()
    assert pn == [] and pa != []


def test_extra_env_is_added_only_when_absent(tmp_path):
    doc = m.edit(m.sriov, lambda d: m.set_env(m.c0(d), "NCCL_IB_QPS_PER_CONNECTION", "8"))
    _, [res], rj = roundtrip(tmp_path, [doc], "sriov.yaml")
    assert env_of(m.c0(res))["NCCL_IB_QPS_PER_CONNECTION"] == "8"
    assert rj.rc == 0, "a user value for extraEnv is not a conflict"
