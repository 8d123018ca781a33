#!/usr/bin/env bash
# `rdma-webhook verify` on a generated big log (bench/make_nccl_log.py): MB/s and peak RSS
# (GNU time). Not run in CI; see bench/README.md for the figures.
#   bench/verify_big_log.sh [SIZE_MB=1024] [LOG=/tmp/rw-verify-big.log]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
size=${1:-1024}
log=${2:-/tmp/rw-verify-big.log}
bin=${RW_BINARY:-$repo/build/rdma-webhook}
[ -f "$log" ] && [ "$(stat -c %s "$log")" -ge $((size * 1024 * 1024)) ] ||
  python3 "$here/make_nccl_log.py" "$log" "$size"
bytes=$(stat -c %s "$log")
cat "$log" >/dev/null  # into the page cache: measure the reader, not the disk
out=$(mktemp)
/usr/bin/time -f "%e %M" -o "$out.time" "$bin" verify -o json "$log" >"$out" || true
read -r secs rss_kb <"$out.time"
python3 - "$out" "$bytes" "$secs" "$rss_kb" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mb = int(sys.argv[2]) / 1e6
secs, rss = float(sys.argv[3]), int(sys.argv[4])
print(f"{mb:.0f} MB, {d['read']['lines']} lines, {len(d['processes'])} processes "
      f"(capped: {d['read']['processesCapped']}): {secs:.1f} s = {mb / secs:.0f} MB/s, "
      f"peak RSS {rss / 1024:.1f} MiB; verdict {d['outcome']} / {d['interNode']}")
PY
rm -f "$out" "$out.time"
