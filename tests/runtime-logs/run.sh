#!/usr/bin/env bash
# Runs `rdma-webhook verify` against the runtime-proof corpus (constructed NCCL logs with labels;
# docs/verify.md) from $RW_RUNTIME_LOGS_DIR, else ../shared/runtime-logs next to the repository.
# Without it the stage says so in one line and passes without running pytest.
# Extra arguments go to pytest, e.g. `tests/runtime-logs/run.sh -k nccl-1405`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}

if [ -n "${RW_RUNTIME_LOGS_DIR:-}" ]; then corpus=$RW_RUNTIME_LOGS_DIR shown=$RW_RUNTIME_LOGS_DIR
else corpus=$repo/../shared/runtime-logs shown=../shared/runtime-logs; fi
if [ ! -f "$corpus/labels.json" ] || [ ! -d "$corpus/logs" ]; then
  echo "runtime-logs: $shown not found, stage skipped"
  exit 0
fi
export RW_RUNTIME_LOGS_DIR=$(cd "$corpus" && pwd)
"$py" -c "import pytest" 2>/dev/null || "$py" -m pip install --quiet pytest 2>/dev/null || {
  echo "run.sh: cannot import or install pytest" >&2; exit 2; }

cd "$repo"
export RW_BINARY=${RW_BINARY:-build/rdma-webhook}
if [ ! -x "$RW_BINARY" ]; then
  echo "run.sh: $RW_BINARY is not an executable; build it or set RW_BINARY" >&2
  exit 2
fi
exec "$py" -m pytest "$here" -q -rfE -p no:cacheprovider "$@"
