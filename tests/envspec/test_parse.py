"""Reading environment files: encodings, positions, and a clear error (with the line) for bad input."""

from __future__ import annotations

import codecs

import pytest

from conda_torchcheck.envspec.parse import SpecFileError, decode, encode, parse_bytes, parse_text

SEED = """name: pytorch_env
channels:
  - pytorch
  - nvidia
  - defaults
dependencies:
  - python=3.11
  - pytorch
  - torchvision
  - torchaudio
  - pytorch-cuda=11.8
"""


def test_positions_are_one_based_lines():
    f = parse_text(SEED, "environment.yml")
    assert [c.name for c in f.channels] == ["pytorch", "nvidia", "defaults"]
    assert f.channels[0].where.line == 3
    assert [(d.name, d.where.line) for d in f.deps][-1] == ("pytorch-cuda", 11)
    assert f.deps[-1].where.column == 5
    assert f.pip is None and f.name == "pytorch_env"


def test_pip_section_and_index():
    f = parse_text(
        "dependencies:\n  - python=3.11\n  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/cu121\n"
        "    - torch==2.3.0+cu121\n"
    )
    assert f.pip_index == 1
    assert [p.line.kind for p in f.pip] == ["option", "requirement"]
    assert f.pip[1].line.local_tag == "cu121"
    assert f.pip[1].where.line == 5


@pytest.mark.parametrize(
    "data, encoding, bom",
    [
        (SEED.encode(), "utf-8", False),
        (codecs.BOM_UTF8 + SEED.encode(), "utf-8", True),
        (codecs.BOM_UTF16_LE + SEED.encode("utf-16-le"), "utf-16-le", True),
        (codecs.BOM_UTF16_BE + SEED.encode("utf-16-be"), "utf-16-be", True),
    ],
)
def test_encodings_round_trip(data, encoding, bom):
    text, enc, had_bom = decode(data, "f")
    assert (enc, had_bom) == (encoding, bom)
    assert text == SEED
    assert encode(text, enc, had_bom) == data
    assert parse_bytes(data).deps[1].name == "pytorch"


def test_gbk_file_is_refused_with_its_line():
    data = "name: x\n# 中文注释\ndependencies:\n  - python\n".encode("gbk")
    with pytest.raises(SpecFileError) as info:
        decode(data, "env.yml")
    assert info.value.key == "not_utf8"
    assert info.value.line == 2
    assert "env.yml:2:" in str(info.value)
    assert "UTF-8" in str(info.value)


def test_utf16_without_bom_is_refused():
    with pytest.raises(SpecFileError) as info:
        decode(SEED.encode("utf-16-le"), "env.yml")
    assert info.value.key == "utf16_no_bom"


def test_tab_indentation_names_the_line():
    with pytest.raises(SpecFileError) as info:
        parse_text("name: x\ndependencies:\n\t- python\n", "env.yml")
    assert info.value.key == "tab" and info.value.line == 3
    assert "tab" in str(info.value)


def test_duplicate_key_names_both_lines():
    with pytest.raises(SpecFileError) as info:
        parse_text("dependencies:\n  - numpy\nname: x\ndependencies:\n  - pytorch\n", "env.yml")
    assert info.value.key == "duplicate_key"
    assert info.value.line == 4 and info.value.params["first"] == 1


def test_malformed_yaml_names_the_line():
    with pytest.raises(SpecFileError) as info:
        parse_text("name: x\ndependencies:\n  - python: 3: 4\n", "env.yml")
    assert info.value.key == "yaml" and info.value.line == 3


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("", "empty", None),
        ("- python\n- pytorch\n", "not_mapping", 1),
        ("channels: conda-forge\ndependencies:\n  - python\n", "type.list", 1),
        ("channels:\n  - 3\ndependencies:\n  - python\n", "type.string_item", 2),
        ("dependencies:\n  - 3.11\n", "type.dependency", 2),
        ("dependencies:\n  - pip: torch\n", "type.list", 2),
        ("dependencies: pytorch\n", "type.list", 1),
        ("name: [a]\ndependencies:\n  - python\n", "type.string", 1),
        ("variables: 3\ndependencies:\n  - python\n", "type.mapping", 1),
        ("a: 1\n---\nb: 2\n", "several_documents", 2),
    ],
)
def test_wrong_shapes_are_clear_errors(text, key, line):
    with pytest.raises(SpecFileError) as info:
        parse_text(text, "env.yml")
    assert info.value.key == key
    assert info.value.line == line
    assert str(info.value).startswith("env.yml")


def test_an_empty_dependency_item_is_recorded_and_the_rest_is_read():
    # conda 26.7 raises TypeError on `- # comment`; the file is still checked, TC618.empty_item reports the line
    file = parse_text("name: x\ndependencies:\n  - # CUDA\n  - python\n  -\n", "env.yml")
    assert [d.name for d in file.deps] == ["python"]
    assert file.empty_dep_lines == (3, 5)
    assert file.other_dep_items == (0, 2)


def test_a_second_pip_list_replaces_the_first_as_conda_reads_it():
    # blind-k k022: conda 26.7.1's from_file keeps {'pip': ['b']} for two `- pip:` items
    file = parse_text("dependencies:\n  - pip:\n    - a\n  - numpy\n  - pip:\n    - b\n", "env.yml")
    assert [p.text for p in file.pip or ()] == ["b"]
    assert file.dropped_pip_lines == (2,)
    assert file.pip_index == 2 and file.other_dep_items == (0,)


def test_a_conda_mapping_is_recorded_with_the_entries_it_replaces():
    # blind-m m034: conda 26.7.1's Dependencies.parse keeps the mapping's list, python=3.9 above it is dropped
    file = parse_text("dependencies:\n  - python=3.9\n  - pip\n  - conda:\n    - pytorch\n", "env.yml")
    assert file.conda_mappings == ((4, (2, 3)),)


def test_errors_are_translated():
    from conda_torchcheck.messages import set_language

    set_language("zh_CN")
    with pytest.raises(SpecFileError) as info:
        parse_text("name: x\ndependencies:\n\t- python\n", "env.yml")
    assert "制表符" in str(info.value)


def test_aliases_are_detected():
    f = parse_text("base: &b python=3.11\ndependencies:\n  - *b\n  - pytorch\n")
    assert f.uses_aliases


def test_unknown_dependency_mapping_is_kept_apart():
    f = parse_text("dependencies:\n  - python\n  - conda:\n    - x\n")
    assert f.other_dep_items == (1,)
