"""Every message catalog, including the ones other areas add: complete, consistent, used correctly.

The registry and the source tree are read at test time, so new checks and catalogs are covered as they land.
"""

from __future__ import annotations

import ast
import re
import string
from importlib import resources
from pathlib import Path

import pytest

from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.checks import all_checks
from conda_torchcheck.messages import LANGUAGES, catalog, placeholders

PACKAGE = Path(__file__).resolve().parents[2] / "conda_torchcheck"
DOCS = Path(__file__).resolve().parents[2] / "conda_torchcheck" / "docs" / "findings"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def catalog_files() -> list[str]:
    return sorted(e.name for e in resources.files("conda_torchcheck.messages").iterdir() if e.name.endswith(".toml"))


def messages_of(name: str) -> tuple[dict[str, dict[str, str]], list[str]]:
    """(key -> {language: text}, stray entries) of one catalog file."""
    text = resources.files("conda_torchcheck.messages").joinpath(name).read_text(encoding="utf-8")
    data = load_toml_text(text)
    found: dict[str, dict[str, str]] = {}
    stray: list[str] = []

    def walk(table: dict, prefix: str) -> None:
        # a message is a table of language codes; accept a subtable that has any language key so typos show
        if any(k in table and isinstance(table[k], str) for k in (*LANGUAGES, "en")) or any(
            isinstance(v, str) and re.fullmatch(r"[a-z]{2}(_[A-Z]{2})?", k) for k, v in table.items()
        ):
            found[prefix] = {k: v for k, v in table.items() if isinstance(v, str)}
            stray.extend(f"{prefix}.{k}" for k, v in table.items() if not isinstance(v, str))
            return
        for key, value in table.items():
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(value, path)
            else:
                stray.append(path)

    walk(data, "")
    return found, stray


ALL_FILES = catalog_files()


def test_catalog_loads_without_duplicate_keys():
    assert len(catalog()) > 100


@pytest.mark.parametrize("name", ALL_FILES)
def test_both_languages_same_placeholders_no_empty_text(name):
    found, stray = messages_of(name)
    assert not stray, f"{name}: values that are not messages: {stray}"
    problems = []
    for key, texts in found.items():
        if set(texts) != set(LANGUAGES):
            problems.append(f"{key}: languages {sorted(texts)} (want {list(LANGUAGES)})")
            continue
        for lang, text in texts.items():
            if not text.strip():
                problems.append(f"{key}.{lang} is empty")
            try:
                list(string.Formatter().parse(text))
            except ValueError as exc:
                problems.append(f"{key}.{lang}: bad format string ({exc})")
        if placeholders(texts["en"]) != placeholders(texts["zh_CN"]):
            problems.append(f"{key}: placeholders {placeholders(texts['en'])} vs {placeholders(texts['zh_CN'])}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ALL_FILES)
def test_chinese_is_translated(name):
    """zh_CN must not be the English text copied over. Exceptions: single words ("Python") and verbatim error
    lines that tools print in English whatever the locale ("OSError: [WinError 126] ... Error loading ...")."""
    found, _ = messages_of(name)
    untranslated = []
    for key, texts in found.items():
        en, zh = texts.get("en", ""), texts.get("zh_CN", "")
        words = [w for w in re.sub(r"\{[^}]*\}", "", en).split() if len(re.findall(r"[A-Za-z]", w)) >= 2]
        verbatim_error = en == zh and re.match(r"^[A-Za-z_.]*(Error|Exception|Warning)\b", en)
        if len(words) > 1 and not CJK.search(zh) and not verbatim_error:
            untranslated.append(key)
    assert not untranslated, f"{name}: zh_CN without Chinese: {untranslated}"


def registry_ids() -> list[str]:
    return sorted({i for check in all_checks() for i in check.ids})


def test_every_registered_finding_id_has_title_and_explanation():
    """``<id>.title`` (list-checks shows it) and an explanation: ``<id>.explanation``, or, for ids whose checks
    always pass a variant, ``<id>.<variant>.explanation`` for their variants."""
    cat = catalog()
    missing = []
    for fid in registry_ids():
        if f"{fid}.title" not in cat:
            missing.append(f"{fid}.title")
        variants = {k.rsplit(".", 1)[0] for k in cat if k.startswith(fid + ".") and k.count(".") == 2}
        has_variant_explanations = bool(variants) and all(
            f"{v}.explanation" in cat for v in variants if f"{v}.title" in cat
        )
        if f"{fid}.explanation" not in cat and not has_variant_explanations:
            missing.append(f"{fid}.explanation")
    assert not missing, f"finding ids listed by checks without catalog entries: {missing}"


def test_every_registered_finding_id_has_a_docs_page():
    missing = [fid for fid in registry_ids() if not (DOCS / f"{fid}.md").is_file()]
    assert not missing, f"finding ids without docs/findings/<ID>.md: {missing}"


# --- the source uses the catalog correctly -------------------------------------------------------------------


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def catalog_uses() -> list[tuple[str, int, str, set[str] | None]]:
    """(file, line, message key, keyword names given or None when **kwargs hide them) for literal keys."""
    uses = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = path.relative_to(PACKAGE.parent).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = _name(node.func)
            first = _const(node.args[0])
            if first is None or func not in ("msg", "translate", "finding"):
                continue
            splat = any(k.arg is None for k in node.keywords)
            given = None if splat else {k.arg for k in node.keywords if k.arg}
            if func == "finding":
                if not re.fullmatch(r"TC\d{3}", first):
                    continue
                variant_node = next((k.value for k in node.keywords if k.arg == "variant"), None)
                if variant_node is not None and _const(variant_node) is None:
                    continue  # computed variant: cannot be checked statically
                base = f"{first}.{_const(variant_node)}" if variant_node is not None else first
                params = None if given is None else given - {"evidence", "fixes", "variant"}
                uses.append((rel, node.lineno, f"{base}.title", params))
                uses.append((rel, node.lineno, f"{base}.explanation", params))
            else:
                uses.append((rel, node.lineno, first, given - {"lang"} if given is not None else None))
    return uses


def test_literal_message_keys_exist():
    cat = catalog()
    missing = [f"{f}:{line}: {key}" for f, line, key, _ in catalog_uses() if key not in cat]
    assert not missing, "message keys used in code but missing from the catalogs:\n" + "\n".join(missing)


def test_literal_message_calls_fill_every_placeholder():
    cat = catalog()
    problems = []
    for f, line, key, given in catalog_uses():
        if given is None or key not in cat:
            continue
        needed = placeholders(cat[key]["en"])
        if needed - given:
            problems.append(f"{f}:{line}: {key} needs {sorted(needed - given)}")
    assert not problems, "placeholders left unfilled (they would show as {name}):\n" + "\n".join(problems)


def test_lookup_index_finds_every_key():
    """lookup() parses only the files its text-scan index names; every key must be reachable that way."""
    from conda_torchcheck.messages import catalog, lookup

    unreachable = [key for key in catalog() if lookup(key) is None]
    assert unreachable == []


def test_findings_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    missing = [p.stem for p in sorted(DOCS.glob("TC*.md")) if f"[{p.stem}]({p.stem}.md)" not in index]
    assert missing == []


def test_every_top_level_key_is_found_in_its_file_without_a_scan():
    """``lookup`` goes straight to the file a head belongs to (TC<n>xx -> tc<n>_*.toml, the named heads);
    a catalog that defines a head elsewhere would make those messages unreachable."""
    from conda_torchcheck import messages

    for name in messages._catalog_files():
        heads = load_toml_text((messages._HERE / name).read_text(encoding="utf-8"))
        for head in heads:
            assert name in messages._files_for(head), (name, head)
