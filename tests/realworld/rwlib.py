"""The realworld corpus and how to judge the binary against it.

Shared by the pytest suite (test_realworld.py) and the quick report (report.py). The corpus is
`$RW_REALWORLD_DIR`, else `<repo>/../shared/realworld`; its README.md says what the labels and
the mutation outcomes mean, and this module implements exactly that reading:

- labels.json: `<file>#<index>` -> the expected `check -o json` result under the embedded default
  policy in namespace `default` (path, rdma, the exact sets of error and warning rule ids, with
  optional_errors/optional_warnings, alternatives in `accept`, `unreadable_ok`);
- mutate-expect.json: `<file>#<index>` -> namespace -> the expected outcome of
  `mutate -o patch --policy policy-v2-modes.yaml --namespace <ns>`.

The binary is only talked to through argv, stdout, stderr and the exit code. Every run is cached,
so a file is checked once however many labels it has.
"""
import copy
import fnmatch
import functools
import json
import os
import re
import resource
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

import yaml

try:
    import jsonpatch
except ImportError:  # run.sh installs it; without it every patch "does not apply"
    jsonpatch = None

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = "../shared/realworld"  # relative to the repository root, as README/run.sh say it

LABEL_POLICY = "policy-v2-default.yaml"
MODES_POLICY = "policy-v2-modes.yaml"
OUTCOMES = ("mutated-clean", "unchanged", "conflict", "own-rails", "other-path")
MULTUS_KEY = "k8s.v1.cni.cncf.io/networks"
GKE_KEY = "networking.gke.io/interfaces"


def corpus_dir():
    """(path, how it was given); the path is None when no corpus is there."""
    given = os.environ.get("RW_REALWORLD_DIR") or ""
    shown = given or DEFAULT_CORPUS
    p = Path(given) if given else REPO.parent / "shared" / "realworld"
    if not p.is_absolute():
        p = (Path.cwd() / p) if given else p
    ok = (p / "labels.json").is_file() and (p / "manifests").is_dir()
    return (p.resolve() if ok else None), shown


# ---------------------------------------------------------------------------------------------
# Running the binary


def binary():
    b = Path(os.environ.get("RW_BINARY", "build/rdma-webhook"))
    return b if b.is_absolute() else REPO / b


def _sanitized():
    if "ASAN_OPTIONS" in os.environ:
        return True
    try:
        with open(binary(), "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


SANITIZED = _sanitized()
MEM_LIMIT_MB = 0 if SANITIZED else int(os.environ.get("RW_TEST_MEM_LIMIT_MB", "4096"))
TIMEOUT = 60 * (4 if SANITIZED else 1)


def _limit_memory():
    if MEM_LIMIT_MB > 0:
        limit = MEM_LIMIT_MB << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class RunError(Exception):
    """The binary hung, died of a signal, or printed what the contract does not allow."""


class Run:
    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def cmd(self):
        return "rdma-webhook " + " ".join(map(str, self.args))

    def __repr__(self):
        return (f"{self.cmd()}\n-> rc={self.rc}\n--- stdout ---\n{self.out[:3000]}\n"
                f"--- stderr ---\n{self.err[:3000]}")


@functools.lru_cache(maxsize=None)
def run(args, cwd=None):
    """Runs the binary once per distinct (args, cwd); hangs and signal deaths raise RunError."""
    b = binary()
    if not b.exists():
        raise RunError(f"binary {b} not found (build it, or set RW_BINARY)")
    try:
        p = subprocess.run([str(b), *map(str, args)], capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=cwd, preexec_fn=_limit_memory, errors="replace")
    except subprocess.TimeoutExpired:
        raise RunError(f"rdma-webhook {' '.join(map(str, args))} hung for {TIMEOUT}s") from None
    r = Run(args, p.returncode, p.stdout, p.stderr)
    if r.rc < 0:
        raise RunError(f"killed by signal {signal.Signals(-r.rc).name}:\n{r!r}")
    return r


def doc_index(source, file=None):
    """The document index of a `source` (`f.yaml#3`, `f.yaml#0/items/2`, `f.yaml#1:14`), or None.

    With `file`, only sources of that file (the source as given ends with it) count."""
    if not isinstance(source, str) or "#" not in source:
        return None
    head, tail = source.rsplit("#", 1)
    if file is not None and not (head == file or head.endswith("/" + file)):
        return None
    m = re.match(r"(\d+)", tail)
    return int(m.group(1)) if m else None


def names_document(text, file, index):
    """True when `text` names the file and the document (`f.yaml#2`, or the file and `document 2`)."""
    if not text:
        return False
    if re.search(re.escape(file) + r"#" + str(index) + r"(?!\d)", text):
        return True
    return file in text and re.search(r"document\D{0,3}" + str(index) + r"(?!\d)", text) is not None


class CheckOut:
    """`check -o json` of one file: results and unreadable documents by document index."""

    def __init__(self, r, file):
        self.run, self.file, self.rc = r, file, r.rc
        self.problem = None
        self.data = None
        self.results = {}  # index -> [result, ...] (several only for List items)
        self.errors = {}  # index -> [errors entry, ...]
        self.stray = []  # results whose source names no document of this file
        if not r.out.strip():
            self.problem = f"check printed nothing on stdout (rc={r.rc})"
            return
        try:
            self.data = json.loads(r.out)
        except ValueError as e:
            self.problem = f"check -o json printed no JSON document ({e})"
            return
        if not isinstance(self.data, dict) or not isinstance(self.data.get("results"), list):
            self.problem = "check -o json has no `results` list"
            return
        for res in self.data["results"]:
            i = doc_index(res.get("source") if isinstance(res, dict) else None, file)
            if i is None:
                self.stray.append(res)
            else:
                self.results.setdefault(i, []).append(res)
        for e in self.data.get("errors") or []:
            i = doc_index(e.get("source") if isinstance(e, dict) else None, file)
            if i is not None:
                self.errors.setdefault(i, []).append(e)

    def result(self, index):
        """The result whose source ends with `<file>#<index>` (not a List item), or None."""
        want = f"{self.file}#{index}"
        for res in self.results.get(index, []):
            if str(res.get("source", "")).endswith(want):
                return res
        return None

    def indices(self):
        """Document indices that gave a result or could not be read, in order."""
        return sorted(set(self.results) | set(self.errors))

    def names_unreadable(self, index):
        """The run exits 2 and names this document in `errors` or on stderr."""
        if self.rc != 2:
            return False
        for e in self.errors.get(index, []):
            if names_document(str(e.get("source", "")), self.file, index) or \
                    names_document(str(e.get("message", "")), self.file, index):
                return True
        return names_document(self.run.err, self.file, index)


def rules(result, severity):
    return sorted({f.get("rule") for f in (result or {}).get("findings") or []
                   if isinstance(f, dict) and f.get("severity") == severity})


def fmt_rules(rs, optional=()):
    items = list(rs) + ["?" + r for r in sorted(set(optional) - set(rs))]
    return "[" + ",".join(items) + "]"


# ---------------------------------------------------------------------------------------------
# The corpus


def _load_docs(path):
    """Documents as PyYAML reads them (None for an empty one); an unparsable tail stops the list."""
    docs = []
    try:
        for d in yaml.safe_load_all(path.read_text()):
            docs.append(d)
    except yaml.YAMLError:
        pass
    return docs


class Corpus:
    def __init__(self, root):
        self.root = Path(root)
        self.manifests = self.root / "manifests"
        self.labels = json.loads((self.root / "labels.json").read_text())
        mp = self.root / "mutate-expect.json"
        self.mutations = json.loads(mp.read_text()) if mp.is_file() else {}
        self.modes_policy = self.root / MODES_POLICY
        self.default_policy = self.root / LABEL_POLICY
        self._tmp = tempfile.TemporaryDirectory(prefix="rw-realworld-")
        self._lock = threading.Lock()
        self._docs = {}
        pol = yaml.safe_load(self.modes_policy.read_text()) if self.modes_policy.is_file() else {}
        self.vf_globs = list(((pol or {}).get("resources") or {}).get("vf") or [])
        keys = {MULTUS_KEY, GKE_KEY}
        for entry in [(pol or {}).get("defaults") or {}] + list((pol or {}).get("namespaces") or []):
            k = ((entry or {}).get("sriov") or {}).get("annotationKey")
            if k:
                keys.add(k)
        self.net_keys = sorted(keys)

    # keys and files

    @staticmethod
    def split(key):
        file, _, idx = key.rpartition("#")
        return file, int(idx)

    def label_keys(self):
        return sorted(self.labels, key=self.split)

    def mutation_cases(self):
        """[(key, namespace, spec)] in file, document, namespace order as the JSON lists them."""
        out = []
        for key in sorted(self.mutations, key=self.split):
            for ns, spec in self.mutations[key].items():
                out.append((key, ns, spec))
        return out

    def files(self):
        """Every labelled file, and every manifest (a manifest without labels has only phantoms)."""
        fs = {self.split(k)[0] for k in self.labels} | {self.split(k)[0] for k in self.mutations}
        fs |= {p.name for p in self.manifests.glob("*.y*ml")} | \
            {p.name for p in self.manifests.glob("*.json")}
        return sorted(fs)

    def labelled_indices(self, file):
        return sorted(i for f, i in map(self.split, self.labels) if f == file)

    def docs(self, file):
        with self._lock:
            if file not in self._docs:
                self._docs[file] = _load_docs(self.manifests / file)
            return self._docs[file]

    # runs (cached by run())

    def check(self, file, policy=None, namespace="default"):
        args = ("check", "-o", "json")
        if policy is not None:
            args += ("--policy", str(policy))
        args += ("--namespace", namespace, file)
        return CheckOut(run(args, cwd=str(self.manifests)), file)

    def label_check(self, file):
        return self.check(file)

    def mutate_patch(self, file, namespace):
        return run(("mutate", "-o", "patch", "--policy", str(self.modes_policy), "--namespace",
                    namespace, file), cwd=str(self.manifests))

    def patch_lines(self, file, namespace):
        """{document index: patch (list) or None}, lines mapped by the label check's sources.

        Raises RunError when the lines cannot be mapped (wrong count, not JSON)."""
        r = self.mutate_patch(file, namespace)
        lines = [l for l in r.out.splitlines() if l.strip()]
        co = self.label_check(file)
        if co.problem:
            raise RunError(f"cannot map patch lines to documents: {co.problem}")
        idx = co.indices()
        if len(lines) != len(idx):
            raise RunError(f"mutate -o patch printed {len(lines)} line(s) but check reports "
                           f"documents {idx} of {file} (one line per document that gives a "
                           f"result or could not be read)\n{r!r}")
        out = {}
        for i, line in zip(idx, lines):
            try:
                v = json.loads(line)
            except ValueError as e:
                raise RunError(f"patch line for {file}#{i} is not JSON ({e}): {line[:200]}")
            if v is not None and not isinstance(v, list):
                raise RunError(f"patch line for {file}#{i} is neither an array nor null: "
                               f"{line[:200]}")
            out[i] = v
        return out

    def write_json(self, name, doc):
        p = Path(self._tmp.name) / name
        p.write_text(json.dumps(doc, default=str))
        return p

    def judge_result_doc(self, name, doc, namespace):
        """check and re-mutate of a (mutated) document written as JSON: (CheckOut, patch lines)."""
        p = self.write_json(name, doc)
        co = CheckOut(run(("check", "-o", "json", "--policy", str(self.modes_policy),
                           "--namespace", namespace, str(p))), str(p))
        rm = run(("mutate", "-o", "patch", "--policy", str(self.modes_policy), "--namespace",
                  namespace, str(p)))
        return co, rm


# ---------------------------------------------------------------------------------------------
# Judging a label


def _variants(label):
    vs = [("label", label)]
    for n, acc in enumerate(label.get("accept") or []):
        v = dict(label)
        v.pop("accept", None)
        v.update(acc)
        vs.append((f"accept[{n}]", v))
    return vs


def _mismatches(v, result):
    """What in `result` differs from the expectation `v` (empty: it matches)."""
    out = []
    paths = v.get("path")
    paths = paths if isinstance(paths, list) else [paths]
    if result.get("path") not in paths:
        out.append(f"path {json.dumps(result.get('path'))}, expected {' or '.join(map(json.dumps, paths))}")
    if "rdma" in v and result.get("rdma") != v["rdma"]:
        out.append(f"rdma {json.dumps(result.get('rdma'))}, expected {json.dumps(v['rdma'])}")
    for sev, field in (("error", "errors"), ("warning", "warnings")):
        want = set(v.get(field) or [])
        opt = set(v.get("optional_" + field) or [])
        got = set(rules(result, sev))
        missing, extra = sorted(want - got), sorted(got - want - opt)
        if missing or extra:
            s = f"{field} {fmt_rules(sorted(got))}, expected {fmt_rules(sorted(want), opt)}"
            if missing:
                s += f" (missing {', '.join(missing)})"
            if extra:
                s += f" (unexpected {', '.join(extra)})"
            out.append(s)
    return out


def expected_str(label):
    paths = label.get("path")
    p = "|".join(paths) if isinstance(paths, list) else str(paths)
    s = (f"{p} rdma={str(label.get('rdma')).lower()} "
         f"E{fmt_rules(sorted(label.get('errors') or []), label.get('optional_errors') or [])} "
         f"W{fmt_rules(sorted(label.get('warnings') or []), label.get('optional_warnings') or [])}")
    if label.get("accept"):
        s += f" (+{len(label['accept'])} accept)"
    if label.get("unreadable_ok"):
        s += " (or unreadable)"
    return s


def actual_str(result):
    if result is None:
        return "no result"
    return (f"{result.get('path')} rdma={str(result.get('rdma')).lower()} "
            f"E{fmt_rules(rules(result, 'error'))} W{fmt_rules(rules(result, 'warning'))}")


class Verdict:
    def __init__(self, ok, actual, problems=(), extra=""):
        self.ok, self.actual, self.problems, self.extra = ok, actual, list(problems), extra


def judge_label(corpus, key):
    """Verdict for one labelled document under the embedded default policy."""
    file, idx = corpus.split(key)
    label = corpus.labels[key]
    try:
        co = corpus.label_check(file)
    except RunError as e:
        return Verdict(False, "crash", [str(e)])
    if co.problem:
        return Verdict(False, "no JSON", [co.problem], repr(co.run))
    res = co.result(idx)
    if res is None:
        if label.get("unreadable_ok") and co.names_unreadable(idx):
            return Verdict(True, "unreadable (exit 2, document named)")
        why = [f"no result whose source ends with {key!r} "
               f"(results for documents {sorted(co.results)}, errors for {sorted(co.errors)}, "
               f"rc={co.rc})"]
        if label.get("unreadable_ok"):
            why.append("unreadable_ok: exit 2 naming the file and document would also be right")
        return Verdict(False, "no result", why, co.run.err[:2000])
    problems = []
    for name, v in _variants(label):
        mm = _mismatches(v, res)
        if not mm:
            return Verdict(True, actual_str(res))
        problems.append((name, mm))
    lines = []
    for name, mm in problems:
        lines += [f"{name}: {m}" for m in mm]
    if label.get("unreadable_ok"):
        lines.append("unreadable_ok: exit 2 naming the file and document would also be right")
    extra = json.dumps({k: res.get(k) for k in ("evidence", "findings", "skipped") if k in res},
                       indent=1)[:3000]
    return Verdict(False, actual_str(res), lines, extra)


def label_failure_message(corpus, key, v):
    label = corpus.labels[key]
    amb = " (label marked ambiguous)" if label.get("ambiguous") else ""
    msg = [f"{key}: check -o json (embedded default policy, namespace default)",
           f"  expected: {expected_str(label)}",
           f"  actual:   {v.actual}"]
    msg += [f"  - {p}" for p in v.problems]
    msg.append(f"  why{amb}: {label.get('why', '')}")
    if v.extra:
        msg.append("  actual result details:\n" + v.extra)
    return "\n".join(msg)


# ---------------------------------------------------------------------------------------------
# Judging a mutation outcome


def _unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def rails(doc, vf_globs, net_keys):
    """What an own-rails template must keep: network annotations, VF claims, NCCL_SOCKET_IFNAME.

    {(what, JSON pointer of the holder, name): value}, collected anywhere in the document."""
    out = {}

    def walk(node, ptr, parent_key):
        if isinstance(node, dict):
            for k, val in node.items():
                p = f"{ptr}/{str(k).replace('~', '~0').replace('/', '~1')}"
                if k == "annotations" and isinstance(val, dict):
                    for nk in net_keys:
                        if nk in val:
                            out[("annotation", p, nk)] = val[nk]
                if k in ("limits", "requests") and parent_key == "resources" and \
                        isinstance(val, dict):
                    for rn, q in val.items():
                        if any(fnmatch.fnmatchcase(str(rn), g) for g in vf_globs):
                            out[("vf claim", p, rn)] = q
                if k == "env" and isinstance(val, list):
                    vals = [e.get("value", e.get("valueFrom")) for e in val
                            if isinstance(e, dict) and e.get("name") == "NCCL_SOCKET_IFNAME"]
                    if vals:
                        out[("env", p, "NCCL_SOCKET_IFNAME")] = vals
                walk(val, p, k)
        elif isinstance(node, list):
            for n, val in enumerate(node):
                walk(val, f"{ptr}/{n}", parent_key)

    walk(doc, "", None)
    return out


def _rails_changes(before, after):
    out = []
    for k in sorted(set(before) | set(after), key=str):
        what, ptr, name = k
        if k not in before:
            out.append(f"adds {what} {name}={after[k]!r} at {ptr}")
        elif k not in after:
            out.append(f"removes {what} {name} at {ptr}")
        elif before[k] != after[k]:
            out.append(f"changes {what} {name} at {ptr}: {before[k]!r} -> {after[k]!r}")
    return out


class MutationCase:
    """Everything observed for one document in one namespace; computed lazily and once."""

    def __init__(self, corpus, key, ns):
        self.corpus, self.key, self.ns = corpus, key, ns
        self.file, self.idx = corpus.split(key)
        self._after = None

    def patch(self):
        lines = self.corpus.patch_lines(self.file, self.ns)
        if self.idx not in lines:
            raise RunError(f"mutate -o patch printed no line for document {self.idx} "
                           f"(lines for documents {sorted(lines)})")
        return lines[self.idx]

    def original_check(self):
        co = self.corpus.check(self.file, self.corpus.modes_policy, self.ns)
        if co.problem:
            raise RunError(f"check of the original: {co.problem}\n{co.run!r}")
        return co.result(self.idx), co

    def doc(self):
        docs = self.corpus.docs(self.file)
        if self.idx >= len(docs) or docs[self.idx] is None:
            raise RunError(f"PyYAML reads no document {self.idx} in {self.file}")
        return docs[self.idx]

    def after(self):
        """(applied document or None, apply error, CheckOut of it, re-mutate Run)."""
        if self._after is None:
            patch = self.patch()
            doc = copy.deepcopy(self.doc())
            if jsonpatch is None:
                self._after = (None, "python jsonpatch is not installed", None, None)
                return self._after
            try:
                res = jsonpatch.apply_patch(doc, patch) if patch else doc
            except Exception as e:  # JsonPatchException, JsonPointerException, TypeError...
                self._after = (None, f"{type(e).__name__}: {e}", None, None)
                return self._after
            name = f"{Path(self.file).stem}.{self.idx}.{self.ns}.json"
            co, rm = self.corpus.judge_result_doc(name, res, self.ns)
            self._after = (res, None, co, rm)
        return self._after

    # the outcomes of README's table; each returns the list of what is wrong (empty: right)

    def _result_clean(self, problems):
        res, err, co, rm = self.after()
        if err:
            problems.append(f"the patch does not apply to the document as PyYAML reads it: {err}")
            return
        if co.problem:
            problems.append(f"check of the result: {co.problem} (rc={co.rc})")
        else:
            r = co.results.get(0, [None])[0]
            errs = rules(r, "error")
            if r is None:
                problems.append(f"check of the result gives no result (rc={co.rc}): "
                                f"{co.run.err.strip()[:300]}")
            elif errs or co.rc != 0:
                problems.append(f"check of the result: rc={co.rc}, error findings {errs}")
        lines = [l for l in rm.out.splitlines() if l.strip()]
        if lines != ["[]"]:
            problems.append(f"mutate of the result is not [] but {' '.join(lines)[:300]!r} "
                            f"(rc={rm.rc})")

    def judge(self, outcome):
        problems = []
        patch = self.patch()
        if outcome == "mutated-clean":
            if not patch:
                problems.append("the patch is [], expected a non-empty patch")
            else:
                self._result_clean(problems)
        elif outcome in ("unchanged", "conflict", "other-path"):
            if patch != []:
                problems.append(f"the patch is not [] but {len(patch)} op(s): "
                                f"{_ops_summary(patch)}")
            r, co = self.original_check()
            if r is None:
                problems.append(f"check ({self.ns}) gives no result for the document (rc={co.rc})")
            elif outcome == "unchanged":
                if rules(r, "error"):
                    problems.append(f"check ({self.ns}) reports errors {rules(r, 'error')}")
            else:
                want = "policy-conflict" if outcome == "conflict" else "path-not-allowed"
                got = {f.get("rule") for f in r.get("findings") or []}
                if want not in got:
                    problems.append(f"check ({self.ns}) does not report {want} "
                                    f"(findings {sorted(got)})")
        elif outcome == "own-rails":
            for op in patch:
                p = str(op.get("path", "")) if isinstance(op, dict) else ""
                if any(_unescape(t) in self.corpus.net_keys for t in p.split("/")):
                    problems.append(f"the patch has an op on the network annotation: {op}")
            res, err, _, _ = self.after()
            if res is not None:
                problems += [f"the patch {c}" for c in _rails_changes(
                    rails(self.doc(), self.corpus.vf_globs, self.corpus.net_keys),
                    rails(res, self.corpus.vf_globs, self.corpus.net_keys))]
            self._result_clean(problems)
        else:
            problems.append(f"unknown expected outcome {outcome!r} (known: {', '.join(OUTCOMES)})")
        return problems

    def observed(self):
        """A compact line: the patch, the original's check, and what the result gives."""
        try:
            patch = self.patch()
        except RunError as e:
            return "error: " + str(e).splitlines()[0]
        parts = []
        if patch is None:
            parts.append("null")
        else:
            parts.append(f"{len(patch)} ops" if patch else "[]")
        try:
            r, _ = self.original_check()
            parts.append(f"check E{fmt_rules(rules(r, 'error'))}" if r else "check: no result")
        except RunError as e:
            parts.append("check: " + str(e).splitlines()[0])
        if patch:
            res, err, co, rm = self.after()
            if err:
                parts.append("does not apply")
            else:
                r2 = None if co.problem else co.results.get(0, [None])[0]
                parts.append(f"result E{fmt_rules(rules(r2, 'error'))}" if r2 else
                             f"result: no check result (rc={co.rc})")
                lines = [l for l in rm.out.splitlines() if l.strip()]
                parts.append("re-mutate []" if lines == ["[]"] else "re-mutate not []")
        return "; ".join(parts)


def _ops_summary(patch, limit=6):
    s = [f"{op.get('op')} {op.get('path')}" for op in patch[:limit] if isinstance(op, dict)]
    if len(patch) > limit:
        s.append(f"... (+{len(patch) - limit})")
    return ", ".join(s)


def outcomes_of(spec):
    alts = []
    for a in spec.get("accept") or []:
        alts.append(a.get("expect") if isinstance(a, dict) else a)
    return [spec.get("expect")] + [a for a in alts if a]


def judge_mutation(corpus, key, ns, spec):
    """Verdict for one document in one namespace of mutate-expect.json."""
    case = MutationCase(corpus, key, ns)
    try:
        patch = case.patch()
        if patch is None:
            if spec.get("unreadable_ok"):
                return Verdict(True, "null (unreadable)")
            return Verdict(False, "null", ["mutate printed null (unreadable document), and the "
                                           "expectation has no unreadable_ok"])
        tried = []
        for outcome in outcomes_of(spec):
            problems = case.judge(outcome)
            if not problems:
                return Verdict(True, outcome)
            tried.append((outcome, problems))
        lines = []
        for outcome, problems in tried:
            lines += [f"as {outcome}: {p}" for p in problems]
        try:
            seen = case.observed()
        except RunError as e:
            seen = "error: " + str(e).splitlines()[0]
        return Verdict(False, seen, lines, _ops_summary(patch, 20) if patch else "")
    except RunError as e:
        first = str(e).splitlines()[0] if str(e) else "error"
        return Verdict(False, "error: " + (first[:90] + "..." if len(first) > 90 else first),
                       [str(e)])


def mutation_failure_message(corpus, key, ns, spec, v):
    amb = " (marked ambiguous)" if spec.get("ambiguous") else ""
    exp = " or ".join(outcomes_of(spec))
    if spec.get("unreadable_ok"):
        exp += " (or null: unreadable)"
    msg = [f"{key} in {ns}: mutate -o patch --policy {MODES_POLICY} --namespace {ns}",
           f"  expected: {exp}",
           f"  actual:   {v.actual}"]
    msg += [f"  - {p}" for p in v.problems]
    msg.append(f"  why{amb}: {spec.get('why', '')}")
    if v.extra:
        msg.append(f"  patch ops: {v.extra}")
    return "\n".join(msg)


# ---------------------------------------------------------------------------------------------
# Per-file checks


def judge_documents(corpus, file):
    """No result for an unlabelled document; a result (or unreadable_ok error) for each label."""
    try:
        co = corpus.label_check(file)
    except RunError as e:
        return [str(e)]
    if co.problem:
        return [co.problem]
    labelled = corpus.labelled_indices(file)
    problems = []
    phantom = sorted(set(co.results) - set(labelled))
    if phantom:
        problems.append(f"results for documents no label has (phantom documents): "
                        f"{[f'{file}#{i}' for i in phantom]}; labelled: {labelled}")
    for res in co.stray:
        problems.append(f"a result whose source names no document of {file}: "
                        f"{res.get('source') if isinstance(res, dict) else res!r}")
    for i in labelled:
        if co.result(i) is not None:
            continue
        if corpus.labels[f"{file}#{i}"].get("unreadable_ok") and co.names_unreadable(i):
            continue
        problems.append(f"no result for labelled document {file}#{i}")
    return problems


def _without_gpu_list(results):
    """The results with the policy's gpuResources list left out of the evidence lines that quote
    it: the embedded default names renamed GPUs (MIG, time-sliced, Koordinator, Neuron) that the
    corpus's v2 policy file predates, and only that quotation may differ."""
    out = json.loads(json.dumps(results))
    for r in out or []:
        r["evidence"] = [re.sub(r"(none requests |gpuResources \()[^)]*\)", r"\1...)", e)
                         for e in r.get("evidence", [])]
    return out


def judge_same_as_embedded(corpus, file):
    """check --policy policy-v2-default.yaml gives the results of the embedded default."""
    try:
        a = corpus.label_check(file)
        b = corpus.check(file, corpus.default_policy)
    except RunError as e:
        return [str(e)]
    problems = []
    for name, co in (("embedded", a), ("--policy file", b)):
        if co.problem:
            problems.append(f"{name}: {co.problem}\n{co.run!r}")
    if problems:
        return problems
    if a.rc != b.rc:
        problems.append(f"exit code {a.rc} with the embedded default, {b.rc} with the file")
    ra, rb = _without_gpu_list(a.data.get("results")), _without_gpu_list(b.data.get("results"))
    if json.dumps(ra, sort_keys=True) != json.dumps(rb, sort_keys=True):
        sa = {r.get("source"): r for r in ra}
        sb = {r.get("source"): r for r in rb}
        for src in sorted(set(sa) | set(sb), key=str):
            x, y = sa.get(src), sb.get(src)
            if json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True):
                continue
            if x is None or y is None:
                problems.append(f"{src}: only {'the file' if x is None else 'the embedded'} "
                                f"policy gives a result")
                continue
            brief_x, brief_y = actual_str(x), actual_str(y)
            if brief_x != brief_y:
                problems.append(f"{src}: embedded {brief_x} / file {brief_y}")
            else:
                fields = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                problems.append(f"{src}: same verdict, fields differ: {fields}")
    ea = json.dumps(a.data.get("errors"), sort_keys=True)
    eb = json.dumps(b.data.get("errors"), sort_keys=True)
    if ea != eb:
        problems.append(f"top-level errors differ: embedded {ea[:300]} / file {eb[:300]}")
    return problems
