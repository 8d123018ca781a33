"""Every example a reader can paste runs and prints what the page says (CONTRIBUTING.md,
"Examples in the docs are tested").

A fenced block whose info string is `console` in README.md, CONTRIBUTING.md or docs/*.md is
executed: each line starting with `$ ` is a command, run with bash from the repository root with
the built binary first on PATH (as `rdma-webhook` and `kubectl-rdma`) and NO_COLOR set; the
lines after it, up to the next `$ ` line or the end of the block, are its exact stdout (add
`2>&1` to show stderr). A line `...` stands for any number of lines. An HTML comment
`<!-- not executed: REASON -->` on the line before the fence opts a block out (the reason is
required). Blocks of any other language (sh, yaml, text, none) are never run.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, binary

PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
OPT_OUT = re.compile(r"^\s*<!--\s*not executed:\s*(.*?)\s*-->\s*$")


def console_blocks(path):
    """[(line of the fence, opt-out reason or None, [lines of the block])] of one page."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        if lang == "console":
            before = OPT_OUT.match(lines[i - 1]) if i > 0 else None
            blocks.append((i + 1, None if before is None else before.group(1), body))
        i = j + 1
    return blocks


def commands(body):
    """[(command, [expected stdout lines])] of a block."""
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"output before the first `$ ` command: {line!r}")
    return out


def matches(expected, actual):
    """Exact, line by line (trailing blanks ignored); `...` matches any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0].rstrip() == actual[0].rstrip() and \
        matches(expected[1:], actual[1:])


ALL = [(p, line, reason, body) for p in PAGES if p.exists()
       for (line, reason, body) in console_blocks(p)]
EXECUTED = [pytest.param(p, body, id=f"{p.relative_to(REPO)}:{line}")
            for (p, line, reason, body) in ALL if reason is None]


@pytest.mark.parametrize("page,body", EXECUTED)
def test_example_prints_what_the_page_shows(page, body, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "rdma-webhook").symlink_to(binary())
    (bindir / "kubectl-rdma").symlink_to(binary())
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "NO_COLOR": "1"}
    for command, expected in commands(body):
        proc = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=60)
        actual = proc.stdout.splitlines()
        while expected and not expected[-1].strip():  # a blank line before the fence
            expected = expected[:-1]
        assert matches(expected, actual), (
            f"{page.relative_to(REPO)}: `{command}` printed (exit {proc.returncode}):\n"
            + proc.stdout + "--- stderr ---\n" + proc.stderr + "--- the page shows ---\n"
            + "\n".join(expected))


def test_the_readme_has_executed_examples():
    readme = [b for b in ALL if b[0].name == "README.md" and b[2] is None]
    assert len(readme) >= 2, "README.md's check and mutate demos must be console blocks"


def test_every_opt_out_says_why():
    missing = [f"{p.relative_to(REPO)}:{line}" for (p, line, reason, _) in ALL
               if reason is not None and not reason]
    assert not missing, f"`<!-- not executed: -->` without a reason at {missing}"


def test_the_matcher_fails_on_a_difference():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "extra"])
    assert not matches(["a", "..."], ["b"])
