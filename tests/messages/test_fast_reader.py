"""The catalogs' own TOML reader (tomllib costs tens of milliseconds of start-up) and the start-up cost itself."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conda_torchcheck import messages
from conda_torchcheck._toml import TOMLDecodeError, load_toml_text
from conda_torchcheck.messages import Text, _load_file, _read_catalog_subset, msg

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = sorted(p.name for p in (ROOT / "conda_torchcheck" / "messages").glob("*.toml"))


def test_there_are_catalogs():
    assert len(CATALOGS) >= 5


@pytest.mark.parametrize("name", CATALOGS)
def test_every_shipped_catalog_takes_the_fast_path_and_reads_as_tomllib(name):
    text = (ROOT / "conda_torchcheck" / "messages" / name).read_text(encoding="utf-8")
    fast = _read_catalog_subset(text)
    assert fast is not None, f"{name} uses TOML outside the subset the fast reader knows: it would load tomllib"
    assert fast == load_toml_text(text)
    assert list(_flat(fast)) == list(_flat(load_toml_text(text)))  # same order too


def _flat(data: dict) -> dict:
    out: dict = {}
    messages._flatten(data, "", out)
    return out


# --- what the subset reads ------------------------------------------------------------------------------------


def same_as_tomllib(text: str) -> dict:
    got = _read_catalog_subset(text)
    assert got is not None
    assert got == load_toml_text(text)
    return got


def test_tables_dotted_keys_comments_blank_lines():
    text = (
        "# a comment\n"
        "\n"
        'top.en = "T"  # trailing comment with "quotes" and \\ backslash\n'
        "[TC301]\n"
        'title.en = "A DLL: {dll}"\n'
        'title.zh_CN = "找不到 DLL：{dll}"\n'
        "  [ report . sub ]  \n"
        '\tx . y.en\t=\t"v"\t\n'
        '"type.list".en = "quoted key part"\n'
        "[report]\n"
        'z.en = "later section of a parent table"\n'
        "   \n"
        "#\ttab in a comment\n"
    )
    got = same_as_tomllib(text)
    assert got["TC301"]["title"]["zh_CN"] == "找不到 DLL：{dll}"
    assert got["report"]["sub"]["type.list"] == {"en": "quoted key part"}


def test_empty_text_and_crlf():
    assert same_as_tomllib("") == {}
    assert same_as_tomllib('[a]\r\nb.en = "x"\r\n') == {"a": {"b": {"en": "x"}}}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (r"plain", "plain"),
        (r"tab\there", "tab\there"),
        (r"a\nb", "a\nb"),
        (r"\b\f\r", "\b\f\r"),
        (r"say \"hi\"", 'say "hi"'),
        (r"C:\\Library\\bin", "C:\\Library\\bin"),
        (r"\\n is not a newline", "\\n is not a newline"),
        (r"\u00e9t\u00E9", "été"),
        (r"\u4e2d\u6587", "中文"),
        (r"\U0001F600", "\U0001f600"),
        (r"\U0010FFFF", "\U0010ffff"),
        (r"\u0000", "\x00"),
        ("中文 {name}：完成", "中文 {name}：完成"),
        ("literal\ttab", "literal\ttab"),
        ("", ""),
    ],
)
def test_basic_string_escapes(body, expected):
    got = same_as_tomllib(f'k = "{body}"\n')
    assert got == {"k": expected}


@pytest.mark.parametrize(
    "text",
    [
        # escapes outside TOML 1.0's set, or \u / \U that are not Unicode scalar values
        r'k = "\x41"',
        r'k = "\e"',
        r'k = "\a"',
        r'k = "\ "',
        r'k = "\u12"',
        r'k = "\u12G4"',
        r'k = "\U0001F60"',
        r'k = "\uD800"',
        r'k = "\UDFFF0000"',
        r'k = "\U00110000"',
        r'k = "ends with a backslash\"',
        # other strings and values
        'k = """multi-line"""',
        'k = """\nmulti-line\n"""',
        "k = 'literal'",
        "k = '''literal multi-line'''",
        "k = 1",
        "k = true",
        'k = ["a", "b"]',
        'k = { en = "x" }',
        "k = 1979-05-27",
        'k = "a" "b"',
        'k = "a" b',
        'k = "unterminated',
        # keys
        "'literal key' = \"x\"",
        r'"escaped\tkey" = "x"',
        'a."b\\"c" = "x"',
        'k.en: "x"',
        '= "x"',
        'k. = "x"',
        'a..b = "x"',
        'k.é = "x"',
        # tables
        '[[array]]\nk = "x"',
        "[]",
        "[a",
        "[a] x",
        "[a] = 1",
        '["quoted\\tkey"]',
        "['literal']",
        # control characters and odd lines
        'k = "bell\x07"',
        'k = "del\x7f"',
        'k = "x" # comment with \x01',
        'k = "x"\r',
        'k = "lone\rcr"',
        "\ufeff[a]",
        "not a statement",
    ],
)
def test_outside_the_subset_gives_up(text):
    assert _read_catalog_subset(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # TOML errors the fast reader must not paper over: the fallback raises them as before
        'k = "x"\nk = "y"',
        '[a]\nb.en = "x"\nb.en = "y"',
        "[a]\n[a]",
        '[a]\nb = "x"\n[a.b]',
        '[a.b]\n[a]\nb = "x"',
        'a.b = "x"\n[a]',
        '[t]\na.b = "x"\n[t.a]',
        '[t]\na.b = "x"\n[t.a.c]\n[t]',
        '[t.a]\n[t]\na.b = "x"',
        '[t]\na.b = "x"\n[u]\n[t.a.b]',
        'a = "x"\n[a.b]',
        'a = "x"\na.b = "y"',
        'a.b = "x"\na = "y"',
    ],
)
def test_duplicates_and_reopened_tables_give_up_like_tomllib_fails(text):
    with pytest.raises(TOMLDecodeError):
        load_toml_text(text)
    assert _read_catalog_subset(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # valid TOML with the same tables in unusual orders: the fast reader must agree with tomllib
        '[a.b]\nc = "x"\n[a]\nd = "y"',
        '[t]\na.b = "x"\na.c = "y"\n[u]\nv = "z"',
        '[t]\na.b.c = "x"\n[t.d]\ne = "y"',
        'x.y = "1"\n[z]\nx.y = "2"',
        '"a.b" = "quoted"\na.b = "dotted"',
        '[a]\n[a.b.c]\n[a.b.d]\nk = "x"',
    ],
)
def test_valid_orders_agree_with_tomllib(text):
    same_as_tomllib(text)


# --- _load_file: fast path, fallback and errors -----------------------------------------------------------------


def test_load_file_falls_back_to_tomllib_outside_the_subset(tmp_path, monkeypatch):
    (tmp_path / "odd.toml").write_text("[x]\nliteral.en = 'C:\\bin'\nliteral.zh_CN = \"中\"\n", encoding="utf-8")
    monkeypatch.setattr(messages, "_HERE", tmp_path)
    assert _load_file.__wrapped__("odd.toml") == {"x.literal": {"en": "C:\\bin", "zh_CN": "中"}}


def test_load_file_still_raises_on_a_broken_catalog(tmp_path, monkeypatch):
    (tmp_path / "dup.toml").write_text('[x]\ntitle.en = "a"\ntitle.en = "b"\n', encoding="utf-8")
    (tmp_path / "bad.toml").write_text('[x]\ntitle.en = "unterminated\n', encoding="utf-8")
    monkeypatch.setattr(messages, "_HERE", tmp_path)
    for name in ("dup.toml", "bad.toml"):
        with pytest.raises(TOMLDecodeError):
            _load_file.__wrapped__(name)


# --- the file index: the same as the original ^-anchored scan of read_text ---------------------------------------

# the index's pattern before it was anchored on "\n" for speed
_OLD_TOP_LEVEL = re.compile(r"^\s*(?:\[\s*\"?([A-Za-z0-9_-]+)|([A-Za-z0-9_-]+)\s*[.=])", re.M)

TRICKY = (
    '\n\n  [a]\n\n\tb.en = "x"\n[ "q" . r]\n  \n\n  c = "y"\nd\n= "z"\n\n[e.f]\n',
    '[x]\r\ny.en = "1"\r\rz.en = "2"\r\n  [w]',
    'top.en = "t"',
    "",
    "\n",
    "[\n\nsplit]\nk\n\n.en = 'v'",
)


def _old_index(directory: Path) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*.toml")):
        for match in _OLD_TOP_LEVEL.finditer(path.read_text(encoding="utf-8")):
            files = index.setdefault(match.group(1) or match.group(2), [])
            if path.name not in files:
                files.append(path.name)
    return {k: tuple(v) for k, v in index.items()}


def test_file_index_is_the_original_scan():
    assert messages._file_index() == _old_index(ROOT / "conda_torchcheck" / "messages")


def test_file_index_and_text_on_tricky_files(tmp_path, monkeypatch):
    for i, text in enumerate(TRICKY):
        (tmp_path / f"f{i}.toml").write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(messages, "_HERE", tmp_path)
    for i in range(len(TRICKY)):
        assert messages._read_text(f"f{i}.toml") == (tmp_path / f"f{i}.toml").read_text(encoding="utf-8")
    monkeypatch.setattr(messages, "_catalog_files", lambda: tuple(f"f{i}.toml" for i in range(len(TRICKY))))
    assert messages._file_index.__wrapped__() == _old_index(tmp_path)


# --- Text ---------------------------------------------------------------------------------------------------------


def test_text_compares_and_hashes_by_key_only():
    a, b = msg("TC401.title", library="x"), Text("TC401.title", {"library": "y"})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Text("TC402.title") and a != "TC401.title"
    assert Text("k").params == {} and Text("k").params is not Text("k").params
    assert Text(key="k", params={"n": 1}).params == {"n": 1}
    assert repr(Text("k", {"n": 1})) == "Text(key='k', params={'n': 1})"
    assert str(Text("TC401.title", {"library": "libfoo.so"})) == messages.translate(
        "TC401.title", "en", library="libfoo.so"
    )
    assert not hasattr(a, "__dict__")


# --- start-up cost --------------------------------------------------------------------------------------------

HEAVY = ("typing", "dataclasses", "tomllib", "tomli", "string", "conda_torchcheck._toml")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return set(out.split())


def test_first_translation_imports_no_heavy_module():
    """``import conda_torchcheck.messages`` + a first translate() is on the ``tree`` command's start-up path."""
    baseline = _modules_after("pass")
    after = _modules_after(
        "import conda_torchcheck.messages as m\n"
        "assert m.translate('TC401.title', 'en', library='x') != 'TC401.title'\n"
        "assert m.translate('TC401.title', 'zh_CN', library='x') != 'TC401.title'"
    )
    assert "conda_torchcheck.messages" in after
    assert sorted(m for m in HEAVY if m in after and m not in baseline) == []
