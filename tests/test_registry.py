"""conda_torchcheck.registry is the one list of finding ids: everything the tool can print is in it, and what is
derived from it (docs pages and index, messages, the JSON schema, list-checks) agrees with it.

The source tree is read at test time, so an id added anywhere without its registry entry fails here."""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from conda_torchcheck import registry
from conda_torchcheck.findings import DOCS_DIR
from conda_torchcheck.messages import LANGUAGES, catalog
from conda_torchcheck.schema import SCHEMA_FILE

PACKAGE = Path(registry.__file__).resolve().parent
FINDING_ID = re.compile(r"\bTC\d{3}\b")
SPECS = {s.id: s for s in registry.FINDINGS}


def printable_sources() -> list[Path]:
    """Every file whose text can end up in front of a user: code, message catalogs, activation script
    templates, explain's patterns (the docs pages are checked against the registry separately)."""
    files = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.toml"), *(PACKAGE / "hooks" / "activation").rglob("*")]
    return [p for p in files if p.is_file() and "docs" not in p.relative_to(PACKAGE).parts]


def test_ids_are_unique_sorted_and_well_formed():
    ids = [s.id for s in registry.FINDINGS]
    assert len(ids) == len(set(ids)) and ids == sorted(ids)
    assert all(re.fullmatch(r"TC\d{3}", i) for i in ids)
    assert len({e.name for e in registry.EMITTERS}) == len(registry.EMITTERS)


def test_every_id_the_code_catalogs_or_templates_can_print_is_registered():
    unknown = defaultdict(list)
    for path in printable_sources():
        for found in set(FINDING_ID.findall(path.read_text(encoding="utf-8", errors="replace"))):
            if found not in SPECS:
                unknown[found].append(str(path.relative_to(PACKAGE)))
    assert not unknown, f"ids printed but not in conda_torchcheck/registry.py: {dict(unknown)}"


def _emitter_sources(e: registry.Emitter) -> list[Path]:
    if e.kind == registry.TEMPLATE:
        return sorted((PACKAGE / e.module).iterdir())
    path = PACKAGE.parent / Path(*e.module.split("."))
    return [path / "__init__.py"] if path.is_dir() else [path.with_suffix(".py")]


@pytest.mark.parametrize("emitter", registry.EMITTERS, ids=lambda e: e.name)
def test_each_emitter_s_source_names_exactly_its_ids(emitter):
    text = "".join(p.read_text(encoding="utf-8") for p in _emitter_sources(emitter))
    emitted = {s.id for s in registry.FINDINGS if emitter.name in s.emitted_by}
    assert emitted, f"{emitter.name} emits nothing"
    assert emitted <= set(FINDING_ID.findall(text)), f"{emitter.name} does not mention {emitted}"


def test_every_id_has_an_emitter_and_known_platforms():
    names = {e.name for e in registry.EMITTERS}
    for s in registry.FINDINGS:
        assert s.emitted_by and set(s.emitted_by) <= names, s.id
        assert s.platforms and set(s.platforms) <= set(registry.ALL_OS), s.id
        assert s.severity in (registry.ERROR, registry.WARNING, registry.INFO), s.id
        assert s.summary and "\n" not in s.summary and len(s.summary) <= 120, s.id


# --- docs ------------------------------------------------------------------------------------------------------


def test_every_id_has_a_docs_page_whose_heading_is_its_summary():
    for s in registry.FINDINGS:
        assert s.docs_page.is_file(), f"{s.id}: no {s.docs_page}"
        first = s.docs_page.read_text(encoding="utf-8").splitlines()[0]
        assert first == f"# {s.id} — {s.summary}", s.id


def test_a_docs_page_that_names_its_check_names_the_registry_s():
    for s in registry.FINDINGS:
        header = s.docs_page.read_text(encoding="utf-8").split("\n\n")[1]
        named = re.findall(r"\*\*Checks?:\*\*\s([^·]*)", header)
        if named:
            assert set(re.findall(r"`([a-z0-9_]+)`", named[0])) == set(s.emitted_by), s.id


def test_every_docs_page_is_a_registered_id():
    pages = {p.stem for p in DOCS_DIR.glob("*.md")} - {"README"}
    assert pages == set(SPECS)


def test_the_docs_index_is_the_one_the_registry_makes():
    index = (DOCS_DIR / "README.md").read_text(encoding="utf-8")
    assert index == registry.docs_index(), "run: python -m conda_torchcheck.registry"


# --- messages --------------------------------------------------------------------------------------------------


def catalog_variants() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for key in catalog():
        m = re.fullmatch(r"(TC\d{3})\.(.+)\.(?:title|explanation)", key)
        if m:
            found[m.group(1)].add(m.group(2))
    return found


def test_every_id_has_a_title_and_an_explanation_in_every_language():
    """``<id>.title`` / ``<id>.explanation``, or, where the plain one is absent, one for each of its variants."""
    cat = catalog()
    missing = []
    for s in registry.FINDINGS:
        for part in ("title", "explanation"):
            keys = [f"{s.id}.{part}"] if f"{s.id}.{part}" in cat else [f"{s.id}.{v}.{part}" for v in s.variants]
            for key in keys or [f"{s.id}.{part}"]:
                texts = cat.get(key, {})
                missing += [f"{key}.{lang}" for lang in LANGUAGES if not texts.get(lang, "").strip()]
    assert not missing, missing


def test_registered_variants_are_the_catalog_s():
    variants = catalog_variants()
    wrong = {s.id: (sorted(s.variants), sorted(variants.get(s.id, ()))) for s in registry.FINDINGS}
    assert {k: v for k, v in wrong.items() if v[0] != v[1]} == {}


def finding_calls() -> list[tuple[str, str, str | None, set[str]]]:
    """(file, id, literal variant or None, severities named) for each ``finding("TCnnn", severity, ...)``."""
    calls = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            if not (isinstance(node.args[0].value, str) and FINDING_ID.fullmatch(node.args[0].value)):
                continue
            variant = next((k.value for k in node.keywords if k.arg == "variant"), None)
            literal = variant.value if isinstance(variant, ast.Constant) else None
            severities = set(re.findall(r"Severity\.(\w+)", ast.unparse(node.args[1]))) if len(node.args) > 1 else set()
            calls.append((path.name, node.args[0].value, literal, {s.lower() for s in severities}))
    return calls


def test_variants_the_code_names_are_registered():
    unknown = [(f, i, v) for f, i, v, _ in finding_calls() if v is not None and v not in SPECS[i].variants]
    assert not unknown


def test_the_default_severity_is_one_the_code_reports():
    named: dict[str, set[str]] = defaultdict(set)
    for _, fid, _, severities in finding_calls():
        named[fid] |= severities
    wrong = {fid: (SPECS[fid].severity, sorted(s)) for fid, s in named.items() if s and SPECS[fid].severity not in s}
    assert not wrong


# --- the schema and list-checks --------------------------------------------------------------------------------


def test_the_schema_s_id_enum_is_the_registry():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    enum = schema["$defs"]["finding_id"]["enum"]
    assert enum == registry.schema_id_enum() == [s.id for s in registry.FINDINGS], (
        "run: python -m conda_torchcheck.registry"
    )
    assert schema["$defs"]["finding"]["properties"]["id"] == {"$ref": "#/$defs/finding_id"}


def test_list_checks_lists_every_id(capsys):
    from conda_torchcheck.cli.main import main

    assert main(["list-checks", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["checks"]
    listed = [i["id"] for c in doc for i in c["ids"]]
    assert set(listed) == set(SPECS)  # TC903 twice: two loader checks report it
    assert all(not i["title"].startswith("TC") for c in doc for i in c["ids"])
    assert main(["list-checks"]) == 0
    text = capsys.readouterr().out
    assert all(i in text for i in SPECS)


def test_the_lookups():
    assert registry.spec("tc301 ").id == "TC301" and registry.spec("TC999") is None
    assert registry.emitter_of_module("conda_torchcheck.checks.win_missing").name == "win_missing"
    with pytest.raises(LookupError):
        registry.emitter_of_module("conda_torchcheck.checks.nope")
    assert registry.spec("TC903").platforms == ("windows", "linux")
    assert registry.spec("TC301").message_keys[:2] == ("TC301.title", "TC301.explanation")
    assert [e.name for e in registry.checks_for("darwin")][0] == "unreadable"


def test_writing_the_derived_files_changes_only_what_the_registry_derives(tmp_path, monkeypatch):
    import conda_torchcheck.findings
    import conda_torchcheck.schema

    (tmp_path / "README.md").write_text("# stale\n", encoding="utf-8")
    schema = SCHEMA_FILE.read_text(encoding="utf-8")
    (tmp_path / "schema.json").write_text(schema.replace('        "TC909",\n', "", 1), encoding="utf-8")
    monkeypatch.setattr(conda_torchcheck.findings, "DOCS_DIR", tmp_path)
    monkeypatch.setattr(conda_torchcheck.schema, "SCHEMA_FILE", tmp_path / "schema.json")
    assert len(registry.write_derived()) == 2
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == registry.docs_index()
    assert (tmp_path / "schema.json").read_text(encoding="utf-8") == schema
    assert registry.write_derived() == []
