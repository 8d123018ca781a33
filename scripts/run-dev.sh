#!/usr/bin/env bash
# The main job on a developer machine: installs what is missing, builds, makes a development
# certificate, runs the admission server on 127.0.0.1 with the embedded default policy, and once
# it is ready sends it the sample AdmissionReview and prints the patch it answers, decoded.
# Says what it is doing at each stage; the build shows Ninja's steps ([n/N] file).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "run: $*" >&2; }

say "checking the packages the build needs (scripts/setup.sh)"
"$REPO/scripts/setup.sh"

# Ninja's "[12/78] Building CXX object CMakeFiles/rw_cli.dir/src/cli/app.cc.o" becomes
# "  [12/78] src/cli/app.cc"; everything else (compiler errors) passes through.
steps() { sed -u -E 's#^\[([0-9]+/[0-9]+)\] Building CXX object .*\.dir/(.*)\.o$#  [\1] \2#'; }
if [ -x "$REPO/build/rdma-webhook" ]; then
  say "building build/rdma-webhook (only what changed)"
else
  say "building build/rdma-webhook from scratch: 55 steps, about 9 min on a busy 2-core" \
      "machine (later runs rebuild only what changed)"
fi
start=$SECONDS
TARGET=rdma-webhook "$REPO/scripts/build.sh" 2>&1 | steps >&2
say "built in $((SECONDS - start))s"

CERTS="$REPO/out/dev-certs"
"$REPO/certs/gen-certs.sh" "$CERTS" rdma-webhook rdma-webhook >/dev/null
say "development certificate and CA in ${CERTS#"$REPO"/}"
LISTEN="${RW_LISTEN:-127.0.0.1:8443}"
PROBE="${RW_PROBE_LISTEN:-127.0.0.1:8080}"

"$REPO/build/rdma-webhook" serve --tls-cert "$CERTS/tls.crt" --tls-key "$CERTS/tls.key" \
  --listen "$LISTEN" --probe-listen "$PROBE" --log-format text "$@" &
server=$!
# A background job does not get the terminal's Ctrl-C: hand it on (SIGTERM drains, then exits).
trap 'kill -TERM "$server" 2>/dev/null' INT TERM
for _ in $(seq 100); do
  curl -fs "http://$PROBE/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if curl -fs "http://$PROBE/readyz" >/dev/null 2>&1; then
  review="$REPO/deploy/examples/admission-review.json"
  decode="jq -r .response.patch | base64 -d | jq -c '.[]'"
  cat >&2 <<MSG

run: server ready on https://$LISTEN (probes and metrics on http://$PROBE)

Send it the sample AdmissionReview (a GPU pod in namespace rdma-host-demo, which the default
policy puts on the hostNetwork path) and decode the base64 JSON patch of its answer:

  curl -s --cacert $CERTS/ca.crt -H 'Content-Type: application/json' \\
       --data @$review https://$LISTEN/mutate \\
    | $decode

It answers this patch:
MSG
  curl -s --cacert "$CERTS/ca.crt" -H 'Content-Type: application/json' --data @"$review" \
    "https://$LISTEN/mutate" | jq -r .response.patch | base64 -d | jq -c '.[]' >&2 || true
  cat >&2 <<MSG

Metrics: curl http://$PROBE/metrics
Stop it with Ctrl-C (SIGTERM drains for 5s).

MSG
fi
status=0
wait "$server" || status=$?
# After Ctrl-C the first wait returns at the signal; the server is still draining.
kill -0 "$server" 2>/dev/null && { wait "$server" || status=$?; }
exit "$status"
