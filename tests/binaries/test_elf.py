"""The direct ELF reader: gcc-built fixtures, hand-made 32-bit/big-endian files, the real torch wheel."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conda_torchcheck.binaries.elf import (
    ElfFile,
    Symbols,
    Unreadable,
    defined_names_exact,
    parse_bytes,
    read_elf,
    read_symbols,
)
from tests.binaries.elfgen import make_elf

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "prebuilt"


@pytest.fixture(scope="module")
def torch_linux_lib():
    from tests.realdata import extract

    return extract("torch-2.13.0-linux-cpu", ("torch/lib/*", "torch/_C*.so")) / "torch" / "lib"


def test_dynamic_section_of_a_runpath_library():
    info = read_elf(FIX / "version" / "libapp.so")
    assert isinstance(info, ElfFile)
    assert (info.bits, info.arch, info.is_shared_object) == (64, "x86_64", True)
    assert info.needed == ("libv.so.1",)
    assert info.runpath == ("$ORIGIN/old",) and info.rpath == ()
    assert [(n.file, n.version) for n in info.version_needs if n.file == "libv.so.1"] == [("libv.so.1", "V_2.0")]


def test_rpath_is_read_as_rpath():
    info = read_elf(FIX / "version" / "libapp_rpath.so")
    assert info.rpath == ("$ORIGIN/old",) and info.runpath == ()


def test_version_definitions_and_soname():
    new, old = read_elf(FIX / "version" / "new" / "libv.so.1"), read_elf(FIX / "version" / "old" / "libv.so.1")
    assert new.soname == old.soname == "libv.so.1"
    assert new.version_base == "libv.so.1"
    assert new.version_defs == ("V_1.0", "V_2.0") and old.version_defs == ("V_1.0",)
    assert new.defines_version("V_2.0") and not old.defines_version("V_2.0")


def test_undefined_and_defined_symbols():
    user = read_symbols(read_elf(FIX / "symbol" / "libuser.so"))
    assert isinstance(user, Symbols)
    assert b"prov_new" in user.required_names()
    assert b"prov_new" not in user.present_names()
    new = read_symbols(read_elf(FIX / "symbol" / "new" / "libprov.so.1"))
    old = read_symbols(read_elf(FIX / "symbol" / "old" / "libprov.so.1"))
    assert b"prov_new" in new.present_names() and b"prov_new" not in old.present_names()
    assert b"prov_old" in old.present_names()


def test_versioned_undefined_reference_names_its_file():
    refs = read_symbols(read_elf(FIX / "cuda" / "libcusparse.so.12")).undefined
    ref = next(r for r in refs if r.name == b"__nvJitLinkComplete_12_4")
    assert (ref.version, ref.version_file, ref.weak) == ("libnvJitLink.so.12", "libnvJitLink.so.12", False)


def test_weak_undefined_symbols_are_not_required():
    syms = read_symbols(read_elf(FIX / "version" / "libapp.so"))
    weak = {r.name for r in syms.undefined if r.weak}
    assert b"__gmon_start__" in weak
    assert not weak & syms.required_names()


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("little", [True, False])
def test_handmade_classes_and_byte_orders(bits, little):
    data = make_elf(
        bits=bits,
        little=little,
        machine=0x03 if bits == 32 else 0x15,
        needed=("libc.so.6", "libfoo.so.1"),
        soname="libbar.so.2",
        runpath="$ORIGIN:$ORIGIN/../lib",
        version_needs=[("libc.so.6", ["GLIBC_2.17", "GLIBC_2.28"])],
    )
    info = parse_bytes(data)
    assert isinstance(info, ElfFile), info
    assert info.bits == bits and info.little_endian == little
    assert info.needed == ("libc.so.6", "libfoo.so.1") and info.soname == "libbar.so.2"
    assert info.runpath == ("$ORIGIN", "$ORIGIN/../lib")
    assert [n.version for n in info.version_needs] == ["GLIBC_2.17", "GLIBC_2.28"]


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "empty"),
        (b"\x7fEL", "magic"),
        (b"MZ" + bytes(200), "magic"),
        (b"\x7fELF\x03\x01\x01" + bytes(60), "class"),
        (b"\x7fELF\x02\x01\x01" + bytes(9), "truncated"),
    ],
)
def test_unreadable_inputs_are_values(data, reason):
    result = parse_bytes(data)
    assert isinstance(result, Unreadable) and not result
    assert reason in result.reason


def test_truncated_real_file_is_unreadable(tmp_path):
    data = (FIX / "version" / "libapp.so").read_bytes()
    for cut in (20, 64, 200, 1000):
        p = tmp_path / f"cut{cut}.so"
        p.write_bytes(data[:cut])
        assert isinstance(read_elf(p), Unreadable), cut


def test_missing_file_and_directory(tmp_path):
    assert isinstance(read_elf(tmp_path / "nope.so"), Unreadable)
    assert isinstance(read_elf(tmp_path), Unreadable)


def test_string_offset_outside_table():
    data = bytearray(make_elf(needed=("libc.so.6",)))
    # the DT_NEEDED value is the 3rd dynamic entry (after STRTAB, STRSZ): point it far outside
    dyn_at = data.rfind(struct.pack("<qQ", 1, 1))
    data[dyn_at + 8 : dyn_at + 16] = struct.pack("<Q", 10_000)
    assert isinstance(parse_bytes(bytes(data)), Unreadable)


def test_cyclic_verneed_chain_ends():
    data = bytearray(make_elf(version_needs=[("libc.so.6", ["GLIBC_2.2.5"])]))
    info = parse_bytes(bytes(data))
    assert isinstance(info, ElfFile)
    # make vn_next point at itself and claim a huge count
    vn = data.find(struct.pack("<HH", 1, 1))
    data[vn + 12 : vn + 16] = struct.pack("<I", 0)
    assert isinstance(parse_bytes(bytes(data)), (ElfFile, Unreadable))


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils readelf is not installed")
def test_matches_readelf_on_host_libc():
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    if not libc.exists():
        pytest.skip("no Debian-layout libc")
    info = read_elf(libc)
    out = subprocess.run(["readelf", "-V", "-W", str(libc)], capture_output=True, text=True).stdout
    for version in info.version_defs[:5]:
        assert version in out


@pytest.mark.realdata
def test_real_torch_libraries(torch_linux_lib):
    cpu = read_elf(torch_linux_lib / "libtorch_cpu.so")
    assert isinstance(cpu, ElfFile)
    assert cpu.needed == (
        "libc10.so",
        "librt.so.1",
        "libgcc_s.so.1",
        "libdl.so.2",
        "libpthread.so.0",
        "libm.so.6",
        "libgomp.so.1",
        "libstdc++.so.6",
        "libc.so.6",
        "ld-linux-x86-64.so.2",
    )
    assert cpu.runpath == ("$ORIGIN",) and cpu.rpath == ()
    assert cpu.tables.nsyms == 75_415  # real-test-data.md §4
    assert len(cpu.version_needs) == 51
    needs = {(n.file, n.version) for n in cpu.version_needs}
    assert {("libgomp.so.1", "GOMP_4.0"), ("libc.so.6", "GLIBC_2.28"), ("libstdc++.so.6", "CXXABI_1.3.11")} <= needs
    syms = read_symbols(cpu)
    assert len(syms.refs) == 1_149  # 1,150 undefined entries minus the null symbol
    gomp = read_elf(torch_linux_lib / "libgomp.so.1")
    assert gomp.soname == "libgomp.so.1" and "GOMP_4.0" in gomp.version_defs


@pytest.mark.realdata
def test_fast_names_equal_exact_names(torch_linux_lib):
    for name in ("libtorch_python.so", "libc10.so", "libgomp.so.1", "libshm.so"):
        info = read_elf(torch_linux_lib / name)
        exact = defined_names_exact(info)
        fast = read_symbols(info).present_names()
        assert exact <= fast, name
        # what the fast set adds are strings that are not symbol names: sonames, version names, paths
        assert all(not n.startswith(b"_Z") for n in fast - exact), name
