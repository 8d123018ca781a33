"""The binary as a kubectl plugin (issue 10, point 2): run as `kubectl-rdma` it is rdma-webhook,
so `kubectl rdma check -f job.yaml` works; `-f`/`--filename` are accepted as kubectl users type
them, in addition to positional files.
"""
import os
import subprocess

import pytest

import manifests as m
from conftest import Run, binary, rw


@pytest.fixture
def plugin(tmp_path):
    """Runs the binary through a link named kubectl-rdma, as kubectl finds it on PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "kubectl-rdma").symlink_to(binary().resolve())

    def _run(*args, cwd=None):
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        proc = subprocess.run(["kubectl-rdma", *map(str, args)], capture_output=True, text=True,
                              timeout=30, env=env, cwd=cwd)
        return Run(args, proc)
    return _run


def bad_pod():
    return m.edit(m.sriov, lambda d: m.c0(d).pop("securityContext"))


def test_kubectl_rdma_check_dash_f(plugin, write):
    p = write(bad_pod(), "job.yaml")
    via_plugin = plugin("check", "-f", p, "-o", "json")
    direct = rw("check", p, "-o", "json")
    assert via_plugin.rc == direct.rc == 1, via_plugin
    assert via_plugin.out == direct.out


@pytest.mark.parametrize("flag", ["-f", "--filename"])
def test_filename_flag_on_check_and_mutate(flag, write):
    p = write(m.sriov(), "job.yaml")
    r = rw("check", flag, p, "-o", "json")
    assert r.rc == 0 and r.json()["results"][0]["source"] == f"{p}#0", r
    r = rw("mutate", flag, p, "-o", "patch")
    assert r.rc == 0 and r.out.strip() == "[]", r


def test_filename_is_repeatable_and_mixes_with_positional(write):
    a, b, c = (write(m.sriov(), n) for n in ("a.yaml", "b.yaml", "c.yaml"))
    r = rw("check", "-o", "json", "-f", a, "--filename", b, c)
    assert r.rc == 0, r
    assert [x["source"] for x in r.json()["results"]] == [f"{a}#0", f"{b}#0", f"{c}#0"], r


def test_filename_stdin(write):
    r = rw("check", "-o", "json", "-f", "-", input=write(m.sriov()).read_text())
    assert r.rc == 0 and r.json()["results"][0]["source"] == "-#0", r


def test_plugin_help_names_kubectl_rdma(plugin):
    r = plugin("--help")
    assert r.rc == 0 and "kubectl rdma" in r.out, r
    r = plugin("check", "--help")
    assert r.rc == 0 and "-f,--filename" in r.out, r


def test_plugin_usage_error_without_input(plugin):
    r = plugin("check")
    assert r.rc == 2 and r.err.strip() and not r.out.strip(), r


def test_build_links_kubectl_rdma_next_to_the_binary():
    b = binary()
    if not (b.parent / "CMakeCache.txt").exists():
        pytest.skip(f"{b} is not in a build directory")
    link = b.parent / "kubectl-rdma"
    assert link.is_symlink() and link.resolve() == b.resolve(), link
