#!/usr/bin/env bash
# The soak (tests/soak/soak.py) and the connection flood (tests/soak/flood.py) against the real
# binary on 127.0.0.1: $RW_BINARY (default build/rdma-webhook). Needs python3 (pytest and yaml,
# as the integration suite whose helpers it reuses), go and openssl.
#
#   tests/soak/run.sh                 # the soak, 30 minutes
#   tests/soak/run.sh --minutes 5     # shorter
#   tests/soak/run.sh --ci            # about 60 s, correctness only (the `soak` stage)
#   tests/soak/run.sh flood [--seconds 60] [--nofile 1024]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
for m in pytest yaml; do
  "$py" -c "import $m" 2>/dev/null || { echo "soak: python module $m is missing" >&2; exit 2; }
done
for tool in go openssl; do
  command -v "$tool" >/dev/null || { echo "soak: $tool not found" >&2; exit 2; }
done
cd "$repo"
export RW_BINARY=${RW_BINARY:-build/rdma-webhook}
[ -x "$RW_BINARY" ] || { echo "soak: $RW_BINARY is not an executable; build it or set RW_BINARY" >&2; exit 2; }
# The flood's client holds 2500 connections and more.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
script=soak.py
if [ "${1:-}" = flood ]; then script=flood.py; shift; fi
exec "$py" "$here/$script" "$@"
