"""knowledge.read_table: the marshal copy of a parsed table is the table, and is used only while it matches."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conda_torchcheck import knowledge
from conda_torchcheck._toml import load_toml_text
from conda_torchcheck.parsed_copy import cache_path

TABLES = sorted(Path(knowledge.__file__).parent.glob("*.toml"))


@pytest.fixture
def prefix(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pyc"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "pyc"


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.name)
def test_every_table_read_through_its_copy_is_the_parsed_table(prefix, table):
    parsed = load_toml_text(table.read_text(encoding="utf-8"))
    assert knowledge.read_table(table) == parsed  # parsed, and the copy written
    assert Path(cache_path(table)).is_file()
    assert Path(cache_path(table)).is_relative_to(prefix)
    assert knowledge.read_table(table) == parsed  # from the copy


def test_a_changed_table_is_parsed_again(prefix, tmp_path):
    table = tmp_path / "t.toml"
    table.write_text('a = "one"\n', encoding="utf-8")
    assert knowledge.read_table(table) == {"a": "one"}
    table.write_text('a = "two"\nb = 2\n', encoding="utf-8")
    assert knowledge.read_table(table) == {"a": "two", "b": 2}
    st = table.stat()
    table.write_text('a = "six"\nb = 2\n', encoding="utf-8")  # same size
    os.utime(table, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert knowledge.read_table(table) == {"a": "six", "b": 2}


def test_a_damaged_copy_is_ignored_and_replaced(prefix, tmp_path):
    table = tmp_path / "t.toml"
    table.write_text("x = [1, 2]\n", encoding="utf-8")
    knowledge.read_table(table)
    copy = Path(cache_path(table))
    for junk in (b"", b"\x00garbage", copy.read_bytes()[:5]):
        copy.write_bytes(junk)
        assert knowledge.read_table(table) == {"x": [1, 2]}


def test_no_copy_is_written_under_dont_write_bytecode(prefix, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    table = tmp_path / "t.toml"
    table.write_text("x = 1\n", encoding="utf-8")
    assert knowledge.read_table(table) == {"x": 1}
    assert not Path(cache_path(table)).exists()


def test_a_value_marshal_cannot_hold_is_parsed_each_time(prefix, tmp_path):
    table = tmp_path / "t.toml"
    table.write_text("when = 2024-01-02\n", encoding="utf-8")
    first = knowledge.read_table(table)
    assert not Path(cache_path(table)).exists()
    assert knowledge.read_table(table) == first


def test_an_unwritable_cache_folder_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(sys, "pycache_prefix", str(blocker))  # a file where the folder would be
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    table = tmp_path / "t.toml"
    table.write_text("x = 1\n", encoding="utf-8")
    assert knowledge.read_table(table) == {"x": 1}
    assert sorted(tmp_path.iterdir()) == sorted([blocker, table])


def test_every_message_catalog_read_through_its_copy_is_the_parsed_catalog(prefix):
    from conda_torchcheck import messages
    from conda_torchcheck.parsed_copy import read_parsed

    for name in messages._catalog_files():
        parsed = messages._parse_file(name)
        path = messages._HERE / name
        assert read_parsed(path, lambda _p, name=name: messages._parse_file(name)) == parsed
        assert Path(cache_path(path)).is_file()
        assert read_parsed(path, lambda _p: pytest.fail("parsed again")) == parsed
