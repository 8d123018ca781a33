#!/usr/bin/env bash
# Load benchmark of `rdma-webhook serve` with wrk: requests/s, p50/p99 latency and server CPU
# per request for a ~3 KB Pod, a ~10 KB Job and a ~30 KB PyTorchJob review on /mutate and
# /validate. Prints the median of RUNS runs per case. Not part of CI (numbers, not verdicts).
#
#   bench/run.sh [RUNS=5] [SECONDS=10]
#   env: RW_BINARY (default build/rdma-webhook), THREADS (server, default 1),
#        CONNECTIONS (default 16), WRK_THREADS (default 1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
runs=${1:-5}
secs=${2:-10}
bin=${RW_BINARY:-$repo/build/rdma-webhook}
threads=${THREADS:-1}
conns=${CONNECTIONS:-16}
wrk_threads=${WRK_THREADS:-1}
command -v wrk >/dev/null || { echo "bench: wrk not found" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench: $bin is not executable (build it or set RW_BINARY)" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if [ -x "$repo/certs/gen-certs.sh" ] || [ -f "$repo/certs/gen-certs.sh" ]; then
  bash "$repo/certs/gen-certs.sh" "$work/certs" >/dev/null 2>&1
else
  mkdir -p "$work/certs"
  openssl req -x509 -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 1 \
    -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/certs/tls.key" -out "$work/certs/tls.crt" 2>/dev/null
fi
python3 "$here/make_reviews.py" "$work/bodies" >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
probe=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" \
  --listen "127.0.0.1:$port" --probe-listen "127.0.0.1:$probe" --threads "$threads" \
  --log-level warn 2>"$work/server.log" &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$probe/readyz" >/dev/null && break; sleep 0.1; done

clk=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "server: --threads $threads; wrk: -t$wrk_threads -c$conns -d${secs}s; median of $runs runs"
printf '%-16s %-9s %10s %10s %10s %14s\n' case endpoint "req/s" "p50 ms" "p99 ms" "CPU us/req"
for body in pod-3k job-10k pytorchjob-30k; do
  for endpoint in mutate validate; do
    : >"$work/rps"; : >"$work/p50"; : >"$work/p99"; : >"$work/cpu"
    for _ in $(seq "$runs"); do
      before=$(cpu_ticks)
      out=$(wrk -t"$wrk_threads" -c"$conns" -d"${secs}s" -s "$here/review.lua" \
        "https://127.0.0.1:$port/$endpoint" -- "$work/bodies/$body.json")
      after=$(cpu_ticks)
      line=$(grep '^RESULT' <<<"$out")
      eval "$(sed 's/^RESULT //' <<<"$line")"  # requests duration_us p50_us p99_us errors non2xx
      if [ "$errors" != 0 ] || [ "$non2xx" != 0 ]; then
        echo "bench: $body $endpoint: $errors socket errors, $non2xx non-2xx answers" >&2
      fi
      awk -v r="$requests" -v d="$duration_us" 'BEGIN {printf "%.0f\n", r / (d / 1e6)}' >>"$work/rps"
      awk -v v="$p50_us" 'BEGIN {printf "%.3f\n", v / 1000}' >>"$work/p50"
      awk -v v="$p99_us" 'BEGIN {printf "%.3f\n", v / 1000}' >>"$work/p99"
      awk -v t="$((after - before))" -v k="$clk" -v r="$requests" \
        'BEGIN {printf "%.1f\n", t / k * 1e6 / r}' >>"$work/cpu"
    done
    printf '%-16s %-9s %10s %10s %10s %14s\n' "$body" "$endpoint" "$(median <"$work/rps")" \
      "$(median <"$work/p50")" "$(median <"$work/p99")" "$(median <"$work/cpu")"
  done
done
