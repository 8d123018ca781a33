"""`rdma-webhook verify -o json` against every file of the runtime-proof corpus
($RW_RUNTIME_LOGS_DIR): its answer must agree with the file's label on the inter-node transport,
GPUDirect RDMA, the outcome and the cause. A field the label lists as ambiguous is met by
"unknown" or by the label's value; a confident wrong value fails. Every proof line quoted must
occur in the file, and a non-ok verdict must quote at least one.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(os.environ["RW_RUNTIME_LOGS_DIR"])
REPO = Path(__file__).resolve().parents[2]
LABELS = json.loads((ROOT / "labels.json").read_text())["labels"]


def binary():
    b = Path(os.environ.get("RW_BINARY", "build/rdma-webhook"))
    return b if b.is_absolute() else REPO / b


# The label's free text names the class first ("RoCE (SR-IOV VF, ...)"); verify prints the class.
CLASSES = ["GPUDirect-TCPXO", "GPUDirect-TCPX", "FastSocket", "RoCE", "IB", "Socket", "EFA",
           "gIB", "MNNVL"]


def inter_class(text):
    if text is None:
        return None
    if text.startswith("none (single"):
        return "none (single node)"
    if text.startswith("none (pod"):
        return "none (pod never started)"
    for c in CLASSES:
        if text.startswith(c):
            return c
    return text


def gdr_value(g):
    return {True: "on", False: "off"}.get(g, g) if isinstance(g, bool) else g


def verdict(name):
    p = subprocess.run([str(binary()), "verify", "-o", "json", str(ROOT / "logs" / name)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1, 3), f"exit {p.returncode}: {p.stderr}"
    return json.loads(p.stdout), p.returncode


@pytest.mark.parametrize("label", LABELS, ids=[l["file"] for l in LABELS])
def test_label(label):
    out, rc = verdict(label["file"])
    amb = set(label.get("ambiguous", []))
    problems = []

    def check(field, got, want):
        if want in (None, "ambiguous", "n/a") or (isinstance(want, str) and want.startswith("n/a")):
            return
        if field in amb or want == "unknown":
            if got not in ("unknown", want):
                problems.append(f"{field}: {got!r}, the label leaves it open ({want!r})")
        elif got != want:
            problems.append(f"{field}: {got!r} != label {want!r}")

    if "inter_node" not in amb:
        check("inter_node", out["interNode"], inter_class(label["inter_node"]))
    check("gdr", out["gdr"], gdr_value(label["gdr"]))
    outcome = label["outcome"]
    check("outcome", out["outcome"], "unknown" if outcome == "ambiguous" else outcome)
    check("cause", out["cause"], label["cause"])
    text = (ROOT / "logs" / label["file"]).read_text(errors="replace")
    for proof in out["proofs"]:
        if proof["text"] not in text:
            problems.append(f"proof not in the file: {proof['text']!r}")
    if out["outcome"] != "ok" and out["cause"] not in ("unknown", "not-applicable") and not out["proofs"]:
        problems.append("a cause without a quoted line")
    want_rc = {"ok": 0, "unknown": 3}.get(out["outcome"], 1)
    if rc != want_rc:
        problems.append(f"exit code {rc}, expected {want_rc} for outcome {out['outcome']}")
    assert not problems, f"{label['file']}: " + "; ".join(problems)
