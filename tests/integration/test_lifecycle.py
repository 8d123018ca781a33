"""Startup errors, key types, client certificates, and the SIGTERM drain."""
import json
import signal
import socket
import ssl
import subprocess
import time

import pytest

from conftest import (HOST, Load, binary, free_port, pod, read_response, review, send_head,
                      sign, tls_socket, wait_until)


def start_fails(tmp_path, certs, *extra, cert=None, key=None):
    args = [str(binary()), "serve", "--tls-cert", str(cert or certs / "tls.crt"),
            "--tls-key", str(key or certs / "tls.key"),
            "--listen", f"{HOST}:{free_port()}", "--probe-listen", f"{HOST}:{free_port()}",
            *extra]
    r = subprocess.run(args, capture_output=True, timeout=20)
    assert r.returncode != 0
    return r.stdout.decode() + r.stderr.decode()


def test_startup_errors_name_the_file(tmp_path, certs):
    missing = tmp_path / "missing.crt"
    assert str(missing) in start_fails(tmp_path, certs, cert=missing)
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key")
    assert str(garbage) in start_fails(tmp_path, certs, key=garbage)
    bad_policy = tmp_path / "policy.yaml"
    bad_policy.write_text("apiVersion: rdma-webhook/v1\nkind: Policy\nbogus: 1\n")
    assert str(bad_policy) in start_fails(tmp_path, certs, "--policy", str(bad_policy))


def test_port_in_use_is_a_startup_error(tmp_path, certs):
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = [str(binary()), "serve", "--tls-cert", str(certs / "tls.crt"),
                "--tls-key", str(certs / "tls.key"), "--listen", f"{HOST}:{port}",
                "--probe-listen", f"{HOST}:{free_port()}"]
        r = subprocess.run(args, capture_output=True, timeout=20)
    assert r.returncode != 0
    assert f"{HOST}:{port}" in (r.stdout + r.stderr).decode()


def test_rsa_key(server_factory, rsa_certs):
    server = server_factory(rsa_certs).start()
    server.assert_serves()


def test_ecdsa_key(server_factory, certs):
    server = server_factory(certs).start()
    server.assert_serves()


def test_client_certificate_required_with_client_ca(server_factory, tmp_path, certs):
    sign(certs, tmp_path / "apiserver", "/CN=kube-apiserver", "clientAuth")
    server = server_factory(certs, client_ca=certs / "ca.crt").start()
    with_cert = server.context(cert=tmp_path / "apiserver.crt", key=tmp_path / "apiserver.key")
    status, _, _ = server.request("POST", "/validate", review(pod("elsewhere")),
                                  conn=server.connection(context=with_cert))
    assert status == 200
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        server.request("POST", "/validate", review(pod("elsewhere")))


def test_sigterm_drain(server_factory, certs):
    server = server_factory(certs, shutdown_delay="2s").start()
    # A request in flight across the whole delay: its body arrives after the delay is over.
    slow = tls_socket(server, timeout=30)
    data = json.dumps(review(pod("elsewhere"), uid="in-flight")).encode()
    send_head(slow, "/validate", f"Content-Length: {len(data)}", body=data[:20])
    with Load(server, clients=4, endpoint="/validate") as load:
        time.sleep(0.5)
        sent_at = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        # /readyz fails at once.
        assert wait_until(lambda: server.probe("/readyz")[0] == 503, 0.5, 0.01)
        # Serving goes on during the delay, on open and on new connections.
        time.sleep(1.0)
        with_new = server.request("POST", "/validate", review(pod("elsewhere")))
        assert with_new[0] == 200
        during = [f for f in load.failures if f[0] < sent_at + 1.9]
        assert during == [], during
        time.sleep(1.5)  # past the delay
    slow.sendall(data[20:])
    status, _, answer = read_response(slow)
    assert status == 200
    assert json.loads(answer)["response"]["uid"] == "in-flight"
    slow.close()
    assert server.proc.wait(timeout=20) == 0
    # After the delay no new connection is accepted.
    with pytest.raises(OSError):
        socket.create_connection((HOST, server.port), timeout=2)
    assert load.ok > 20
