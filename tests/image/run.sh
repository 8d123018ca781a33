#!/usr/bin/env bash
# The container image, built without a container engine (scripts/image.sh: umoci + skopeo) and
# proven without one: the OCI layout and the docker-archive are read and checked against the
# Dockerfile (check_image.py: user, entrypoint, cmd, ports, labels, one file and no shell), the
# rootfs is unpacked with umoci and the binary run from it as UID/GID 65532 (`version`, then
# `serve` with the image's own arguments and the chart's mounts until /readyz answers 200, then
# SIGTERM and exit 0), and a second build must give the same digests.
#
#   tests/image/run.sh [STATIC_BINARY]
#
# The binary is as for scripts/image.sh: the argument, $RW_STATIC_BINARY, else build-static/
# (built there when missing). Listens on 127.0.0.1 only. Ends with `N passed, N failed`.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$REPO/tests/image"
pass=0; fail=0
ok()  { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

WORK="$(mktemp -d)"
chmod 0755 "$WORK"   # the unpacked root lives below; 65532 must be able to reach it
PID=""
cleanup() { [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# ------------------------------------------------------------------------------ build
t0=$SECONDS
if RW_IMAGE_OUT="$WORK/a" "$REPO/scripts/image.sh" "$@" 2> "$WORK/build.log"; then
  ok "scripts/image.sh built the image ($((SECONDS - t0))s)"
  grep '^image:' "$WORK/build.log" | sed 's/^/     /'
else
  bad "scripts/image.sh failed:"; tail -20 "$WORK/build.log"; finish
fi
tag="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])' "$WORK/a/oci/index.json")"
IMAGE="$WORK/a/oci:$tag"
revision=unknown
if git -C "$REPO" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  revision="$(git -C "$REPO" rev-parse HEAD)"
  git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || revision="$revision-dirty"
fi

# --------------------------------------------------- layout, config, Dockerfile, tarball
python3 "$HERE/check_image.py" "$WORK/a" "$REPO/Dockerfile" "$tag" "$revision" > "$WORK/check.out" 2>&1
rc=$?
while IFS= read -r line; do
  case "$line" in
    "ok   "*) ok "${line#ok   }" ;;
    "FAIL "*) bad "${line#FAIL }" ;;
    *) echo "     $line" ;;
  esac
done < "$WORK/check.out"
[ "$rc" = 0 ] || bad "check_image.py exited $rc"

# skopeo reads the same config from the layout (what a push would send).
if skopeo inspect --config "oci:$IMAGE" > "$WORK/skopeo-config.json" 2>&1 &&
   python3 - "$WORK/skopeo-config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["User"] == "65532:65532" and c["Entrypoint"] == ["/rdma-webhook"], c
EOF
then ok "skopeo inspect --config reads the layout: user 65532:65532, entrypoint /rdma-webhook"
else bad "skopeo inspect --config: $(head -5 "$WORK/skopeo-config.json")"; fi

# --------------------------------------------------------------------- unpack and run
rootless=()
[ "$(id -u)" = 0 ] || rootless=(--rootless)
if umoci unpack "${rootless[@]}" --image "$IMAGE" "$WORK/bundle" > "$WORK/unpack.log" 2>&1; then
  ok "umoci unpack ${rootless[*]}"
else
  bad "umoci unpack: $(tail -3 "$WORK/unpack.log")"; finish
fi
ROOTFS="$WORK/bundle/rootfs"
listing="$(cd "$ROOTFS" && find . -mindepth 1 -printf '%y %p\n')"
[ "$listing" = "f ./rdma-webhook" ] && ok "the unpacked rootfs holds exactly one file, /rdma-webhook" \
  || bad "the unpacked rootfs holds: $listing"
desc="$(file -b "$ROOTFS/rdma-webhook")"
if [[ "$desc" == *"statically linked"* || "$desc" == *"static-pie linked"* ]]; then
  ok "/rdma-webhook is statically linked"
else
  bad "/rdma-webhook is not static: $desc"
fi
[[ "$desc" == *"not stripped"* ]] && bad "/rdma-webhook is not stripped (the Dockerfile strips it)" \
  || ok "/rdma-webhook is stripped, as the Dockerfile's build stage does"

# The runtime spec umoci generated from the image config: what a runtime would exec.
mapfile -t ARGS < <(python3 - "$WORK/bundle/config.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["process"]
u = p["user"]
if (u.get("uid"), u.get("gid")) != (65532, 65532):
    print(f"USER {u}")
for a in p["args"]:
    print(a)
EOF
)
if [ "${ARGS[0]:-}" = /rdma-webhook ] && [ "${ARGS[1]:-}" = serve ]; then
  ok "runtime spec: uid/gid 65532, args = entrypoint + cmd (${#ARGS[@]} words)"
else
  bad "runtime spec from umoci unpack: ${ARGS[*]:0:3}"
fi

# The chart's mounts, laid out at the paths of the image's CMD: the TLS Secret and the policy
# ConfigMap, readable by 65532 only.
MNT="$ROOTFS/etc/rdma-webhook"
mkdir -p "$MNT/tls" "$MNT/policy"
if "$REPO/certs/gen-certs.sh" "$WORK/certs" rdma-webhook rdma-webhook > "$WORK/certs.log" 2>&1 &&
   cp "$WORK/certs/tls.crt" "$WORK/certs/tls.key" "$WORK/certs/ca.crt" "$MNT/tls/" &&
   "$ROOTFS/rdma-webhook" policy default > "$MNT/policy/policy.yaml"; then
  ok "certs/gen-certs.sh and 'rdma-webhook policy default' laid out as the chart mounts them"
else
  bad "preparing the mounts: $(tail -3 "$WORK/certs.log")"; finish
fi
chmod 0440 "$MNT/tls/"*
# As root the binary runs chrooted into the rootfs as 65532: nothing outside it is needed.
# Otherwise it runs from the rootfs as the current user, with the mount paths rewritten.
# in_image execs: call it in a subshell ($(...) or &), so that $! is the server itself.
if [ "$(id -u)" = 0 ]; then
  chown -R 65532:65532 "$MNT"
  in_image() { exec chroot --userspec=65532:65532 "$ROOTFS" "$@"; }
  where="chrooted into the rootfs as 65532:65532"
  prefix=""
else
  in_image() { local a=$1; shift; exec "$ROOTFS$a" "$@"; }
  where="from the rootfs (not root: no chroot)"
  prefix="$ROOTFS"
fi

if out="$(in_image /rdma-webhook version 2>&1)" && [ "$(echo "$out" | head -n1)" = "rdma-webhook $tag" ]; then
  ok "version $where: $(echo "$out" | tr '\n' ' ')"
else
  bad "version $where: $out"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TP="$(free_port)"; PP="$(free_port)"
# The image's own arguments, with the listeners on loopback and a 1s drain instead of 5s.
run_args=()
for ((i = 1; i < ${#ARGS[@]}; i++)); do
  a="${ARGS[$i]}"
  case "${ARGS[$((i - 1))]}" in
    --listen) a="127.0.0.1:$TP" ;;
    --probe-listen) a="127.0.0.1:$PP" ;;
    --shutdown-delay) a=1s ;;
    --tls-cert | --tls-key | --policy) a="$prefix$a" ;;
  esac
  run_args+=("$a")
done
in_image /rdma-webhook "${run_args[@]}" > "$WORK/server.log" 2>&1 &
PID=$!

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@"; }
ready=""
for _ in $(seq 1 100); do
  [ "$(code "http://127.0.0.1:$PP/readyz")" = 200 ] && { ready=1; break; }
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ready" ] && ok "serve with the image's CMD answers /readyz 200 on the probe port" \
  || { bad "/readyz never answered 200"; tail -5 "$WORK/server.log"; }
[ "$(code --cacert "$WORK/certs/ca.crt" "https://localhost:$TP/healthz")" = 200 ] \
  && ok "TLS /healthz with the gen-certs CA" || bad "TLS /healthz with the gen-certs CA"

kill -TERM "$PID" 2>/dev/null
t1=$SECONDS
for _ in $(seq 1 150); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$PID" 2>/dev/null   # still running after 15s: a failed drain (exit 137)
wait "$PID"; rc=$?; PID=""
[ "$rc" = 0 ] && ok "exit 0 after SIGTERM ($((SECONDS - t1))s drain)" \
  || { bad "exit code $rc after SIGTERM"; tail -5 "$WORK/server.log"; }

# ------------------------------------------------------------------------ reproducible
if RW_IMAGE_OUT="$WORK/b" "$REPO/scripts/image.sh" "$@" 2> "$WORK/build-b.log"; then
  if cmp -s "$WORK/a/oci/index.json" "$WORK/b/oci/index.json"; then
    ok "a second build gives the same manifest digest"
  else
    bad "a second build gives another manifest: $(diff "$WORK/a/oci/index.json" "$WORK/b/oci/index.json")"
  fi
  cmp -s "$WORK/a/rdma-webhook.tar" "$WORK/b/rdma-webhook.tar" \
    && ok "a second build gives a byte-identical docker-archive" || bad "the docker-archives differ"
else
  bad "second scripts/image.sh failed: $(tail -5 "$WORK/build-b.log")"
fi

finish
