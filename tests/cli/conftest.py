"""Shared helpers of the black-box CLI suite: run the binary, write manifests, read results.

The binary comes from $RW_BINARY (default build/rdma-webhook, relative to the repository root).
Everything here talks to the binary only through argv, stdin, stdout, stderr and the exit code,
as docs/cli.md describes it.
"""
import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
POLICIES = GOLDEN / "policies"
KINDS = GOLDEN / "kinds"
PATHS = GOLDEN / "paths"
BROKEN = GOLDEN / "broken"
INPUTS = GOLDEN / "inputs"


def binary():
    b = Path(os.environ.get("RW_BINARY", "build/rdma-webhook"))
    return b if b.is_absolute() else REPO / b


class Run:
    def __init__(self, args, proc):
        self.args = args
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self):
        return (f"rdma-webhook {' '.join(map(str, self.args))}\n-> rc={self.rc}\n"
                f"--- stdout ---\n{self.out[:4000]}\n--- stderr ---\n{self.err[:4000]}")

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            raise AssertionError(f"stdout is not one JSON document ({e}):\n{self!r}") from None

    def json_lines(self):
        lines = [l for l in self.out.splitlines() if l.strip()]
        try:
            return [json.loads(l) for l in lines]
        except ValueError as e:
            raise AssertionError(f"a stdout line is not JSON ({e}):\n{self!r}") from None


def _sanitized():
    """True for an ASan build: it reserves terabytes of address space and runs slower."""
    b = binary()
    if "ASAN_OPTIONS" in os.environ:
        return True
    try:
        with open(b, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


SANITIZED = _sanitized()
# Address-space cap for the binary (MiB) so a runaway input cannot take the shared machine
# down; 0 disables it (and an ASan build never gets one).
MEM_LIMIT_MB = 0 if SANITIZED else int(os.environ.get("RW_TEST_MEM_LIMIT_MB", "4096"))
TIMEOUT_FACTOR = 4 if SANITIZED else 1


def _limit_memory():
    if MEM_LIMIT_MB > 0:
        limit = MEM_LIMIT_MB << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def rw(*args, input=None, timeout=30, cwd=None):
    """Runs the binary; a signal death or a hang is always a test failure."""
    b = binary()
    if not b.exists():
        pytest.fail(f"binary {b} not found (build it, or set RW_BINARY)")
    try:
        proc = subprocess.run([str(b), *map(str, args)], input=input, capture_output=True,
                              text=True, timeout=timeout * TIMEOUT_FACTOR, cwd=cwd,
                              preexec_fn=_limit_memory, errors="replace")
    except subprocess.TimeoutExpired:
        pytest.fail(f"rdma-webhook {' '.join(map(str, args))} hung for "
                    f"{timeout * TIMEOUT_FACTOR}s")
    r = Run(args, proc)
    if r.rc < 0:
        pytest.fail(f"killed by signal {signal.Signals(-r.rc).name}:\n{r!r}")
    return r


def dump_docs(docs):
    """Multi-document YAML text of Python objects (None gives an empty document)."""
    parts = []
    for d in docs:
        parts.append("" if d is None else yaml.safe_dump(d, sort_keys=False))
    return "---\n".join(parts)


def load_docs(path):
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d is not None]


def canon(value):
    """Text that tells `true` from `1` and ignores member order (Python's == does not)."""
    return json.dumps(value, sort_keys=True)


@pytest.fixture
def write(tmp_path):
    """write(docs or text, name='m.yaml') -> path of a file in the test's temporary dir."""
    def _write(content, name="m.yaml"):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(content)
        elif isinstance(content, dict):
            p.write_text(dump_docs([content]))
        else:
            p.write_text(dump_docs(content))
        return p
    return _write


def check(*paths, policy="off.yaml", extra=(), input=None):
    """`check -o json` with a golden policy (a bare name) or a path; returns (Run, json|None)."""
    args = ["check", "-o", "json", *extra]
    if policy is not None:
        p = Path(policy)
        args += ["--policy", p if p.is_absolute() else POLICIES / p]
    args += list(paths)
    r = rw(*args, input=input)
    data = None
    if r.out.strip():
        data = r.json()
    return r, data


# The cluster objects `check` reads beside the workloads (docs/dra.md): an example or a case
# may carry the DeviceClass and claim template its pod needs in the same stream.
CATALOGUE_KINDS = {"DeviceClass", "ResourceClaimTemplate", "ResourceClaim",
                   "NetworkAttachmentDefinition", "ClusterTrainingRuntime", "TrainingRuntime",
                   "ComputeDomain"}


def workload_results(data):
    """The results of `check -o json` but those of the cluster objects in the input."""
    return [r for r in data["results"] if r["kind"] not in CATALOGUE_KINDS]


def rules_of(result, severity=None):
    return sorted(f["rule"] for f in result["findings"]
                  if severity is None or f["severity"] == severity)


def policy_args(policy):
    p = Path(policy)
    return ["--policy", p if p.is_absolute() else POLICIES / p]
