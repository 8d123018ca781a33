#!/usr/bin/env bash
# Proves what the container image's runtime stage can be proven to do on a
# machine without a container engine: the static binary alone in an empty
# root (what `FROM scratch` + `COPY /rdma-webhook` gives), run as UID/GID
# 65532 on a read-only root, serves TLS and the probes with the files laid
# out as the chart mounts them, and drains on SIGTERM.
#
#   tests/chart/payload.sh [STATIC_BINARY]
#
# Without an argument it uses $RW_STATIC_BINARY, else builds one exactly as
# the Dockerfile does, into build-static/. Needs root (chroot). Listens on
# 127.0.0.1 only. Ends with `N passed, N failed`.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pass=0; fail=0
ok()  { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

BIN="${1:-${RW_STATIC_BINARY:-}}"
if [ -z "$BIN" ]; then
  BIN="$REPO/build-static/rdma-webhook"
  echo "building a static rdma-webhook in build-static/ (as the Dockerfile does)" >&2
  if ! { cmake -S "$REPO" -B "$REPO/build-static" -G Ninja \
           -DRW_STATIC=ON -DRW_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release -DRW_WERROR=ON >&2 &&
         nice -n 10 cmake --build "$REPO/build-static" --target rdma-webhook >&2; }; then
    bad "static build (-DRW_STATIC=ON)"; finish
  fi
fi
[ -x "$BIN" ] || { bad "no binary at $BIN"; finish; }
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root for chroot" >&2; finish; fi

desc="$(file -b "$BIN")"
if [[ "$desc" == *"statically linked"* || "$desc" == *"static-pie linked"* ]]; then
  ok "binary is static ($desc)"
else
  bad "binary is not static: $desc"; finish
fi

ROOT="$(mktemp -d)"
chmod 0755 "$ROOT"   # an image's / is world-searchable; mktemp's 0700 would lock 65532 out
WORK="$(mktemp -d)"
PID=""
cleanup() { [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; rm -rf "$ROOT" "$WORK"; }
trap cleanup EXIT

# The image: one file. Then what the kubelet mounts: the TLS Secret and the
# policy ConfigMap as directories.
cp "$BIN" "$ROOT/rdma-webhook"
mkdir -p "$ROOT/etc/rdma-webhook/tls" "$ROOT/etc/rdma-webhook/policy"
"$REPO/certs/gen-certs.sh" "$WORK/certs" rdma-webhook rdma-webhook >/dev/null 2>&1
cp "$WORK/certs/tls.crt" "$WORK/certs/tls.key" "$WORK/certs/ca.crt" "$ROOT/etc/rdma-webhook/tls/"
"$BIN" policy default > "$ROOT/etc/rdma-webhook/policy/policy.yaml"
chown -R 65532:65532 "$ROOT/etc/rdma-webhook"
chmod 0440 "$ROOT/etc/rdma-webhook/tls/"*

n_files="$(find "$ROOT" -type f | wc -l)"
[ "$n_files" = 5 ] && ok "root holds the binary and the mounted files only" || bad "root has $n_files files"

# Run inside the empty root as 65532, with the root bind-mounted read-only
# when a private mount namespace is available.
in_root() {
  if unshare -m true 2>/dev/null; then
    exec unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec chroot --userspec=65532:65532 "$0" "$@"' "$ROOT" "$@"
  else
    exec chroot --userspec=65532:65532 "$ROOT" "$@"
  fi
}

if unshare -m true 2>/dev/null; then ok "root is bind-mounted read-only in a private mount namespace"
else echo "note: no private mount namespace here; the root is not read-only for this run" >&2; fi

if out="$(in_root /rdma-webhook version 2>&1)"; then ok "version runs in the empty root: $(echo "$out" | head -n1)"
else bad "version in the empty root: $out"; fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TP="$(free_port)"; PP="$(free_port)"
in_root /rdma-webhook serve \
  --tls-cert /etc/rdma-webhook/tls/tls.crt --tls-key /etc/rdma-webhook/tls/tls.key \
  --policy /etc/rdma-webhook/policy/policy.yaml \
  --listen "127.0.0.1:$TP" --probe-listen "127.0.0.1:$PP" \
  --log-format json --shutdown-delay 2s > "$WORK/server.log" 2>&1 &
PID=$!

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@"; }
for _ in $(seq 1 50); do [ "$(code "http://127.0.0.1:$PP/readyz")" = 200 ] && break; sleep 0.1; done
[ "$(code "http://127.0.0.1:$PP/healthz")" = 200 ] && ok "probe port /healthz" || bad "probe port /healthz"
[ "$(code "http://127.0.0.1:$PP/readyz")" = 200 ] && ok "probe port /readyz" || bad "probe port /readyz"
[ "$(code --cacert "$WORK/certs/ca.crt" "https://localhost:$TP/healthz")" = 200 ] \
  && ok "TLS /healthz with the gen-certs CA" || bad "TLS /healthz with the gen-certs CA"

review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"payload-1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}'
resp="$(curl -s --max-time 5 --cacert "$WORK/certs/ca.crt" -H 'Content-Type: application/json' \
  -d "$review" "https://localhost:$TP/mutate")"
if echo "$resp" | grep -q '"uid":"payload-1"' && echo "$resp" | grep -q '"allowed":true'; then
  ok "POST /mutate answers the review"
else
  bad "POST /mutate: $resp"
fi

# Drain: SIGTERM -> /readyz fails at once, TLS keeps serving for the delay,
# then exit 0.
kill -TERM "$PID"
sleep 0.3
rc_ready="$(code "http://127.0.0.1:$PP/readyz")"
# (000 would mean no answer at all: the server must still answer, with a failure)
[ "$rc_ready" != 200 ] && [ "$rc_ready" != 000 ] && ok "/readyz fails right after SIGTERM ($rc_ready)" \
  || bad "/readyz after SIGTERM answered $rc_ready"
[ "$(code --cacert "$WORK/certs/ca.crt" "https://localhost:$TP/healthz")" = 200 ] \
  && ok "TLS still served during the shutdown delay" || bad "TLS not served during the shutdown delay"
t0=$(date +%s)
wait "$PID"; rc=$?; PID=""
[ "$rc" = 0 ] && ok "exit 0 after the drain ($(( $(date +%s) - t0 ))s)" || { bad "exit code $rc after SIGTERM"; tail -5 "$WORK/server.log"; }

finish
