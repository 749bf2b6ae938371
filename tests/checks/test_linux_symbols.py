"""TC403: undefined symbols (MKL iJIT_NotifyEvent, NCCL ncclCommRegister, LD_LIBRARY_PATH shadowing)."""

from __future__ import annotations

from tests.loader.linux_layouts import FIX, context, dlopen, minitorch_env, run_ids


def test_mkl_2024_1_drops_ijit_notify_event(make_env):
    builder = make_env(layout="venv")
    pkg = minitorch_env(builder, mkl="2024.1")
    [f] = [f for f in run_ids(context(builder.prefix), "TC403")]
    assert f.evidence["symbol"] == "iJIT_NotifyEvent"
    assert f.evidence["expected_provider"] == str(pkg / "lib" / "libmkl_rt.so.2")
    assert "MKL 2024.1" in f.fixes[0].summary.render("en")
    assert dlopen(pkg / "_C.cpython-311-x86_64-linux-gnu.so").endswith("undefined symbol: iJIT_NotifyEvent")


def test_mkl_2024_1_fix_in_a_conda_env(make_env):
    builder = make_env(layout="conda")
    minitorch_env(builder, mkl="2024.1")
    [f] = run_ids(context(builder.prefix), "TC403")
    assert any('"mkl<2024.1"' in c for c in f.fixes[0].commands)


def test_mkl_2024_0_is_fine(make_env):
    builder = make_env(layout="venv")
    pkg = minitorch_env(builder, mkl="2024.0")
    assert run_ids(context(builder.prefix), "TC403") == []
    assert dlopen(pkg / "_C.cpython-311-x86_64-linux-gnu.so") is None


def test_old_nccl_lacks_nccl_comm_register(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.18", nccl_dist="2.18.1")
    ctx = context(builder.prefix)
    [f] = run_ids(ctx, "TC403")
    assert f.evidence["symbol"] == "ncclCommRegister"
    assert f.evidence["expected_provider"].endswith("nvidia/nccl/lib/libnccl.so.2")
    assert f.fixes[0].commands == (f'"{builder.prefix}/bin/python" -m pip install "nvidia-nccl-cu12==2.21.5"',)
    assert [t.id for t in run_ids(ctx, "TC410")] == ["TC410"]


def test_old_nccl_on_ld_library_path_is_the_cause(make_env):
    builder = make_env(layout="venv")
    minitorch_env(builder, nccl="2.21")
    ctx = context(builder.prefix, LD_LIBRARY_PATH=str(FIX / "cuda" / "nccl-2.18"))
    [f] = run_ids(ctx, "TC403")
    assert f.evidence["provider_found_by"].startswith("ld_library_path")
    assert f.fixes[0].kind == "env" and f.fixes[0].commands == ("unset LD_LIBRARY_PATH",)
    # without LD_LIBRARY_PATH the wheel's copy is used and the symbol is there
    assert run_ids(context(builder.prefix), "TC403") == []


def test_pytorch_channel_with_mkl_2024_1_is_one_finding_with_binary_proof(make_env):
    """TC105 names the cause from conda-meta; TC403 does not repeat it, its symbols become TC105's proof."""
    builder = make_env(layout="conda")
    pkg = minitorch_env(builder, mkl="2024.1")
    info = next(builder.site_packages.glob("torch-*.dist-info"))
    (info / "INSTALLER").write_text("conda\n", encoding="utf-8")  # conda's own package, not pip's
    metadata = f"{builder.site_rel}/{info.name}/METADATA"
    builder.conda_record(
        "pytorch", "2.2.2", "py3.11_cpu_0", channel="pytorch", files={metadata: (info / "METADATA").read_bytes()}
    )
    builder.conda_record("mkl", "2024.1.0", "h0000000_0", channel="defaults")
    findings = run_ids(context(builder.prefix), "TC105", "TC403")
    assert [f.id for f in findings] == ["TC105"]
    proof = findings[0].evidence["confirmed by the binaries"]
    assert any("undefined symbol: iJIT_NotifyEvent" in line for line in proof)
    assert dlopen(pkg / "_C.cpython-311-x86_64-linux-gnu.so").endswith("undefined symbol: iJIT_NotifyEvent")


def test_extension_of_another_package_with_an_undefined_symbol(make_env):
    """flash_attn's module (the fixture libuser.so) binds prov_new, which its old/libprov.so.1 lacks: TC403's
    extension variant; torch itself imports."""
    builder = make_env(layout="venv")
    minitorch_env(builder)
    sym = FIX / "symbol"
    files = {
        "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so": (sym / "libuser.so").read_bytes(),
        "old/libprov.so.1": (sym / "old" / "libprov.so.1").read_bytes(),
    }
    builder.dist("flash_attn", "2.7.4", files=files, requires=["torch"])
    [f] = run_ids(context(builder.prefix), "TC403")
    assert f.title.key == "TC403.extension.title" and f.evidence["symbol"] == "prov_new"
    assert f.evidence["package"] == "flash_attn" and f.severity.value == "error"
    (builder.site_packages / "old" / "libprov.so.1").write_bytes((sym / "new" / "libprov.so.1").read_bytes())
    assert run_ids(context(builder.prefix), "TC403") == []


def test_the_second_import_for_extensions_reads_no_file_again(make_env, monkeypatch):
    """The extension pass models ``import torch`` a second time: every header and symbol table it needs was read
    by the first, once per file."""
    from collections import Counter

    from conda_torchcheck.binaries import elf
    from conda_torchcheck.loader.linux import engine

    builder = make_env(layout="venv")
    minitorch_env(builder)
    sym = FIX / "symbol"
    files = {
        "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so": (sym / "libuser.so").read_bytes(),
        "old/libprov.so.1": (sym / "old" / "libprov.so.1").read_bytes(),
    }
    builder.dist("flash_attn", "2.7.4", files=files, requires=["torch"])
    headers, tables = Counter(), Counter()
    read_elf, read_symbols = elf.read_elf, elf.read_symbols
    monkeypatch.setattr(engine, "read_elf", lambda p: headers.update([str(p)]) or read_elf(p))
    monkeypatch.setattr(engine, "read_symbols", lambda e: tables.update([str(e.path)]) or read_symbols(e))
    [f] = run_ids(context(builder.prefix), "TC403")
    assert f.title.key == "TC403.extension.title"
    assert tables and max(tables.values()) == 1, tables
    assert headers and max(headers.values()) == 1, headers
