"""`rdma-webhook rules`: the rule reference (issue 10, point 4).

Every rule of the rule table is listed with its documentation; docs/rules.md is
`rules -o markdown` verbatim; each rule's example, run through `check` with its policy, fires
exactly that rule at the severity the reference gives.
"""
import json

import pytest

from conftest import REPO, rw, workload_results
from test_rules import SEVERITY

SEVERITY = {**SEVERITY, "duplicate-key": "warning", "invalid-network-annotation": "error",
            "malformed-manifest": "error"}
# Rules the webhook reports and `check` does not: there the document is unreadable (exit 2),
# and the message names the field, as the webhook's finding does.
UNREADABLE_IN_CHECK = {"malformed-manifest"}
# Rules that only a listing of the cluster can fire (files are never the whole cluster): their
# example runs through `check --cluster` against a fake kubectl that serves these kinds and has
# none of their objects.
NEEDS_CLUSTER = {
    "network-not-found": [("network-attachment-definitions", "k8s.cni.cncf.io/v1", "true",
                           "NetworkAttachmentDefinition")],
}
ALL_IDS = sorted(SEVERITY)
REGENERATE = "build/rdma-webhook rules -o markdown > docs/rules.md"


@pytest.fixture(scope="module")
def reference():
    r = rw("rules", "-o", "json")
    assert r.rc == 0, r
    return {rule["id"]: rule for rule in json.loads(r.out)["rules"]}


def test_every_rule_is_documented(reference):
    assert sorted(reference) == ALL_IDS
    for rule_id, rule in reference.items():
        for field in ("summary", "fires", "why", "fix"):
            assert len(rule[field]) > 10, (rule_id, field, rule)
        allowed = SEVERITY[rule_id]
        # A rule whose severity depends on a condition says when.
        assert ("severityNote" in rule) == isinstance(allowed, tuple), rule
        assert rule["severity"] == (allowed[0] if isinstance(allowed, tuple) else allowed), rule


def test_docs_rules_md_is_generated():
    r = rw("rules", "-o", "markdown")
    assert r.rc == 0, r
    doc = REPO / "docs" / "rules.md"
    assert doc.exists() and doc.read_text() == r.out, (
        f"docs/rules.md differs from `rdma-webhook rules -o markdown`; regenerate it with "
        f"`{REGENERATE}`")


def rule_id_lists(node):
    """Every `rules:` mapping's list of allowed keys in a JSON schema."""
    if isinstance(node, dict):
        rules = node.get("properties", {}).get("rules")
        if isinstance(rules, dict) and "propertyNames" in rules:
            yield rules["propertyNames"]["enum"]
        for value in node.values():
            yield from rule_id_lists(value)
    elif isinstance(node, list):
        for value in node:
            yield from rule_id_lists(value)


def test_chart_values_schema_knows_exactly_the_rule_ids(reference):
    # The chart validates a policy's `rules:` keys before the binary sees them; a rule the
    # table gains or loses must show up there too, or helm refuses a valid policy.
    schema = json.loads((REPO / "charts" / "rdma-webhook" / "values.schema.json").read_text())
    lists = list(rule_id_lists(schema))
    assert lists, "no `rules:` id list in charts/rdma-webhook/values.schema.json"
    for ids in lists:
        assert sorted(ids) == sorted(reference), (
            "charts/rdma-webhook/values.schema.json lists other rule ids than "
            "`rdma-webhook rules -o json`")


@pytest.mark.parametrize("rule_id", ALL_IDS)
def test_example_fires_exactly_its_rule(rule_id, reference, tmp_path):
    example = reference[rule_id]["example"]
    manifest = tmp_path / "example.yaml"
    manifest.write_text(example["manifest"])
    args = ["check", "-o", "json"]
    if "policy" in example:
        (tmp_path / "policy.yaml").write_text(example["policy"])
        args += ["--policy", tmp_path / "policy.yaml"]
    if rule_id in NEEDS_CLUSTER:
        from test_catalogue import CatalogueCluster, api_resources
        cluster = CatalogueCluster(tmp_path)
        cluster.put("api-resources.txt", api_resources(
            [("pods", "v1", "true", "Pod")] + NEEDS_CLUSTER[rule_id]))
        r = cluster.run(*args, "--cluster", manifest)
    else:
        r = rw(*args, manifest)
    data = r.json()
    if rule_id in UNREADABLE_IN_CHECK:
        assert data["results"] == [] and len(data["errors"]) == 1, r
        assert "must be" in data["errors"][0]["message"] and r.rc == 2, r
        return
    results = workload_results(data)
    assert len(results) == 1, r
    findings = results[0]["findings"]
    assert [(f["rule"], f["severity"]) for f in findings] == [(rule_id, example["severity"])], r
    allowed = SEVERITY[rule_id]
    assert example["severity"] in (allowed if isinstance(allowed, tuple) else (allowed,))
    assert r.rc == (1 if example["severity"] == "error" else 0), r


def test_text_lists_every_rule_and_one_rule_shows_its_example(reference):
    r = rw("rules")
    assert r.rc == 0, r
    for rule_id in ALL_IDS:
        assert f"\n{rule_id}  (" in "\n" + r.out, rule_id
    r = rw("rules", "shm-too-small")
    assert r.rc == 0, r
    assert "example (warning):" in r.out and "kind: Pod" in r.out, r
    assert "ipc-lock-missing" not in r.out, r


def test_conditional_severities_are_named():
    r = rw("rules", "hostnetwork-dns", "vf-without-network")
    assert "hostnetwork-dns  (error / warning)" in r.out, r
    assert "vf-without-network  (error / warning)" in r.out, r
    assert "fabric: roce" in r.out, r


def test_rules_help_and_top_level_listing():
    r = rw("rules", "--help")
    assert r.rc == 0 and "markdown" in r.out, r
    assert "rules" in rw("--help").out


@pytest.mark.parametrize("args", [["rules", "no-such-rule"], ["rules", "-o", "xml"]],
                         ids=["unknown-rule", "unknown-format"])
def test_rules_usage_errors(args):
    r = rw(*args)
    assert r.rc == 2 and r.err.strip() and not r.out.strip(), r
