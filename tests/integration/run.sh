#!/usr/bin/env bash
# Runs the server integration suite against the real binary on 127.0.0.1:
# $RW_BINARY (default build/rdma-webhook, relative to the repository root).
# Extra arguments go to pytest, e.g. `tests/integration/run.sh -k reload -x`.
# RW_SOAK=1 adds the long soak variants (minutes); CI leaves them out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
for m in pytest yaml; do
  "$py" -c "import $m" 2>/dev/null || { echo "run.sh: python module $m is missing" >&2; exit 2; }
done
for tool in openssl; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done
cd "$repo"
export RW_BINARY=${RW_BINARY:-build/rdma-webhook}
if [ ! -x "$RW_BINARY" ]; then
  echo "run.sh: $RW_BINARY is not an executable; build it or set RW_BINARY" >&2
  exit 2
fi
# 500 idle connections plus the load clients need descriptors.
ulimit -n 4096 2>/dev/null || true
exec "$py" -m pytest "$here" -q -rfE -p no:cacheprovider "$@"
