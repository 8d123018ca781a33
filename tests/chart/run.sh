#!/usr/bin/env bash
# Chart, plain-manifest, certificate-script and Dockerfile tests.
#
#   tests/chart/run.sh                       # everything
#   tests/chart/run.sh -k certs              # only tests whose name contains "certs"
#   tests/chart/run.sh --render-matrix DIR   # render every values case to DIR
#
# For the end-to-end API-server check (tests/e2e), render the matrix and
# validate it against a real kube-apiserver:
#   tests/chart/run.sh --render-matrix out/chart-matrix
#   kubectl create namespace rdma-system
#   kubectl apply --dry-run=server -f out/chart-matrix/<case>.yaml   # each non-.crd.yaml file
# (<case>.crd.yaml holds cert-manager / ServiceMonitor objects: only where
# those CRDs are installed.) The shell function rw_chart_validate_server
# below does exactly that; source this file with RW_CHART_LIB=1 to get it.
#
# Environment: RW_BINARY (default build/rdma-webhook) enables the tests that
# run `rdma-webhook policy validate` / `check`; without the binary they are
# skipped with a message, except under CI=true, where they fail. RW_SKIP_KVALIDATE=1 skips building the offline
# schema validator.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# rw_chart_validate_server DIR: kubectl apply --dry-run=server every rendered case.
rw_chart_validate_server() {
  local dir="$1" f rc=0
  kubectl get namespace rdma-system >/dev/null 2>&1 || kubectl create namespace rdma-system >/dev/null
  for f in "$dir"/*.yaml; do
    case "$f" in *.crd.yaml) continue ;; esac
    if kubectl apply --dry-run=server -f "$f" >/dev/null; then
      echo "ok   server dry-run $(basename "$f")"
    else
      echo "FAIL server dry-run $(basename "$f")"; rc=1
    fi
  done
  return $rc
}
if [ "${RW_CHART_LIB:-0}" = 1 ]; then return 0 2>/dev/null || exit 0; fi

HELM="$("$REPO/scripts/install-helm.sh" | tail -n1)"
export HELM

if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "installing PyYAML" >&2
  python3 -m pip install --quiet PyYAML >&2 || python3 -m pip install --quiet --break-system-packages PyYAML >&2
fi

# Offline validation of every rendered object against the Kubernetes API
# types (strict decoding into k8s.io/api structs: unknown fields, wrong
# types). Built once into .cache/bin with the Go toolchain.
if [ "${RW_SKIP_KVALIDATE:-0}" != 1 ] && [ -z "${RW_KVALIDATE:-}" ]; then
  KV="$REPO/.cache/bin/rw-kvalidate"
  src="$REPO/tests/chart/kvalidate"
  stamp="$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | sha256sum | cut -c1-16)"
  if [ ! -x "$KV" ] || [ "$(cat "$KV.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "building $KV (first run only)" >&2
    (cd "$src" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false nice -n 10 go build -trimpath -o "$KV" .) >&2
    echo "$stamp" > "$KV.stamp"
  fi
  export RW_KVALIDATE="$KV"
fi

exec python3 "$REPO/tests/chart/test_chart.py" "$@"
