#!/usr/bin/env bash
# Load benchmark of `rdma-webhook serve` beside its yardsticks, in one run with interleaved
# rounds (so a machine shared with other work loads every side alike):
#   - rdma-webhook's own `GET /healthz` (its TLS + HTTP cost without a review),
#   - rdma-webhook `/mutate` and `/validate` with a ~3 KB Pod, ~10 KB Job, ~30 KB PyTorchJob,
#   - the controller-runtime peer's `/mutate` (../shared/peers/controller-runtime-webhook, Go),
#   - nginx answering a static 200 over TLS (the TLS + HTTP floor),
# all on 127.0.0.1, wrk -t1 -c16 keep-alive TLS, servers on one thread. Prints per case the
# median over RUNS rounds of req/s, p50, p99 and server CPU µs per request (user + system from
# /proc/PID/stat ÷ requests completed), then the ratios, p99 at half of the peak req/s (a fixed
# rate from bench/ratecli, built with Go into .cache/), RSS and time to ready. Not part of CI: it measures, it does not judge.
#
#   bench/run.sh [RUNS=3] [SECONDS=5]         # the default run takes about 4 minutes
#   bench/run.sh --rss [REVIEWS=1000000]      # RSS of rdma-webhook while it serves REVIEWS
#   env: RW_BINARY (default build/rdma-webhook), PEER_BINARY (default
#        .cache/peer/crwebhook, built with Go >= 1.26 from PEER_DIR when missing; PEER=0 skips
#        the peer), PEER_DIR (default ../shared/peers/controller-runtime-webhook beside the
#        repository), NGINX=0 skips nginx, CONNECTIONS (default 16), READY_RUNS (default 10),
#        BASELINE (another rdma-webhook binary, e.g. the previous main's: its /mutate and
#        /validate join the same interleaved rounds and the ratios say new / baseline)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mode=table
if [ "${1:-}" = --rss ]; then
  mode=rss
  rss_reviews=${2:-1000000}
else
  runs=${1:-3}
  secs=${2:-5}
fi
bin=${RW_BINARY:-$repo/build/rdma-webhook}
conns=${CONNECTIONS:-16}
peer_bin=${PEER_BINARY:-$repo/.cache/peer/crwebhook}
peer_dir=${PEER_DIR:-$(cd "$repo/.." && pwd)/shared/peers/controller-runtime-webhook}
bodies=(pod-3k job-10k pytorchjob-30k)
command -v wrk >/dev/null || { echo "bench: wrk not found" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench: $bin is not executable (build it or set RW_BINARY)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do { kill "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

bash "$repo/certs/gen-certs.sh" "$work/certs" >/dev/null 2>&1
python3 "$here/make_reviews.py" "$work/bodies" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_tls() {  # until the TLS port answers (any HTTP status)
  for _ in $(seq 200); do
    curl -sk -o /dev/null "https://127.0.0.1:$1/" && return 0
    sleep 0.05
  done
  return 1
}
clk=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ---- servers ---------------------------------------------------------------------------------
# serve BINARY PORT PROBE LOG: one rdma-webhook on one thread, until /readyz answers; its pid in
# $served_pid.
serve() {
  "$1" serve --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" \
    --listen "127.0.0.1:$2" --probe-listen "127.0.0.1:$3" --threads 1 --log-level warn 2>"$4" &
  served_pid=$!
  pids+=("$served_pid")
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$3/readyz" >/dev/null && break; sleep 0.1; done
}
rw_port=$(free_port)
rw_probe=$(free_port)
serve "$bin" "$rw_port" "$rw_probe" "$work/rw.log"
rw_pid=$served_pid

# The previous build, served alike, so "no worse than the previous main" is measured in one run.
base_pid=
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "bench: BASELINE $BASELINE is not executable" >&2; exit 2; }
  base_port=$(free_port)
  base_probe=$(free_port)
  serve "$BASELINE" "$base_port" "$base_probe" "$work/base.log"
  base_pid=$served_pid
fi

# wrk -s review.lua URL [BODY] against PID; prints "requests duration_us p50_us p99_us
# cpu_us_per_request" (errors and non-2xx answers reported on stderr).
measure() {
  local label=$1 pid=$2 url=$3 body=${4:-} d=${5:-$secs}
  local args=()
  [ -n "$body" ] && args=(-- "$body")
  local before after out
  before=$(cpu_ticks "$pid")
  out=$(wrk -t1 -c"$conns" -d"${d}s" -s "$here/review.lua" "$url" "${args[@]}" | grep '^RESULT')
  after=$(cpu_ticks "$pid")
  local requests duration_us p50_us p99_us errors non2xx
  eval "$(sed 's/^RESULT //' <<<"$out")"
  if [ "$errors" != 0 ] || [ "$non2xx" != 0 ]; then
    echo "bench: $label: $errors socket errors, $non2xx non-2xx answers" >&2
  fi
  echo "$requests $duration_us $p50_us $p99_us $(awk -v t="$((after - before))" -v k="$clk" \
    -v r="$requests" 'BEGIN {printf "%.1f", r ? t / k * 1e6 / r : 0}')"
}

if [ "$mode" = rss ]; then
  echo "rdma-webhook RSS while serving $rss_reviews reviews (mutate and validate, all bodies)"
  echo "start: $(rss_mb "$rw_pid") MB"
  total=0
  while [ "$total" -lt "$rss_reviews" ]; do
    for body in "${bodies[@]}"; do
      for endpoint in mutate validate; do
        read -r n _ <<<"$(measure "$body $endpoint" "$rw_pid" \
          "https://127.0.0.1:$rw_port/$endpoint" "$work/bodies/$body.json" 10)"
        total=$((total + n))
      done
    done
    echo "after $total reviews: $(rss_mb "$rw_pid") MB"
  done
  exit 0
fi

peer_pid=
if [ "${PEER:-1}" != 0 ]; then
  if [ ! -x "$peer_bin" ] && command -v go >/dev/null && [ -d "$peer_dir" ]; then
    echo "bench: building the controller-runtime peer into $peer_bin (minutes when cold)" >&2
    mkdir -p "$(dirname "$peer_bin")"
    (cd "$peer_dir" && GOFLAGS=-mod=mod nice go build -o "$peer_bin" .) >"$work/peer-build.log" 2>&1 ||
      { echo "bench: peer build failed: $(tail -1 "$work/peer-build.log")" >&2; rm -f "$peer_bin"; }
  fi
  if [ -x "$peer_bin" ]; then
    peer_port=$(free_port)
    GOMAXPROCS=1 "$peer_bin" --cert-dir "$work/certs" --port "$peer_port" >"$work/peer.log" 2>&1 &
    peer_pid=$!
    pids+=("$peer_pid")
    wait_tls "$peer_port" || { echo "bench: peer did not start: $(tail -1 "$work/peer.log")" >&2; peer_pid=; }
  fi
  [ -n "$peer_pid" ] || echo "peer: SKIPPED (no binary at $peer_bin and it could not be built with Go >= 1.26 from $peer_dir)"
else
  echo "peer: skipped (PEER=0)"
fi

nginx_pid=
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ "${NGINX:-1}" != 0 ] && [ -x "$nginx_bin" ]; then
  nginx_port=$(free_port)
  mkdir -p "$work/nginx/logs"
  cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port ssl;
    ssl_certificate $work/certs/tls.crt;
    ssl_certificate_key $work/certs/tls.key;
    location / { default_type text/plain; return 200 "ok\n"; }
  }
}
EOF
  "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/logs/error.log" &
  nginx_pid=$!
  pids+=("$nginx_pid")
  wait_tls "$nginx_port" || { echo "bench: nginx did not start" >&2; nginx_pid=; }
fi
[ -n "$nginx_pid" ] || echo "nginx: SKIPPED (NGINX=0 or no nginx binary; Debian package nginx)"

# ---- interleaved rounds ----------------------------------------------------------------------
cases=("healthz")
[ -n "$nginx_pid" ] && cases+=("nginx")
for body in "${bodies[@]}"; do
  cases+=("rw-mutate-$body")
  [ -n "$base_pid" ] && cases+=("base-mutate-$body")
  [ -n "$peer_pid" ] && cases+=("peer-mutate-$body")
  cases+=("rw-validate-$body")
  [ -n "$base_pid" ] && cases+=("base-validate-$body")
done
run_case() {  # appends one round's figures of case $1 to $work/res/$1
  local c=$1 pid url body=
  case $c in
    healthz) pid=$rw_pid url=https://127.0.0.1:$rw_port/healthz ;;
    nginx) pid=$nginx_pid url=https://127.0.0.1:$nginx_port/ ;;
    rw-*) pid=$rw_pid; local ep=${c#rw-}; ep=${ep%%-*}; url=https://127.0.0.1:$rw_port/$ep ;;
    base-*) pid=$base_pid; local ep=${c#base-}; ep=${ep%%-*}; url=https://127.0.0.1:$base_port/$ep ;;
    peer-*) pid=$peer_pid url=https://127.0.0.1:$peer_port/mutate ;;
  esac
  case $c in *-pod-3k | *-job-10k | *-pytorchjob-30k) body=$work/bodies/${c#*-*-}.json ;; esac
  measure "$c" "$pid" "$url" "$body" >>"$work/res/$c"
}
mkdir -p "$work/res"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $load_start"
echo "servers: one thread each; wrk -t1 -c$conns -d${secs}s keep-alive TLS; $runs interleaved rounds of ${#cases[@]} cases; medians"
for r in $(seq "$runs"); do
  for c in "${cases[@]}"; do run_case "$c"; done
  echo "  round $r/$runs done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

col() { awk -v i="$2" '{print $i}' "$work/res/$1" | median; }
rps() { awk '{printf "%.0f\n", $1 / ($2 / 1e6)}' "$work/res/$1" | median; }
ms() { awk -v i="$2" '{printf "%.2f\n", $i / 1000}' "$work/res/$1" | median; }
echo
printf '%-42s %9s %8s %8s %11s\n' case "req/s" "p50 ms" "p99 ms" "CPU us/req"
label() {
  case $1 in
    healthz) echo "rdma-webhook GET /healthz" ;;
    nginx) echo "nginx static 200 (TLS floor)" ;;
    rw-*) local r=${1#rw-}; echo "rdma-webhook ${r%%-*} ${r#*-}" ;;
    base-*) local r=${1#base-}; echo "baseline ${r%%-*} ${r#*-}" ;;
    peer-*) echo "controller-runtime mutate ${1#peer-mutate-}" ;;
  esac
}
for c in "${cases[@]}"; do
  printf '%-42s %9s %8s %8s %11s\n' "$(label "$c")" "$(rps "$c")" "$(ms "$c" 3)" "$(ms "$c" 4)" "$(col "$c" 5)"
done

hz=$(col healthz 5)
echo
echo "ratios (CPU per request, medians of this run):"
printf '%-16s %22s %24s %22s %16s\n' body "rw mutate / healthz" "rw validate / healthz" "peer / rw mutate" "nginx us/req"
for body in "${bodies[@]}"; do
  m=$(col "rw-mutate-$body" 5)
  v=$(col "rw-validate-$body" 5)
  p=-
  [ -n "$peer_pid" ] && p=$(awk -v a="$(col "peer-mutate-$body" 5)" -v b="$m" 'BEGIN {printf "%.2fx", a / b}')
  printf '%-16s %22s %24s %22s %16s\n' "$body" \
    "$(awk -v a="$m" -v b="$hz" 'BEGIN {printf "%.1fx", a / b}')" \
    "$(awk -v a="$v" -v b="$hz" 'BEGIN {printf "%.1fx", a / b}')" "$p" \
    "$([ -n "$nginx_pid" ] && col nginx 5 || echo -)"
done

if [ -n "$base_pid" ]; then
  echo
  echo "against the baseline $BASELINE (CPU per request, this build / baseline; below 1 is cheaper):"
  printf '%-16s %16s %18s\n' body "mutate" "validate"
  for body in "${bodies[@]}"; do
    printf '%-16s %16s %18s\n' "$body" \
      "$(awk -v a="$(col "rw-mutate-$body" 5)" -v b="$(col "base-mutate-$body" 5)" 'BEGIN {printf "%.2fx", a / b}')" \
      "$(awk -v a="$(col "rw-validate-$body" 5)" -v b="$(col "base-validate-$body" 5)" 'BEGIN {printf "%.2fx", a / b}')"
  done
fi

# ---- p99 at half of the peak req/s: an open-loop client at a fixed rate ------------------------
# wrk has no rate limit; bench/ratecli (Go, standard library) sends at a fixed rate and measures
# latency from when each request was due. Without Go: wrk with 2 connections, said so.
ratecli=$repo/.cache/ratecli
if [ ! -x "$ratecli" ] && command -v go >/dev/null; then
  (cd "$here/ratecli" && nice go build -o "$ratecli" main.go) >"$work/ratecli-build.log" 2>&1 || rm -f "$ratecli"
fi
echo
if [ -x "$ratecli" ]; then
  echo "latency at half of the peak req/s (peak = the median above; open loop, up to $conns connections):"
else
  echo "latency with wrk -c2 (no fixed-rate client: Go missing), NOT at half of the peak:"
fi
printf '%-42s %9s %9s %8s %8s %11s\n' case "target/s" "req/s" "p50 ms" "p99 ms" "CPU us/req"
for body in "${bodies[@]}"; do
  for c in "rw-mutate-$body" ${peer_pid:+"peer-mutate-$body"}; do
    target=$(($(rps "$c") / 2))
    pid=$rw_pid url=https://127.0.0.1:$rw_port/mutate
    [[ $c == peer-* ]] && pid=$peer_pid url=https://127.0.0.1:$peer_port/mutate
    before=$(cpu_ticks "$pid")
    if [ -x "$ratecli" ]; then
      out=$("$ratecli" -url "$url" -body "$work/bodies/$body.json" -rate "$target" -d "${secs}s" -c "$conns")
    else
      target=-
      out=$(wrk -t1 -c2 -d"${secs}s" -s "$here/review.lua" "$url" -- "$work/bodies/$body.json")
    fi
    after=$(cpu_ticks "$pid")
    eval "$(grep '^RESULT' <<<"$out" | sed 's/^RESULT //')"
    [ "$errors" = 0 ] && [ "$non2xx" = 0 ] || echo "bench: $c: $errors errors, $non2xx non-2xx" >&2
    printf '%-42s %9s %9.0f %8.2f %8.2f %11.1f\n' "$(label "$c")" "$target" \
      "$(awk -v n="$requests" -v d="$duration_us" 'BEGIN {print n / (d / 1e6)}')" \
      "$(awk -v v="$p50_us" 'BEGIN {print v / 1000}')" "$(awk -v v="$p99_us" 'BEGIN {print v / 1000}')" \
      "$(awk -v t="$((after - before))" -v k="$clk" -v r="$requests" 'BEGIN {print r ? t / k * 1e6 / r : 0}')"
  done
done

# ---- memory and start-up -----------------------------------------------------------------------
served=$(cat "$work"/res/rw-* | awk '{n += $1} END {print n}')
echo
echo "RSS: rdma-webhook $(rss_mb "$rw_pid") MB after $served reviews (+ healthz);" \
  "${peer_pid:+peer $(rss_mb "$peer_pid") MB; }${nginx_pid:+nginx $(rss_mb "$nginx_pid") MB}" \
  "(a million reviews: bench/run.sh --rss)"
python3 - "$bin" "$work/certs" "${READY_RUNS:-10}" <<'EOF'
# Time to ready: spawn -> first 200 on /readyz, polled every 0.2 ms; median of N starts.
import http.client, socket, statistics, subprocess, sys, time
binary, certs, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def free():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
times = []
for _ in range(n):
    port, probe = free(), free()
    t0 = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--tls-cert", f"{certs}/tls.crt", "--tls-key",
                             f"{certs}/tls.key", "--listen", f"127.0.0.1:{port}",
                             "--probe-listen", f"127.0.0.1:{probe}", "--threads", "1",
                             "--log-level", "warn"], stderr=subprocess.DEVNULL)
    while time.perf_counter() - t0 < 10:
        try:
            c = http.client.HTTPConnection("127.0.0.1", probe, timeout=1)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.0002)
    times.append((time.perf_counter() - t0) * 1000)
    proc.terminate(); proc.wait()
print(f"time to ready (spawn -> 200 on /readyz): median {statistics.median(times):.1f} ms, "
      f"min {min(times):.1f}, max {max(times):.1f} over {n} starts")
EOF
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) (at start: $load_start)"
