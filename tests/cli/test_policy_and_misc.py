"""`policy validate|default`, `version`, `--help` at every level, usage errors."""
import json
import re

import pytest
import yaml

from conftest import POLICIES, rw

GOOD = sorted(p.name for p in POLICIES.glob("*.yaml"))

BASE = {
    "apiVersion": "rdma-webhook/v1",
    "kind": "Policy",
    "gpuResources": ["nvidia.com/gpu"],
    "resources": {"vf": ["rdma/vf"], "shared": ["rdma/hca_shared_devices_a"]},
    "rdmaNetworks": ["sriov-rdma-net"],
    "kinds": [],
    "defaults": {"mode": "off", "validation": "warn"},
    "namespaces": [
        {"names": ["train-*"], "mode": "hostNetwork", "validation": "deny"},
        {"names": ["llm"], "mode": "sriov",
         "sriov": {"networks": [{"network": "sriov-rdma-net", "interface": "eth1",
                                 "resource": "rdma/vf"}]}},
    ],
}


def with_(path, value):
    """A copy of BASE with `value` set at a dotted path (list indexes as numbers); None deletes."""
    doc = json.loads(json.dumps(BASE))
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    node = doc
    for k in keys[:-1]:
        node = node[k]
    if value is None:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return doc


BAD = {
    "unknown-top-level-field": (with_("gpuResource", ["x"]), "gpuResource"),
    "unknown-namespace-field": (with_("namespaces.0.modee", "sriov"), "namespaces[0].modee"),
    "unknown-nccl-field": (with_("namespaces.1.nccl", {"gidindex": 3}),
                           "namespaces[1].nccl.gidindex"),
    "gpu-resources-not-a-list": (with_("gpuResources", "nvidia.com/gpu"), "gpuResources"),
    "bad-mode": (with_("namespaces.0.mode", "sideways"), "namespaces[0].mode"),
    "mode-wrong-case": (with_("namespaces.0.mode", "hostnetwork"), "namespaces[0].mode"),
    "bad-validation": (with_("defaults.validation", "strict"), "defaults.validation"),
    "bad-on-conflict": (with_("namespaces.0.onConflict", "ignore"), "namespaces[0].onConflict"),
    "bad-allowed-path": (with_("namespaces.0.allowedPaths", ["hostNetwork", "warp"]),
                         "namespaces[0].allowedPaths"),
    # The webhook would move templates to hostNetwork and then deny them (path-not-allowed).
    "mode-path-not-allowed": (with_("namespaces.0.allowedPaths", ["tcp"]),
                              "namespaces[0].allowedPaths: must include 'hostNetwork'"),
    "names-not-a-list": (with_("namespaces.0.names", "train-*"), "namespaces[0].names"),
    "exclusive-nodes-string": (with_("namespaces.0.exclusiveNodes", "maybe"),
                               "namespaces[0].exclusiveNodes"),
    "networks-count-zero": (with_("namespaces.1.sriov.networks.0.count", 0),
                            "namespaces[1].sriov.networks[0].count"),
    "short-form-count-zero": (with_("namespaces.1.sriov", {"network": "sriov-rdma-net",
                                                           "count": 0}),
                              "namespaces[1].sriov.count"),
    "shared-count-zero": (with_("namespaces.0", {"names": ["s"], "mode": "shared", "shared": {
        "resource": "rdma/hca_shared_devices_a", "count": 0}}), "namespaces[0].shared.count"),
    "sriov-without-network": (with_("namespaces.1.sriov", {"networks": []}),
                              "namespaces[1].sriov"),
    "sriov-network-name-missing": (with_("namespaces.1.sriov.networks.0.network", None),
                                   "namespaces[1].sriov.networks[0].network"),
    "shared-without-resource": (with_("namespaces.0", {"names": ["s"], "mode": "shared"}),
                                "namespaces[0].shared"),
    "gid-index-negative": (with_("namespaces.1.nccl", {"gidIndex": -1}),
                           "namespaces[1].nccl.gidIndex"),
    "gid-index-word": (with_("namespaces.1.nccl", {"gidIndex": "three"}),
                       "namespaces[1].nccl.gidIndex"),
    "bad-fabric": (with_("namespaces.1.nccl", {"fabric": "ethernet"}),
                   "namespaces[1].nccl.fabric"),
    "networks-not-a-list": (with_("namespaces.1.sriov.networks", {"network": "x"}),
                            "namespaces[1].sriov.networks"),
    "bad-api-version": (with_("apiVersion", "rdma-webhook/v9"), "apiVersion"),
    "bad-kind": (with_("kind", "Config"), "kind"),
    "kinds-entry-without-templates": (with_("kinds", [{"group": "example.com", "kind": "X"}]),
                                      "kinds[0].templates"),
    "defaults-unknown-field": (with_("defaults.bogus", ["x"]), "defaults.bogus"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_policy_names_the_field(case, tmp_path):
    doc, field = BAD[case]
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = rw("policy", "validate", p)
    assert r.rc != 0, r
    assert field in r.err, (field, r)
    # The same policy makes check and mutate fail to run (exit 2).
    m = tmp_path / "empty.yaml"
    m.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    for cmd in ("check", "mutate"):
        r2 = rw(cmd, "--policy", p, m)
        assert r2.rc == 2 and field in r2.err, (cmd, r2)


@pytest.mark.parametrize("name", GOOD)
def test_golden_policies_validate(name):
    r = rw("policy", "validate", POLICIES / name)
    assert r.rc == 0, r


def test_base_policy_validates_as_yaml_and_json(tmp_path):
    y = tmp_path / "p.yaml"
    y.write_text(yaml.safe_dump(BASE, sort_keys=False))
    j = tmp_path / "p.json"
    j.write_text(json.dumps(BASE))
    assert rw("policy", "validate", y).rc == 0
    assert rw("policy", "validate", j).rc == 0


@pytest.mark.parametrize("text", [
    "mode: off\n  validation: off", "mode: \"off\"\n  validation: 'off'",
    "mode: false\n  validation: false", "mode: Off\n  validation: OFF",
])
def test_off_written_unquoted_or_quoted(text, tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text(f"apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults:\n  {text}\n")
    r = rw("policy", "validate", p)
    assert r.rc == 0, r


def test_true_is_not_a_mode(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text("apiVersion: rdma-webhook/v1\nkind: Policy\ndefaults:\n  mode: on\n")
    r = rw("policy", "validate", p)
    assert r.rc != 0 and "defaults.mode" in r.err, r


def test_missing_policy_file(tmp_path):
    r = rw("policy", "validate", tmp_path / "nope.yaml")
    assert r.rc != 0 and "nope.yaml" in r.err, r


def test_policy_default_prints_a_valid_policy(tmp_path):
    r = rw("policy", "default")
    assert r.rc == 0, r
    doc = yaml.safe_load(r.out)
    assert doc["apiVersion"] == "rdma-webhook/v1" and doc["kind"] == "Policy", r
    p = tmp_path / "default.yaml"
    p.write_text(r.out)
    assert rw("policy", "validate", p).rc == 0


def test_default_policy_never_denies_unnamed_namespaces(tmp_path):
    """Safe default: a namespace it does not name gets neither mutation nor denial."""
    doc = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "x", "namespace": "some-team"},
           "spec": {"containers": [{"name": "c", "image": "i",
                                    "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}
    p = tmp_path / "pod.yaml"
    p.write_text(yaml.safe_dump(doc))
    r = rw("check", "-o", "json", p)
    assert r.json()["results"][0]["enforcement"] in ("warn", "off"), r
    r = rw("mutate", "-o", "patch", p)
    assert r.json_lines() == [[]], r


def test_version():
    r = rw("version")
    assert r.rc == 0, r
    assert re.search(r"\d+\.\d+\.\d+", r.out), r
    assert re.search(r"\b[0-9a-f]{7,40}\b|unknown", r.out), r
    assert re.search(r"Release|Debug|RelWithDebInfo|MinSizeRel", r.out), r


HELP = [[], ["check"], ["mutate"], ["gids"], ["policy"], ["policy", "validate"],
        ["policy", "default"], ["version"], ["serve"]]


@pytest.mark.parametrize("level", HELP, ids=lambda a: " ".join(a) or "top")
def test_help_at_every_level(level):
    r = rw(*level, "--help")
    assert r.rc == 0, r
    assert r.out.strip(), r
    assert "usage" in r.out.lower() or "Usage" in r.out, r
    if level:
        assert level[-1] in r.out, r


def test_top_level_help_lists_commands():
    r = rw("--help")
    for cmd in ("serve", "check", "mutate", "gids", "policy", "version"):
        assert cmd in r.out, (cmd, r)


@pytest.mark.parametrize("args", [
    ["version", "--bogus"], ["policy", "--bogus"], ["policy", "validate"],
    ["policy", "nonsense"], ["gids", "--bogus"], ["gids", "-o", "xml"],
    ["gids", "--sysfs-root"], ["serve", "--bogus"],
])
def test_unknown_flags_and_missing_values(args):
    r = rw(*args)
    assert r.rc == 2, r
    assert r.err.strip(), r
    assert len(r.err.strip().splitlines()) <= 3, "one clear line (a hint may follow)"
