#!/usr/bin/env bash
# perf profile of `rdma-webhook serve` under wrk load: the inclusive share of each function
# (bench/perf_inclusive.py), whole server and under Webhook::Handle. Needs perf (Debian
# package linux-perf) and wrk. Writes perf.data and the stacks into OUT_DIR (default: a temp
# dir under .cache/profile, kept).
#
#   bench/profile.sh [BODY=pod-3k] [ENDPOINT=mutate] [SECONDS=10]
#   env: RW_BINARY (default build/rdma-webhook), OUT_DIR, CONNECTIONS (default 16)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
body=${1:-pod-3k}
endpoint=${2:-mutate}
secs=${3:-10}
bin=${RW_BINARY:-$repo/build/rdma-webhook}
conns=${CONNECTIONS:-16}
out=${OUT_DIR:-$repo/.cache/profile/$body-$endpoint}
for tool in perf wrk; do command -v $tool >/dev/null || { echo "profile: $tool not found" >&2; exit 2; }; done
mkdir -p "$out"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; true; }
trap cleanup EXIT

bash "$repo/certs/gen-certs.sh" "$out/certs" >/dev/null 2>&1
python3 "$here/make_reviews.py" "$out/bodies" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
probe=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --tls-cert "$out/certs/tls.crt" --tls-key "$out/certs/tls.key" \
  --listen "127.0.0.1:$port" --probe-listen "127.0.0.1:$probe" --threads 1 --log-level warn \
  2>"$out/server.log" &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$probe/readyz" >/dev/null && break; sleep 0.1; done

args=(-- "$out/bodies/$body.json")
[ "$endpoint" = healthz ] && args=()
wrk -t1 -c"$conns" -d"$((secs + 4))s" -s "$here/review.lua" "https://127.0.0.1:$port/$endpoint" "${args[@]}" \
  >"$out/wrk.txt" &
wrk_pid=$!
sleep 2
t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
perf record -q -F 1999 --call-graph dwarf,16384 -p "$pid" -o "$out/perf.data" -- sleep "$secs" 2>/dev/null
t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
wait "$wrk_pid"
perf script -i "$out/perf.data" -F ip,sym 2>/dev/null | c++filt >"$out/stacks.txt"
noise='boost::asio::detail|boost::beast::detail|handler_invoke|std::__invoke|_Function_handler|async_result|async_initiate|composed_op|std::function|allocator|std::_Rb_tree|std::_Construct|decltype|std::less|std::char_traits|std::__uninit|std::uninit|adl_serializer|from_json|to_json|std::construct_at|std::destroy_at'
echo "== $body /$endpoint: whole server (CPU during perf: $(( (t1 - t0) * 1000 / $(getconf CLK_TCK) )) ms; perf slows the server)"
python3 "$here/perf_inclusive.py" "$out/stacks.txt" --min 2 --limit 400 | grep -Ev "$noise" | awk 'NR <= 60'
if [ "$endpoint" != healthz ]; then
  echo "== under Webhook::Handle"
  python3 "$here/perf_inclusive.py" "$out/stacks.txt" --focus rw::admission::Webhook::Handle \
    --min 2 --limit 400 | grep -Ev "$noise" | awk 'NR <= 50'
fi
echo "(files in $out)"
