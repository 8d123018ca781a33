#!/usr/bin/env python3
"""Inclusive cost per function of a `perf record -g` profile, from `perf script` stacks, with
C++ names cut short (template arguments and parameter lists dropped) and each function counted
once per sample (recursion does not inflate it). Optionally only the samples under FOCUS (a
substring of a short name), as shares of FOCUS.

  perf script -i perf.data -F ip,sym > stacks.txt
  bench/perf_inclusive.py stacks.txt [--focus NAME] [--min PERCENT] [--limit N] [--us US_PER_REQ]

--us: the measured CPU per request; prints each share also as microseconds per request.
"""
import argparse
import re
from collections import Counter


def short(name):
    out, depth = [], 0
    for ch in name:  # drop <...> and (...) contents
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).replace("nlohmann::json_abi_v3_11_2::", "nlohmann::")
    s = s.replace("std::__cxx11::", "std::").replace(" const", "").replace(" [clone .cold]", "")
    s = re.sub(r"\s+\[clone[^\]]*\]", "", s)
    s = s.replace("(inlined)", "").replace("rw::server::::Server::", "Server::")
    return s.strip()


def samples(path):
    stack = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if stack:
                    yield stack
                stack = []
                continue
            parts = line.strip().split(" ", 1)
            if len(parts) == 2 and re.fullmatch(r"[0-9a-f]+", parts[0]):
                stack.append(short(parts[1]))
    if stack:
        yield stack


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stacks")
    ap.add_argument("--focus")
    ap.add_argument("--min", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--us", type=float)
    a = ap.parse_args()
    total, counts = 0, Counter()
    for st in samples(a.stacks):
        if a.focus:
            idx = [i for i, fn in enumerate(st) if a.focus in fn]
            if not idx:
                continue
            st = st[: max(idx) + 1]  # the focus frame (outermost) and what it called
        total += 1
        for fn in set(st):
            counts[fn] += 1
    scale = a.us
    if a.focus and a.us is None:
        scale = None
    print(f"{total} samples{' under ' + a.focus if a.focus else ''}")
    print(f"{'incl %':>7}{'  us/req' if scale else ''}  function")
    for fn, n in counts.most_common():
        pct = 100.0 * n / total
        if pct < a.min:
            break
        us = f"  {pct * scale / 100:6.1f}" if scale else ""
        print(f"{pct:7.1f}{us}  {fn[:140]}")
        a.limit -= 1
        if a.limit == 0:
            break


if __name__ == "__main__":
    main()
