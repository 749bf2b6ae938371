"""The loaders' contract: one dispatch by OS, the same entry points in every loader module, one Unreadable."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from conda_torchcheck.binaries import elf, macho, pe
from conda_torchcheck.binaries.unreadable import Unreadable
from conda_torchcheck.inventory.model import HostFacts
from conda_torchcheck.loader.contract import LOADER_MODULES, FileContext, for_os

SOURCE = Path(__file__).resolve().parents[2] / "conda_torchcheck"


@pytest.mark.parametrize("os_name", sorted(LOADER_MODULES))
def test_every_loader_offers_the_same_entry_points(os_name):
    loader = for_os(os_name)
    for name in ("build_torch_graph", "build_graph_for_file", "report_facts"):
        params = list(inspect.signature(getattr(loader, name)).parameters)
        assert params[0] == "ctx", (os_name, name)


def test_other_oses_have_no_loader():
    assert for_os("freebsd") is None and for_os(None) is None


def test_the_loader_is_chosen_by_os_in_one_place():
    """No other module maps an OS name to a loader module."""
    offenders = []
    for path in SOURCE.rglob("*.py"):
        if path.name == "contract.py":
            continue
        text = path.read_text(encoding="utf-8")
        if '"conda_torchcheck.loader.windows"' in text or "from conda_torchcheck.loader import windows" in text:
            if "checks" not in path.parts:  # the Windows checks use Windows-only helpers of the model
                offenders.append(str(path.relative_to(SOURCE)))
    assert offenders == []


def test_one_unreadable_for_every_reader():
    assert elf.Unreadable is pe.Unreadable is macho.Unreadable is Unreadable
    results = [
        elf.parse_bytes(b"not an elf"),
        pe.read_pe(Path(__file__)),
        macho.parse_bytes(b"not a mach-o"),
    ]
    assert [type(r) for r in results] == [Unreadable] * 3
    assert [r.format for r in results] == ["ELF", "PE", "Mach-O"]
    assert not any(results)  # falsy for every reader


def test_a_file_context_has_its_own_memo():
    ctx = FileContext(HostFacts(live=False, environ={}))
    calls = []
    assert ctx.memo("k", lambda: calls.append(1) or 42) == 42
    assert ctx.memo("k", lambda: calls.append(1) or 43) == 42
    assert calls == [1] and ctx.env is None


@pytest.mark.parametrize("module", ["linux", "macos", "windows"])
def test_search_steps_are_named_constants(module):
    """Every loader names its search steps once (STEP_*), never as literals at the places it records."""
    package = SOURCE / "loader" / module  # a loader split into a package names them in one of its modules
    sources = sorted(package.glob("*.py")) if package.is_dir() else [SOURCE / "loader" / f"{module}.py"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    assert not re.search(r'\b(?:SearchPlace|Place)\("', text)
    assert re.search(r"^STEP_LOADED = ", text, re.M)
