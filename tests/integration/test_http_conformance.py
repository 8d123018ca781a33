"""Raw-HTTP conformance: requests written byte by byte to both ports, each case naming the
RFC 9112 (HTTP/1.1 messages) or RFC 9110 (HTTP semantics) clause it follows, and the bounds of
docs/http.md#bounds. After every hostile case the server must still answer a good review:
a case that kills or wedges the process fails there.

Plain sockets for the probe port, TLS sockets for the webhook port, all on 127.0.0.1.
"""
import gzip
import json
import re
import socket
import ssl
import time

import pytest

from conftest import HOST, Server, pod, review, tls_socket, wait_until

GOOD = json.dumps(review(pod("rdma-host-a"))).encode()


# ---------------------------------------------------------------- raw clients

def probe_socket(server, timeout=10):
    return socket.create_connection((HOST, server.probe_port), timeout=timeout)


def open_port(server, port):
    return tls_socket(server) if port == "tls" else probe_socket(server)


def send_quietly(sock, data, step=65536):
    """Sends `data`; a server that closes part-way (it answered early) ends the sending."""
    try:
        for i in range(0, len(data), step):
            sock.sendall(data[i:i + step])
    except (ConnectionError, ssl.SSLError, socket.timeout, BrokenPipeError):
        return False
    return True


def read_answers(sock, timeout=10):
    """Every byte the server sends until it closes or `timeout` passes."""
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            break
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return data


def exchange(server, port, raw, timeout=3):
    """Everything the server answers `raw` on a new connection to `port` ("tls" or "probe")."""
    s = open_port(server, port)
    s.sendall(raw)
    data = read_answers(s, timeout=timeout)
    s.close()
    return data


def statuses(data):
    """The status codes of the answers in `data`, in order (interim 1xx included). An answer
    starts right after the previous one's body, which ends without a line break."""
    return [int(m.group(1)) for m in re.finditer(rb"HTTP/1\.[01] (\d{3}) ", data)]


def chunked_head(path="/mutate", extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\n{extra}\r\n").encode()


def post_once(server, target, body, *lines):
    """The status codes of what one POST with `lines` among its header fields is answered, on a
    TLS connection closed after it."""
    s = tls_socket(server)
    head = (f"POST {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            "Content-Type: application/json\r\n" + "".join(l + "\r\n" for l in lines)
            + f"Content-Length: {len(body)}\r\n\r\n")
    s.sendall(head.encode() + body)
    data = read_answers(s, timeout=3)
    s.close()
    return statuses(data)


def vm_kib(server, field):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{server.proc.pid}/status")


# ---------------------------------------------------------------- framing: chunked (RFC 9112 §7.1)

@pytest.mark.parametrize("port", ["tls", "probe"])
@pytest.mark.parametrize("size", [65533, 65534, 70000])
def test_long_trailer_field_is_400_not_a_crash(server, port, size):
    # RFC 9112 §7.1.2: a trailer section is field lines like the header section, and §2.3 lets
    # a server refuse any line it finds too long. Beast threw std::length_error for a trailer
    # field of 65,534 bytes or more, outside the I/O loop: SIGABRT.
    s = open_port(server, port)
    request = (chunked_head("/mutate" if port == "tls" else "/healthz")
               + b"2\r\n{}\r\n0\r\nX: " + b"a" * size + b"\r\n\r\n")
    send_quietly(s, request)
    data = read_answers(s, timeout=5)
    s.close()
    assert server.alive(), server.log_text()[-2000:]
    # Both ports answer 400 and name the trailer (the probe port closed silently once).
    assert statuses(data) == [400], data[:300]
    assert b"trailer" in data
    server.assert_serves()


@pytest.mark.parametrize("port", ["tls", "probe"])
def test_endless_chunk_extension_is_cut_at_the_line_limit(server, port):
    # RFC 9112 §7.1.1: a server ought to limit the total length of chunk extensions it
    # receives, and answer 4xx over it. One chunk line `2;` with 8 MiB of extension once
    # raised RSS by the whole line (past the body and header limits).
    before = vm_kib(server, "VmRSS")
    s = open_port(server, port)
    head = chunked_head("/mutate" if port == "tls" else "/healthz")
    send_quietly(s, head + b"2;" + b"e" * (8 * 1024 * 1024))
    data = read_answers(s, timeout=5)
    s.close()
    assert server.alive()
    assert statuses(data) == [400], data[:300]
    # The line never reaches the body limit; what grows is only what the 32 KiB line buffer
    # and the discard after the answer hold.
    assert vm_kib(server, "VmRSS") - before < 8 * 1024
    server.assert_serves()


def test_chunk_extension_within_the_limit_is_ignored(server):
    # RFC 9112 §7.1.1: a recipient must ignore chunk extensions it does not understand.
    s = tls_socket(server)
    ext = b";name=" + b"v" * 1000
    body = b"".join(b"%x" % len(part) + ext + b"\r\n" + part + b"\r\n"
                    for part in (GOOD[:100], GOOD[100:]))
    s.sendall(chunked_head("/validate", "Connection: close\r\n") + body + b"0\r\n\r\n")
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data)[:1] == [200], data[:300]


# ---------------------------------------------------------------- framing: length (RFC 9112 §6)

SMUGGLED = (b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(GOOD)) + GOOD


@pytest.mark.parametrize("port", ["tls", "probe"])
@pytest.mark.parametrize("coding", ["gzip", "xchunked", "identity", "chunked, gzip"])
@pytest.mark.parametrize("with_length", [False, True], ids=["no-length", "with-length"])
def test_transfer_encoding_not_ending_in_chunked_is_400_and_closes(server, port, coding,
                                                                   with_length):
    # RFC 9112 §6.3 (4): a request whose Transfer-Encoding does not end in chunked has no
    # knowable length: the server must answer 400 and close. Kept open, what followed ran as a
    # second request (a smuggled POST /validate got 200).
    s = open_port(server, port)
    path = "/mutate" if port == "tls" else "/healthz"
    length = f"Content-Length: {len(SMUGGLED)}\r\n" if with_length else ""
    head = (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: {coding}\r\n{length}\r\n").encode()
    s.sendall(head + SMUGGLED)
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [400], data[:400]
    assert server.alive()


def test_gzip_then_chunked_is_501(server):
    # RFC 9112 §6.1: a transfer coding the server does not understand: 501, then close.
    s = tls_socket(server)
    head = (b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
    s.sendall(head + SMUGGLED)
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [501], data[:400]


def test_content_length_and_chunked_together_is_400(server):
    # RFC 9112 §6.3 (3): both is a smuggling shape; the server refuses it and closes.
    s = tls_socket(server)
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
              + SMUGGLED)
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [400], data[:400]


# ---------------------------------------------------------------- Host (RFC 9112 §3.2)

@pytest.mark.parametrize("port", ["tls", "probe"])
@pytest.mark.parametrize("hosts", [[], ["a", "b"]], ids=["missing", "duplicate"])
def test_host_missing_or_twice_is_400(server, port, hosts):
    s = open_port(server, port)
    path = "/healthz"
    head = f"GET {path} HTTP/1.1\r\n" + "".join(f"Host: {h}\r\n" for h in hosts) + "\r\n"
    s.sendall(head.encode())
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [400], data[:300]


@pytest.mark.parametrize("port", ["tls", "probe"])
def test_http10_without_host_is_served(server, port):
    data = exchange(server, port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert statuses(data) == [200], data[:300]


# ---------------------------------------------------------------- request target (RFC 9112 §3.2.2)

def test_absolute_form_target_is_routed(server):
    assert post_once(server, "https://localhost/validate", GOOD) == [200]


# ---------------------------------------------------------------- HEAD (RFC 9110 §9.3.2)

@pytest.mark.parametrize("port,path", [("tls", "/healthz"), ("probe", "/healthz"),
                                       ("probe", "/metrics"), ("probe", "/readyz")])
def test_head_has_no_content_and_keeps_the_connection_in_step(server, port, path):
    # Two requests on one connection: a body after the HEAD answer would be read as the start
    # of the next answer.
    data = exchange(server, port,
                    f"HEAD {path} HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                    .encode())
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), data[:300]
    assert b"content-length" in head.lower()
    assert rest.startswith(b"HTTP/1.1 200"), rest[:300]
    assert rest.endswith(b"ok\n")


# ---------------------------------------------------------------- Expect (RFC 9110 §10.1.1)

def test_http10_expect_continue_gets_no_100(server):
    s = tls_socket(server)
    s.sendall(b"POST /validate HTTP/1.0\r\nContent-Type: application/json\r\n"
              b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(GOOD))
    time.sleep(0.3)
    s.sendall(GOOD)
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [200], data[:300]


# ---------------------------------------------------------------- content coding (RFC 9110 §8.4)

def test_content_encoding_gzip_is_415(server):
    assert post_once(server, "/validate", gzip.compress(GOOD), "Content-Encoding: gzip") == [415]


# ---------------------------------------------------------------- what is buffered (docs/http.md#bounds)

def many_container_review(containers):
    """A Pod of many small GPU containers that the default policy patches one by one: the
    answer is about 3.3 times the body."""
    spec = {"hostNetwork": True, "containers": [
        {"name": f"c{i}", "image": "t", "resources": {"limits": {"nvidia.com/gpu": 8}}}
        for i in range(containers)]}
    spec["containers"][0]["env"] = [{"name": "NCCL_IB_HCA", "value": "mlx5"}]
    return json.dumps(review({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "big", "namespace": "rdma-host-a"},
                              "spec": spec})).encode()


def test_a_client_that_never_reads_holds_the_budget_until_it_goes(server_factory, certs):
    # The answer to a review waits in memory while its client does not read it (up to the
    # write deadline). Sixteen such clients once held 1,177 MiB. Under --max-buffered-bytes,
    # another request waits for the room instead, and is served once the reader goes away.
    server = server_factory(certs, extra=["--max-buffered-bytes", "1048576"]).start()
    body = many_container_review(30000)  # about 2.5 MB; an answer of about 8 MB
    hog = socket.create_connection((HOST, server.port), timeout=30)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    hog = server.context().wrap_socket(hog, server_hostname="localhost")
    hog.sendall((b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body)) + body)
    # The hog's answer is being written (it fills the socket buffers and stops there).
    assert wait_until(lambda: 'rdma_webhook_decisions_total{endpoint="mutate"' in server.metrics(),
                      30)
    waiting = tls_socket(server)
    waiting.sendall((b"POST /validate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(GOOD))
                    + GOOD)
    assert read_answers(waiting, timeout=1.5) == b"", "served while the budget was held"
    hog.close()
    data = read_answers(waiting, timeout=8)
    waiting.close()
    assert statuses(data)[:1] == [200], data[:300]
    server.assert_serves()


def test_a_client_that_declares_a_large_body_and_stalls_does_not_hold_the_budget(server):
    # Found by probing: a chunked head alone (or Content-Length near the limit) once reserved
    # 64 bytes per byte of the limit, more than the whole 96 MiB budget, and every other request
    # got 503 until the stalled body's 30 s deadline. While a body is read it now holds only
    # itself as text.
    stalled = []
    for head in (b"Transfer-Encoding: chunked\r\n", b"Content-Length: 7000000\r\n"):
        s = tls_socket(server)
        s.sendall(b"POST /validate HTTP/1.1\r\nHost: localhost\r\n"
                  b"Content-Type: application/json\r\n" + head + b"\r\n")
        stalled.append(s)
    time.sleep(0.3)
    started = time.monotonic()
    assert post_once(server, "/validate", GOOD) == [200]
    assert time.monotonic() - started < 3
    for s in stalled:
        s.close()


# ---------------------------------------------------------------- limits on each part (RFC 9112 §2.3, §3, §5)

@pytest.mark.parametrize("port,part", [
    ("tls", "target"), ("tls", "field"), ("tls", "fields"),
    ("probe", "target"), ("probe", "field"), ("probe", "fields")])
def test_a_head_over_its_bound_is_refused(server, port, part):
    # RFC 9112 §3: a server that receives a request line longer than it parses answers 414 or
    # 4xx; §5 likewise for field lines. The head is bounded as a whole: 16 KiB on the TLS port,
    # 8 KiB on the probe port (docs/http.md#bounds).
    size = 20000
    target = "/healthz?" + "q" * size if part == "target" else "/healthz"
    fields = {"target": "", "field": "X-Long: " + "v" * size + "\r\n",
              "fields": "".join(f"X-F{i}: v\r\n" for i in range(size // 8))}[part]
    s = open_port(server, port)
    send_quietly(s, f"GET {target} HTTP/1.1\r\nHost: localhost\r\n{fields}\r\n".encode())
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [400], data[:200]
    assert server.alive()


@pytest.mark.parametrize("port", ["tls", "probe"])
def test_a_body_over_the_bound_is_refused(server, port):
    # RFC 9110 §15.5.14: 413 for content larger than the server will process; the probe
    # port's bound is 4 KiB, the TLS port's --max-body-bytes.
    size = 8 << 20 if port == "tls" else 8192
    s = open_port(server, port)
    path = "/mutate" if port == "tls" else "/healthz"
    send_quietly(s, (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {size}\r\n\r\n").encode() + b"{" * 1024)
    data = read_answers(s, timeout=3)
    s.close()
    assert statuses(data) == [413], data[:200]
    assert server.alive()


# ---------------------------------------------------------------- field syntax (RFC 9112 §2.2, §5.2)

@pytest.mark.parametrize("port", ["tls", "probe"])
def test_a_bare_cr_in_a_field_is_400(server, port):
    # RFC 9112 §2.2: a bare CR must be refused or replaced; a smuggling shape between proxies.
    data = exchange(server, port, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n")
    assert statuses(data) == [400], data[:200]
    assert server.alive()


# ---------------------------------------------------------------- pipelining (RFC 9112 §9.3.2)

@pytest.mark.parametrize("port", ["tls", "probe"])
def test_pipelined_requests_are_answered_in_order(server, port):
    s = open_port(server, port)
    if port == "tls":
        first = (b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(GOOD)) + GOOD
        second = b"GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n"
        expected = [200, 404, 200]
    else:
        first = b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n"
        second = b"GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n"
        expected = [200, 404, 200]
    last = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    s.sendall(first + second + last)
    data = read_answers(s, timeout=5)
    s.close()
    assert statuses(data) == expected, data[:600]


# ---------------------------------------------------------------- the probe port's own bounds

def test_probe_connections_are_capped_and_the_port_recovers(tmp_path, certs):
    # docs/http.md#bounds: at most 32 probe connections at once. Without a cap a flood there
    # used up the descriptors, and the next certificate reload failed for want of one. A server
    # of its own: other tests' connections may hold probe places for up to a deadline.
    server = Server(tmp_path, certs).start()
    idle = []
    try:
        idle = [probe_socket(server, timeout=3) for _ in range(32)]
        time.sleep(0.3)  # accepted and admitted
        extra = probe_socket(server, timeout=3)
        extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert wait_until(lambda: "probe connections at their limit" in server.log_text(), 10)
        assert statuses(read_answers(extra, timeout=2)) == [], "the 33rd connection was served"
        extra.close()
        # The webhook port is not the probe port's cap: reviews are served meanwhile.
        assert post_once(server, "/validate", GOOD) == [200]
        # Each of the 32 admitted is served.
        for s in idle:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        assert [statuses(read_answers(s, timeout=3)) for s in idle] == [[200]] * 32
        for s in idle:
            s.close()
        assert wait_until(lambda: server.probe("/healthz")[0] == 200, timeout=5)
        assert "probe connections below their limit again" in server.log_text()
    finally:
        for s in idle:
            s.close()
        server.stop()


def test_probe_keep_alive_outlasts_the_header_deadline(server):
    # docs/http.md: an idle keep-alive connection has 120 s on both ports; the probe port used
    # the 10 s header deadline for the wait between requests and closed kubelet's connection.
    s = probe_socket(server, timeout=15)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    first = b""
    while b"ok" not in first:
        first += s.recv(4096)
    assert statuses(first) == [200], first[:200]
    time.sleep(11)
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert statuses(read_answers(s, timeout=3)) == [200]
    s.close()


# ---------------------------------------------------------------- what a refusal leaves in the log

@pytest.fixture
def debug_server(tmp_path, certs):
    s = Server(tmp_path, certs, extra=["--log-level", "debug"]).start()
    yield s
    s.stop()


def test_refusals_are_logged_at_debug_with_the_peer_and_bounded_fields(debug_server):
    # docs/http.md#logs: a request refused before a review is read was in no log line at all,
    # and a refused review's uid went into its line whole, however long.
    server = debug_server
    exchange(server, "tls", b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n")
    exchange(server, "probe", b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n")
    long_uid = "u" * 100_000
    r = review(pod("rdma-host-a"), uid=long_uid)
    r["request"]["operation"] = 7
    status, _ = server.review("/validate", r)
    assert status == 400

    def refused(port):
        return [l for l in server.log_lines()
                if l.get("msg") == "request refused" and l.get("port") == port]
    assert wait_until(lambda: refused("tls") and refused("probe"), 5), server.log_text()[-2000:]
    for port in ("tls", "probe"):
        line = refused(port)[0]
        assert line["status"] == 400
        assert line["peer"].startswith(HOST + ":"), line
    bad = [l for l in server.log_lines() if l.get("msg") == "bad request"]
    assert bad and bad[0]["uid"].endswith("...(100000 bytes)"), bad[:1]
    assert len(bad[0]["uid"]) < 5000
