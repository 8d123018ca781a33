"""A small stand-in for the Kubernetes API server, on 127.0.0.1 over TLS, for the cluster watch
of `rdma-webhook serve --watch-cluster`.

It speaks what a list+watch client needs, as the API conventions document it: a LIST answers
`{"kind": "<Kind>List", "metadata": {"resourceVersion", "continue"}, "items": [...]}` in pages
of `limit`; a WATCH (`?watch=1&resourceVersion=N`) answers a chunked stream of lines
`{"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": ...}` and ends after
`timeoutSeconds`; a resourceVersion older than the compacted one is `410 Gone` (or an ERROR
event with a Status of code 410); refusals are `Status` objects. Each test scripts a resource's
state (served or 404, allowed or 403, its objects and events) and reads back the requests made.
"""
import http.server
import json
import socketserver
import ssl
import threading
import time
import urllib.parse
from pathlib import Path

HOST = "127.0.0.1"


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class Resource:
    """One collection path, e.g. /apis/resource.k8s.io/v1/deviceclasses."""

    def __init__(self, kind, api_version, namespaced):
        self.kind = kind
        self.api_version = api_version
        self.namespaced = namespaced
        self.code = 404          # 200 served, 403 forbidden, 404 not installed
        self.objects = {}        # key -> object
        self.events = []         # (rv, line bytes)
        self.compacted = 0       # a watch from below this rv is 410 Gone
        self.gone_as_event = False  # 410 as an ERROR event in a 200 stream instead of HTTP 410
        self.list_delay = 0.0    # seconds before a LIST is answered
        self.epoch = 0           # bumping it breaks every open watch (no final chunk)
        self.raw_lines = []      # lines sent as they are to watches, once each


class FakeApiServer:
    def __init__(self, cert_dir, token="token-1"):
        self.cert_dir = Path(cert_dir)
        self.token = token
        self.rv = 1000
        self.cond = threading.Condition()
        self.resources = {}
        self.requests = []  # dicts: path, query, auth, watch
        self.httpd = None

    # -- scripting (any thread)

    def resource(self, path, kind, api_version, namespaced=True):
        with self.cond:
            return self.resources.setdefault(path, Resource(kind, api_version, namespaced))

    def serve(self, path, code=200):
        with self.cond:
            self.resources[path].code = code
            self.cond.notify_all()

    def _next_rv(self):
        self.rv += 1
        return str(self.rv)

    def put(self, path, obj, event=True):
        """Creates or replaces `obj`; with `event`, open watches see ADDED or MODIFIED."""
        with self.cond:
            r = self.resources[path]
            obj = json.loads(json.dumps(obj))
            obj.setdefault("apiVersion", r.api_version)
            obj.setdefault("kind", r.kind)
            meta = obj.setdefault("metadata", {})
            meta["resourceVersion"] = self._next_rv()
            key = (meta.get("namespace", ""), meta["name"])
            kind = "MODIFIED" if key in r.objects else "ADDED"
            r.objects[key] = obj
            if event:
                r.events.append((self.rv, self._line(kind, obj)))
            self.cond.notify_all()
            return obj

    def delete(self, path, namespace, name):
        with self.cond:
            r = self.resources[path]
            obj = r.objects.pop((namespace, name))
            obj["metadata"]["resourceVersion"] = self._next_rv()
            r.events.append((self.rv, self._line("DELETED", obj)))
            self.cond.notify_all()

    def bookmark(self, path):
        with self.cond:
            r = self.resources[path]
            obj = {"kind": r.kind, "apiVersion": r.api_version,
                   "metadata": {"resourceVersion": self._next_rv()}}
            r.events.append((self.rv, self._line("BOOKMARK", obj)))
            self.cond.notify_all()

    def send_raw(self, path, line):
        """A line sent as it is to the open watches of `path` (an oversized or broken event)."""
        with self.cond:
            self.resources[path].raw_lines.append(line)
            self.cond.notify_all()

    def compact(self, path):
        """Every resourceVersion up to now is too old: open and new watches from it get 410."""
        with self.cond:
            r = self.resources[path]
            r.compacted = self.rv + 1
            self._next_rv()
            r.epoch += 1
            self.cond.notify_all()

    def break_watches(self, path):
        with self.cond:
            self.resources[path].epoch += 1
            self.cond.notify_all()

    @staticmethod
    def _line(kind, obj):
        return json.dumps({"type": kind, "object": obj}).encode() + b"\n"

    def requests_to(self, path, watch=None):
        with self.cond:
            return [r for r in self.requests
                    if r["path"] == path and (watch is None or r["watch"] == watch)]

    # -- the server

    def start(self):
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                fake._handle(self)

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = Server((HOST, 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(self.cert_dir / "tls.crt"), str(self.cert_dir / "tls.key"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            with self.cond:
                for r in self.resources.values():
                    r.epoch += 1
                self.cond.notify_all()

    @property
    def url(self):
        return f"https://{HOST}:{self.port}"

    # -- answers

    def _json(self, h, code, body):
        data = json.dumps(body).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _handle(self, h):
        url = urllib.parse.urlsplit(h.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        auth = h.headers.get("Authorization", "")
        watch = query.get("watch") in ("1", "true")
        with self.cond:
            self.requests.append({"path": url.path, "query": query, "auth": auth,
                                  "watch": watch, "time": time.monotonic()})
            r = self.resources.get(url.path)
            token = self.token
            # A watch belongs to the epoch it was asked in, read under the same lock as its code:
            # read later (after the headers are written), a break_watches() in between would be
            # missed and the watch would stay open past a refusal the test has just scripted.
            epoch = r.epoch if r is not None else 0
        if auth != f"Bearer {token}":
            return self._json(h, 401, status(401, "Unauthorized", "Unauthorized"))
        if r is None or r.code == 404:
            return self._json(h, 404, status(404, "NotFound",
                                             "the server could not find the requested resource"))
        if r.code == 403:
            name = url.path.rsplit("/", 1)[1]
            group = url.path.split("/")[2]
            return self._json(h, 403, status(
                403, "Forbidden",
                f'{name}.{group} is forbidden: User "system:serviceaccount:rdma-webhook:'
                f'rdma-webhook" cannot {"watch" if watch else "list"} resource "{name}" in API '
                f'group "{group}" at the cluster scope'))
        if watch:
            return self._watch(h, r, query, epoch)
        return self._list(h, r, query)

    def _list(self, h, r, query):
        if r.list_delay:
            time.sleep(r.list_delay)
        with self.cond:
            items = [json.loads(json.dumps(o)) for _, o in sorted(r.objects.items())]
            rv = str(self.rv)
        # Built-in kinds' LIST items carry no apiVersion and kind; the client must set them.
        if r.api_version.startswith("resource.k8s.io/"):
            for o in items:
                o.pop("apiVersion", None)
                o.pop("kind", None)
        limit = int(query.get("limit", "0") or 0)
        start = int(query.get("continue", "0") or 0)
        page = items[start:start + limit] if limit else items[start:]
        meta = {"resourceVersion": rv}
        if limit and start + limit < len(items):
            meta["continue"] = str(start + limit)
        self._json(h, 200, {"kind": r.kind + "List", "apiVersion": r.api_version,
                            "metadata": meta, "items": page})

    def _watch(self, h, r, query, epoch):
        since = int(query.get("resourceVersion", "0") or 0)
        timeout = float(query.get("timeoutSeconds", "30"))
        if since < r.compacted and not r.gone_as_event:
            return self._json(h, 410, status(410, "Expired",
                                             f"too old resource version: {since} ({r.compacted})"))
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def chunk(data):
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()

        if since < r.compacted:
            chunk(json.dumps({"type": "ERROR", "object": status(
                410, "Expired", f"too old resource version: {since}")}).encode() + b"\n")
            h.wfile.write(b"0\r\n\r\n")
            return
        deadline = time.monotonic() + timeout
        with self.cond:
            raw_sent = len(r.raw_lines)
        sent = since
        try:
            while True:
                with self.cond:
                    while True:
                        if r.epoch != epoch:
                            if r.gone_as_event and r.compacted > since:
                                pending = [status(410, "Expired", "too old resource version")]
                                break
                            # A broken connection: no final chunk.
                            h.close_connection = True
                            return
                        pending = [line for rv, line in r.events if rv > sent]
                        raw = r.raw_lines[raw_sent:]
                        if pending or raw:
                            sent = max(rv for rv, _ in r.events) if pending else sent
                            raw_sent = len(r.raw_lines)
                            pending = pending + raw
                            break
                        left = deadline - time.monotonic()
                        if left <= 0:
                            h.wfile.write(b"0\r\n\r\n")
                            h.wfile.flush()
                            return
                        self.cond.wait(min(left, 0.2))
                for line in pending:
                    if isinstance(line, dict):
                        chunk(json.dumps({"type": "ERROR", "object": line}).encode() + b"\n")
                        h.wfile.write(b"0\r\n\r\n")
                        return
                    chunk(line)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            h.close_connection = True
