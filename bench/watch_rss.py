"""Memory (RSS) of `rdma-webhook serve --watch-cluster` holding N cluster objects served by the
fake API server of tests/integration (127.0.0.1 only). Prints RSS with no objects and with N.

    python3 bench/watch_rss.py [N]      # default 10000; RW_BINARY picks the binary

The objects are shaped like real ones: NADs with an SR-IOV CNI config and the resourceName
annotation, ResourceClaimTemplates with one device request and a matchAttribute constraint,
ResourceClaims with their allocation status, and DeviceClasses with a CEL selector.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))

from conftest import Server, gen_certs, wait_until  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402

NADS = "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions"
TEMPLATES = "/apis/resource.k8s.io/v1/resourceclaimtemplates"
CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def objects_metric(server):
    total = 0.0
    for line in server.metrics().splitlines():
        if line.startswith("rdma_webhook_watch_objects{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def fill(api, n):
    for i in range(n):
        ns = f"team-{i % 50}"
        kind = i % 10
        if kind < 5:
            api.put(NADS, {"metadata": {"namespace": ns, "name": f"net-{i}", "annotations": {
                "k8s.v1.cni.cncf.io/resourceName": "nvidia.com/mlnx_sriov_rdma"}},
                "spec": {"config": '{"cniVersion":"0.3.1","name":"net-%d","type":"sriov",'
                                   '"ipam":{"type":"whereabouts","range":"10.%d.0.0/16"}}'
                                   % (i, i % 250)}}, event=False)
        elif kind < 8:
            api.put(TEMPLATES, {"metadata": {"namespace": ns, "name": f"tpl-{i}"}, "spec": {"spec": {
                "devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8}},
                    {"name": "nic", "exactly": {"deviceClassName": "rdma", "count": 8}}],
                    "constraints": [{"requests": ["gpu", "nic"],
                                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}},
                event=False)
        elif kind < 9:
            api.put(CLAIMS, {"metadata": {"namespace": ns, "name": f"claim-{i}"}, "spec": {
                "devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "rdma"}}]}},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "nic", "driver": "dra.net", "pool": f"node-{i % 64}",
                     "device": f"pci-0000-{i % 256:02x}-00-0"}]}}}}, event=False)
        else:
            api.put(CLASSES, {"metadata": {"name": f"class-{i}"}, "spec": {"selectors": [
                {"cel": {"expression": 'device.driver == "dra.net" && '
                                       'device.attributes["dra.net"].rdma == true'}}]}},
                event=False)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    work = Path(tempfile.mkdtemp(prefix="rw-watch-rss-"))
    certs = gen_certs(work / "certs")
    api = FakeApiServer(certs)
    for path, kind, version in ((NADS, "NetworkAttachmentDefinition", "k8s.cni.cncf.io/v1"),
                                (TEMPLATES, "ResourceClaimTemplate", "resource.k8s.io/v1"),
                                (CLAIMS, "ResourceClaim", "resource.k8s.io/v1"),
                                (CLASSES, "DeviceClass", "resource.k8s.io/v1")):
        api.resource(path, kind, version)
        api.serve(path)
    api.start()
    token = work / "token"
    token.write_text(api.token)
    args = ["--watch-cluster", "--kube-api-server", api.url, "--kube-ca", str(certs / "ca.crt"),
            "--kube-token-file", str(token), "--watch-debounce", "250ms"]
    empty = Server(work, certs, extra=args).start()
    time.sleep(1)
    base = rss_kib(empty.proc.pid)
    empty.stop()
    fill(api, n)
    full = Server(work, certs, extra=args).start()
    t0 = time.monotonic()
    assert wait_until(lambda: objects_metric(full) == n, timeout=300), objects_metric(full)
    listed = time.monotonic() - t0
    time.sleep(2)  # the debounced catalogue rebuild
    rss = rss_kib(full.proc.pid)
    full.assert_serves()
    full.stop()
    api.stop()
    print(f"objects={n} rss_empty_mib={base / 1024:.1f} rss_full_mib={rss / 1024:.1f} "
          f"per_object_kib={(rss - base) / n:.2f} listed_in_s={listed:.1f}")


if __name__ == "__main__":
    main()
