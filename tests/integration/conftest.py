"""Helpers of the server integration suite: certificates, a running `rdma-webhook serve` on
127.0.0.1, and clients that speak TLS to it the way an API server does.

The binary comes from $RW_BINARY (default build/rdma-webhook, relative to the repository root).
Nothing here listens on or connects to anything but 127.0.0.1.
"""
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
HOST = "127.0.0.1"


def binary():
    b = Path(os.environ.get("RW_BINARY", "build/rdma-webhook"))
    return b if b.is_absolute() else REPO / b


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- certificates

def gen_certs(out, rsa=False, force=False):
    """CA + serving certificate for localhost/127.0.0.1 in `out` (ca.crt, tls.crt, tls.key)."""
    out = Path(out)
    script = REPO / "certs" / "gen-certs.sh"
    if script.exists():
        args = ["bash", str(script)] + (["--rsa"] if rsa else []) + (["--force"] if force else [])
        subprocess.run(args + [str(out)], check=True, capture_output=True)
        return out
    # Fallback when the chart's script is absent: the same files with plain openssl.
    out.mkdir(parents=True, exist_ok=True)
    alg = (["-newkey", "rsa:2048"] if rsa else
           ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
    if not (out / "ca.crt").exists():
        subprocess.run(["openssl", "req", "-x509", "-nodes", *alg, "-keyout", out / "ca.key",
                        "-out", out / "ca.crt", "-days", "2", "-subj", "/CN=test-ca",
                        "-addext", "basicConstraints=critical,CA:TRUE",
                        "-addext", "keyUsage=critical,keyCertSign"],
                       check=True, capture_output=True)
    sign(out, out / "tls", "/CN=localhost", "serverAuth", rsa)
    return out


def sign(ca_dir, prefix, subject, usage, rsa=False):
    """Issues `prefix`.crt/.key signed by the CA in ca_dir."""
    ca_dir, prefix = Path(ca_dir), Path(prefix)
    alg = (["-newkey", "rsa:2048"] if rsa else
           ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
    csr = prefix.with_suffix(".csr")
    ext = prefix.with_suffix(".ext")
    ext.write_text(f"subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage={usage}\n")
    subprocess.run(["openssl", "req", "-new", "-nodes", *alg, "-keyout", f"{prefix}.key",
                    "-out", csr, "-subj", subject], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca_dir / "ca.crt",
                    "-CAkey", ca_dir / "ca.key", "-set_serial", str(uuid.uuid4().int >> 64),
                    "-days", "2", "-extfile", ext, "-out", f"{prefix}.crt"],
                   check=True, capture_output=True)


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    return gen_certs(tmp_path_factory.mktemp("certs-ec"))


@pytest.fixture(scope="session")
def rsa_certs(tmp_path_factory):
    return gen_certs(tmp_path_factory.mktemp("certs-rsa"), rsa=True)


def client_context(ca, cert=None, key=None, **versions):
    ctx = ssl.create_default_context(cafile=str(ca))
    ctx.set_alpn_protocols(["http/1.1"])
    if cert:
        ctx.load_cert_chain(str(cert), str(key))
    for k, v in versions.items():
        setattr(ctx, k, v)
    return ctx


# ---------------------------------------------------------------- the server

class Server:
    """One `rdma-webhook serve` process on 127.0.0.1 with free ports."""

    def __init__(self, workdir, cert_dir, policy=None, client_ca=None, shutdown_delay="1s",
                 extra=(), cert=None, key=None):
        self.workdir = Path(workdir)
        self.cert_dir = Path(cert_dir)
        self.cert = Path(cert) if cert else self.cert_dir / "tls.crt"
        self.key = Path(key) if key else self.cert_dir / "tls.key"
        self.ca = self.cert_dir / "ca.crt"
        self.policy = policy
        self.client_ca = client_ca
        self.shutdown_delay = shutdown_delay
        self.extra = list(extra)
        self.proc = None
        self.log_path = self.workdir / f"server-{uuid.uuid4().hex[:8]}.log"

    def args(self):
        a = [str(binary()), "serve", "--tls-cert", str(self.cert), "--tls-key", str(self.key),
             "--listen", f"{HOST}:{self.port}", "--probe-listen", f"{HOST}:{self.probe_port}",
             "--log-format", "json", "--shutdown-delay", self.shutdown_delay, "--threads", "2"]
        if self.policy:
            a += ["--policy", str(self.policy)]
        if self.client_ca:
            a += ["--client-ca", str(self.client_ca)]
        return a + self.extra

    def start(self, wait=True):
        if not binary().exists():
            pytest.fail(f"binary {binary()} not found (build it, or set RW_BINARY)")
        for _ in range(3):  # a free port can be taken between probing and binding
            self.port, self.probe_port = free_port(), free_port()
            self.log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(self.args(), stdout=self.log, stderr=self.log)
            if not wait:
                return self
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    if self.probe("/readyz")[0] == 200:
                        return self
                except OSError:
                    pass
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            if "address already in use" not in self.log_text().lower():
                break
        pytest.fail(f"server did not become ready:\n{self.log_text()[-3000:]}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        return self.proc.returncode if self.proc else None

    def alive(self):
        return self.proc.poll() is None

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_lines(self):
        out = []
        for line in self.log_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    # -- clients

    def context(self, **kw):
        return client_context(self.ca, **kw)

    def connection(self, timeout=10, context=None):
        return http.client.HTTPSConnection(HOST, self.port, timeout=timeout,
                                           context=context or self.context())

    def request(self, method, path, body=None, headers=None, conn=None, timeout=10):
        own = conn is None
        conn = conn or self.connection(timeout)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
            return r.status, dict(r.getheaders()), data
        finally:
            if own:
                conn.close()

    def review(self, endpoint, review, conn=None):
        """POSTs a review; returns (HTTP status, decoded response body)."""
        status, _, data = self.request("POST", endpoint, review, conn=conn)
        return status, json.loads(data)

    def probe(self, path, method="GET"):
        c = http.client.HTTPConnection(HOST, self.probe_port, timeout=5)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, r.read().decode()
        finally:
            c.close()

    def metrics(self):
        return self.probe("/metrics")[1]

    def assert_serves(self):
        """The check after every hostile input: a good review still gets its answer."""
        status, body = self.review("/validate", review(pod("rdma-host-a")))
        assert status == 200, body
        assert body["response"]["uid"]
        assert self.alive()


@pytest.fixture
def server_factory(tmp_path):
    servers = []

    def make(cert_dir, **kw):
        s = Server(tmp_path, cert_dir, **kw)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """A server with the embedded default policy, shared by a module's tests."""
    d = tmp_path_factory.mktemp("server")
    cert_dir = gen_certs(d / "certs")
    s = Server(d, cert_dir).start()
    yield s
    s.stop()


# ---------------------------------------------------------------- raw clients

def tls_socket(server, timeout=10):
    raw = socket.create_connection((HOST, server.port), timeout=timeout)
    return server.context().wrap_socket(raw, server_hostname="localhost")


def send_head(sock, path, *headers, body=b""):
    """Writes a POST head with the given extra header lines, then `body` (maybe partial)."""
    head = (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "".join(h + "\r\n" for h in headers) + "\r\n")
    sock.sendall(head.encode() + body)


def read_response(sock):
    r = http.client.HTTPResponse(sock)
    r.begin()
    return r.status, dict(r.getheaders()), r.read()


# ---------------------------------------------------------------- reviews

def pod(ns, name="trainer", host_network=False, gpus=8):
    spec = {"containers": [{"name": "trainer", "image": "registry.example.com/ml/train:1.0",
                            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}
    if host_network:
        spec["hostNetwork"] = True
        # A sign of RDMA (contract v2): on the host network a GPU pod without one is judged as
        # a plain GPU pod, and these reviews stand for RDMA training pods.
        spec["containers"][0]["env"] = [{"name": "NCCL_IB_HCA", "value": "mlx5"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


def review(obj, operation="CREATE", version="admission.k8s.io/v1", old=None, uid=None, ns=None):
    kind = obj.get("kind", "Pod") if isinstance(obj, dict) else "Pod"
    api = obj.get("apiVersion", "v1") if isinstance(obj, dict) else "v1"
    group, _, ver = api.rpartition("/")
    req = {"uid": uid or str(uuid.uuid4()),
           "kind": {"group": group, "version": ver, "kind": kind},
           "resource": {"group": group, "version": ver, "resource": kind.lower() + "s"},
           "operation": operation,
           "namespace": ns if ns is not None else
           (obj.get("metadata", {}).get("namespace", "default") if isinstance(obj, dict)
            else "default"),
           "userInfo": {"username": "system:serviceaccount:test:test"},
           "object": obj}
    if old is not None:
        req["oldObject"] = old
    return {"apiVersion": version, "kind": "AdmissionReview", "request": req}


def patch_of(response_body):
    r = response_body["response"]
    if "patch" not in r:
        return None
    return base64.b64decode(r["patch"])


# ---------------------------------------------------------------- load

class Load:
    """Concurrent keep-alive clients posting reviews until stopped; counts every outcome."""

    def __init__(self, server, clients=6, body=None, endpoint="/mutate", context=None):
        self.server = server
        self.clients = clients
        self.body = json.dumps(body or review(pod("rdma-host-a")))
        self.endpoint = endpoint
        self.context = context
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.ok = 0
        self.failures = []
        self.answers = []  # (time, decoded body) samples
        self.threads = []

    def _client(self):
        conn = None
        while not self.stop_event.is_set():
            try:
                if conn is None:
                    conn = self.server.connection(timeout=10, context=self.context)
                conn.request("POST", self.endpoint, body=self.body,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                if r.status != 200:
                    raise AssertionError(f"HTTP {r.status}: {data[:200]!r}")
                decoded = json.loads(data)
                with self.lock:
                    self.ok += 1
                    self.answers.append((time.monotonic(), decoded))
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except Exception as e:  # noqa: BLE001 - every failure is recorded and asserted on
                with self.lock:
                    self.failures.append((time.monotonic(), repr(e)))
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.01)
        if conn is not None:
            conn.close()

    def __enter__(self):
        for _ in range(self.clients):
            t = threading.Thread(target=self._client, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=30)
        return False


def wait_until(predicate, timeout=10, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def copy_atomically(src, dst):
    """Replaces dst with src's content the way `kubectl cp`-less tooling does: write, rename."""
    tmp = Path(str(dst) + ".tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)
