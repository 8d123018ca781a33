"""Peak memory of the real server under N hostile connections of each kind (docs/reliability.md,
"Memory under attack"). By hand, not in CI: each kind starts a fresh server so that its peak
(VmHWM) is its own.

    python3 tests/soak/hostile_memory.py [--connections 16] [--containers 90000] [--kinds ...]

$RW_BINARY selects the binary (default build/rdma-webhook). Everything is on 127.0.0.1.
"""
import argparse
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import Server, gen_certs, review  # noqa: E402


def vm(server, field):
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def big_review(containers):
    """A GPU pod with `containers` RDMA containers in a namespace the default policy mutates:
    every container is patched, so the answer is several times the body."""
    spec = {"hostNetwork": True, "containers": [
        {"name": f"c{i}", "image": "t", "resources": {"limits": {"nvidia.com/gpu": 8}}}
        for i in range(containers)]}
    spec["containers"][0]["env"] = [{"name": "NCCL_IB_HCA", "value": "mlx5"}]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "big", "namespace": "rdma-host-a"}, "spec": spec}
    return json.dumps(review(pod)).encode()


def tls(server):
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    s = server.context().wrap_socket(raw, server_hostname="localhost")
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return s


def head(path, *lines):
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "".join(l + "\r\n" for l in lines) + "\r\n").encode()


def attack(kind, body):
    """What one hostile connection sends; it then reads nothing."""
    if kind == "non-reader":
        return head("/mutate", f"Content-Length: {len(body)}") + body
    if kind == "chunk-extension":
        return head("/mutate", "Transfer-Encoding: chunked") + b"2;" + b"e" * (64 << 20)
    if kind == "long-trailer":
        return (head("/mutate", "Transfer-Encoding: chunked") + b"2\r\n{}\r\n0\r\nX: "
                + b"a" * 65534 + b"\r\n\r\n")
    if kind == "slow-head":
        return head("/mutate", "X-Pad: " + "p" * 15000)[:-2]  # never ends the head
    raise ValueError(kind)


def run(kind, connections, body, binary_note):
    work = Path(tempfile.mkdtemp(prefix="rw-mem-"))
    certs = gen_certs(work / "certs")
    server = Server(work, certs).start()
    idle_rss = vm(server, "VmRSS")
    payload = attack(kind, body)
    socks, errors = [], []

    def one():
        try:
            s = tls(server)
            socks.append(s)
            s.sendall(payload)
        except (OSError, ssl.SSLError) as e:
            errors.append(type(e).__name__)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    peak_seen = 0
    deadline = started + 40
    while time.monotonic() < deadline and server.alive():
        peak_seen = max(peak_seen, vm(server, "VmRSS"))
        if all(not t.is_alive() for t in threads) and time.monotonic() - started > 5:
            break
        time.sleep(0.1)
    alive = server.alive()
    hwm = vm(server, "VmHWM") if alive else 0
    metrics = server.metrics() if alive else ""
    busy = sum(float(l.rsplit(" ", 1)[1]) for l in metrics.splitlines()
               if l.startswith("rdma_webhook_requests_total") and 'code="503"' in l)
    for s in socks:
        s.close()
    server.stop()
    return {"binary": binary_note, "kind": kind, "connections": connections,
            "body_bytes": len(body) if kind == "non-reader" else len(payload),
            "idle_rss_kib": idle_rss, "peak_rss_kib": max(hwm, peak_seen),
            "alive": alive, "answered_503": int(busy), "client_errors": len(errors)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--containers", type=int, default=90000)
    p.add_argument("--kinds", nargs="*",
                   default=["non-reader", "chunk-extension", "long-trailer", "slow-head"])
    args = p.parse_args()
    body = big_review(args.containers)
    note = os.environ.get("RW_BINARY", "build/rdma-webhook")
    for kind in args.kinds:
        print(json.dumps(run(kind, args.connections, body, note)), flush=True)


if __name__ == "__main__":
    main()
