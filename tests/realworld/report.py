#!/usr/bin/env python3
"""One line per labelled document of the realworld corpus: expected vs actual, OK or DIFF.

    tests/realworld/report.py               # labels, per-file checks, mutation outcomes, counts
    tests/realworld/report.py --diff        # only what differs
    tests/realworld/report.py -v -k 22-gke  # details of the documents whose key contains 22-gke
    tests/realworld/report.py --no-mutate   # labels only (fastest)

Judges exactly as the pytest stage does (rwlib.py), but runs the binary in parallel and prints
one line per document. Binary: $RW_BINARY (default build/rdma-webhook); corpus:
$RW_REALWORLD_DIR, else ../shared/realworld. Exit 0 when everything matches, 1 otherwise, 2 when
there is no corpus or no binary.

Line formats:
  OK|DIFF <file>#<i>  <expected: path rdma=… E[errors] W[warnings], ?x = optional>  <actual>
  OK|DIFF <file>#<i>  <ns>:<expected outcome>[=OK | !(<what was seen>)] ...   (mutation)
"""
import argparse
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rwlib  # noqa: E402


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `report.py | head` ends quietly
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", action="append", default=[], metavar="SUBSTR",
                    help="only keys containing SUBSTR (repeatable: any of them)")
    ap.add_argument("--diff", action="store_true", help="print only lines that differ")
    ap.add_argument("-v", "--verbose", action="store_true", help="print why each DIFF differs")
    ap.add_argument("--no-mutate", action="store_true", help="skip the mutation outcomes")
    ap.add_argument("-j", "--jobs", type=int, default=max(2, os.cpu_count() or 2))
    a = ap.parse_args()

    root, shown = rwlib.corpus_dir()
    if root is None:
        print(f"realworld: {shown} not found")
        return 2
    if not rwlib.binary().exists():
        print(f"realworld: binary {rwlib.binary()} not found (build it, or set RW_BINARY)")
        return 2
    os.environ["RW_REALWORLD_DIR"] = str(root)
    c = rwlib.Corpus(root)

    def wanted(key):
        return not a.k or any(s in key for s in a.k)

    labels = [k for k in c.label_keys() if wanted(k)]
    cases = [] if a.no_mutate else [x for x in c.mutation_cases() if wanted(x[0])]
    files = [f for f in c.files() if not a.k or any(s in f for s in a.k)]
    namespaces = sorted({ns for _, ns, _ in cases})

    def quiet(fn, *args):
        try:
            return fn(*args)
        except rwlib.RunError:
            return None  # judged (and reported) below

    with ThreadPoolExecutor(a.jobs) as pool:
        # Every first-level run in parallel; the judges below then only hit the cache.
        jobs = [pool.submit(quiet, c.label_check, f) for f in files]
        jobs += [pool.submit(quiet, c.check, f, c.default_policy) for f in files]
        for f in files:
            for ns in namespaces:
                jobs += [pool.submit(quiet, c.mutate_patch, f, ns),
                         pool.submit(quiet, c.check, f, c.modes_policy, ns)]
        for j in jobs:
            j.result()
        label_v = list(pool.map(lambda k: rwlib.judge_label(c, k), labels))
        mut_v = list(pool.map(lambda x: rwlib.judge_mutation(c, *x), cases))
        doc_p = list(pool.map(lambda f: rwlib.judge_documents(c, f), files))
        same_p = list(pool.map(lambda f: rwlib.judge_same_as_embedded(c, f), files))
        try:
            pv = rwlib.run(("policy", "validate", rwlib.LABEL_POLICY, rwlib.MODES_POLICY),
                           cwd=str(root))
            validate_ok, validate_msg = pv.rc == 0, (pv.err or pv.out).strip()[:300]
        except rwlib.RunError as e:
            validate_ok, validate_msg = False, str(e)[:300]

    w = max([len(k) for k in labels] + [len(k) for k, _, _ in cases] + [10])
    ew = min(60, max([len(rwlib.expected_str(c.labels[k])) for k in labels] + [10]))
    try:
        version = " ".join(rwlib.run(("version",)).out.split())
    except rwlib.RunError:
        version = "version unknown"
    print(f"realworld {root}  binary {rwlib.binary()} ({version})")
    print(f"-- check -o json, embedded default policy, namespace default "
          f"(expected  ->  actual)")
    for k, v in zip(labels, label_v):
        if a.diff and v.ok:
            continue
        print(f"{'OK' if v.ok else 'DIFF':4} {k:<{w}}  "
              f"{rwlib.expected_str(c.labels[k]):<{ew}} -> {v.actual}")
        if a.verbose and not v.ok:
            for p in v.problems:
                print(f"{'':5}- {p}")
            print(f"{'':5}why: {c.labels[k].get('why', '')}")

    for f, probs in zip(files, doc_p):
        for p in probs:
            print(f"DIFF {f:<{w}}  documents: {p.splitlines()[0]}")
    for f, probs in zip(files, same_p):
        for p in probs:
            print(f"DIFF {f:<{w}}  --policy {rwlib.LABEL_POLICY} vs embedded: "
                  f"{p.splitlines()[0]}")
    if not validate_ok:
        print(f"DIFF policy validate {rwlib.LABEL_POLICY} {rwlib.MODES_POLICY}: {validate_msg}")

    mut_ok = sum(v.ok for v in mut_v)
    if cases:
        print(f"-- mutate -o patch --policy {rwlib.MODES_POLICY} --namespace NS "
              f"(NS:expected, ! = differs: what was seen)")
        by_key = {}
        for (k, ns, spec), v in zip(cases, mut_v):
            by_key.setdefault(k, []).append((ns, spec, v))
        for k, items in by_key.items():
            ok = all(v.ok for _, _, v in items)
            if a.diff and ok:
                continue
            toks = []
            for ns, spec, v in items:
                exp = "|".join(rwlib.outcomes_of(spec))
                toks.append(f"{ns}:{exp}" if v.ok else f"{ns}:{exp}!({v.actual})")
            print(f"{'OK' if ok else 'DIFF':4} {k:<{w}}  " + "  ".join(toks))
            if a.verbose:
                for ns, spec, v in items:
                    if not v.ok:
                        for p in v.problems:
                            print(f"{'':5}- {ns} {p.splitlines()[0]}")
                        print(f"{'':5}  why: {spec.get('why', '')}")

    lab_ok = sum(v.ok for v in label_v)
    doc_ok = sum(not p for p in doc_p)
    same_ok = sum(not p for p in same_p)
    summary = (f"labels {lab_ok}/{len(labels)} OK, documents {doc_ok}/{len(files)} files OK, "
               f"policy file: validate {'OK' if validate_ok else 'DIFF'}, same as embedded "
               f"{same_ok}/{len(files)} files")
    if cases:
        summary += f", mutation {mut_ok}/{len(cases)} OK"
    print(summary)
    all_ok = (lab_ok == len(labels) and doc_ok == len(files) and same_ok == len(files)
              and validate_ok and mut_ok == len(cases))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
