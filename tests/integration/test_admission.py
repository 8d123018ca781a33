"""docs/http.md through the real server: answers, patches, probes, metrics."""
import json
import subprocess
import sys

import pytest
import yaml

from conftest import GOLDEN, REPO, Server, binary, gen_certs, patch_of, pod, review

sys.path.insert(0, str(REPO / "tests" / "cli"))
import rfc6902  # noqa: E402  the CLI suite's strict applier, shared rather than copied

KINDS = sorted((GOLDEN / "kinds").glob("*.yaml"))
POLICIES = ["sriov.yaml", "hostnetwork.yaml", "override.yaml"]


@pytest.fixture(scope="module", params=POLICIES)
def policy_server(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("policy-server")
    policy = GOLDEN / "policies" / request.param
    s = Server(d, gen_certs(d / "certs"), policy=policy).start()
    yield s, policy, d
    s.stop()


def documents(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("manifest", KINDS, ids=lambda p: p.stem)
def test_patch_bytes_equal_cli_mutate(policy_server, manifest):
    server, policy, workdir = policy_server
    for i, obj in enumerate(documents(manifest)):
        # The CLI reads the same JSON the server receives, so YAML readers cannot differ.
        doc = workdir / f"{manifest.stem}-{i}.json"
        doc.write_text(json.dumps(obj))
        ns = obj.get("metadata", {}).get("namespace", "team-a")
        cli = subprocess.run([str(binary()), "mutate", "--policy", str(policy), "--namespace", ns,
                              "-o", "patch", str(doc)], capture_output=True, timeout=30)
        assert cli.returncode in (0, 1), cli.stderr
        expected = cli.stdout.rstrip(b"\n")
        status, body = server.review("/mutate", review(obj, ns=ns))
        assert status == 200, body
        got = patch_of(body)
        if expected == b"[]":
            assert got is None, f"server patched, CLI did not: {got!r}"
            assert "patchType" not in body["response"]
        else:
            assert got == expected
            assert body["response"]["patchType"] == "JSONPatch"


def test_v1_and_v1beta1_answered_in_kind(server):
    for version in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1"):
        r = review(pod("rdma-host-a", host_network=True), version=version, uid="uid-" + version)
        status, body = server.review("/validate", r)
        assert status == 200
        assert body["apiVersion"] == version
        assert body["kind"] == "AdmissionReview"
        assert body["response"]["uid"] == "uid-" + version
        ann = body["response"]["auditAnnotations"]
        assert set(ann) >= {"path", "policy-hash"}


def test_denial_lists_every_error_with_rule_and_fix(server):
    # hostNetwork GPU pod without IPC_LOCK or dnsPolicy, in a deny namespace of the default policy.
    status, body = server.review("/validate", review(pod("rdma-host-a", host_network=True)))
    assert status == 200
    r = body["response"]
    assert r["allowed"] is False
    assert r["status"]["code"] == 403
    assert r["status"]["reason"]
    assert "ipc-lock-missing" in r["status"]["message"]
    assert "hostnetwork-dns" in r["status"]["message"]


def test_ignore_check_annotations_suppress_what_they_name_and_say_so(server):
    # The denied pod above, with both its errors suppressed by annotations: allowed, no warning
    # about them, and the audit annotation names the suppressed rules.
    obj = pod("rdma-host-a", host_network=True)
    obj["metadata"]["annotations"] = {
        "ignore-check.rdma-webhook.io/ipc-lock-missing": "the runtime grants IPC_LOCK",
        "ignore-check.rdma-webhook.io/hostnetwork-dns": "no service names are resolved"}
    status, body = server.review("/validate", review(obj))
    assert status == 200
    r = body["response"]
    assert r["allowed"] is True, r
    assert not any(w.startswith(("ipc-lock-missing", "hostnetwork-dns"))
                   for w in r.get("warnings", [])), r
    assert sorted(r["auditAnnotations"]["suppressed"].split(",")) == [
        "hostnetwork-dns", "ipc-lock-missing"], r
    # One suppressed, one misspelt: the misspelt rule's error still denies, and the denial's
    # neighbour, the invalid annotation, is a warning with the id it meant.
    obj["metadata"]["annotations"] = {
        "ignore-check.rdma-webhook.io/ipc-lock-missing": "the runtime grants IPC_LOCK",
        "ignore-check.rdma-webhook.io/hostnetwork-dn": "typo"}
    status, body = server.review("/validate", review(obj))
    r = body["response"]
    assert r["allowed"] is False and "hostnetwork-dns" in r["status"]["message"], r
    assert "ipc-lock-missing" not in r["status"]["message"], r
    assert r["auditAnnotations"]["suppressed"] == "ipc-lock-missing", r
    assert any(w.startswith("invalid-ignore-check: write ignore-check.rdma-webhook.io/"
                            "hostnetwork-dns") for w in r.get("warnings", [])), r


def test_warnings_are_short_and_named(server):
    # The default namespace family is validation: warn.
    status, body = server.review("/validate", review(pod("elsewhere", host_network=True)))
    assert status == 200
    for w in body["response"].get("warnings", []):
        assert len(w) <= 120
        assert ": " in w


def test_mutate_then_validate_is_clean_and_idempotent(server):
    obj = pod("rdma-host-a")
    status, body = server.review("/mutate", review(obj))
    patch = patch_of(body)
    assert patch
    mutated = rfc6902.apply_patch(obj, json.loads(patch))
    status, again = server.review("/mutate", review(mutated))
    assert patch_of(again) is None, "mutating a mutated object must yield no operations"
    status, judged = server.review("/validate", review(mutated))
    assert judged["response"]["allowed"] is True, judged


def test_update_without_template_change_passes(server):
    bad = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "rdma-host-a"},
           "spec": {"template": {"spec": pod("x", host_network=True)["spec"]}}}
    relabeled = json.loads(json.dumps(bad))
    relabeled["metadata"]["labels"] = {"a": "b"}
    status, body = server.review("/validate", review(relabeled, operation="UPDATE", old=bad))
    assert body["response"]["allowed"] is True
    status, body = server.review("/validate", review(bad, operation="CREATE"))
    assert body["response"]["allowed"] is False


def test_delete_and_connect_pass(server):
    obj = pod("rdma-host-a", host_network=True)
    r = review(obj, operation="DELETE", old=obj)
    r["request"]["object"] = None
    assert server.review("/validate", r)[1]["response"]["allowed"] is True
    r = review({"kind": "PodExecOptions", "apiVersion": "v1"}, operation="CONNECT",
               ns="rdma-host-a")
    assert server.review("/validate", r)[1]["response"]["allowed"] is True


def test_healthz_on_tls_port(server):
    status, _, body = server.request("GET", "/healthz")
    assert status == 200


def test_probe_port(server):
    assert server.probe("/healthz")[0] == 200
    assert server.probe("/readyz")[0] == 200
    assert server.probe("/nope")[0] == 404
    assert server.probe("/healthz", method="POST")[0] == 405


def test_metrics_have_the_contract_names(server):
    server.review("/validate", review(pod("rdma-host-a", host_network=True)))
    server.review("/mutate", review(pod("rdma-host-a")))
    text = server.metrics()
    for name in ("rdma_webhook_requests_total{", "rdma_webhook_request_duration_seconds_bucket{",
                 "rdma_webhook_decisions_total{", "rdma_webhook_findings_total{",
                 "rdma_webhook_inflight_requests ", "rdma_webhook_reloads_total{",
                 "rdma_webhook_build_info{version="):
        assert name in text, name
    assert 'le="0.0001"' in text
    assert 'rdma_webhook_requests_total{endpoint="validate",code="200"}' in text
    assert 'allowed="false"' in text
    assert 'rule="ipc-lock-missing",severity="error"' in text


def test_denial_logged_once_allowed_not_logged(server):
    before = [l for l in server.log_lines() if l.get("msg") == "denied"]
    server.review("/validate", review(pod("rdma-host-a", host_network=True), uid="deny-me"))
    server.review("/validate", review(pod("elsewhere"), uid="allow-me"))
    lines = server.log_lines()
    denied = [l for l in lines if l.get("msg") == "denied"]
    assert len(denied) == len(before) + 1
    assert denied[-1]["uid"] == "deny-me"
    assert "ipc-lock-missing" in denied[-1]["rules"]
    assert not any(l.get("uid") == "allow-me" for l in lines)
