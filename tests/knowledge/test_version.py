"""knowledge.version, the package's one version parser, and a guard that no module grows its own again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.version import Version

from conda_torchcheck.knowledge.version import (
    base_version,
    cuda_tag_version,
    minor_of,
    numbers,
    parse_version,
    release_key,
)

PACKAGE = Path(__file__).resolve().parents[2] / "conda_torchcheck"
#: binaries/ and loader/ parse the versions stored in binary headers themselves (their owners' next step)
NOT_YET = ("binaries/", "loader/")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2.5.1", "2.5.1"), ("2.5.1+cu121", "2.5.1+cu121"), ("2024.1.0_1", "2024.1.0.1"), ("1!2.0", "1!2.0"),
     ("", None), (None, None), ("abc", None), ("11.8.0_abc", "11.8.0")],
)  # fmt: skip
def test_parse_version(text, expected):
    assert parse_version(text) == (Version(expected) if expected else None)


def test_release_key_reads_the_leading_dotted_numbers():
    assert release_key("2.6.0.dev20241112") == (2, 6, 0)
    assert release_key("0.1.6.post22") == (0, 1, 6)
    assert release_key("2.5.1+cu121") == (2, 5, 1)
    assert release_key("1.10") == (1, 10) > release_key("1.9")
    assert release_key("") == ()


def test_numbers_reads_file_and_os_versions():
    assert numbers("14.40.33810.0") == (14, 40, 33810, 0)
    assert numbers("10.0.22621.1 (WinBuild)") == (10, 0, 22621, 1)
    assert numbers(None) == numbers("none") == ()


def test_the_small_pieces():
    assert base_version(" 2.5.1+cu121 ") == "2.5.1"
    assert minor_of("2.5.1+cu121") == "2.5" and minor_of("x") is None
    assert cuda_tag_version("cu118") == "11.8" and cuda_tag_version("cu132") == "13.2"


_OWN_PARSER = re.compile(r"tuple\(int\(|(?<![\w.])Version\(|InvalidVersion|def _(?:v|key|tuple|vkey)\(")


def test_no_module_has_a_version_parser_of_its_own():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "knowledge/version.py" or rel.startswith(NOT_YET):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _OWN_PARSER.search(line.split("#", 1)[0]):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "use conda_torchcheck.knowledge.version:\n" + "\n".join(found)
