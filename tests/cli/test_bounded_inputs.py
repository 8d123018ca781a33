"""Every input ends: devices, endless stdin and broken directory entries (docs/cli.md, inputs).
Each case once grew without bound, never exited, or passed on a file it never read."""
import os
import subprocess

import pytest

from conftest import POLICIES, _limit_memory, binary, rw

OVER = "larger than 64 MiB"


def test_mutate_dev_zero_stops_at_the_bound():
    r = rw("mutate", "/dev/zero", timeout=60)
    assert r.rc == 2, r
    assert OVER in r.err, r


def test_check_dev_zero_exits():
    r = rw("check", "--policy", POLICIES / "off.yaml", "/dev/zero", timeout=60)
    assert r.rc == 2, r
    assert OVER in r.err or OVER in r.out, r


def test_policy_validate_dev_zero_stops_at_the_bound():
    r = rw("policy", "validate", "/dev/zero", timeout=60)
    assert r.rc == 2, r
    assert f"/dev/zero: {OVER}" in r.err, r


def test_endless_stdin_stops_at_the_bound():
    # `yes 'a: b' | rdma-webhook mutate -` grew about 100 MB/s until memory ran out.
    yes = subprocess.Popen(["yes", "a: b"], stdout=subprocess.PIPE)
    try:
        r = subprocess.run([str(binary()), "mutate", "-"], stdin=yes.stdout, capture_output=True,
                           text=True, timeout=120, preexec_fn=_limit_memory, errors="replace")
    finally:
        yes.kill()
        yes.wait()
    assert r.returncode == 2, r.stderr[-2000:]
    assert OVER in r.stderr, r.stderr[-2000:]


def test_check_policy_from_dev_zero_names_it():
    r = rw("check", "--policy", "/dev/zero", POLICIES / "off.yaml", timeout=60)
    assert r.rc == 2, r
    assert f"/dev/zero: {OVER}" in r.err, r


@pytest.mark.parametrize("name,target", [("dangling.yaml", "gone.yaml"),
                                         ("loop.yaml", "loop.yaml")])
def test_a_broken_symlink_in_a_directory_is_an_error(tmp_path, name, target):
    # Skipped, `check dir` passed a CI gate on a file it never read.
    d = tmp_path / "manifests"
    d.mkdir()
    (d / "good.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    os.symlink(d / target, d / name)
    r = rw("check", "--policy", POLICIES / "off.yaml", d)
    assert r.rc == 2, r
    assert name in r.out + r.err, r


def test_a_symlink_to_a_directory_is_not_a_manifest(tmp_path):
    d = tmp_path / "manifests"
    d.mkdir()
    (d / "good.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    os.symlink(tmp_path, d / "sub.yaml")
    r = rw("check", "--policy", POLICIES / "off.yaml", d)
    assert r.rc == 0, r
