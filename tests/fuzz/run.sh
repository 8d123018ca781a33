#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz/ (clang, ASan + UBSan) and runs each for a bounded
# time from its seed corpus, replaying tests/fuzz/regressions/<target>/ first. Fails on any crash,
# leak, timeout or broken invariant; the input that did it is left in build-fuzz/artifacts/.
#
#   tests/fuzz/run.sh                      # every target, FUZZ_SECONDS (default 20) each; verify
#                                          # a quarter of it (its seeds are already broad)
#   FUZZ_SECONDS=600 tests/fuzz/run.sh yaml  # a longer run of one target
#   FUZZ_JOBS=2 ...                        # parallel libFuzzer workers per target (default 1)
#   FUZZ_NO_BUILD=1 ...                    # skip the build (several runs side by side)
#   FUZZ_RUNS=1 ...                        # reproducible: fixed seed and run counts (CI=true sets it)
#
# Under CI a run must not fail by chance on a path nobody has seen: it replays a fixed seed for a
# fixed number of inputs per target, from the repository's corpus only (a fresh working corpus),
# so a stage that passed here passes there. Exploring is for the longer runs by hand.
#
# New inputs libFuzzer finds go to build-fuzz/corpus/<target>/ (kept between runs, never into the
# repository). Summary lines: "fuzz <target>: <execs> execs in <s>s (<execs/s>/s), <cov> edges"
# (execs and exec/s as libFuzzer counts them, the initial corpus included; the time is wall clock).
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$REPO/tests/fuzz"
BUILD="${FUZZ_BUILD_DIR:-$REPO/build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-20}"
[ "${CI:-}" = true ] && FUZZ_RUNS="${FUZZ_RUNS:-1}"
runs_of() {  # about 20 s of each target on this 2-core machine
  case "$1" in
    webhook) echo 25000 ;; yaml) echo 40000 ;; policy) echo 120000 ;; nccl) echo 300000 ;;
    mutate) echo 20000 ;; http) echo 30000 ;; verify) echo 500 ;;
  esac
}
seconds_of() {  # verify gets a short bound, so the stage takes about as long as before it
  case "$1" in verify) echo $(((SECONDS_EACH + 3) / 4)) ;; *) echo "$SECONDS_EACH" ;; esac
}
CXX="${FUZZ_CXX:-clang++-16}"
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(webhook yaml policy nccl mutate http verify)

if [ -z "${FUZZ_NO_BUILD:-}" ]; then  # FUZZ_NO_BUILD=1: run what build-fuzz holds (parallel runs)
  command -v "$CXX" >/dev/null || { echo "fuzz: $CXX not found (scripts/setup.sh --test)" >&2; exit 1; }
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$REPO" -B "$BUILD" -G Ninja -DRW_FUZZ=ON -DRW_BUILD_TESTS=OFF \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null &&
    cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target fuzz || { echo "fuzz: build failed" >&2; exit 1; }
fi

dict_of() {  # the dictionary of a target
  case "$1" in
    webhook | mutate) echo "$HERE/dict/json.dict" ;;
    yaml) echo "$HERE/dict/yaml.dict" ;;
    policy) cat "$HERE/dict/yaml.dict" "$HERE/dict/policy.dict" >"$BUILD/policy.dict" && echo "$BUILD/policy.dict" ;;
    nccl) echo "$HERE/dict/nccl.dict" ;;
    http) echo "$HERE/dict/http.dict" ;;
    verify) echo "$HERE/dict/verify.dict" ;;
  esac
}

failed=()
for t in "${TARGETS[@]}"; do
  bin="$BUILD/tests/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: unknown target '$t'" >&2; failed+=("$t"); continue; }
  work="$BUILD/corpus/$t" artifacts="$BUILD/artifacts/$t"
  bound=(-max_total_time="$(seconds_of "$t")")
  if [ -n "${FUZZ_RUNS:-}" ]; then
    work="$BUILD/corpus-ci/$t"
    rm -rf "$work"
    bound=(-seed="${FUZZ_SEED:-20261201}" -runs="$(runs_of "$t")" -max_total_time=300)
  fi
  mkdir -p "$work" "$artifacts" "$HERE/regressions/$t"
  log="$BUILD/fuzz-$t.log" started=$SECONDS
  # The first directory receives new inputs; the seeds and the regressions are only read.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$bin" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict="$(dict_of "$t")" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    ${FUZZ_JOBS:+-fork="$FUZZ_JOBS" -ignore_crashes=0} \
    "$work" "$HERE/corpus/$t" "$HERE/regressions/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "fuzz $t: ${execs:-?} execs in $((SECONDS - started))s (${secs:-?}/s), ${cov:-?} edges, rc $rc" >&2
  if ((rc != 0)); then
    failed+=("$t")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz invariant broken|.*runtime error)' "$log" | head -5 >&2
    grep -m1 -E '^(artifact_prefix|Test unit written to)' "$log" >&2
    echo "fuzz $t: full log in $log" >&2
  fi
done
((${#failed[@]} == 0)) || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
