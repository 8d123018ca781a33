"""Hot reload of TLS and policy files under load: zero failed requests, new values in force."""
import os
import shutil
import signal
import socket
import ssl
import time
from pathlib import Path

import pytest

from conftest import (HOST, Load, copy_atomically, gen_certs, patch_of, pod, review,
                      wait_until)


def served_cert(server):
    raw = socket.create_connection((HOST, server.port), timeout=5)
    with server.context().wrap_socket(raw, server_hostname="localhost") as s:
        return s.getpeercert(binary_form=True)


def pem_to_der(path):
    return ssl.PEM_cert_to_DER_cert(Path(path).read_text())


def reissue(cert_dir, out_dir):
    """A new serving certificate from the same CA (so clients keep trusting it)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in ("ca.crt", "ca.key"):
        shutil.copy(Path(cert_dir) / f, out_dir / f)
    gen_certs(out_dir, force=True)
    return out_dir


def metric(server, line_prefix):
    for line in server.metrics().splitlines():
        if line.startswith(line_prefix):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_cert_rotation_under_keep_alive_load(server_factory, tmp_path, certs):
    live = tmp_path / "live"
    live.mkdir()
    for f in ("ca.crt", "tls.crt", "tls.key"):
        shutil.copy(certs / f, live / f)
    server = server_factory(live).start()
    new = reissue(certs, tmp_path / "new")
    old_der = served_cert(server)
    with Load(server, clients=6) as load:
        time.sleep(1)
        # Key first, then certificate: the pair is inconsistent for a moment, which must not
        # break anything (the old context stays until both match).
        copy_atomically(new / "tls.key", live / "tls.key")
        copy_atomically(new / "tls.crt", live / "tls.crt")
        assert wait_until(lambda: served_cert(server) == pem_to_der(new / "tls.crt"), 10)
        time.sleep(1)
    assert load.ok > 50
    assert load.failures == []
    assert served_cert(server) != old_der
    assert metric(server, 'rdma_webhook_reloads_total{what="tls",result="success"}') >= 1


def kubernetes_volume(root, files):
    """A directory laid out like a mounted Secret: name -> ..data/name -> ..<ts>/name."""
    root.mkdir(parents=True, exist_ok=True)
    version = root / "..2026_11_30_00_00_00.000000001"
    version.mkdir()
    for name, src in files.items():
        shutil.copy(src, version / name)
    os.symlink(version.name, root / "..data")
    for name in files:
        os.symlink(f"..data/{name}", root / name)
    return root


def swap_volume(root, files, stamp):
    """What the kubelet does on update: new version dir, then an atomic rename of ..data."""
    version = root / f"..2026_11_30_00_00_{stamp:02d}.000000001"
    version.mkdir()
    for name, src in files.items():
        shutil.copy(src, version / name)
    old = os.readlink(root / "..data")
    os.symlink(version.name, root / "..data_tmp")
    os.replace(root / "..data_tmp", root / "..data")
    shutil.rmtree(root / old)


def test_secret_symlink_swap_rotates_cert(server_factory, tmp_path, certs):
    vol = kubernetes_volume(tmp_path / "secret", {"tls.crt": certs / "tls.crt",
                                                    "tls.key": certs / "tls.key",
                                                    "ca.crt": certs / "ca.crt"})
    server = server_factory(vol).start()
    new = reissue(certs, tmp_path / "new")
    with Load(server, clients=4) as load:
        time.sleep(0.5)
        swap_volume(vol, {"tls.crt": new / "tls.crt", "tls.key": new / "tls.key",
                          "ca.crt": new / "ca.crt"}, 1)
        assert wait_until(lambda: served_cert(server) == pem_to_der(new / "tls.crt"), 10)
    assert load.failures == []
    assert load.ok > 20


def test_broken_cert_keeps_the_old_one(server_factory, tmp_path, certs):
    live = tmp_path / "live"
    shutil.copytree(certs, live)
    server = server_factory(live).start()
    before = served_cert(server)
    (live / "tls.crt").write_text("-----BEGIN CERTIFICATE-----\nnot base64\n")
    assert wait_until(lambda: metric(
        server, 'rdma_webhook_reloads_total{what="tls",result="failure"}') >= 1, 10)
    assert served_cert(server) == before
    server.assert_serves()
    failed = [l for l in server.log_lines() if "reload failed" in l.get("msg", "")]
    assert failed and str(live / "tls.crt") in failed[-1]["error"]


POLICY_OFF = """apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces: []
"""
POLICY_HOST = """apiVersion: rdma-webhook/v1
kind: Policy
defaults: {mode: "off", validation: warn}
namespaces:
  - {names: [team-*], mode: hostNetwork, validation: deny}
"""


def test_policy_reload_under_load(server_factory, tmp_path, certs):
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY_OFF)
    server = server_factory(certs, policy=policy).start()
    with Load(server, clients=6, body=review(pod("team-a"))) as load:
        time.sleep(1)
        staged = tmp_path / "policy.new"
        staged.write_text(POLICY_HOST)
        switched_at = time.monotonic()
        os.replace(staged, policy)
        assert wait_until(lambda: any(t > switched_at and "patch" in b["response"]
                                      for t, b in list(load.answers)), 10)
        time.sleep(0.5)
    assert load.failures == []
    early = [b for t, b in load.answers if t < switched_at]
    assert early and all("patch" not in b["response"] for b in early)
    hashes = {b["response"]["auditAnnotations"]["policy-hash"] for _, b in load.answers}
    assert len(hashes) == 2


def test_sighup_rereads_the_policy(server_factory, tmp_path, certs):
    # What needs the process: SIGHUP reaches the reload, and the server serves on. What the
    # reload does with a broken file (keeps the policy, counts, logs) and with the good one
    # after it is unit-tested with a fake Env (tests/unit/server/policy_reload_test.cc).
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY_HOST)
    server = server_factory(certs, policy=policy).start()
    success = 'rdma_webhook_reloads_total{what="policy",result="success"}'
    n = metric(server, success)
    # The file is unchanged, so only the signal can trigger this reload.
    server.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: metric(server, success) > n, 5)
    reloaded = [l for l in server.log_lines() if l.get("msg") == "policy reloaded"]
    assert reloaded and reloaded[-1]["trigger"] == "SIGHUP"
    server.assert_serves()


def test_configmap_symlink_swap_reloads_policy(server_factory, tmp_path, certs):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(POLICY_OFF)
    b.write_text(POLICY_HOST)
    vol = kubernetes_volume(tmp_path / "cm", {"policy.yaml": a})
    server = server_factory(certs, policy=vol / "policy.yaml").start()
    assert patch_of(server.review("/mutate", review(pod("team-a")))[1]) is None
    swap_volume(vol, {"policy.yaml": b}, 2)
    assert wait_until(lambda: patch_of(server.review("/mutate", review(pod("team-a")))[1]), 10)


@pytest.mark.skipif(os.environ.get("RW_SOAK") != "1", reason="soak: set RW_SOAK=1 (minutes)")
def test_soak_rotations_under_load(server_factory, tmp_path, certs):
    """Certificates and policy rotated over and over for RW_SOAK_SECONDS under load."""
    live = tmp_path / "live"
    shutil.copytree(certs, live)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY_OFF)
    server = server_factory(live, policy=policy).start()
    issued = [reissue(certs, tmp_path / f"cert-{i}") for i in range(3)]
    seconds = float(os.environ.get("RW_SOAK_SECONDS", "120"))
    with Load(server, clients=8, body=review(pod("team-a"))) as load:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            new = issued[i % len(issued)]
            copy_atomically(new / "tls.key", live / "tls.key")
            copy_atomically(new / "tls.crt", live / "tls.crt")
            staged = tmp_path / "policy.new"
            staged.write_text(POLICY_HOST if i % 2 else POLICY_OFF)
            os.replace(staged, policy)
            i += 1
            time.sleep(1.5)
    assert load.failures == []
    assert load.ok > seconds * 10
