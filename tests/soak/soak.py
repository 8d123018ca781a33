#!/usr/bin/env python3
"""Soak: `rdma-webhook serve` under steady load while its certificate and policy rotate.

    tests/soak/run.sh                    # 30 minutes (by hand)
    tests/soak/run.sh --minutes 5
    tests/soak/run.sh --ci               # about 60 s, asserts correctness only (the `soak` stage)

On 127.0.0.1 only: starts the server from $RW_BINARY (default build/rdma-webhook) with its
certificate in a Secret-like volume and its policy in a ConfigMap-like volume, measures the peak
request rate for a few seconds (closed loop), then loads it at half of that (open loop, fixed
rate, keep-alive connections that are reopened every ~2 s so new handshakes see the rotated
certificates) while the certificate rotates every 10 s and the policy every 5 s through
kubelet-style `..data` symlink swaps. The policy alternates between one that leaves everything
alone and one that mutates and denies, and every answer must carry the decision of the policy
its `policy-hash` names.

A failed request is a non-200, a TLS or transport error, an undecodable answer, a missing uid,
or a decision other than the expected one. Exit 1 when any request failed, a reload did not
happen or the server did not survive; the timing and memory figures are reported (with the load
average, as this machine is shared) and never fail the run.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import common
from common import log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="load duration (default 30)")
    ap.add_argument("--ci", action="store_true",
                    help="the CI version: 60 s of load, 5 s peak, correctness checks only")
    ap.add_argument("--peak-seconds", type=float, default=None, help="peak measurement (10 s)")
    ap.add_argument("--rate", type=float, default=None, help="skip the peak: load at this rate")
    ap.add_argument("--conns", type=int, default=8, help="keep-alive connections (8)")
    ap.add_argument("--cert-every", type=float, default=10.0)
    ap.add_argument("--policy-every", type=float, default=5.0)
    ap.add_argument("--json", type=Path, help="also write the report here as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, samples)")
    a = ap.parse_args()
    seconds = 60.0 if a.ci else a.minutes * 60
    peak_seconds = a.peak_seconds or (5.0 if a.ci else 10.0)

    return common.execute("soak", lambda work: run(a, work, seconds, peak_seconds), print_report,
                          a.json, a.keep)


def run(a, work, seconds, peak_seconds):
    client = common.build_client(work)
    certs = common.issue_certs(work, 4)
    ca = certs[0] / "ca.crt"
    secret = common.cert_volume(work, certs[0])
    policies = [work / "policy-a.yaml", work / "policy-b.yaml"]
    policies[0].write_text(common.POLICY_A)
    policies[1].write_text(common.POLICY_B)
    configmap = common.kubernetes_volume(work / "configmap", {"policy.yaml": policies[0]})
    rot = common.Rotator(secret, configmap, certs, policies, a.cert_every, a.policy_every)

    server = common.Server(work, secret, configmap / "policy.yaml", extra=["--log-level", "warn"])
    server.start()
    try:
        return soak(a, work, seconds, peak_seconds, client, certs, ca, rot, server)
    finally:
        if server.alive():
            server.stop()


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def soak(a, work, seconds, peak_seconds, client, certs, ca, rot, server):
    problems = []
    report = {"machine": machine(), "seconds": seconds, "binary": str(common.binary())}
    report["rss_kib_idle"] = server.rss_kib()
    addr = f"{common.HOST}:{server.port}"

    # The two policies' hashes, as the server names them in its answers.
    hash_a = common.policy_hash(server)
    rot.swap_policy()
    if not wait_for(lambda: common.policy_hash(server) != hash_a, 15):
        raise RuntimeError("the policy swap was not picked up within 15 s")
    hash_b = common.policy_hash(server)
    rot.swap_policy()
    if not wait_for(lambda: common.policy_hash(server) == hash_a, 15):
        raise RuntimeError("the swap back to the first policy was not picked up within 15 s")
    cases = work / "cases.json"
    common.write_cases(cases, hash_a, hash_b)
    report["policy_hashes"] = {"A": hash_a, "B": hash_b}
    base = server.metric_values()
    base_swaps = (rot.cert_swaps, rot.policy_swaps)

    # Peak: as fast as the connections go, for a few seconds.
    if a.rate:
        rate = a.rate
        report["peak"] = None
    else:
        log(f"peak: closed loop, {a.conns} connections, {peak_seconds:.0f} s")
        load_before = common.loadavg()
        peak = common.run_client(client, "load", "-addr", addr, "-ca", ca, "-cases", cases,
                                 "-rate", 0, "-conns", a.conns, "-duration", f"{peak_seconds}s",
                                 timeout=peak_seconds + 60)
        report["peak"] = {k: peak[k] for k in ("requests", "failed", "rate", "p50_ms", "p99_ms")}
        report["peak"]["loadavg_1m"] = [load_before, common.loadavg()]
        if peak["failed"]:
            problems.append(f"{peak['failed']} requests failed at peak: {peak['failures'][:3]}")
        rate = max(1.0, peak["rate"] / 2)
    report["rss_kib_after_peak"] = server.rss_kib()

    # Half of the peak, with rotations.
    per_conn = rate / a.conns
    reconnect = max(1, int(per_conn * 2))  # a new handshake every ~2 s per connection
    window = 60 if seconds >= 300 else 10
    log(f"load: {rate:.0f} req/s over {a.conns} connections (each reopened after {reconnect} "
        f"requests) for {seconds:.0f} s; certificate every {a.cert_every:g} s, policy every "
        f"{a.policy_every:g} s")
    load = common.start_client(client, work / "load.json", "load", "-addr", addr, "-ca", ca,
                               "-cases", cases, "-rate", f"{rate:.3f}", "-conns", a.conns,
                               "-duration", f"{seconds}s", "-reconnect", reconnect,
                               "-window", f"{window}s")
    began = time.monotonic()
    warm = min(60.0, seconds / 6)  # RSS "at start": once the load has run this long
    rss_series, load_series, fd_series = [], [], []
    rss_start = None
    next_sample = began
    last_note = began
    rot.start()
    while time.monotonic() - began < seconds:
        if not server.alive():
            problems.append("the server died during the load")
            break
        wait = rot.tick()
        now = time.monotonic()
        if now >= next_sample:
            t = round(now - began, 1)
            rss_series.append((t, server.rss_kib()))
            load_series.append((t, common.loadavg()))
            fd_series.append((t, server.open_fds()))
            if rss_start is None and now - began >= warm:
                rss_start = rss_series[-1][1]
            next_sample += 5
        if now - last_note >= 300:
            log(f"  {now - began:.0f} s: RSS {rss_series[-1][1]} KiB, load {load_series[-1][1]}")
            last_note = now
        time.sleep(max(0.0, min(wait, next_sample - time.monotonic(), 1.0)))
    summary = common.finish_client(load, timeout=120)
    swaps = (rot.cert_swaps - base_swaps[0], rot.policy_swaps - base_swaps[1])

    # After the last swap: the newest certificate is served, the server is healthy.
    alive = server.alive()
    newest = certs[rot.current_cert] / "tls.crt"
    served_newest = alive and wait_for(lambda: server.serves_newest(newest), 10)
    ready = alive and server.probe("/readyz")[0] == 200
    m = server.metric_values() if alive else {}
    rss_end = server.rss_kib() if alive else 0
    reloads = {}
    for what in ("tls", "policy"):
        for result in ("success", "failure"):
            key = f'rdma_webhook_reloads_total{{what="{what}",result="{result}"}}'
            reloads[f"{what}_{result}"] = int(m.get(key, 0) - base.get(key, 0))
    exit_code = server.stop()

    loads = [v for _, v in load_series]
    report.update({
        "rate_target": rate, "connections": a.conns, "reconnect_every": reconnect,
        "requests": summary["requests"], "failed": summary["failed"],
        "failure_classes": {k: v for k, v in summary["classes"].items() if k != "ok"},
        "failures": summary["failures"][:10], "dropped": summary["dropped"],
        "rate": summary["rate"], "p50_ms": summary["p50_ms"], "p99_ms": summary["p99_ms"],
        "max_ms": summary["max_ms"], "due_p99_ms": summary["due_p99_ms"],
        "handshakes": summary["handshakes"],
        "certificates_seen": len(summary["certificates_seen"]),
        "policy_hashes_seen": summary["policy_hashes_seen"],
        "swaps": {"certificate": swaps[0], "policy": swaps[1]}, "reloads": reloads,
        "rss_kib_start": rss_start, "rss_kib_end": rss_end,
        "rss_kib_max": max((v for _, v in rss_series), default=0),
        "rss_change_pct": (100.0 * (rss_end - rss_start) / rss_start) if rss_start else None,
        "open_fds_max": max((v for _, v in fd_series), default=0),
        "loadavg_1m": {"min": min(loads, default=0), "max": max(loads, default=0),
                       "mean": sum(loads) / len(loads) if loads else 0},
        "windows": summary["windows"], "served_newest_certificate": served_newest,
        "readyz_at_end": ready, "exit_code": exit_code,
        "rss_series": rss_series,
    })

    # Correctness: what fails the run.
    if summary["failed"]:
        problems.append(f"{summary['failed']} of {summary['requests']} requests failed: "
                        f"{report['failure_classes']}")
    if summary["requests"] < seconds:  # not a rate check: only that the load ran at all
        problems.append(f"only {summary['requests']} requests in {seconds:.0f} s")
    if not alive:
        problems.append("the server was not alive at the end")
    if not ready:
        problems.append("/readyz was not 200 at the end")
    if exit_code != 0:
        problems.append(f"the server exited {exit_code} on SIGTERM")
    if not served_newest:
        problems.append("the newest certificate was not served after the last swap")
    if reloads["tls_success"] < 1 or reloads["tls_success"] < swaps[0] // 2:
        problems.append(f"{reloads['tls_success']} certificate reloads for {swaps[0]} swaps")
    if reloads["policy_success"] < 1 or reloads["policy_success"] < swaps[1] // 2:
        problems.append(f"{reloads['policy_success']} policy reloads for {swaps[1]} swaps")
    if set(summary["policy_hashes_seen"]) != {hash_a, hash_b}:
        problems.append(f"answers named policies {sorted(summary['policy_hashes_seen'])}, "
                        "expected both")
    if len(summary["certificates_seen"]) < 2:
        problems.append("the client saw only one certificate: rotation never reached it")
    return report, problems


def machine():
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"cores": os.cpu_count(), "cpu": cpu, "loadavg_at_start": common.loadavg(),
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}


def print_report(r, problems):
    p = print
    mc = r["machine"]
    p(f"soak: {mc['date_utc']} UTC, {mc['cores']} cores ({mc['cpu']}), "
      f"load average {r['loadavg_1m']['min']:.1f}-{r['loadavg_1m']['max']:.1f} "
      f"(mean {r['loadavg_1m']['mean']:.1f}) during the load")
    if r.get("peak"):
        pk = r["peak"]
        p(f"  peak:       {pk['rate']:.0f} req/s closed loop ({pk['requests']} requests, "
          f"{pk['failed']} failed, p50 {pk['p50_ms']:.2f} ms, p99 {pk['p99_ms']:.2f} ms)")
    p(f"  load:       {r['rate_target']:.0f} req/s target, {r['rate']:.1f} req/s achieved, "
      f"{r['seconds']:.0f} s, {r['connections']} connections, {r['handshakes']} TLS handshakes, "
      f"{r['dropped']} not sent on time")
    p(f"  requests:   {r['requests']}, failed {r['failed']} {r['failure_classes'] or ''}")
    p(f"  latency:    p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, max {r['max_ms']:.1f} ms "
      f"(request sent to answer read); p99 from when it was due {r['due_p99_ms']:.2f} ms")
    p(f"  rotations:  {r['swaps']['certificate']} certificate swaps -> reloads "
      f"{r['reloads']['tls_success']} ok / {r['reloads']['tls_failure']} failed; "
      f"{r['swaps']['policy']} policy swaps -> {r['reloads']['policy_success']} ok / "
      f"{r['reloads']['policy_failure']} failed; {r['certificates_seen']} certificates seen by "
      f"the client; answers per policy {r['policy_hashes_seen']}")
    chg = r["rss_change_pct"]
    p(f"  RSS:        idle {r['rss_kib_idle']} KiB, start of load {r['rss_kib_start']} KiB, "
      f"end {r['rss_kib_end']} KiB ({'n/a' if chg is None else f'{chg:+.1f} %'}), "
      f"max {r['rss_kib_max']} KiB; open descriptors max {r['open_fds_max']}")
    for w in r["windows"]:
        p(f"    {w['from_s']:>5.0f} s  {w['requests']:>7} req  {w['failed']:>3} failed  "
          f"p50 {w['p50_ms']:6.2f} ms  p99 {w['p99_ms']:7.2f} ms  (due p99 {w['due_p99_ms']:.2f})")
    for f in r["failures"]:
        p(f"    failure: {f}")
    p(f"  end:        served the newest certificate: {r['served_newest_certificate']}, "
      f"/readyz 200: {r['readyz_at_end']}, exit code on SIGTERM: {r['exit_code']}")
    if problems:
        for x in problems:
            p(f"soak: FAILED: {x}")
    else:
        p("soak: passed (0 failed requests, reloads seen, server alive)")


if __name__ == "__main__":
    sys.exit(main())
