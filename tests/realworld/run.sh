#!/usr/bin/env bash
# Runs the realworld corpus suite (labelled public manifests; docs/cli.md) against $RW_BINARY
# (default: build/rdma-webhook, relative to the repository root). The corpus is
# $RW_REALWORLD_DIR, else ../shared/realworld next to the repository; without it the stage says
# so in one line and passes without running pytest.
# Extra arguments go to pytest, e.g. `tests/realworld/run.sh -k coreweave -x` or
# `-k "22-gke and rw-sriov"` (pytest's -k cannot take the `#` of an id; its words can).
# For a one-line-per-document overview use tests/realworld/report.py instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}

if [ -n "${RW_REALWORLD_DIR:-}" ]; then corpus=$RW_REALWORLD_DIR shown=$RW_REALWORLD_DIR
else corpus=$repo/../shared/realworld shown=../shared/realworld; fi
if [ ! -f "$corpus/labels.json" ] || [ ! -d "$corpus/manifests" ]; then
  echo "realworld: $shown not found, stage skipped"
  exit 0
fi
export RW_REALWORLD_DIR=$(cd "$corpus" && pwd)

need() {  # need <module> <pip package>
  "$py" -c "import $1" 2>/dev/null && return 0
  "$py" -m pip install --quiet "$2" 2>/dev/null && return 0
  echo "run.sh: cannot import or install $2" >&2
  exit 2
}
need pytest pytest
need yaml PyYAML
need jsonpatch jsonpatch

cd "$repo"
export RW_BINARY=${RW_BINARY:-build/rdma-webhook}
if [ ! -x "$RW_BINARY" ]; then
  echo "run.sh: $RW_BINARY is not an executable; build it or set RW_BINARY" >&2
  exit 2
fi
exec "$py" -m pytest "$here" -q -rfE -p no:cacheprovider "$@"
