"""`rdma-webhook policy schema`: the policy file's JSON Schema, embedded in the chart's values schema.

What Helm accepts under `policy:` the server must accept too, or a `helm upgrade` that passes
the chart's schema crash-loops the webhook pods. So the chart embeds exactly what the binary
prints, and on every shipped policy plus some broken ones the schema and `policy validate`
agree. The schema may be weaker than the parser (a mode's required section, interfaces used
twice), never stricter.
"""
import json

import jsonschema
import pytest
import yaml

from conftest import POLICIES, REPO, rw

CHART_SCHEMA = REPO / "charts" / "rdma-webhook" / "values.schema.json"
REGENERATE = "scripts/embed-policy-schema.py build/rdma-webhook"


@pytest.fixture(scope="module")
def schema():
    r = rw("policy", "schema")
    assert r.rc == 0 and not r.err, r
    data = r.json()
    jsonschema.Draft7Validator.check_schema(data)
    return data


def chart_policy_schema():
    return json.loads(CHART_SCHEMA.read_text())["properties"]["policy"]


def test_chart_embeds_the_binary_schema(schema):
    embedded = {k: v for k, v in schema.items() if k != "$schema"}
    assert chart_policy_schema() == embedded, (
        f"charts/rdma-webhook/values.schema.json `policy` differs from `rdma-webhook policy "
        f"schema`; regenerate it with `{REGENERATE}`")


def test_schema_names_every_rule_id_and_mode(schema):
    ids = json.loads(rw("rules", "-o", "json").out)["rules"]
    entry = schema["properties"]["namespaces"]["items"]["properties"]
    assert sorted(entry["rules"]["propertyNames"]["enum"]) == sorted(r["id"] for r in ids)
    assert entry["mode"]["enum"] == ["hostNetwork", "sriov", "shared", "tcp", "dra", "off", False]
    assert "names" not in schema["properties"]["defaults"]["properties"]


def shipped_policies():
    files = sorted((REPO / "deploy" / "policies").glob("*.yaml")) + sorted(POLICIES.glob("*.yaml"))
    out = [(f.relative_to(REPO).as_posix(), yaml.safe_load(f.read_text())) for f in files]
    out.append(("embedded default", yaml.safe_load(rw("policy", "default").out)))
    values = yaml.safe_load((REPO / "charts" / "rdma-webhook" / "values.yaml").read_text())
    out.append(("chart values.yaml", values["policy"]))
    return out


SCHEMA_CASES = REPO / "tests" / "golden" / "policy-schema"
# Files the parser must accept: spellings a schema could easily get wrong (unquoted off, ...).
VALID = sorted((SCHEMA_CASES / "valid").glob("*.yaml"))
# Files the parser refuses and the schema must refuse too: one mistake each, named on line 1.
BROKEN = sorted((SCHEMA_CASES / "broken").glob("*.yaml"))
SHIPPED = shipped_policies() + [(f.relative_to(REPO).as_posix(), yaml.safe_load(f.read_text()))
                                for f in VALID]


def validate_with_binary(doc, tmp_path):
    f = tmp_path / "policy.json"
    f.write_text(json.dumps(doc))
    r = rw("policy", "validate", f)
    assert r.rc in (0, 1), r
    return r


@pytest.mark.parametrize("name,doc", SHIPPED, ids=[n for n, _ in SHIPPED])
def test_schema_and_validate_accept_the_same(name, doc, schema, tmp_path):
    errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
    assert not errors, (name, errors)
    assert validate_with_binary(doc, tmp_path).rc == 0, name


def test_there_are_cases():
    assert len(VALID) >= 4 and len(BROKEN) >= 15, (VALID, BROKEN)


@pytest.mark.parametrize("case", BROKEN, ids=[f.stem for f in BROKEN])
def test_schema_and_validate_refuse_the_same(case, schema):
    doc = yaml.safe_load(case.read_text())
    assert not jsonschema.Draft7Validator(schema).is_valid(doc), case.name
    r = rw("policy", "validate", case)
    assert r.rc == 1 and "error:" in r.err, r
