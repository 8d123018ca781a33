#!/usr/bin/env python3
"""Connection flood: slowloris and idle TLS connections against a server with few descriptors,
while real reviews keep flowing.

    tests/soak/run.sh flood                       # 500 slowloris + 2000 idle, 60 s, ulimit -n 1024
    tests/soak/run.sh flood --seconds 30 --nofile 1024 --slowloris 500 --idle 2000

On 127.0.0.1 only. Starts `rdma-webhook serve` ($RW_BINARY, default build/rdma-webhook) with its
descriptor limit lowered to --nofile (as `ulimit -n`), and with `--max-connections` when its
`serve --help` lists that flag (--max-connections here, default: the limit less 128 for files,
reloads and the probe port). Real reviews flow all along from two clients: one over keep-alive
connections opened before the flood (as an API server holds them) and one opening a new TLS
connection for every review. After --before seconds the flood starts: slowloris connections (TLS,
then a request head one byte a second) and idle TLS connections (handshake, then nothing); each
one the server closes is reopened at once, until --seconds end. Then: how long until a review on
a new connection is answered again, and --after seconds more of real reviews.

Reports per phase (before, flood, after) the real reviews' p50/p99 and failures, what the flood
achieved (connections held at most, closed by the server, refused), the server's descriptors,
memory and "accept failed" log lines, and the connection metrics when the server has them.
Exit 1 when the server died or did not answer a new connection within 30 s of the flood's end;
latency targets (p99 < 5 ms) are reported, never enforced: this machine is shared.
"""
import argparse
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import common
from common import log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="flood duration (60)")
    ap.add_argument("--before", type=float, default=10.0, help="real reviews before the flood (10)")
    ap.add_argument("--after", type=float, default=20.0, help="real reviews after recovery (20)")
    ap.add_argument("--nofile", type=int, default=1024, help="the server's ulimit -n (1024)")
    ap.add_argument("--slowloris", type=int, default=500)
    ap.add_argument("--idle", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=50.0,
                    help="real reviews per second over keep-alive connections (50)")
    ap.add_argument("--fresh-rate", type=float, default=5.0,
                    help="real reviews per second, each on a new connection (5)")
    ap.add_argument("--max-connections", type=int, default=None,
                    help="passed to serve when it knows the flag (default nofile - 128)")
    ap.add_argument("--json", type=Path, help="also write the report here as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    return common.execute("flood", lambda work: run(a, work), print_report, a.json, a.keep)


def serve_flags():
    r = subprocess.run([str(common.binary()), "serve", "--help"], capture_output=True, text=True)
    return r.stdout + r.stderr


def run(a, work):
    client = common.build_client(work)
    certs = common.gen_certs(work / "certs")
    ca = certs / "ca.crt"
    policy = work / "policy.yaml"
    policy.write_text(common.POLICY_B)
    extra = ["--log-level", "warn"]
    max_conn = None
    if "--max-connections" in serve_flags():
        max_conn = a.max_connections or max(16, a.nofile - 128)
        extra += ["--max-connections", str(max_conn)]
    server = common.Server(work, certs, policy, extra=extra, nofile=a.nofile).start()
    try:
        return flood(a, work, client, ca, server, max_conn)
    finally:
        if server.alive():
            server.stop()


def flood(a, work, client, ca, server, max_conn):
    problems = []
    addr = f"{common.HOST}:{server.port}"
    h = common.policy_hash(server)
    cases = work / "cases.json"
    common.write_cases(cases, "no-policy-a-here", h)  # policy B only: no rotation here
    total = a.before + a.seconds + 30 + a.after  # the clients outlast the recovery wait
    keep = common.start_client(client, work / "keepalive.json", "load", "-addr", addr, "-ca", ca,
                               "-cases", cases, "-rate", a.rate, "-conns", 4,
                               "-duration", f"{total}s", "-samples", work / "keepalive.csv")
    fresh = common.start_client(client, work / "fresh.json", "load", "-addr", addr, "-ca", ca,
                                "-cases", cases, "-rate", a.fresh_rate, "-conns", 8,
                                "-reconnect", 1, "-duration", f"{total}s",
                                "-samples", work / "fresh.csv")
    series = []  # (t, fds, rss KiB, load average, open-connections metric or None)
    stop = threading.Event()
    t0 = time.time()

    def sample():
        while not stop.is_set() and server.alive():
            try:
                m = server.metric_values()
            except OSError:
                m = {}
            series.append((round(time.time() - t0, 1), server.open_fds(), server.rss_kib(),
                           common.loadavg(), m.get("rdma_webhook_open_connections")))
            stop.wait(1.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rss_before = server.rss_kib()
    time.sleep(a.before)
    log(f"flood: {a.slowloris} slowloris + {a.idle} idle TLS connections for {a.seconds:.0f} s "
        f"against ulimit -n {a.nofile}" + (f", --max-connections {max_conn}" if max_conn else ""))
    flood_start = time.time()
    fl = common.run_client(client, "flood", "-addr", addr, "-ca", ca, "-slowloris", a.slowloris,
                           "-idle", a.idle, "-duration", f"{a.seconds}s",
                           timeout=a.seconds + 120)
    flood_end = time.time()
    rss_flood_end = server.rss_kib() if server.alive() else 0

    # Recovery: the first review answered on a new connection after the flood's end.
    recovered = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.alive():
        try:
            status, _, _ = server.request("POST", "/validate",
                                          common.review_cases()[2]["body"], timeout=2)
            if status == 200:
                recovered = time.time() - flood_end
                break
        except OSError:
            pass
        time.sleep(0.1)
    log(f"recovery: {'none within 30 s' if recovered is None else f'{recovered:.2f} s'}; "
        f"{a.after:.0f} s more of real reviews")
    after_start = time.time()
    time.sleep(a.after)
    after_end = time.time()
    stop.set()
    sampler.join(timeout=5)
    alive = server.alive()
    metrics = server.metric_values() if alive else {}
    ready = alive and server.probe("/readyz")[0] == 200
    rss_end = server.rss_kib() if alive else 0
    # The clients run out their time; the phases are cut from their samples.
    ka, fr = common.finish_client(keep, timeout=total + 120), common.finish_client(fresh, timeout=total + 120)
    exit_code = server.stop()

    phases = {"before": (t0, flood_start), "flood": (flood_start, flood_end),
              "after": (after_start, after_end)}
    real = {}
    for name, summary, csv in (("keepalive", ka, work / "keepalive.csv"),
                               ("fresh", fr, work / "fresh.csv")):
        rows = common.read_samples(csv)
        real[name] = {}
        for phase, (p0, p1) in phases.items():
            sel = [r for r in rows if p0 <= summary["start_unix"] + r[0] < p1]
            lat = [r[2] for r in sel if r[3] == "ok"]
            due = [r[1] for r in sel if r[3] == "ok"]
            classes = Counter(r[3] for r in sel if r[3] != "ok")
            real[name][phase] = {"requests": len(sel), "failed": len(sel) - len(lat),
                                 "failure_classes": dict(classes),
                                 "p50_ms": common.percentile(lat, 50) / 1000,
                                 "p99_ms": common.percentile(lat, 99) / 1000,
                                 "max_ms": max(lat, default=0) / 1000,
                                 "due_p99_ms": common.percentile(due, 99) / 1000}
        real[name]["failures"] = summary["failures"][:5]
        real[name]["not_sent_on_time"] = summary["dropped"]
    accept_errors = Counter(l.get("error", "") for l in server.log_lines()
                            if l.get("msg") == "accept failed")
    in_flood = [s for s in series if flood_start - t0 <= s[0] <= flood_end - t0]
    report = {
        "machine": {"cores": os.cpu_count(), "date_utc": time.strftime("%Y-%m-%d %H:%M:%S",
                                                                      time.gmtime(t0))},
        "nofile": a.nofile, "max_connections": max_conn, "slowloris": a.slowloris,
        "idle": a.idle, "flood_seconds": round(flood_end - flood_start, 1),
        "rate": a.rate, "fresh_rate": a.fresh_rate,
        "flood": {k: fl[k] for k in ("slowloris", "idle")},
        "real": real, "recovered_after_s": recovered,
        "server": {
            "alive": alive, "readyz_at_end": ready, "exit_code": exit_code,
            "fds_max": max((s[1] for s in series), default=0),
            "fds_max_during_flood": max((s[1] for s in in_flood), default=0),
            "rss_kib": {"before": rss_before, "flood_end": rss_flood_end, "end": rss_end},
            "accept_failed_log_lines": dict(accept_errors),
            "open_connections_max": max((s[4] for s in series if s[4] is not None),
                                        default=None),
            "connections_refused_total": metrics.get("rdma_webhook_connections_refused_total"),
        },
        "loadavg_1m": {"min": min((s[3] for s in series), default=0),
                       "max": max((s[3] for s in series), default=0)},
        "timeline": series,
    }
    if not alive:
        problems.append("the server died")
    if recovered is None:
        problems.append("no review on a new connection was answered within 30 s of the flood")
    if alive and not ready:
        problems.append("/readyz was not 200 at the end")
    if real["keepalive"]["after"]["failed"] or real["fresh"]["after"]["failed"]:
        problems.append("reviews failed after the recovery")
    return report, problems


def print_report(r, problems):
    p = print
    s = r["server"]
    p(f"flood: {r['machine']['date_utc']} UTC, {r['machine']['cores']} cores, load average "
      f"{r['loadavg_1m']['min']:.1f}-{r['loadavg_1m']['max']:.1f}; server ulimit -n {r['nofile']}, "
      f"--max-connections {r['max_connections'] or '(not in this binary)'}")
    for kind in ("slowloris", "idle"):
        f = r["flood"][kind]
        want = r[kind]
        p(f"  {kind:9}   {want} wanted: at most {f['max_open']} held at once, "
          f"{f['open_at_end_of_flood']} at the end; {f['handshakes']} handshakes, "
          f"{f['closed_by_server']} closed by the server (held p50 {f['held_s_p50']:.1f} s), "
          f"{f['tls_failed']} TLS handshakes failed, {f['dial_failed']} connects failed")
    for name, label in (("keepalive", f"keep-alive reviews ({r['rate']:g}/s)"),
                        ("fresh", f"new-connection reviews ({r['fresh_rate']:g}/s)")):
        p(f"  {label}:")
        for phase in ("before", "flood", "after"):
            x = r["real"][name][phase]
            p(f"    {phase:7} {x['requests']:>6} req {x['failed']:>5} failed  "
              f"p50 {x['p50_ms']:7.2f} ms  p99 {x['p99_ms']:8.2f} ms  max {x['max_ms']:8.1f} ms"
              + (f"  {x['failure_classes']}" if x["failure_classes"] else ""))
    p(f"  (requests the clients could not send on time, all phases: keep-alive "
      f"{r['real']['keepalive']['not_sent_on_time']}, new-connection "
      f"{r['real']['fresh']['not_sent_on_time']})")
    rec = r["recovered_after_s"]
    p(f"  recovery:   a review on a new connection answered "
      f"{'never (30 s)' if rec is None else f'{rec:.2f} s'} after the flood ended")
    p(f"  server:     alive {s['alive']}, /readyz {s['readyz_at_end']}, exit {s['exit_code']}; "
      f"descriptors max {s['fds_max']}; RSS {s['rss_kib']['before']} -> "
      f"{s['rss_kib']['flood_end']} -> {s['rss_kib']['end']} KiB")
    p(f"              'accept failed' log lines: {s['accept_failed_log_lines'] or 0}")
    if s["open_connections_max"] is not None or s["connections_refused_total"] is not None:
        p(f"              open connections max {s['open_connections_max']}, refused "
          f"{s['connections_refused_total']}")
    for x in problems:
        p(f"flood: FAILED: {x}")
    if not problems:
        p("flood: passed (the server survived and accepts again)")


if __name__ == "__main__":
    sys.exit(main())
