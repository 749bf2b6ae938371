"""TC308 (torch's files against RECORD / conda-meta) and TC309 (DLLs in torch\\lib that are not torch's)."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import win_integrity
from conda_torchcheck.checks.context import CheckOptions
from conda_torchcheck.findings import Severity
from tests.loader import windows_layouts as wl
from tests.loader.test_windows import put


def run(ctx):
    return list(win_integrity.CHECK.run(ctx))


@pytest.fixture
def torch230(tmp_path):
    return wl.torch_env(tmp_path, "2.3.0")


@pytest.mark.realdata
def test_intact_install_is_silent(torch230, tmp_path):
    assert run(wl.context(torch230.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")) == []


@pytest.mark.realdata
def test_missing_truncated_and_altered_files(torch230, tmp_path):
    lib = torch230.site_packages / "torch" / "lib"
    (lib / "c10.dll").unlink()  # quarantined
    wl.replace_file(lib / "torch.dll", (lib / "torch.dll").read_bytes()[:4096])  # emptied half-way
    data = bytearray((lib / "shm.dll").read_bytes())
    data[5000] ^= 0xFF
    wl.replace_file(lib / "shm.dll", bytes(data))  # same size, other content
    ctx = wl.context(torch230.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")
    (f,) = run(ctx)
    assert (f.id, f.severity) == ("TC308", Severity.ERROR)
    assert f.evidence["missing"] == [str(lib / "c10.dll")]
    assert f.evidence["wrong_size"] == [f"{lib / 'torch.dll'}: 4096 bytes, expected 9728"]
    assert f.evidence["wrong_content"] == [str(lib / "shm.dll")]
    assert f.evidence["manifest"] == "torch-2.3.0.dist-info/RECORD"
    (fix,) = f.fixes
    assert fix.kind == "pip" and '--force-reinstall --no-deps "torch==2.3.0+cpu"' in fix.commands[0]


@pytest.mark.realdata
def test_no_hashes_checks_presence_and_size_only(torch230, tmp_path):
    lib = torch230.site_packages / "torch" / "lib"
    data = bytearray((lib / "shm.dll").read_bytes())
    data[5000] ^= 0xFF
    wl.replace_file(lib / "shm.dll", bytes(data))
    ctx = wl.context(torch230.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")
    ctx.options = CheckOptions(verify_hashes=False)
    assert run(ctx) == []


@pytest.mark.realdata
def test_leftover_dll_in_torch_lib(torch230, tmp_path):
    put(torch230.site_packages / "torch" / "lib", "x64/libc.dll", "cudnn64_8.dll")
    ctx = wl.context(torch230.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")
    (f,) = run(ctx)
    assert (f.id, f.severity, f.title.key) == ("TC309", Severity.WARNING, "TC309.title")
    assert f.evidence["not_listed"][0].startswith(str(torch230.site_packages / "torch" / "lib" / "cudnn64_8.dll"))
    assert f.fixes[0].commands == (f'del "{torch230.site_packages / "torch" / "lib" / "cudnn64_8.dll"}"',)


@pytest.mark.realdata
def test_leftover_dll_that_breaks_the_preload(torch230, tmp_path):
    put(torch230.site_packages / "torch" / "lib", "x64/liba.dll", "caffe2_nvrtc.dll")  # needs libb.dll: absent
    ctx = wl.context(torch230.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")
    (f,) = run(ctx)
    assert (f.severity, f.title.key) == (Severity.ERROR, "TC309.breaks.title")
    assert "caffe2_nvrtc.dll" in f.evidence["error"]


def test_conda_manifest(tmp_path):
    b = wl.windows_env(tmp_path)
    dll = wl.fixture("x64/libc.dll").read_bytes()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    b.conda_record("libtorch", "2.5.1", "cpu_mkl_h0000000_100", files={"Library/bin/torch_cpu.dll": dll})
    ctx = wl.context(b.prefix, system_root=wl.fake_windows(tmp_path / "W"), path="")
    assert run(ctx) == []
    wl.replace_file(b.prefix / "Library" / "bin" / "torch_cpu.dll", dll[:1000])
    (f,) = run(wl.context(b.prefix, system_root=wl.fake_windows(tmp_path / "W"), path=""))
    assert f.id == "TC308"
    assert f.evidence["manifest"].startswith("conda-meta/pytorch-2.5.1-")
    assert f.fixes[0].kind == "conda" and "--force-reinstall pytorch libtorch" in f.fixes[0].commands[0]


def test_hash_cache_skips_unchanged_files_and_rehashes_changed_ones(tmp_path, monkeypatch):
    import base64
    import hashlib
    import os

    data = b"\x4d\x5a" + b"x" * 5000
    target = tmp_path / "lib" / "a.dll"
    target.parent.mkdir()
    target.write_bytes(data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    entries = [win_integrity.Entry(str(target), digest, len(data), ".dll")]
    calls = []
    real = win_integrity.sha256_file
    monkeypatch.setattr(win_integrity, "sha256_file", lambda p: calls.append(p) or real(p))
    location = tmp_path / "cache" / "hashes.json"
    assert win_integrity.verify(entries, hashes=True, cache=win_integrity.HashCache(location)) == ([], [], [])
    assert win_integrity.verify(entries, hashes=True, cache=win_integrity.HashCache(location)) == ([], [], [])
    assert len(calls) == 1  # the second run used the cache
    target.write_bytes(b"\x4d\x5a" + b"y" * 5000)  # same size, new content and modification time
    os.utime(target, ns=(1, 1))
    missing, wrong_size, altered = win_integrity.verify(entries, hashes=True, cache=win_integrity.HashCache(location))
    assert [e.path for e in altered] == [str(target)] and len(calls) == 2


def test_hash_cache_location_and_opt_out(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CONDA_TORCHCHECK_NO_CACHE", raising=False)
    if os_name() != "nt":
        assert win_integrity.HashCache.default_location() == tmp_path / "xdg" / "conda-torchcheck" / "hashes-v1.json"
    monkeypatch.setenv("CONDA_TORCHCHECK_NO_CACHE", "1")
    assert win_integrity.HashCache.default_location() is None


def os_name() -> str:
    import os

    return os.name
