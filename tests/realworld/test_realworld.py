"""The realworld corpus (`$RW_REALWORLD_DIR`, else ../shared/realworld): public manifests labelled
with what docs/cli.md and docs/design.md say `check` and `mutate` must make of them. See rwlib.py
for how each label and mutation outcome is judged, and the corpus's README.md for what they mean.

Ids are the corpus's keys: `11-coreweave-h100-ib-mpijob.yaml#0` for a label,
`11-coreweave-h100-ib-mpijob.yaml#0-rw-sriov` for a mutation outcome, the file name for per-file
checks.
"""
import pytest

import rwlib

ROOT, SHOWN = rwlib.corpus_dir()
if ROOT is None:
    pytest.skip(f"realworld: {SHOWN} not found", allow_module_level=True)

CORPUS = rwlib.Corpus(ROOT)
FILES = CORPUS.files()
LABELS = CORPUS.label_keys()
MUTATIONS = CORPUS.mutation_cases()


def fail(msg):
    pytest.fail(msg, pytrace=False)


@pytest.mark.parametrize("key", LABELS)
def test_label(key):
    v = rwlib.judge_label(CORPUS, key)
    if not v.ok:
        fail(rwlib.label_failure_message(CORPUS, key, v))


@pytest.mark.parametrize("file", FILES)
def test_documents(file):
    """Every labelled document has a result, and no unlabelled one has (no phantom documents)."""
    problems = rwlib.judge_documents(CORPUS, file)
    if problems:
        fail(f"{file}: check -o json (embedded default policy)\n" +
             "\n".join(f"  - {p}" for p in problems))


def test_policy_files_validate():
    try:
        r = rwlib.run(("policy", "validate", rwlib.LABEL_POLICY, rwlib.MODES_POLICY),
                      cwd=str(ROOT))
    except rwlib.RunError as e:
        fail(str(e))
    if r.rc != 0:
        fail(f"expected exit 0 (both policies valid), got:\n{r!r}")


@pytest.mark.parametrize("file", FILES)
def test_policy_file_same_as_embedded(file):
    problems = rwlib.judge_same_as_embedded(CORPUS, file)
    if problems:
        fail(f"{file}: check --policy {rwlib.LABEL_POLICY} differs from the embedded default\n" +
             "\n".join(f"  - {p}" for p in problems))


@pytest.mark.parametrize("key,ns,spec", MUTATIONS,
                         ids=[f"{k}-{ns}" for k, ns, _ in MUTATIONS])
def test_mutation(key, ns, spec):
    v = rwlib.judge_mutation(CORPUS, key, ns, spec)
    if not v.ok:
        fail(rwlib.mutation_failure_message(CORPUS, key, ns, spec, v))
