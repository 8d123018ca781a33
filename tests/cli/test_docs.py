"""The reference pages in docs/ keep up with the code (issue 9, point 5).

Every metric the server renders is in docs/http.md, every field the policy loader reads is in
docs/policy.md, every command of `rdma-webhook --help` is in docs/cli.md, and nothing in the
repository cites the outside specification that the docs replace. Names come from the source
(src/server/metrics.cc, src/policy/policy_parse.cc) and the binary's help, so a new metric,
field or command fails here until it is documented.
"""
import re

import pytest

from conftest import REPO, rw

DOCS = REPO / "docs"
# Built from parts so that this file does not cite it itself.
OUTSIDE_SPEC = "CONTRACT" + ".md"
CITING_DIRS = ("src", "include", "tests", "charts", "docs", "scripts")


def read(path):
    return path.read_text(encoding="utf-8")


def in_code_span(name, text):
    """`name` appears inside a Markdown code span, alone or as part of a dotted field path."""
    return re.search(r"`[^`\n]*(?<![\w-])" + re.escape(name) + r"(?![\w-])[^`\n]*`", text)


def metric_names():
    source = read(REPO / "src" / "server" / "metrics.cc")
    names = set(re.findall(r"\b(rdma_webhook_[a-z_]+[a-z])", source))
    # A histogram's series (_bucket, _sum, _count) are documented under the family's name.
    families = {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}
    return {n for n in families if n in names or n + "_bucket" in names}


def policy_fields():
    # the parser and the modes' sections (src/policy/modes/) read the fields
    source = "".join(read(p) for p in sorted((REPO / "src" / "policy").rglob("*.cc")))
    readers = r"(?:Get|String|Bool|Count|Strings|Enum)"
    return set(re.findall(r"\b\w+\." + readers + r"\(\"([A-Za-z]+)\"", source))


def help_commands():
    r = rw("--help")
    assert r.rc == 0, r
    section = r.out.split("Subcommands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^\s{2}([a-z][a-z-]*)\s", section, re.M)]


def test_every_metric_is_in_http_md():
    names = metric_names()
    # the families the server has had since issue 9; a regex that finds fewer is broken
    assert {"rdma_webhook_requests_total", "rdma_webhook_request_duration_seconds",
            "rdma_webhook_reloads_total", "rdma_webhook_build_info"} <= names, names
    doc = read(DOCS / "http.md")
    missing = sorted(n for n in names if not in_code_span(n, doc))
    assert not missing, f"docs/http.md does not document {missing}"


def test_every_policy_field_is_in_policy_md():
    fields = policy_fields()
    assert {"gpuResources", "networkResourcesInjector", "allowedPaths", "gidIndex",
            "extraEnv", "defaultNetworks", "annotationKey", "socketIfname"} <= fields, fields
    doc = read(DOCS / "policy.md")
    missing = sorted(f for f in fields if not in_code_span(f, doc))
    assert not missing, f"docs/policy.md does not document {missing}"


def test_every_command_is_in_cli_md():
    commands = help_commands()
    assert {"check", "mutate", "serve", "version"} <= set(commands), commands
    doc = read(DOCS / "cli.md")
    headings = set(re.findall(r"^##+ (\S+)\s*$", doc, re.M))
    missing = sorted(c for c in commands if c not in headings)
    assert not missing, f"docs/cli.md has no section for {missing}"
    for extra in ("policy validate", "policy default", "kubectl-rdma"):
        assert extra in doc, extra


PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "SECURITY.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    # relative to the page, as a Markdown viewer resolves them: from docs/, `docs/x.md` is missing
    doc = read(page)
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc):
        assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_nothing_cites_the_outside_spec():
    citing = []
    for top in CITING_DIRS:
        for path in sorted((REPO / top).rglob("*")):
            if not path.is_file() or path.stat().st_size > 2_000_000:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if OUTSIDE_SPEC in line:
                    citing.append(f"{path.relative_to(REPO)}:{number}")
    assert not citing, f"cite docs/ instead of {OUTSIDE_SPEC}: {citing}"
