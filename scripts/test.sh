#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, checks formatting, builds with
# warnings as errors, runs the unit tests (GoogleTest via ctest), the CLI contract suite, the
# realworld corpus suite (labelled public manifests; one line and a pass when ../shared/realworld
# is absent), the runtime-proof corpus suite (`verify` against ../shared/runtime-logs, the same
# way), the server integration suite, the end-to-end suite against a real kube-apiserver,
# the chart suite, the container image (built with umoci + skopeo from the static binary in
# build-static/, then inspected and run), the release artefacts (tests/release/run.sh: built
# twice from the same build-static/ and compared, checked, pushed to and pulled from a registry on
# 127.0.0.1; no cross build), the unit tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer, the libFuzzer targets for a bounded time each
# (tests/fuzz/run.sh; clang-16), and a one-minute soak of the server under certificate and policy
# rotation (tests/soak/run.sh --ci; asserts correctness only, never timing).
#
#   scripts/test.sh                 # everything
#   scripts/test.sh unit cli        # only these stages (names below)
#
# Every stage runs even when an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
ALL=(format build unit cli realworld runtime-logs integration e2e chart image release sanitizers fuzz soak)
STAGES=("$@")
((${#STAGES[@]})) || STAGES=("${ALL[@]}")
export RW_BINARY="$REPO/build/rdma-webhook"
# kubectl that scripts/setup.sh built when the machine has none (after the system's).
export PATH="$PATH:$REPO/.cache/bin"

passed=() failed=()
# Each stage's output is also kept in .cache/stages/<name>.log: a CI that shows only the end of
# the run still shows why a stage failed (the tail of each failed stage is printed last).
STAGE_LOGS="$REPO/.cache/stages"
mkdir -p "$STAGE_LOGS"
stage() {  # stage NAME COMMAND...
  local name=$1 start=$SECONDS rc
  shift
  echo "===== $name =====" >&2
  "$@" 2>&1 | tee "$STAGE_LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  if ((rc == 0)); then passed+=("$name"); else failed+=("$name"); fi
  echo "===== $name: $((SECONDS - start))s =====" >&2
}

format_check() {
  local files
  mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^tests/e2e/')
  clang-format --dry-run --Werror "${files[@]}"
}
# ctest prints two lines per test; keep what fails (with its output) and the summary.
quiet_ctest() {  # quiet_ctest BUILD_DIR TIMEOUT
  local log rc=0
  log=$(mktemp)
  ctest --test-dir "$1" --output-on-failure -j "$(nproc)" --timeout "$2" >"$log" 2>&1 || rc=$?
  grep -vE '^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed +[0-9.]+ sec$' "$log"
  rm -f "$log"
  return "$rc"
}
unit() { quiet_ctest build 300; }
sanitizers() {
  BUILD_DIR="$REPO/build-asan" scripts/build.sh -DRW_SANITIZE=ON -DRW_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      quiet_ctest build-asan 600 &&
    RW_BINARY="$REPO/build-asan/rdma-webhook" ASAN_OPTIONS=detect_leaks=1 \
      tests/cli/run.sh -k "not fuzz"
}

scripts/setup.sh --test || { echo "setup failed" >&2; exit 1; }
for s in "${STAGES[@]}"; do
  case "$s" in
    format) stage format format_check ;;
    build) stage build scripts/build.sh -DRW_BUILD_TESTS=ON -DRW_SANITIZE=OFF ;;
    unit) stage unit unit ;;
    cli) stage cli tests/cli/run.sh ;;
    realworld) stage realworld tests/realworld/run.sh ;;
    runtime-logs) stage runtime-logs tests/runtime-logs/run.sh ;;
    integration) stage integration tests/integration/run.sh ;;
    e2e) stage e2e tests/e2e/run.sh ;;
    chart) stage chart tests/chart/run.sh ;;
    image) stage image tests/image/run.sh ;;
    release) stage release tests/release/run.sh ;;
    sanitizers) stage sanitizers sanitizers ;;
    # Fixed seed and run counts whether or not the CI sets CI=true: a submission must not fail
    # on a path explored by chance (exploring is tests/fuzz/run.sh by hand).
    fuzz) FUZZ_RUNS=1 stage fuzz tests/fuzz/run.sh ;;
    soak) stage soak tests/soak/run.sh --ci ;;
    *) echo "unknown stage '$s' (stages: ${ALL[*]})" >&2; exit 2 ;;
  esac
done
for s in "${failed[@]}"; do
  echo "----- $s failed; the end of its output ($STAGE_LOGS/$s.log) -----" >&2
  tail -n 25 "$STAGE_LOGS/$s.log" >&2
done
echo "passed stages: ${passed[*]:-none}" >&2
echo "failed stages: ${failed[*]:-none}" >&2
echo "stages: ${#passed[@]} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
