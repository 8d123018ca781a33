"""What a newcomer tripped over in `check` text output (issue 10, point 8)."""
import pytest

import manifests as m
from conftest import POLICIES, check, rw

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: rdma-host-a}
spec:
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      containers:
        - name: trainer
          image: registry.example.com/ml/train:1.0
          resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_check_says_when_the_webhook_would_change_the_object(write):
    # The embedded policy's rdma-host-* namespaces are in hostNetwork mode.
    p = write(DEPLOYMENT, "deploy.yaml")
    patch = rw("mutate", "-o", "patch", p)
    n = len(patch.json_lines()[0])
    assert n > 0, patch
    r = rw("check", p)
    line = (f"in namespace rdma-host-a the webhook would apply {n} changes: "
            f"run `rdma-webhook mutate` to see them")
    assert line in r.out, r


def test_no_such_line_where_the_mode_is_off(write):
    r = rw("check", write(DEPLOYMENT.replace("rdma-host-a", "team-a")))
    assert "would apply" not in r.out, r


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n", "\n\n"],
                         ids=["empty", "comment-only", "empty-document", "blank-lines"])
def test_check_on_input_without_documents_says_so(text, write):
    r = rw("check", write(text))
    assert r.rc == 0, r
    assert len(r.err.strip().splitlines()) == 1 and "no documents" in r.err, r
    r, data = check(write(text))
    assert r.rc == 0 and data["results"] == [], r


def test_a_secret_is_not_judged_in_text_and_json_is_unchanged(write):
    p = write("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
    r = rw("check", "-v", "--policy", POLICIES / "off.yaml", p)  # -v: clean documents too
    assert "enforcement: not judged" in r.out and "enforcement: deny" not in r.out, r
    _, data = check(p)
    assert data["results"][0]["enforcement"] == "deny"


def test_a_workload_still_shows_its_enforcement(write):
    r = rw("check", "-v", "--policy", POLICIES / "off.yaml", write(m.sriov()))
    assert "enforcement: deny" in r.out, r
