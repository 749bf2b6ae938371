"""TC301 (missing DLL, by kind), TC310 (System32 not examined), TC903 (unreadable binary) on Windows envs."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import win_missing
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import fake_torch, put


def run(ctx):
    return list(win_missing.CHECK.run(ctx))


def variant(f) -> str:
    parts = f.title.key.split(".")
    return parts[1] if len(parts) == 3 else ""


def commands(f) -> list[str]:
    return [c for fix in f.fixes for c in fix.commands]


@pytest.mark.realdata
def test_vc_runtime_missing_in_conda_env(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.3.0")
    win = wl.fake_windows(tmp_path / "Windows")
    findings = run(wl.context(b.prefix, system_root=win, path=""))
    vc = next(f for f in findings if variant(f) == "vc_runtime")
    assert vc.severity is Severity.ERROR
    assert set(vc.evidence["missing"]) == {"VCRUNTIME140_1.dll", "MSVCP140.dll", "VCOMP140.DLL"}
    assert "c10.dll" in vc.evidence["needed_by"]["MSVCP140.dll"]
    assert "c10.dll" in vc.evidence["needed_by"]["VCRUNTIME140_1.dll"]
    assert vc.evidence["windows_blames"] == "asmjit.dll"
    assert "asmjit.dll" in vc.evidence["error"] and "WinError 126" in vc.evidence["error"]
    cmds = commands(vc)
    assert f'conda install -p "{b.prefix}" -c conda-forge "vc14_runtime>=14.42"' in cmds
    # the env has no runtime of its own: the system redistributable helps too, with admin rights
    redist = next(fix for fix in vc.fixes if fix.kind == "system")
    assert redist.needs_admin and "https://aka.ms/vc14/vc_redist.x64.exe" in redist.commands
    # mkl comes second: torch_cpu.dll is reached later in the preload order
    assert [variant(f) for f in findings if f.id == "TC301"] == ["vc_runtime", "mkl"]


@pytest.mark.realdata
def test_vc_runtime_missing_in_venv_points_at_the_redistributable(tmp_path):
    base = wl.python_org_base(tmp_path / "Python311")
    venv = wl.venv_on(tmp_path, base)
    wl.install_torch(venv, "2.3.0")
    win = wl.fake_windows(tmp_path / "Windows")
    vc = next(f for f in run(wl.context(venv.prefix, system_root=win, path="")) if variant(f) == "vc_runtime")
    # vcruntime140.dll and vcruntime140_1.dll come with python.org Python
    assert set(vc.evidence["missing"]) == {"MSVCP140.dll", "VCOMP140.DLL"}
    assert [fix.kind for fix in vc.fixes] == ["system"]
    assert vc.fixes[0].needs_admin
    assert vc.evidence["runtime_found"]["vcruntime140_1.dll"].startswith(str(base))


@pytest.mark.realdata
def test_new_runtime_dll_variant(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.34")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = [f for f in run(wl.context(b.prefix, system_root=win, path="")) if f.id == "TC301"]
    assert variant(f) == "vc_runtime_new"
    assert f.evidence["missing"] == "VCRUNTIME140_THREADS.dll"
    assert f.evidence["chain"] == "shm.dll -> torch_cpu.dll -> VCRUNTIME140_THREADS.dll"
    # msvcp140 14.34 < 14.40: c10.dll fails before shm.dll is reached, and the finding says so
    assert "WinError 1114" in f.evidence["fails_earlier"] and "c10.dll" in f.evidence["fails_earlier"]
    # the env's own copy wins: only the conda package fixes it, a system redistributable does not
    assert any("vc14_runtime>=14.42" in c for c in commands(f))
    assert not any(fix.needs_admin for fix in f.fixes)


@pytest.mark.realdata
def test_new_runtime_is_clean_with_1442(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.42")
    win = wl.fake_windows(tmp_path / "Windows")
    assert run(wl.context(b.prefix, system_root=win, path="")) == []


@pytest.mark.realdata
def test_libomp140_for_240(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.4.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (f.id, variant(f)) == ("TC301", "libomp140")
    assert [p.rsplit("/", 1)[-1] for p in f.evidence["needed_by"]] == ["fbgemm.dll", "torch_cpu.dll"]
    assert f.evidence["windows_blames"] == "fbgemm.dll"
    assert any('"torch>=2.4.1"' in c for c in commands(f))


@pytest.mark.realdata
def test_mkl_in_user_base_is_shown_as_present_but_not_searched(tmp_path):
    b = wl.torch_env(tmp_path, "2.3.0")
    roaming = tmp_path / "AppData" / "Roaming"
    put(roaming / "Python" / "Library" / "bin", "x64/libc.dll", "mkl_intel_thread.1.dll")
    win = wl.fake_windows(tmp_path / "Windows")
    (f,) = run(wl.context(b.prefix, system_root=win, path="", APPDATA=str(roaming)))
    assert variant(f) == "mkl"
    where = roaming / "Python" / "Library" / "bin" / "mkl_intel_thread.1.dll"
    assert f.evidence["present_but_not_searched"] == {"mkl_intel_thread.1.dll": [str(where)]}


def test_torch_file_missing_and_generic(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {"liba.dll": "x64/liba.dll"})
    win = wl.fake_windows(tmp_path / "Windows")
    (generic,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert (generic.id, variant(generic), generic.evidence["missing"]) == ("TC301", "", "libb.dll")
    assert generic.evidence["searched"][0].startswith("1. ")
    # the same name listed in torch's RECORD makes it "a DLL of torch itself"
    b.dist("torch", "2.5.1", files={"torch/lib/libb.dll": b"x"})
    (b.site_packages / "torch" / "lib" / "libb.dll").unlink()
    (own,) = run(wl.context(b.prefix, system_root=win, path=""))
    assert variant(own) == "torch_file"
    assert any("--force-reinstall" in c for c in commands(own))


def test_variant_by_dll_name(tmp_path):
    b = wl.windows_env(tmp_path)
    fake_torch(b, "2.5.1", {})
    win = wl.fake_windows(tmp_path / "Windows")
    ctx = wl.context(b.prefix, system_root=win, path="")
    assert win_missing._variant(ctx, "python310.dll", set()) == "python"
    assert win_missing._variant(ctx, "cudnn_ops64_9.dll", set()) == "cuda"
    assert win_missing._variant(ctx, "mkl_core.2.dll", set()) == "mkl"


def test_nothing_without_torch_or_on_linux(tmp_path, make_env):
    b = wl.windows_env(tmp_path)
    assert run(wl.context(b.prefix)) == []
    assert win_missing.CHECK.platforms == ("windows",)


@pytest.mark.realdata
def test_system_unknown_gives_tc310_not_tc301_for_the_runtime(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    findings = run(wl.context(b.prefix))  # no --system-root
    assert [f.id for f in findings] == ["TC310"]
    (f,) = findings
    assert f.severity is Severity.WARNING
    assert "VCRUNTIME140_THREADS.dll" in f.evidence["depends_on_system32"]
    assert "MSVCP140.dll" in f.evidence["depends_on_system32"]
    assert "KERNEL32.dll" not in f.evidence["depends_on_system32"]
    assert "--system-root" in commands(f)[0]


@pytest.mark.realdata
def test_no_tc310_when_the_env_brings_its_runtime(tmp_path):
    b = wl.windows_env(tmp_path)
    wl.install_torch(b, "2.15.0")
    wl.install_runtime(b.prefix, "msvc-runtime-14.44")
    assert run(wl.context(b.prefix)) == []


@pytest.mark.realdata
def test_truncated_dll_is_tc903(tmp_path):
    b = wl.torch_env(tmp_path, "2.3.0")
    c10 = b.site_packages / "torch" / "lib" / "c10.dll"
    wl.replace_file(c10, c10.read_bytes()[:100_000])
    win = wl.fake_windows(tmp_path / "Windows")
    findings = run(wl.context(b.prefix, system_root=win, path=""))
    unreadable = [f for f in findings if f.id == "TC903"]
    assert [f.evidence["file"] for f in unreadable] == [str(c10)]
    assert "truncated" in unreadable[0].evidence["problem"]
