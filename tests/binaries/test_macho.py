"""The Mach-O reader against an independent one (llvm-objdump --macho) on real macOS wheels' binaries, and on
generated thin and fat images; bad input is a value, never an exception."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conda_torchcheck.binaries import macho as M
from conda_torchcheck.binaries.headers import sniff
from tests.binaries import machogen as gen

OBJDUMP = shutil.which("llvm-objdump") or ("/usr/bin/llvm-objdump" if Path("/usr/bin/llvm-objdump").exists() else None)
needs_objdump = pytest.mark.skipif(OBJDUMP is None, reason="llvm-objdump not installed")

TORCH_MEMBERS = ("torch/lib/*", "torch/_C*.so", "torch/bin/torch_shm_manager", "torch/__init__.py")


def torch_arm64() -> Path:
    from tests.realdata import extract

    return extract("torch-2.5.1-macos-arm64", TORCH_MEMBERS)


def real_files() -> list[Path]:
    from tests.realdata import extract

    root = torch_arm64()
    files = [root / "torch" / "_C.cpython-311-darwin.so", root / "torch" / "bin" / "torch_shm_manager"]
    files += [root / "torch" / "lib" / n for n in ("libomp.dylib", "libtorch_python.dylib", "libc10.dylib")]
    x86 = extract("torch-2.2.2-macos-x86_64", ("torch/_C*.so", "torch/lib/libiomp5.dylib", "torch/lib/libc10.dylib"))
    files += [x86 / "torch" / "_C.cpython-311-darwin.so", x86 / "torch" / "lib" / "libiomp5.dylib"]
    sk = extract("scikit-learn-1.5.2-macos-arm64", ("sklearn/.dylibs/*",))
    files.append(sk / "sklearn" / ".dylibs" / "libomp.dylib")
    lgb = extract("lightgbm-4.5.0-macos-arm64", ("lightgbm/lib/*",))
    files.append(lgb / "lightgbm" / "lib" / "lib_lightgbm.dylib")
    nj = extract("ninja-1.11.1.1-macos-universal2", ("ninja/data/bin/ninja",))
    files.append(nj / "ninja" / "data" / "bin" / "ninja")
    return files


def objdump_commands(path: Path, arch: str | None) -> dict:
    """What llvm-objdump says: dylib commands (kind, name), rpaths, install name, minos/sdk, per slice."""
    cmd = [OBJDUMP, "--macho", "--private-headers"] + ([f"--arch={arch}"] if arch else []) + [str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    kinds = {"LC_LOAD_DYLIB": "load", "LC_LOAD_WEAK_DYLIB": "weak", "LC_REEXPORT_DYLIB": "reexport",
             "LC_LAZY_LOAD_DYLIB": "lazy", "LC_LOAD_UPWARD_DYLIB": "upward"}  # fmt: skip
    result: dict = {"dylibs": [], "rpaths": [], "install_name": None, "minos": None, "sdk": None}
    current = None
    for line in out.splitlines():
        m = re.match(r"\s*cmd (LC_\w+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"\s*(name|path) (.*) \(offset \d+\)$", line)
        if m and current:
            if current in kinds:
                result["dylibs"].append((kinds[current], m.group(2)))
            elif current == "LC_ID_DYLIB":
                result["install_name"] = m.group(2)
            elif current == "LC_RPATH":
                result["rpaths"].append(m.group(2))
            continue
        m = re.match(r"\s*(minos|version|sdk) (\S+)$", line)
        if (
            m
            and current in ("LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX")
            and result["sdk" if m.group(1) == "sdk" else "minos"] is None
        ):
            result["sdk" if m.group(1) == "sdk" else "minos"] = m.group(2)
    return result


def _norm(version: str | None) -> str | None:
    if version is None:
        return None
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


@needs_objdump
def test_real_wheels_match_llvm_objdump():
    compared = 0
    for path in real_files():
        info = M.read_macho(path)
        assert isinstance(info, M.MachOFile), (path, info)
        for sl in info.slices:
            want = objdump_commands(path, sl.arch if info.fat else None)
            assert [(d.kind, d.name) for d in sl.dylibs] == want["dylibs"], path
            assert list(sl.rpaths) == want["rpaths"], path
            assert sl.install_name == want["install_name"], path
            assert sl.minos_text == _norm(want["minos"]), path
            assert sl.sdk_text == _norm(want["sdk"]), path
            compared += 1
    assert compared >= 11


def test_torch_251_c_module_has_the_build_machine_rpath_first():
    c = M.read_macho(torch_arm64() / "torch" / "_C.cpython-311-darwin.so")
    assert isinstance(c, M.MachOFile) and not c.fat
    sl = c.slices[0]
    assert sl.arch == "arm64" and sl.minos_text == "11.0"
    assert sl.rpaths[0].startswith("/Users/runner/") and sl.rpaths[-1] == "@loader_path/lib"
    assert [d.name for d in sl.dylibs] == ["@rpath/libtorch_python.dylib", "/usr/lib/libSystem.B.dylib"]


def test_universal2_slices():
    from tests.realdata import extract

    nj = extract("ninja-1.11.1.1-macos-universal2", ("ninja/data/bin/ninja",)) / "ninja" / "data" / "bin" / "ninja"
    info = M.read_macho(nj)
    assert isinstance(info, M.MachOFile) and info.fat and info.archs == ("x86_64", "arm64")
    assert info.slice_for("arm64").is_executable and info.slice_for("x86_64").minos_text == "10.9"
    assert info.slice_for("arm64e").arch == "arm64"  # an arm64e process loads a plain arm64 slice
    assert sniff(nj).format == "macho"


@needs_objdump
def test_exports_and_undefined_match_llvm_objdump():
    files = [p for p in real_files() if p.name in ("libomp.dylib", "libc10.dylib", "libiomp5.dylib")]
    assert files
    for path in files:
        info = M.read_macho(path)
        sl = info.slices[0]
        out = subprocess.run([OBJDUMP, "--macho", "--exports-trie", str(path)], capture_output=True, text=True).stdout
        want = {line.split()[1] for line in out.splitlines() if re.match(r"0x[0-9A-F]+\s+\S", line)}
        got = M.read_exports(path, sl)
        assert got == want, path
        syms = subprocess.run([OBJDUMP, "--macho", "--syms", str(path)], capture_output=True, text=True).stdout
        und = {line.split()[-1] for line in syms.splitlines() if "*UND*" in line}
        undefined = M.read_undefined(path, sl)
        assert {n for n, _o, _w in undefined} == und, path
        assert all(1 <= o <= len(sl.dylibs) or o in (0, 0xFE, 0xFF) for _n, o, _w in undefined)
        sample = sorted(got)[::7] + ["_no_such_symbol", sorted(got)[0][:-1]]  # present, absent, a strict prefix
        assert M.read_exported(path, sl, sample) == {n for n in sample if n in got}, path
    omp = next(p for p in files if p.name == "libomp.dylib")
    assert "___kmpc_fork_call" in M.read_exports(omp, M.read_macho(omp).slices[0])


@needs_objdump
def test_generated_images_match_llvm_objdump(tmp_path):
    thin = gen.image(
        "arm64",
        install_name="@rpath/liba.dylib",
        dylibs=["@rpath/libb.dylib", ("/usr/lib/libobjc.A.dylib", "weak"), ("@rpath/libc.dylib", "reexport")],
        rpaths=["@loader_path", "/opt/x"],
        minos="12.3",
    )
    old = gen.image("x86_64", install_name="@rpath/liba.dylib", version_min=True, minos="10.9", sdk="10.15")
    (tmp_path / "thin.dylib").write_bytes(thin)
    (tmp_path / "fat.dylib").write_bytes(gen.fat([old, thin]))
    for name in ("thin.dylib", "fat.dylib"):
        info = M.read_macho(tmp_path / name)
        assert isinstance(info, M.MachOFile)
        for sl in info.slices:
            want = objdump_commands(tmp_path / name, sl.arch if info.fat else None)
            assert [(d.kind, d.name) for d in sl.dylibs] == want["dylibs"]
            assert list(sl.rpaths) == want["rpaths"] and sl.install_name == want["install_name"]
            assert sl.minos_text == _norm(want["minos"]) and sl.sdk_text == _norm(want["sdk"])
    fat = M.read_macho(tmp_path / "fat.dylib")
    assert fat.archs == ("x86_64", "arm64") and fat.slices[0].minos_text == "10.9"


def test_generated_symbols():
    data = gen.image(
        "arm64", dylibs=["@rpath/libomp.dylib"], exports=["_a", "_b"], undefined=[("___kmpc_fork_call", 1, False)]
    )
    info = M.parse_bytes(data)
    sl = info.slices[0]
    assert M.exports_from_bytes(sl, data) == {"_a", "_b"}
    assert M.exported_from_bytes(sl, data, ["_a", "_c", "_"]) == {"_a"}
    assert M.undefined_from_bytes(sl, data) == (("___kmpc_fork_call", 1, False),)


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "file too short"),
        (b"\xcf\xfa\xed\xfe" + b"\0" * 4, "truncated"),
        (b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\0" * 64, "Java"),  # a Java class file (version 52)
        (b"\xca\xfe\xba\xbe\x00\x00\x00\x01" + b"\0" * 12 + b"\xff\xff\xff\xff" + b"\0" * 8, "outside"),
        (b"\x7fELF" + b"\0" * 60, "not a Mach-O"),
    ],
)
def test_bad_input_is_a_value(data, reason):
    got = M.parse_bytes(data)
    assert isinstance(got, M.Unreadable) and got.format == "Mach-O"
    assert reason.lower() in got.reason.lower() or reason == "Java", got.reason


def test_truncated_load_commands_and_a_missing_file(tmp_path):
    data = gen.image("arm64", dylibs=["@rpath/libb.dylib"])
    assert isinstance(M.parse_bytes(data[:40]), M.Unreadable)
    assert isinstance(M.read_macho(tmp_path / "nope.dylib"), M.Unreadable)
    (tmp_path / "empty.dylib").write_bytes(b"")
    assert M.read_macho(tmp_path / "empty.dylib").reason == "file too short"


def test_real_wheels_match_macholib():
    """A second independent reader (macholib, a test-only dependency: skipped when it is not installed)."""
    mo = pytest.importorskip("macholib.mach_o")
    from macholib.MachO import MachO

    kinds = {mo.LC_LOAD_DYLIB: "load", mo.LC_LOAD_WEAK_DYLIB: "weak", mo.LC_REEXPORT_DYLIB: "reexport",
             mo.LC_LAZY_LOAD_DYLIB: "lazy", mo.LC_LOAD_UPWARD_DYLIB: "upward"}  # fmt: skip
    compared = 0
    for path in real_files():
        theirs = MachO(str(path))
        ours = M.read_macho(path)
        assert len(theirs.headers) == len(ours.slices)
        for header, sl in zip(theirs.headers, ours.slices):
            dylibs, rpaths, install = [], [], None
            for lc, _cmd, data in header.commands:
                if lc.cmd not in kinds and lc.cmd not in (mo.LC_ID_DYLIB, mo.LC_RPATH):
                    continue
                text = data.rstrip(b"\0").decode()
                if lc.cmd in kinds:
                    dylibs.append((kinds[lc.cmd], text))
                elif lc.cmd == mo.LC_ID_DYLIB:
                    install = text
                elif lc.cmd == mo.LC_RPATH:
                    rpaths.append(text)
            assert dylibs == [(d.kind, d.name) for d in sl.dylibs], path
            assert rpaths == list(sl.rpaths) and install == sl.install_name, path
            assert header.header.cputype == sl.cputype, path
            compared += 1
    assert compared >= 11
