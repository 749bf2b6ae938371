"""TC306 (what torch's PATH fallback finds or swaps in) and TC307 (conda DLL folders on PATH, with their relevance)."""

from __future__ import annotations

from conda_torchcheck.checks import win_path
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import fake_torch, put


def run(ctx):
    return list(win_path.CHECK.run(ctx))


def test_dll_found_only_on_path(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll"})
    tools = tmp_path / "tools"
    put(tools, "x64/libb.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=str(tools)))
    assert (f.id, f.severity, f.title.key) == ("TC306", Severity.WARNING, "TC306.title")
    assert f.evidence["found_by_fallback"] == str(tools / "libb.dll")
    assert [line.split(":")[0] for line in f.evidence["first_attempt_searched"]] == [
        "dll-load-dir",
        "application-dir",
        "add_dll_directory",
        "add_dll_directory",
        "add_dll_directory",
        "system32",
    ]


def test_fallback_swaps_in_a_copy_from_the_current_folder(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba_fwd.dll": "x64/liba_fwd.dll"})
    put(b.prefix / "Library" / "bin", "x64/libb.dll")  # what the safe search uses
    cwd = tmp_path / "project"
    put(cwd, "x64/libb.dll")  # what the classic search finds first (CWD comes before PATH)
    tools = tmp_path / "tools"
    put(tools, "x64/libc.dll")  # libb forwards to libc, which only PATH has: the first attempt fails
    win = wl.fake_windows(tmp_path / "Windows")
    findings = run(wl.context(b.prefix, system_root=win, path=str(tools), cwd=cwd))
    by_key = {f.title.key: f for f in findings if f.id == "TC306"}
    shadow = by_key["TC306.shadow.title"]
    assert shadow.evidence["safe_search_uses"] == str(b.prefix / "Library" / "bin" / "libb.dll")
    assert shadow.evidence["fallback_uses"] == str(cwd / "libb.dll")
    assert by_key["TC306.title"].evidence["found_by_fallback"] == str(tools / "libc.dll")


def test_conda_folders_on_path_are_redundant_when_no_fallback_happens(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"libc.dll": "x64/libc.dll"})
    other = "C:\\Users\\me\\miniconda3\\envs\\old\\Library\\bin"
    path = f"{b.prefix / 'Library' / 'bin'};{other};C:\\Windows\\system32"
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=path))
    assert (f.id, f.severity, f.title.key) == ("TC307", Severity.INFO, "TC307.title")
    relevance = {row["entry"]: row["relevance"] for row in f.evidence["path_entries"]}
    assert relevance[str(b.prefix / "Library" / "bin")].startswith("this environment's folder: redundant")
    assert relevance[other].startswith("another environment's folder")
    assert f.evidence["torch_fallback_reached"] is False


def test_conda_folders_on_path_matter_when_the_fallback_runs(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll"})
    other = tmp_path / "other" / "Library" / "bin"
    put(other, "x64/libb.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    findings = run(wl.context(b.prefix, system_root=win, path=str(other)))
    assert {f.title.key for f in findings} == {"TC306.title", "TC307.reached.title"}


def test_nothing_to_say_about_an_ordinary_path(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"libc.dll": "x64/libc.dll"})
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(b.prefix, system_root=win, path="C:\\Windows\\system32;C:\\Program Files\\Git\\cmd")) == []
    assert run(wl.context(b.prefix, system_root=win)) == []  # PATH unknown: no claim about it
