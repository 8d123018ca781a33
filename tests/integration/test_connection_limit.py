"""Connection floods (issue 11): --max-connections closes what is over the limit and counts it,
running out of descriptors backs off instead of spinning or dying, and serving resumes once the
flood ends. Everything on 127.0.0.1."""
import socket
import ssl
import time
from pathlib import Path

import pytest

from conftest import HOST, Server, pod, review, wait_until


def sample(server, name):
    """The value of an unlabelled metric line `name value`."""
    for line in server.metrics().splitlines():
        if line.startswith(name + " "):
            return float(line.split(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def open_idle(port, count):
    """`count` TCP connections that never send a byte (the server waits for a TLS hello)."""
    return [socket.create_connection((HOST, port), timeout=5) for _ in range(count)]


def closed_by_server(sock, timeout=2):
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except (ConnectionError, ssl.SSLError):
        return True
    except socket.timeout:
        return False


def close_all(socks):
    for s in socks:
        s.close()


def ready(server):
    try:
        return server.probe("/readyz")[0] == 200
    except OSError:
        return False


def cpu_seconds(pid):
    """User plus system CPU time of a process, from /proc (clock ticks of 1/100 s)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


def test_connections_over_the_limit_are_refused_and_counted(server_factory, certs):
    server = server_factory(certs, extra=["--max-connections", "20"]).start()
    assert sample(server, "rdma_webhook_connections_refused_total") == 0
    # A keep-alive connection from before the flood: the API server's, which must keep working.
    kept = server.connection()
    assert server.review("/validate", review(pod("elsewhere")), conn=kept)[0] == 200
    flood = open_idle(server.port, 40)
    try:
        # 19 places were left: the rest is closed at accept and counted.
        assert wait_until(lambda: sample(server, "rdma_webhook_connections_refused_total") >= 21)
        assert sample(server, "rdma_webhook_open_connections") == 20
        assert sum(closed_by_server(s, 0.2) for s in flood[-10:]) == 10
        status, body = server.review("/validate", review(pod("elsewhere")), conn=kept)
        assert status == 200 and body["response"]["uid"]
        # A new connection is refused while the limit is held.
        with pytest.raises((ConnectionError, ssl.SSLError, OSError)):
            server.review("/validate", review(pod("elsewhere")))
    finally:
        close_all(flood)
        kept.close()
    assert wait_until(lambda: sample(server, "rdma_webhook_open_connections") == 0)
    server.assert_serves()
    warned = [l for l in server.log_lines() if "--max-connections open" in l.get("msg", "")]
    assert len(warned) == 1, warned  # one line per episode, not one per refused connection


def test_serving_resumes_after_a_flood_of_idle_and_slow_connections(server_factory, certs):
    server = server_factory(certs, extra=["--max-connections", "50"]).start()
    idle = open_idle(server.port, 150)
    slow = []
    try:
        # Slowloris: a TLS handshake, then a head that never ends. Over the limit, so refused.
        for _ in range(20):
            try:
                raw = socket.create_connection((HOST, server.port), timeout=5)
                s = server.context().wrap_socket(raw, server_hostname="localhost")
                s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\n")
                slow.append(s)
            except (ConnectionError, ssl.SSLError, OSError):
                pass
        assert wait_until(lambda: sample(server, "rdma_webhook_connections_refused_total") >= 100)
        assert sample(server, "rdma_webhook_open_connections") <= 50
    finally:
        close_all(idle + slow)
    assert wait_until(lambda: sample(server, "rdma_webhook_open_connections") == 0)
    # Every new connection is accepted again, one after another.
    for i in range(20):
        status, body = server.review("/mutate", review(pod("rdma-host-a"), uid=f"after-{i}"))
        assert status == 200
        assert body["response"]["uid"] == f"after-{i}"
    assert server.alive()


class LowDescriptorServer(Server):
    """A server started under `prlimit --nofile`: few descriptors, so a flood exhausts them."""

    def __init__(self, *args, nofile, **kw):
        super().__init__(*args, **kw)
        self.nofile = nofile

    def args(self):
        return ["prlimit", f"--nofile={self.nofile}:{self.nofile}", "--"] + super().args()


@pytest.fixture
def low_descriptor_server(tmp_path, certs):
    # Below the 64 descriptors kept besides TLS connections, so that the 32 probe connections
    # the probe port admits are more than the process has left.
    s = LowDescriptorServer(tmp_path, certs, nofile=40, extra=["--max-connections", "1000"])
    yield s.start()
    s.stop()


def test_out_of_descriptors_backs_off_and_recovers(low_descriptor_server):
    server = low_descriptor_server
    lowered = [l for l in server.log_lines() if "lowered" in l.get("msg", "")]
    assert lowered and lowered[0]["maxConnections"] == 1  # at least one, whatever the limit
    # Under so few descriptors the probe port's 32 connections take every one left, and
    # accepts on both ports fail with EMFILE.
    flood = open_idle(server.probe_port, 300)
    try:
        assert wait_until(lambda: any("accept failed" in l.get("msg", "")
                                      for l in server.log_lines()), 5)
        before = cpu_seconds(server.proc.pid)
        time.sleep(2)
        spent = cpu_seconds(server.proc.pid) - before
        assert spent < 0.2, f"{spent:.2f}s of CPU in 2s without descriptors: spinning"
        assert server.alive()
    finally:
        close_all(flood)
    # The flood's descriptors come back: accepting resumes by itself on both ports.
    assert wait_until(lambda: ready(server), 10)
    server.assert_serves()
    failures = [l for l in server.log_lines() if "accept failed" in l.get("msg", "")]
    assert len(failures) <= 2, failures  # one line per port and episode, not one per retry
    assert any("accepting again" in l.get("msg", "") for l in server.log_lines())
