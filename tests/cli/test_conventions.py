"""The conventions a user of kube-linter, kubeconform or Kyverno's CLI expects (docs/cli.md):
`file:line:col: severity rule: message` finding lines, short output for clean documents,
-v/-q, --fail-on, NO_COLOR, --version, help on a bare command, did-you-mean, unreadable
documents in the summary, and `mutate` saying why it changed nothing or exits 1.
"""
import os
import pty
import re
import subprocess

import manifests as m
from conftest import POLICIES, binary, rw

# A pod whose IPC_LOCK is missing, written by hand so the line and column are known.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: team-a
  annotations:
    k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
spec:
  containers:
    - name: trainer
      image: registry.example.com/ml/train:1.0
      env:
        - {name: NCCL_SOCKET_IFNAME, value: eth1}
      resources:
        limits: {nvidia.com/gpu: 8, rdma/vf: 1}
"""
OFF = POLICIES / "off.yaml"


def test_a_finding_line_starts_with_file_line_column(write):
    p = write(POD, "pod.yaml")
    r = rw("check", "--policy", OFF, p)
    assert r.rc == 1, r
    lines = [l for l in r.out.splitlines() if re.match(r"\S+:\d+:\d+: (error|warning) ", l)]
    assert lines, r
    ipc = [l for l in lines if " ipc-lock-missing: " in l]
    # the container item is written at line 10, column 7 (the `name` after `- `)
    assert ipc and ipc[0].startswith(f"{p}:10:7: error ipc-lock-missing: container 'trainer'"), r


def test_clean_documents_print_nothing_but_the_summary(write):
    p = write([m.sriov(), m.sriov()], "clean.yaml")
    r = rw("check", "--policy", OFF, p)
    assert r.rc == 0, r
    assert r.out == "2 documents, 0 errors, 0 warnings\n", r


def test_verbose_prints_every_document(write):
    p = write([m.sriov()], "clean.yaml")
    r = rw("check", "-v", "--policy", OFF, p)
    assert r.rc == 0, r
    assert f"{p}#0  Pod team-a/sriov" in r.out and "ok: no findings" in r.out, r


def test_quiet_prints_only_failing_finding_lines(write):
    p = write(POD, "pod.yaml")
    r = rw("check", "-q", "--policy", OFF, p)
    assert r.rc == 1, r
    assert r.out and all(re.match(rf"{re.escape(str(p))}:\d+:\d+: error ", l)
                         for l in r.out.splitlines()), r


def test_fail_on_warning(write):
    p = write(m.edit(m.sriov, m.drop_shm), "w.yaml")  # shm-too-small: a warning only
    r = rw("check", "--policy", OFF, p)
    assert r.rc == 0 and "0 errors, 1 warning" in r.out, r
    r = rw("check", "--fail-on", "warning", "--policy", OFF, p)
    assert r.rc == 1, r
    r = rw("check", "-q", "--fail-on", "warning", "--policy", OFF, p)
    assert r.rc == 1 and " warning shm-too-small: " in r.out, r
    r = rw("check", "--fail-on", "info", "--policy", OFF, p)
    assert r.rc == 2, r


def on_a_terminal(args, env):
    """stdout of the binary run with a pseudo-terminal as stdout (colour is for terminals)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([str(binary()), *map(str, args)], stdout=slave,
                              stderr=subprocess.PIPE, env=env, timeout=30)
        os.close(slave)
        slave = None
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            out += chunk
        return proc.returncode, out.decode()
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


def test_colour_only_on_a_terminal_and_never_with_no_color(write):
    p = write(POD, "pod.yaml")
    plain = rw("check", "--policy", OFF, p)  # a pipe
    assert "\x1b[" not in plain.out, plain
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    rc, out = on_a_terminal(["check", "--policy", OFF, p], env)
    assert rc == 1 and "\x1b[31;1merror\x1b[0m" in out, out
    rc, out = on_a_terminal(["check", "--policy", OFF, p], {**env, "NO_COLOR": "1"})
    assert rc == 1 and "\x1b[" not in out and ": error ipc-lock-missing: " in out, out


def test_unreadable_document_counts_in_the_summary(write):
    p = write("a: [unclosed\n", "bad.yaml")
    r = rw("check", "--policy", OFF, p)
    assert r.rc == 2, r
    assert r.out.splitlines()[-1] == "1 document (1 unreadable), 0 errors, 0 warnings", r


def test_version_flag():
    r = rw("--version")
    assert r.rc == 0 and re.fullmatch(r"rdma-webhook \d+\.\d+\.\d+\S*\n", r.out), r


def test_bare_commands_print_help():
    r = rw()
    assert r.rc == 0 and "Subcommands:" in r.out and "check" in r.out, r
    r = rw("policy")
    assert r.rc == 0 and "validate" in r.out and "default" in r.out, r


def test_unknown_command_suggests_the_closest():
    r = rw("chek", "x.yaml")
    assert r.rc == 2, r
    assert "unknown command 'chek' (did you mean 'check'?)" in r.err, r
    r = rw("zzzzzz")
    assert r.rc == 2 and "did you mean" not in r.err and "unknown command 'zzzzzz'" in r.err, r


def test_unknown_rule_suggests_the_closest():
    r = rw("rules", "ipc-lock-mising")
    assert r.rc == 2 and "(did you mean 'ipc-lock-missing'?)" in r.err, r


def test_mutate_says_why_it_changed_nothing_in_an_off_namespace(write):
    p = write(m.sriov(), "job.yaml")
    r = rw("mutate", "-o", "patch", "--policy", OFF, p)
    assert r.rc == 0 and r.out == "[]\n", r
    assert f"note: {p}#0: unchanged: namespace team-a has mode off" in r.err, r


def test_mutate_names_the_errors_behind_exit_1(write):
    # under mode sriov, a hostNetwork pod conflicts (onConflict: reject): left as written
    p = write(m.host(), "job.yaml")
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", p)
    assert r.rc == 1 and r.out == "[]\n", r
    assert f"note: {p}#0: unchanged: " in r.err, r
    assert re.search(rf"^error: {re.escape(str(p))}#0: [a-z-]+: ", r.err, re.M), r


def test_mutate_says_a_template_on_another_path_is_left_as_written(write):
    # an EFA pod in an sriov namespace: the plugin path, not the mode's
    efa = m._pod("efa", [m._trainer({"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4},
                                    [("FI_PROVIDER", "efa")])])
    p = write(efa, "efa.yaml")
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", p)
    assert r.out == "[]\n", r
    assert (f"note: {p}#0: unchanged: it is on the plugin path, not namespace team-a's mode "
            "sriov: a template on another path is left as written") in r.err, r


def test_mutate_says_it_plans_nothing_around_an_unknown_nic_resource(write):
    pod = m._pod("koord", [m._trainer({"nvidia.com/gpu": 8, "example.com/rdma_vf": 1}, [])],
                 annotations={"k8s.v1.cni.cncf.io/networks": "node-vf-net"})
    p = write(pod, "pod.yaml")
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", p)
    assert r.out == "[]\n", r
    assert (f"note: {p}#0: unchanged: a GPU container claims a NIC resource the policy does "
            "not know, so the webhook plans nothing for it (unknown-nic-resource: add "
            "example.com/rdma_vf to the policy's resources.vf") in r.err, r


def test_mutate_is_silent_about_what_it_changed_cleanly(write):
    p = write(m.edit(m.sriov, lambda d: d["metadata"].pop("annotations")), "job.yaml")
    r = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", p)
    assert r.rc == 0 and r.out != "[]\n", r
    assert "note:" not in r.err and "error:" not in r.err, r


def test_a_shadowed_namespace_entry_is_a_warning(write):
    p = write("namespaces:\n  - {names: [team-*], mode: tcp}\n"
              "  - {names: [team-a], mode: off}\n", "policy.yaml")
    r = rw("policy", "validate", p)
    assert r.rc == 0 and ": valid (2 namespace entries" in r.out, r
    assert f"warning: {p}: namespaces[1]: never applies" in r.err, r
    c = rw("check", "--policy", p, write(m.sriov(), "job.yaml"))
    assert f"warning: {p}: namespaces[1]: never applies" in c.err, c


def complete(words):
    """COMPREPLY of the bash completion script for the words typed so far (last: the current)."""
    script = rw("completion", "bash")
    assert script.rc == 0, script
    quoted = " ".join("'" + w + "'" for w in words)
    proc = subprocess.run(
        ["bash", "-c", script.out + f"\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
         "_rdma_webhook; printf '%s\\n' \"${COMPREPLY[@]}\""],
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_bash_completion_knows_the_commands_and_their_flags():
    assert complete(["rdma-webhook", "c"]) == {"check", "completion"}
    assert complete(["rdma-webhook", "ch"]) == {"check"}
    assert {"--fail-on", "--filename"} <= complete(["rdma-webhook", "check", "--f"])
    assert complete(["rdma-webhook", "check", "--ve"]) == {"--verbose"}
    assert complete(["rdma-webhook", "audit", "--ve"]) == set()  # audit has no --verbose
    assert complete(["rdma-webhook", "policy", "v"]) == {"validate"}
    assert complete(["kubectl-rdma", "mutate", "job.yaml", "-o"]) == {"-o"}
