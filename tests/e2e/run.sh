#!/usr/bin/env bash
# End-to-end tests of rdma-webhook against a real kube-apiserver.
#
#   tests/e2e/run.sh                       # every scenario
#   tests/e2e/run.sh -run TestWebhookDown  # one scenario (any `go test` flags)
#   tests/e2e/run.sh --self-test           # check the harness with cmd/fakewebhook,
#                                          # a test double, instead of the real server
#
# Environment:
#   RW_BINARY       the rdma-webhook binary (default: the newest build*/rdma-webhook)
#   HELM            helm binary (default: scripts/install-helm.sh builds one)
#   E2E_ARTIFACTS   keep the run's logs, certs and kubeconfig under this dir
#   E2E_HELM_VALUES extra values files for `helm template`, comma separated
#   CI=true or E2E_REQUIRE_SERVER=1: a missing server binary fails instead of skipping
#
# 1. Builds the control plane (embedded etcd + kube-apiserver from the
#    k8s.io/kubernetes Go module, see cmd/controlplane) into
#    $REPO/.cache/e2e-bin, skipped when its sources did not change.
# 2. Runs the Go test scenarios; each starts from one shared control plane
#    and the real rdma-webhook server.
# 3. Ends with "N passed, N failed, N skipped" and exits non-zero on failure.
set -uo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$E2E_DIR/../.." && pwd)"
BIN_DIR="$REPO/.cache/e2e-bin"
mkdir -p "$BIN_DIR"

log() { echo "e2e: $*" >&2; }

# ---- 1. the control plane, built once --------------------------------------
# scripts/dev-control-plane.sh builds it (and runs it for trying the chart by hand), stamped with
# a hash of go.mod, go.sum and its sources, so an unchanged tree never rebuilds.
if ! CP="$("$REPO/scripts/dev-control-plane.sh" build)"; then
  log "control plane build FAILED"
  echo "0 passed, 1 failed"
  exit 1
fi
export E2E_CONTROLPLANE="$CP"

# ---- helm (for the chart's objects) ----------------------------------------
if [ -z "${HELM:-}" ]; then
  if HELM="$("$REPO/scripts/install-helm.sh" | tail -n1)" && [ -x "$HELM" ]; then
    export HELM
  else
    log "WARNING: helm could not be installed: chart scenarios will be skipped"
    unset HELM
  fi
fi

# ---- the server binary -----------------------------------------------------
if [ "${1:-}" = "--self-test" ]; then
  shift
  log "SELF-TEST: using the test double cmd/fakewebhook, NOT the real rdma-webhook"
  (cd "$E2E_DIR" && go build -buildvcs=false -o "$BIN_DIR/fakewebhook" ./cmd/fakewebhook) || exit 1
  RW_BINARY="$BIN_DIR/fakewebhook"
fi
if [ -z "${RW_BINARY:-}" ]; then
  RW_BINARY="$(ls -t "$REPO"/build*/rdma-webhook 2>/dev/null | head -n1 || true)"
fi
if [ -n "${RW_BINARY:-}" ] && [ -x "$RW_BINARY" ]; then
  export RW_BINARY
  log "server binary: $RW_BINARY"
else
  log "SKIPPING the scenarios that need the server: no rdma-webhook binary (RW_BINARY='${RW_BINARY:-}')."
  log "Build it (cmake --build build --target rdma-webhook) or set RW_BINARY; the control-plane scenarios still run."
  export RW_BINARY="${RW_BINARY:-}"
fi

# ---- 2. the scenarios ------------------------------------------------------
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
t0=$(date +%s)
(cd "$E2E_DIR" && go test -count=1 -v -timeout 40m . "$@") 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
log "scenarios ran in $(( $(date +%s) - t0 ))s"

# ---- 3. summary (top-level scenarios) --------------------------------------
passed=$(grep -c '^--- PASS: ' "$out" || true)
failed=$(grep -c '^--- FAIL: ' "$out" || true)
skipped=$(grep -c '^--- SKIP: ' "$out" || true)
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # setup failed or the test binary crashed: count it
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit "$rc"
