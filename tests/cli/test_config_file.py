"""`.rdma-webhook.yaml`: defaults for the flags of check, mutate and audit, found in the current
directory or a parent up to the git root; a flag on the command line wins, `--config FILE` names
one, `--no-config` reads none; a bad file is an error at its line and column
(docs/cli.md#configuration-file).
"""
import json
import subprocess

import pytest

from conftest import POLICIES, rw
from test_ci_formats import POD  # a Pod without IPC_LOCK: ipc-lock-missing (error)

SHM_POD = POD.replace("      securityContext: {}\n",
                      "      securityContext: {capabilities: {add: [IPC_LOCK]}}\n").replace(
    "      volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n", "").replace(
    "  volumes: [{name: dshm, emptyDir: {medium: Memory}}]\n", "")  # only shm-too-small


@pytest.fixture
def repo(tmp_path):
    """A git repository with a subdirectory `jobs/` holding the Pod; returns its root."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "pod.yaml").write_text(POD)
    (tmp_path / "jobs" / "shm.yaml").write_text(SHM_POD)
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "off.yaml").write_text((POLICIES / "off.yaml").read_text())
    return tmp_path


def config(root, text):
    (root / ".rdma-webhook.yaml").write_text(text)


def test_found_in_a_parent_up_to_the_git_root(repo):
    config(repo, "output: {check: json}\nnamespace: team-x\npolicy: policies/off.yaml\n")
    r = rw("check", "pod.yaml", cwd=repo / "jobs")
    assert r.rc == 1, r
    [res] = r.json()["results"]  # output json came from the file
    assert res["namespace"] == "team-x", res
    # The policy path is relative to the file: off.yaml judges the Pod as written.
    assert [f["rule"] for f in res["findings"]] == ["ipc-lock-missing"], res


def test_not_found_beyond_the_git_root(repo, tmp_path_factory):
    outer = tmp_path_factory.mktemp("outer")
    (outer / ".rdma-webhook.yaml").write_text("output: {check: json}\n")
    inner = outer / "project"
    inner.mkdir()
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    (inner / "pod.yaml").write_text(POD)
    r = rw("check", "--policy", POLICIES / "off.yaml", "pod.yaml", cwd=inner)
    assert r.rc == 1 and not r.out.lstrip().startswith("{"), r  # text: the outer file is not read


def test_a_flag_wins_over_the_file(repo):
    config(repo, "output: {check: json}\nfailOn: warning\npolicy: policies/off.yaml\n")
    r = rw("check", "-o", "text", "--fail-on", "error", "shm.yaml", cwd=repo / "jobs")
    assert r.rc == 0 and "warning shm-too-small" in r.out, r  # text, and a warning passes
    r = rw("check", "shm.yaml", cwd=repo / "jobs")
    assert r.rc == 1 and r.json()["summary"]["warnings"] == 1, r  # the file's failOn: warning


def test_disable_rules_turns_them_off(repo):
    config(repo, "policy: policies/off.yaml\ndisableRules: [ipc-lock-missing]\n")
    r = rw("check", "-o", "json", "pod.yaml", cwd=repo / "jobs")
    assert r.rc == 0 and r.json()["results"][0]["findings"] == [], r


def test_no_config_and_config_file(repo, tmp_path_factory):
    config(repo, "output: {check: json}\n")
    r = rw("check", "--no-config", "--policy", POLICIES / "off.yaml", "pod.yaml",
           cwd=repo / "jobs")
    assert r.rc == 1 and "error ipc-lock-missing" in r.out, r  # text: the file was not read
    other = tmp_path_factory.mktemp("other") / "ci.yaml"
    other.write_text("output: {check: sarif}\n")
    r = rw("check", "--config", other, "--policy", POLICIES / "off.yaml", "pod.yaml",
           cwd=repo / "jobs")
    assert r.json()["version"] == "2.1.0", r


def test_mutate_and_audit_read_their_own_output(repo):
    config(repo, "policy: policies/off.yaml\noutput: {check: json, mutate: patch}\n")
    r = rw("mutate", "pod.yaml", cwd=repo / "jobs")
    assert r.rc in (0, 1) and isinstance(json.loads(r.out), list), r  # a JSON Patch


@pytest.mark.parametrize("text, where, message", [
    ("outptu: {check: json}\n", ".rdma-webhook.yaml:1:1: outptu: unknown key",
     "did you mean 'output'?"),
    ("failOn: warnings\n", ".rdma-webhook.yaml:1:1: failOn: must be error or warning",
     "did you mean 'warning'?"),
    ("# defaults\ndisableRules:\n  - shm-too-smal\n",
     ".rdma-webhook.yaml:3:5: disableRules[0]: unknown rule id 'shm-too-smal'",
     "did you mean 'shm-too-small'?"),
    ("output: {chek: json}\n", ".rdma-webhook.yaml:1:10: output.chek: unknown key",
     "did you mean 'check'?"),
    ("output: {check: yaml}\n", ".rdma-webhook.yaml:1:10: output.check: check has no output 'yaml'",
     "it has text, json, sarif, junit"),
    ("namespace: [a]\n", ".rdma-webhook.yaml:1:1: namespace: must be a non-empty string", ""),
    ("policy: a\npolicy: b\n", ".rdma-webhook.yaml", "line 2"),
])
def test_a_bad_file_is_an_error_at_its_place(repo, text, where, message):
    config(repo, text)
    r = rw("check", "jobs/pod.yaml", cwd=repo)
    assert r.rc == 2 and r.out == "", r
    assert r.err.startswith("error: " + where), r
    assert message in r.err, r


def test_a_file_too_large_is_refused(repo):
    config(repo, "# " + "x" * (64 * 1024) + "\n")
    r = rw("check", "jobs/pod.yaml", cwd=repo)
    assert r.rc == 2 and "larger than 64 KiB" in r.err, r
