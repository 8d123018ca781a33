"""What the soak and the flood share: the Go client, certificates and volumes laid out like a
mounted Secret or ConfigMap (the integration suite's helpers), the server process on 127.0.0.1,
its metrics and memory, the reviews with their expected answers, and percentiles.

Nothing here listens on or connects to anything but 127.0.0.1.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
# The integration suite's certificates, reviews and kubelet-style `..data` swaps.
import conftest  # noqa: E402
from conftest import free_port, gen_certs, pod, review  # noqa: E402
from test_reload import (POLICY_HOST, POLICY_OFF, kubernetes_volume, pem_to_der,  # noqa: E402
                         reissue, served_cert, swap_volume)

HOST = "127.0.0.1"

# Policy A leaves everything alone; policy B puts team-* on the hostNetwork path and denies.
POLICY_A, POLICY_B = POLICY_OFF, POLICY_HOST


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    return float(Path("/proc/loadavg").read_text().split()[0])


def binary():
    b = Path(os.environ.get("RW_BINARY", REPO / "build" / "rdma-webhook"))
    return b if b.is_absolute() else REPO / b


def build_client(out_dir):
    """Builds the Go load/flood client (standard library only) into out_dir."""
    out = Path(out_dir) / "soakclient"
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    subprocess.run(["go", "build", "-o", str(out), "."], cwd=HERE / "client", env=env, check=True)
    return out


def percentile(values, p):
    """Nearest-rank percentile of a list (sorted or not); 0 for an empty one."""
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1)))]


# ------------------------------------------------------------------------------ certificates

def cert_volume(work, certs):
    """A Secret-like volume with tls.crt, tls.key, ca.crt from `certs`."""
    return kubernetes_volume(Path(work) / "secret", {f: Path(certs) / f
                                                     for f in ("tls.crt", "tls.key", "ca.crt")})


def issue_certs(work, count):
    """A CA and `count` serving certificates from it (clients trust all of them)."""
    ca = gen_certs(Path(work) / "certs-0")
    return [ca] + [reissue(ca, Path(work) / f"certs-{i}") for i in range(1, count)]


class Rotator:
    """Swaps the Secret volume through `certs` every cert_every s and the ConfigMap volume between
    policies A and B every policy_every s, the way the kubelet updates mounted volumes."""

    def __init__(self, secret, configmap, certs, policy_files, cert_every=10.0, policy_every=5.0):
        self.secret, self.configmap = secret, configmap
        self.certs, self.policy_files = certs, policy_files
        self.cert_every, self.policy_every = cert_every, policy_every
        self.cert_swaps = self.policy_swaps = 0
        self.current_cert = 0
        self.current_policy = 0
        self.stamp = 0
        self.next_cert = self.next_policy = None

    def start(self):
        now = time.monotonic()
        self.next_cert, self.next_policy = now + self.cert_every, now + self.policy_every

    def swap_cert(self):
        self.current_cert = (self.current_cert + 1) % len(self.certs)
        c = self.certs[self.current_cert]
        self.stamp += 1
        swap_volume(self.secret, {f: c / f for f in ("tls.crt", "tls.key", "ca.crt")}, self.stamp)
        self.cert_swaps += 1

    def swap_policy(self):
        self.current_policy = 1 - self.current_policy
        self.stamp += 1
        swap_volume(self.configmap, {"policy.yaml": self.policy_files[self.current_policy]},
                    self.stamp)
        self.policy_swaps += 1

    def tick(self):
        """Does the swaps that are due; returns the seconds to the next one."""
        now = time.monotonic()
        if now >= self.next_cert:
            self.swap_cert()
            self.next_cert += self.cert_every
        if now >= self.next_policy:
            self.swap_policy()
            self.next_policy += self.policy_every
        return max(0.0, min(self.next_cert, self.next_policy) - time.monotonic())


# ------------------------------------------------------------------------------------ server

class Server(conftest.Server):
    """The integration suite's server (127.0.0.1, free ports, JSON log), started here without
    pytest; `nofile` lowers its descriptor limit as `ulimit -n` would."""

    def __init__(self, work, cert_dir, policy, extra=(), nofile=None):
        super().__init__(work, cert_dir, policy=policy, shutdown_delay="1s", extra=extra)
        self.nofile = nofile

    def start(self):
        self.port, self.probe_port = free_port(), free_port()
        nofile = self.nofile

        def limit():
            if nofile:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args(), stdout=self.log, stderr=self.log,
                                     preexec_fn=limit)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.alive():
            try:
                if self.probe("/readyz")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not become ready:\n{self.log_text()[-3000:]}")

    def metric_values(self):
        """{'name{labels}': value} of the Prometheus text on /metrics."""
        out = {}
        for line in self.metrics().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def open_fds(self):
        try:
            return len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        except OSError:
            return -1

    def serves_newest(self, cert_file):
        return served_cert(self) == pem_to_der(cert_file)


# ----------------------------------------------------------------------------------- reviews

def review_cases():
    """The reviews the load sends, with what each must get under policy A and under policy B."""
    ok_pod = pod("team-a", name="ready", host_network=True)
    spec = ok_pod["spec"]
    spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    c = spec["containers"][0]
    c["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    c["env"] += [{"name": "NCCL_IB_DISABLE", "value": "0"}]
    return [
        # GPU pod without a path: A leaves it, B moves it to the host network.
        {"name": "mutate-gpu-pod", "endpoint": "/mutate",
         "body": review(pod("team-a"), uid="11111111-0000-4000-8000-000000000001"),
         "A": {"allowed": True, "patched": False}, "B": {"allowed": True, "patched": True}},
        # RDMA on the host network without IPC_LOCK and DNS: A warns, B denies.
        {"name": "validate-broken", "endpoint": "/validate",
         "body": review(pod("team-a", name="broken", host_network=True),
                        uid="11111111-0000-4000-8000-000000000002"),
         "A": {"allowed": True, "patched": False}, "B": {"allowed": False, "patched": False}},
        # The same pod done right: allowed under both.
        {"name": "validate-ready", "endpoint": "/validate",
         "body": review(ok_pod, uid="11111111-0000-4000-8000-000000000003"),
         "A": {"allowed": True, "patched": False}, "B": {"allowed": True, "patched": False}},
    ]


def policy_hash(server):
    status, body = server.review("/validate", review_cases()[2]["body"])
    if status != 200:
        raise RuntimeError(f"review answered {status}: {body}")
    return body["response"]["auditAnnotations"]["policy-hash"]


def write_cases(path, hash_a, hash_b):
    """The client's cases file: every expectation keyed by the policy hash that must give it."""
    out = []
    for c in review_cases():
        out.append({"name": c["name"], "endpoint": c["endpoint"], "body": c["body"],
                    "expect": {hash_a: c["A"], hash_b: c["B"]}})
    Path(path).write_text(json.dumps(out))


def read_samples(path):
    """The client's CSV: [(due_s, latency_us, service_us, class, case, new_connection)]."""
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            d, lat, svc, cls, case, new = line.rstrip("\n").split(",")
            rows.append((float(d), float(lat), float(svc), cls, int(case), new == "1"))
    return rows


def run_client(client, *args, timeout=None):
    """Runs the Go client to the end; its JSON summary."""
    r = subprocess.run([str(client), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"soakclient {args[0]} failed ({r.returncode}): {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def start_client(client, out_path, *args):
    """Starts the Go client in the background, its stdout to out_path."""
    f = open(out_path, "w")
    return subprocess.Popen([str(client), *map(str, args)], stdout=f, stderr=subprocess.PIPE,
                            text=True), f


def finish_client(proc_and_file, timeout=None):
    proc, f = proc_and_file
    _, err = proc.communicate(timeout=timeout)
    f.close()
    if proc.returncode != 0:
        raise RuntimeError(f"soakclient failed ({proc.returncode}): {err[-2000:]}")
    return json.loads(Path(f.name).read_text())


def execute(name, run, print_report, json_out, keep):
    """The frame of a run: a work directory, run(work) -> (report, problems), the report on
    stdout (and as JSON to json_out), the directory kept on failure or when asked. Exit code."""
    if not binary().exists():
        print(f"{name}: {binary()} not found (build it, or set RW_BINARY)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix=f"rw-{name}-"))
    try:
        report, problems = run(work)
    except Exception as e:  # noqa: BLE001 - any error is a failed run, said in one place
        print(f"{name}: FAILED: {e}", file=sys.stderr)
        print(f"{name}: work directory kept: {work}", file=sys.stderr)
        return 1
    print_report(report, problems)
    if json_out:
        Path(json_out).write_text(json.dumps(report, indent=2) + "\n")
    if problems or keep:
        print(f"{name}: work directory kept: {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0
