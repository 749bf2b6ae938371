"""The PE reader on generated fixtures (committed), real wheels (downloaded once) and broken input."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from conda_torchcheck.binaries.pe import ImportedSymbol, PEInfo, Unreadable, read_exports, read_pe
from tests.loader import windows_layouts as wl

FX = Path(__file__).resolve().parents[1] / "fixtures" / "pe"


def names(info: PEInfo, delay: bool | None = None) -> list[str]:
    return [i.name for i in info.imports if delay is None or i.delay == delay]


# ------------------------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize(
    ("folder", "arch", "bits"), [("x64", "x86_64", 64), ("x86", "x86", 32), ("arm64", "arm64", 64)]
)
def test_machine_and_imports_of_generated_dlls(folder, arch, bits):
    info = read_pe(FX / folder / "liba.dll", symbols=True)
    assert isinstance(info, PEInfo)
    assert (info.arch, info.bits, info.is_dll) == (arch, bits, True)
    assert names(info, delay=False) == ["libb.dll"]
    assert names(info, delay=True) == ["libmissing.dll"]  # lld-link writes a real delay-load table
    assert [str(s) for s in info.imported("LIBB.DLL").symbols] == ["b_func"]
    assert [str(s) for s in info.imported("libmissing.dll").symbols] == ["m_func"]


def test_symbols_are_read_only_when_asked():
    info = read_pe(FX / "x64" / "liba.dll")
    assert info.imported("libb.dll").symbols is None
    only_b = read_pe(FX / "x64" / "liba.dll", symbols=lambda dll: dll == "libb.dll")
    assert only_b.imported("libb.dll").symbols is not None
    assert only_b.imported("libmissing.dll").symbols is None


def test_import_by_ordinal():
    info = read_pe(FX / "x64" / "liba_fwd.dll", symbols=True)
    symbols = info.imported("libb.dll").symbols
    assert ImportedSymbol(None, ordinal=7) in symbols
    assert [s.name for s in symbols if s.name] == ["b_fwd"]


def test_exports_names_ordinals_and_forwarders():
    exports = read_exports(FX / "x64" / "libb.dll")
    assert {"b_func", "b_other", "b_ord", "b_fwd", "b_fwd_bad"} <= exports.names
    assert exports.forwarders == {"b_fwd": "libc.c_func", "b_fwd_bad": "libc.c_missing"}
    assert exports.has(ImportedSymbol("b_func"))
    assert exports.has(ImportedSymbol(None, ordinal=7))
    assert not exports.has(ImportedSymbol(None, ordinal=3))  # inside the range but an empty slot
    assert exports.forwarder(ImportedSymbol("b_fwd")) == "libc.c_func"
    assert not read_exports(FX / "x64" / "noexport" / "libb.dll").has(ImportedSymbol("b_func"))


def test_dll_without_export_table_has_empty_exports():
    exports = read_exports(FX / "x64" / "liba.dll")
    assert exports.names == frozenset({"a_func"})
    assert read_exports(FX / "mingw" / "mingw_a.dll").names == frozenset({"mingw_a"})


def test_mingw_import_layout():
    info = read_pe(FX / "mingw" / "mingw_a.dll", symbols=True)
    assert {n.lower() for n in names(info)} == {"kernel32.dll", "libb.dll"}
    assert [str(s) for s in info.imported("KERNEL32.dll").symbols] == ["GetCurrentProcessId"]


def test_fixture_checksums_match_committed_list():
    import hashlib

    listed = {}
    for line in (FX / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    assert listed, "SHA256SUMS is empty"
    for name, digest in listed.items():
        assert hashlib.sha256((FX / name).read_bytes()).hexdigest() == digest, name


# ------------------------------------------------------------------------------------------ broken input


def _write(tmp_path: Path, data: bytes, name: str = "x.dll") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "too small"),
        (b"hello world, definitely not a PE file" * 4, "no MZ header"),
        (b"MZ" + b"\0" * 62, "no PE header"),
        (b"MZ" + b"\0" * 58 + struct.pack("<I", 10_000_000), "truncated"),
    ],
)
def test_non_pe_input_is_a_value_not_an_exception(tmp_path, data, fragment):
    result = read_pe(_write(tmp_path, data))
    assert isinstance(result, Unreadable)
    assert fragment in result.reason
    assert isinstance(read_exports(_write(tmp_path, data, "y.dll")), Unreadable)


def test_missing_file_and_directory(tmp_path):
    assert isinstance(read_pe(tmp_path / "nope.dll"), Unreadable)
    assert isinstance(read_pe(tmp_path), Unreadable)


def test_truncated_dll_is_reported_as_truncated(tmp_path):
    data = (FX / "x64" / "liba.dll").read_bytes()
    result = read_pe(_write(tmp_path, data[: len(data) // 2]))
    assert isinstance(result, Unreadable)
    assert "truncated" in result.reason


def test_header_only_stub_has_no_imports(tmp_path):
    from tests.envbuilder import pe_stub

    result = read_pe(_write(tmp_path, pe_stub("x86_64")))
    # the fixture builder's stand-in has a machine field and nothing else: never an exception
    assert isinstance(result, (PEInfo, Unreadable))


def test_random_mutations_of_headers_never_raise(tmp_path):
    """A small, deterministic slice of the fuzz job (tests/binaries/fuzz_pe.py runs 10,000+ cases)."""
    seed = (FX / "x64" / "liba_fwd.dll").read_bytes()
    rng = random.Random(1234)
    for i in range(150):
        data = bytearray(seed)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(0, min(len(data), 1024))
            data[pos] = rng.randrange(256)
        path = _write(tmp_path, bytes(data), f"m{i}.dll")
        assert isinstance(read_pe(path, symbols=True), (PEInfo, Unreadable))
        assert read_exports(path) is not None


# ------------------------------------------------------------------------------------------- real files


@pytest.mark.realdata
def test_torch_python_import_list_is_complete():
    """pefile's default MAX_IMPORT_SYMBOLS drops all but 3 of torch_python.dll's DLLs; this reader does not."""
    info = read_pe(wl.torch_root("2.3.0") / "torch" / "lib" / "torch_python.dll", symbols=True)
    dlls = [n for n in names(info) if not n.lower().startswith("api-ms-")]
    assert dlls == [
        "shm.dll",
        "python311.dll",
        "torch_cpu.dll",
        "c10.dll",
        "KERNEL32.dll",
        "MSVCP140.dll",
        "VCRUNTIME140.dll",
        "VCRUNTIME140_1.dll",
    ]
    assert sum(len(i.symbols) for i in info.imports) == 5793  # llvm-readobj --coff-imports counts the same


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("version", "dll", "needed"),
    [
        ("2.3.0", "torch_cpu.dll", "mkl_intel_thread.1.dll"),
        ("2.3.0", "c10.dll", "MSVCP140.dll"),
        ("2.4.0", "fbgemm.dll", "libomp140.x86_64.dll"),
        ("2.4.0", "torch_cpu.dll", "libomp140.x86_64.dll"),
        ("2.15.0", "torch_cpu.dll", "VCRUNTIME140_THREADS.dll"),
        ("2.15.0", "torch_python.dll", "MSVCP140_ATOMIC_WAIT.dll"),
    ],
)
def test_real_torch_imports(version, dll, needed):
    info = read_pe(wl.torch_root(version) / "torch" / "lib" / dll)
    assert needed in names(info)
    assert not info.delay_imports  # no torch DLL from 2.0 to 2.15 has delay-load imports
    assert (info.arch, info.bits) == ("x86_64", 64)


@pytest.mark.realdata
def test_real_file_versions_and_exports():
    rt = wl.runtime_dlls("msvc-runtime-14.44")
    msvcp = read_pe(rt["msvcp140.dll"])
    assert msvcp.file_version == "14.44.35211.0"
    exports = read_exports(rt["msvcp140.dll"])
    assert len(exports.names) == 1515
    assert "vcruntime140_threads.dll" not in wl.runtime_dlls("msvc-runtime-14.34")
    assert read_pe(wl.openmp_dll()).file_version == "5.0.2021.804"
    x86 = read_pe(wl.openmp_dll("intel-openmp-2021.4-win32"))
    assert (x86.arch, x86.bits) == ("x86", 32)


# ---------------------------------------------------------------------------------- pefile as the reference


def _pefile_view(path: Path):
    import pefile

    pe = pefile.PE(str(path), fast_load=True)
    pe.parse_data_directories(
        directories=[
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"],
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT"],
        ],
        import_dllnames_only=True,
    )
    normal = [e.dll.decode() for e in getattr(pe, "DIRECTORY_ENTRY_IMPORT", [])]
    delay = [e.dll.decode() for e in getattr(pe, "DIRECTORY_ENTRY_DELAY_IMPORT", [])]
    view = (
        pe.FILE_HEADER.Machine,
        64 if pe.OPTIONAL_HEADER.Magic == 0x20B else 32,
        (pe.OPTIONAL_HEADER.MajorLinkerVersion, pe.OPTIONAL_HEADER.MinorLinkerVersion),
        normal,
        delay,
    )
    pe.close()
    return view


def _own_view(path: Path):
    info = read_pe(path)
    return (info.machine, info.bits, info.linker_version, names(info, delay=False), names(info, delay=True))


def test_headers_and_import_lists_match_pefile_on_fixtures():
    for path in sorted(FX.rglob("*.dll")):
        assert _own_view(path) == _pefile_view(path), path


@pytest.mark.realdata
def test_headers_and_import_lists_match_pefile_on_real_dlls():
    paths = sorted((wl.torch_root("2.15.0") / "torch" / "lib").glob("*.dll"))
    paths += list(wl.runtime_dlls("msvc-runtime-14.44").values())[:6]
    paths += [wl.openmp_dll("intel-openmp-2021.4-win32")]
    for path in paths:
        assert _own_view(path) == _pefile_view(path), path
