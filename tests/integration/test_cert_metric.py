"""rdma_webhook_certificate_expiry_timestamp_seconds: the notAfter of the serving certificate in
force, set at startup and on every successful TLS reload (and left alone by a failed one)."""
import shutil
import ssl
import subprocess
from pathlib import Path

from conftest import REPO, copy_atomically, wait_until

METRIC = "rdma_webhook_certificate_expiry_timestamp_seconds"


def not_after(cert):
    """notAfter as Unix seconds, read with `openssl x509 -enddate -noout`."""
    out = subprocess.run(["openssl", "x509", "-enddate", "-noout", "-in", str(cert)],
                         check=True, capture_output=True, text=True).stdout.strip()
    assert out.startswith("notAfter="), out
    return ssl.cert_time_to_seconds(out.split("=", 1)[1])  # "Dec  1 04:14:16 2026 GMT"


def expiry(server):
    """The metric's value, or None when it is not exposed."""
    values = [line.split(" ", 1)[1] for line in server.metrics().splitlines()
              if line.split(" ", 1)[0] == METRIC]
    assert len(values) <= 1, values
    return float(values[0]) if values else None


def reissue(cert_dir, out_dir, days):
    """A serving certificate from the same CA, valid for `days`: a notAfter that differs."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in ("ca.crt", "ca.key"):
        shutil.copy(Path(cert_dir) / f, out_dir / f)
    subprocess.run(["bash", str(REPO / "certs" / "gen-certs.sh"), "--days", str(days), "--force",
                    str(out_dir)], check=True, capture_output=True)
    return out_dir


def test_expiry_metric_is_the_serving_certificates_not_after(server):
    text = server.metrics()
    assert f"# TYPE {METRIC} gauge\n" in text, text
    assert expiry(server) == not_after(server.cert)


def test_expiry_metric_follows_rotation_not_a_broken_file(server_factory, tmp_path, certs):
    live = tmp_path / "live"
    live.mkdir()
    for f in ("ca.crt", "tls.crt", "tls.key"):
        shutil.copy(certs / f, live / f)
    server = server_factory(live).start()
    before = not_after(live / "tls.crt")
    assert expiry(server) == before

    new = reissue(certs, tmp_path / "new", days=30)
    after = not_after(new / "tls.crt")
    assert after != before
    copy_atomically(new / "tls.key", live / "tls.key")
    copy_atomically(new / "tls.crt", live / "tls.crt")
    assert wait_until(lambda: expiry(server) == after, 10), (expiry(server), after)

    # A broken certificate is refused: the one in force, and its notAfter, stay.
    (live / "tls.crt").write_text("-----BEGIN CERTIFICATE-----\nnot base64\n")
    assert wait_until(lambda: 'rdma_webhook_reloads_total{what="tls",result="failure"} 1'
                      in server.metrics(), 10)
    assert expiry(server) == after
    server.assert_serves()
