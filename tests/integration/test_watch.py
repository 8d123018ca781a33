"""`serve --watch-cluster` against a fake API server (fake_apiserver.py) on 127.0.0.1: list,
watch events, bookmarks, 410 relist, 404 and 403 logged once, reconnect from the last
resourceVersion, an oversized event, token rotation, readiness held for the first LIST."""
import os
import time

import pytest

from conftest import wait_until
from fake_apiserver import FakeApiServer

DEVICECLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"
TEMPLATES = "/apis/resource.k8s.io/v1/resourceclaimtemplates"
NADS = "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions"
# Every kind of the server's table (src/server/watched_kinds.cc), not served until a test says.
KINDS = [
    (DEVICECLASSES, "DeviceClass", "resource.k8s.io/v1", False),
    (TEMPLATES, "ResourceClaimTemplate", "resource.k8s.io/v1", True),
    (CLAIMS, "ResourceClaim", "resource.k8s.io/v1", True),
    (NADS, "NetworkAttachmentDefinition", "k8s.cni.cncf.io/v1", True),
    ("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes", "ClusterTrainingRuntime",
     "trainer.kubeflow.org/v1alpha1", False),
    ("/apis/trainer.kubeflow.org/v1alpha1/trainingruntimes", "TrainingRuntime",
     "trainer.kubeflow.org/v1alpha1", True),
    ("/apis/resource.nvidia.com/v1beta1/computedomains", "ComputeDomain",
     "resource.nvidia.com/v1beta1", True),
]
DC = "deviceclasses.resource.k8s.io"
NAD = "network-attachment-definitions.k8s.cni.cncf.io"
CLAIM = "resourceclaims.resource.k8s.io"


def device_class(name, driver="dra.net"):
    return {"metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def nad(ns, name, resource="nvidia.com/mlnx_sriov_rdma"):
    return {"metadata": {"namespace": ns, "name": name,
                         "annotations": {"k8s.v1.cni.cncf.io/resourceName": resource}},
            "spec": {"config": '{"cniVersion": "0.3.1", "type": "sriov"}'}}


@pytest.fixture
def api(certs):
    fake = FakeApiServer(certs)
    for path, kind, version, namespaced in KINDS:
        fake.resource(path, kind, version, namespaced)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def token_file(tmp_path, api):
    p = tmp_path / "token"
    p.write_text(api.token + "\n")
    return p


def watching(server_factory, certs, api, token_file, *extra, wait=True):
    args = ["--watch-cluster", "--kube-api-server", api.url, "--kube-ca", str(certs / "ca.crt"),
            "--kube-token-file", str(token_file), "--watch-absent-retry", "300ms",
            "--watch-debounce", "50ms", "--watch-backoff-max", "1s", *extra]
    return server_factory(certs, extra=args).start(wait=wait)


def metric(server, name, **labels):
    want = name + ("{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
                   if labels else "")
    for line in server.metrics().splitlines():
        if line.startswith(want + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def logs(server, text):
    return [line for line in server.log_lines() if text in line.get("msg", "")]


def test_list_then_watch_events_reach_the_store(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    api.serve(NADS)
    api.put(DEVICECLASSES, device_class("rdma"), event=False)
    api.put(NADS, nad("team-a", "rdma-net"), event=False)
    s = watching(server_factory, certs, api, token_file)
    assert metric(s, "rdma_webhook_watch_synced", resource=DC) == 1
    assert metric(s, "rdma_webhook_watch_objects", resource=DC) == 1
    assert metric(s, "rdma_webhook_watch_synced", resource=CLAIM) == 0  # 404: not served
    assert metric(s, "rdma_webhook_watch_last_event_timestamp_seconds", resource=DC) > 0
    first = api.requests_to(DEVICECLASSES, watch=False)[0]["query"]
    assert first["limit"] == "500" and "continue" not in first

    api.put(DEVICECLASSES, device_class("multinic"))
    api.put(NADS, nad("team-b", "ib-net"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 2)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=NAD) == 2)
    api.put(DEVICECLASSES, device_class("multinic", driver="sriovnetwork.k8snetworkplumbingwg.io"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_events_total", resource=DC,
                                     type="modified") == 1)
    api.delete(DEVICECLASSES, "", "rdma")
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 1)
    api.bookmark(DEVICECLASSES)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_events_total", resource=DC,
                                     type="bookmark") == 1)
    # The watch asked for bookmarks and a timeout, from the LIST's resourceVersion.
    w = api.requests_to(DEVICECLASSES, watch=True)[0]["query"]
    assert w["allowWatchBookmarks"] == "true"
    assert 300 <= int(w["timeoutSeconds"]) < 600
    assert int(w["resourceVersion"]) >= 1002
    # The snapshot the webhook reads was rebuilt, not once per event.
    assert wait_until(lambda: metric(s, "rdma_webhook_cluster_snapshot_objects") == 3)
    assert metric(s, "rdma_webhook_cluster_snapshots_total") < 8
    # A LIST per served kind, never one per review.
    assert len(api.requests_to(DEVICECLASSES, watch=False)) == 1
    s.assert_serves()
    assert len(api.requests_to(DEVICECLASSES, watch=False)) == 1


def test_pages_are_followed_with_continue(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    for i in range(7):
        api.put(DEVICECLASSES, device_class(f"class-{i}"), event=False)
    s = watching(server_factory, certs, api, token_file, "--watch-page-size", "3")
    assert metric(s, "rdma_webhook_watch_objects", resource=DC) == 7
    pages = api.requests_to(DEVICECLASSES, watch=False)
    assert [p["query"].get("continue") for p in pages] == [None, "3", "6"]


def test_410_gone_relists(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    api.put(DEVICECLASSES, device_class("a"), event=False)
    s = watching(server_factory, certs, api, token_file)
    # Objects changed while the watch was gone: only a new LIST sees them.
    api.put(DEVICECLASSES, device_class("b"), event=False)
    api.put(DEVICECLASSES, device_class("c"), event=False)
    api.compact(DEVICECLASSES)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 3)
    assert len(api.requests_to(DEVICECLASSES, watch=False)) == 2
    assert logs(s, "410 Gone")
    # The same as an ERROR event inside a 200 stream.
    api.resources[DEVICECLASSES].gone_as_event = True
    api.put(DEVICECLASSES, device_class("d"), event=False)
    api.compact(DEVICECLASSES)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 4)
    assert metric(s, "rdma_webhook_watch_events_total", resource=DC, type="error") == 1
    assert metric(s, "rdma_webhook_watch_lists_total", resource=DC, result="ok") == 3
    # Each 410 restarted the watch once, through a LIST; the first compaction also broke the
    # open watch (the fake API server drops it), which reconnected and then got its 410.
    assert metric(s, "rdma_webhook_watch_restarts_total", resource=DC, reason="gone") == 2
    assert metric(s, "rdma_webhook_watch_restarts_total", resource=DC, reason="error") >= 1


def test_a_watch_the_api_server_ends_at_its_timeout_is_counted_and_started_again(
        server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    s = watching(server_factory, certs, api, token_file, "--watch-timeout", "1s")
    assert wait_until(lambda: (metric(s, "rdma_webhook_watch_restarts_total", resource=DC,
                                      reason="eof") or 0) >= 2, timeout=10)
    # Watched again from the last resourceVersion, without a LIST, and nothing else restarted.
    assert len(api.requests_to(DEVICECLASSES, watch=False)) == 1
    assert len(api.requests_to(DEVICECLASSES, watch=True)) >= 3
    assert metric(s, "rdma_webhook_watch_restarts_total", resource=DC, reason="error") is None
    assert metric(s, "rdma_webhook_watch_restarts_total", resource=DC, reason="gone") is None


def test_404_is_logged_once_and_retried_until_the_crd_exists(server_factory, certs, api,
                                                             token_file):
    s = watching(server_factory, certs, api, token_file)  # nothing served: ready all the same
    assert metric(s, "rdma_webhook_watch_synced", resource=NAD) == 0
    assert wait_until(lambda: len(api.requests_to(NADS, watch=False)) >= 3)
    absent = [m for m in logs(s, "does not serve") if m.get("resource") == NAD]
    assert len(absent) == 1
    api.put(NADS, nad("team-a", "rdma-net"), event=False)
    api.serve(NADS)  # the CRD is installed after the webhook started
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=NAD) == 1)
    assert metric(s, "rdma_webhook_watch_synced", resource=NAD) == 1


def test_403_names_the_missing_rbac_and_the_fallback(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    api.serve(CLAIMS, code=403)
    s = watching(server_factory, certs, api, token_file)
    assert wait_until(lambda: len(api.requests_to(CLAIMS, watch=False)) >= 3)
    denied = [m for m in logs(s, "RBAC forbids") if m.get("resource") == CLAIM]
    # The first 403 may be an API server that has just started: a warning with the retry time;
    # one that outlasts --watch-absent-retry (300 ms here) is an error, once.
    assert [m["level"] for m in denied] == ["warning", "error"], denied
    for line in denied:
        assert line["missing"] == "get, list, watch on resourceclaims in API group resource.k8s.io"
        assert line["retrySeconds"] == 0.3
        assert "policy alone decides" in line["msg"]
        assert "cannot list resource" in line["apiMessage"]
    assert "an error if it lasts" in denied[0]["msg"]
    assert denied[1]["time"] > denied[0]["time"], denied
    assert metric(s, "rdma_webhook_watch_synced", resource=CLAIM) == 0
    assert metric(s, "rdma_webhook_watch_synced", resource=DC) == 1
    s.assert_serves()  # the policy still decides


def test_a_refusal_right_after_a_listing_keeps_the_objects(server_factory, certs, api,
                                                           token_file):
    # A kube-apiserver that has just restarted answers 403 for a moment, until its RBAC caches
    # are filled (seen in tests/e2e TestClusterWatchFaults): the objects listed before are kept
    # through a refusal shorter than --watch-absent-retry, and a longer one empties the store.
    api.serve(DEVICECLASSES)
    s = server_factory(certs, extra=[
        "--watch-cluster", "--kube-api-server", api.url, "--kube-ca", str(certs / "ca.crt"),
        "--kube-token-file", str(token_file), "--watch-absent-retry", "3s",
        "--watch-debounce", "50ms", "--watch-backoff-max", "300ms"]).start()
    api.put(DEVICECLASSES, device_class("a"))
    api.put(DEVICECLASSES, device_class("b"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 2)

    def refused():
        return len([r for r in api.requests_to(DEVICECLASSES, watch=False)
                    if r["time"] >= since])

    since = time.monotonic()
    api.serve(DEVICECLASSES, code=403)
    api.break_watches(DEVICECLASSES)
    assert wait_until(lambda: refused() >= 2, timeout=5)
    assert metric(s, "rdma_webhook_watch_objects", resource=DC) == 2
    kept = [m for m in logs(s, "LIST failed") if m.get("resource") == DC]
    assert kept and kept[-1]["status"] == 403 and kept[-1]["keptObjects"] == 2
    assert not [m for m in logs(s, "RBAC forbids") if m.get("resource") == DC]
    api.serve(DEVICECLASSES)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_synced", resource=DC) == 1)
    assert metric(s, "rdma_webhook_watch_objects", resource=DC) == 2

    # A refusal that outlasts --watch-absent-retry is RBAC taken away: the store is emptied.
    since = time.monotonic()
    api.serve(DEVICECLASSES, code=403)
    api.break_watches(DEVICECLASSES)
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 0,
                      timeout=10)
    assert time.monotonic() - since >= 3
    assert [m for m in logs(s, "RBAC forbids") if m.get("resource") == DC]


def test_broken_watch_reconnects_from_the_last_resource_version(server_factory, certs, api,
                                                                token_file):
    api.serve(DEVICECLASSES)
    s = watching(server_factory, certs, api, token_file)
    api.put(DEVICECLASSES, device_class("a"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 1)
    last = api.rv
    api.break_watches(DEVICECLASSES)
    assert wait_until(lambda: len(api.requests_to(DEVICECLASSES, watch=True)) >= 2)
    again = api.requests_to(DEVICECLASSES, watch=True)[1]["query"]
    assert int(again["resourceVersion"]) == last
    assert len(api.requests_to(DEVICECLASSES, watch=False)) == 1  # no relist
    api.put(DEVICECLASSES, device_class("b"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 2)


def test_api_server_down_is_retried_with_backoff(server_factory, certs, api, token_file,
                                                 tmp_path):
    api.serve(DEVICECLASSES)
    port = api.port
    api.stop()
    # Nothing listens: every LIST fails; readiness waits for the bounded timeout.
    s = server_factory(certs, extra=[
        "--watch-cluster", "--kube-api-server", f"https://127.0.0.1:{port}",
        "--kube-ca", str(certs / "ca.crt"), "--kube-token-file", str(token_file),
        "--watch-ready-timeout", "1500ms", "--watch-backoff-max", "400ms"]).start(wait=False)
    assert wait_until(lambda: _ready(s), timeout=15)
    assert logs(s, "ready timeout passed")
    failed = [m for m in logs(s, "LIST failed") if m.get("resource") == DC]
    assert failed and "connecting to" in failed[0]["error"]
    # Bounded: a few retries a second at most (waits of 200 to 400 ms), not a busy loop.
    def failures():
        return len([m for m in logs(s, "LIST failed") if m.get("resource") == DC])
    before = failures()
    time.sleep(2)
    assert 3 <= failures() - before <= 11
    assert s.alive()


def _ready(server):
    try:
        return server.probe("/readyz")[0] == 200
    except OSError:
        return False


def test_readiness_waits_for_the_first_list(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    api.resources[DEVICECLASSES].list_delay = 1.5
    s = watching(server_factory, certs, api, token_file, wait=False)
    assert wait_until(lambda: _probe_code(s) == 503, timeout=10)
    assert wait_until(lambda: _ready(s), timeout=15)
    assert metric(s, "rdma_webhook_watch_synced", resource=DC) == 1
    assert logs(s, "first LIST answered")


def _probe_code(server):
    try:
        return server.probe("/readyz")[0]
    except OSError:
        return None


def test_oversized_event_is_dropped_and_relisted(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    api.put(DEVICECLASSES, device_class("a"), event=False)
    s = watching(server_factory, certs, api, token_file, "--watch-max-object-bytes", "65536")
    assert wait_until(lambda: len(api.requests_to(DEVICECLASSES, watch=True)) == 1)
    huge = device_class("huge")
    huge["metadata"]["resourceVersion"] = "5000"
    huge["metadata"]["annotations"] = {"padding": "x" * (8 << 20)}
    api.send_raw(DEVICECLASSES, b'{"type":"ADDED","object":' + _dump(huge) + b"}\n")
    assert wait_until(lambda: logs(s, "listing again"), timeout=15)
    line = logs(s, "listing again")[0]
    assert "--watch-max-object-bytes" in line["error"]
    assert wait_until(lambda: len(api.requests_to(DEVICECLASSES, watch=False)) == 2)
    assert metric(s, "rdma_webhook_watch_objects", resource=DC) == 1
    assert s.alive()
    s.assert_serves()


def _dump(obj):
    import json
    return json.dumps(obj).encode()


def test_token_rotation_is_read_for_the_next_request(server_factory, certs, api, token_file):
    api.serve(DEVICECLASSES)
    s = watching(server_factory, certs, api, token_file)
    assert api.requests_to(DEVICECLASSES)[0]["auth"] == "Bearer token-1"
    # The kubelet writes a new projected token; the API server accepts only the new one.
    tmp = token_file.with_suffix(".new")
    tmp.write_text("token-2\n")
    os.replace(tmp, token_file)
    api.token = "token-2"
    api.break_watches(DEVICECLASSES)
    assert wait_until(lambda: api.requests_to(DEVICECLASSES)[-1]["auth"] == "Bearer token-2")
    api.put(DEVICECLASSES, device_class("after-rotation"))
    assert wait_until(lambda: metric(s, "rdma_webhook_watch_objects", resource=DC) == 1)


def test_watch_is_off_by_default(server_factory, certs):
    s = server_factory(certs).start()
    assert metric(s, "rdma_webhook_watch_synced", resource=DC) is None


def test_not_in_a_pod_without_flags_is_a_clear_start_error(server_factory, certs):
    env_free = server_factory(certs, extra=["--watch-cluster"])
    saved = {k: os.environ.pop(k) for k in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
             if k in os.environ}
    try:
        env_free.start(wait=False)
        assert env_free.proc.wait(timeout=10) == 2
    finally:
        os.environ.update(saved)
    assert "KUBERNETES_SERVICE_HOST" in env_free.log_text()
