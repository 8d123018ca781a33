"""Real public manifests kept as regression data (tests/golden/real/SOURCES.md): the judged path,
RDMA and errors under the embedded default policy, and in an sriov namespace the rule that a
job bringing its own NICs keeps them (no attachment, VF or NCCL_SOCKET_IFNAME is added)."""
import json

import pytest

from conftest import GOLDEN, POLICIES, check, rw

REAL = GOLDEN / "real"
EXPECT = json.loads((REAL / "expect.json").read_text())


@pytest.mark.parametrize("key", sorted(EXPECT))
def test_real_manifest(key):
    name, index = key.split("#")
    want = EXPECT[key]
    r, data = check(REAL / name, policy=None)
    assert r.rc in (0, 1) and data is not None, r
    [res] = [x for x in data["results"] if x["source"].endswith("#" + index)]
    assert (res["path"], res["rdma"]) == (want["path"], want["rdma"]), (want["why"], res)
    errors = sorted(f["rule"] for f in res["findings"] if f["severity"] == "error")
    assert errors == want["errors"], (want["why"], res)
    if want.get("own_rails"):
        out = rw("mutate", "-o", "patch", "--policy", POLICIES / "sriov.yaml", REAL / name)
        lines = [l for l in out.out.splitlines() if l.strip()]
        patch = json.loads(lines[int(index)])
        text = json.dumps(patch)
        assert "networks" not in text and "rdma~1vf" not in text, patch
        assert "NCCL_SOCKET_IFNAME" not in text, patch
