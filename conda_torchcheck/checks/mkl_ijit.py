"""TC105: mkl >= 2024.1 beside a pytorch-channel pytorch on Linux → ``undefined symbol: iJIT_NotifyEvent``.

pytorch-channel builds link MKL dynamically and call ``iJIT_NotifyEvent``, which mkl 2024.1 no longer exports.
pip wheels link MKL statically and conda-forge builds use conda-forge's blas: for those, mkl's version does
not matter (and pinning mkl is outdated advice).
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import builder, channel_label, record_variant
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.fs import find_path
from conda_torchcheck.inventory.model import CondaRecord
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.knowledge.conda_channels import pytorch_channel
from conda_torchcheck.messages import msg


def conflict(ctx: CheckContext) -> tuple[CondaRecord, CondaRecord] | None:
    """(pytorch, mkl) records when a pytorch-channel pytorch sits beside mkl >= 2024.1 on Linux.

    The binary check (TC403) defers to TC105 for this cause, so that one cause gives one finding.
    """
    env = ctx.env
    channel = pytorch_channel()
    if env.platform not in channel.mkl_ijit_platforms:
        return None
    rec = env.record("pytorch")
    mkl = env.record("mkl")
    if rec is None or mkl is None or ctx.torch.source != "conda" or builder(rec.channel) != "pytorch":
        return None
    mkl_version = parse_version(mkl.version)
    bad_from = parse_version(channel.mkl_ijit_bad_from)
    if mkl_version is None or bad_from is None or mkl_version < bad_from:
        return None
    return rec, mkl


def _confirmed_by_binaries(ctx: CheckContext) -> list[str]:
    """``lib: undefined symbol: iJIT_...`` lines when the Linux loader model sees them (empty if it cannot)."""
    try:
        from conda_torchcheck.loader import linux
    except ImportError:  # pragma: no cover
        return []
    if linux.torch_load(ctx) is None:
        return []
    return sorted(
        {
            f"{m.required_by.name}: undefined symbol: {m.name}"
            for m in linux.torch_symbol_misses(ctx)
            if m.name.startswith("iJIT_")
        }
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    found = conflict(ctx)
    if found is None:
        return
    rec, mkl = found
    t = ctx.torch
    evidence: dict[str, object] = {
        "pytorch": f"{rec.version} {rec.build} ({channel_label(rec)})",
        "mkl": f"{mkl.version} {mkl.build} ({channel_label(mkl)})",
    }
    mkl_deps = [d for d in rec.depends if d.split()[0] in ("mkl", "blas", "libblas")]
    if mkl_deps:
        evidence["pytorch depends"] = mkl_deps
    if t.package_dir is not None:
        lib = find_path(t.package_dir, "lib", "libtorch_cpu.so", case_insensitive=False)
        if lib is not None:
            evidence["library"] = lib
    confirmed = _confirmed_by_binaries(ctx)
    if confirmed:
        evidence["confirmed by the binaries"] = confirmed
    cuda = record_variant(rec).variant == "cuda"
    specs = ["conda-forge::pytorch=*=cuda*" if cuda else "conda-forge::pytorch"]
    specs += [f"conda-forge::{n}" for n in ("torchvision", "torchaudio") if env.record(n) is not None]
    selectors = [n for n in ("pytorch-cuda", "cpuonly", "pytorch-mutex") if env.record(n) is not None]
    move = [cmd.conda_install(env, specs)]
    if selectors:
        move.insert(0, cmd.conda_remove(env, selectors, force=True))
    yield finding(
        "TC105",
        Severity.ERROR,
        mkl=mkl.version,
        torch=rec.version,
        evidence=evidence,
        fixes=[
            Fix("conda", msg("TC105.fix_pin"), commands=(cmd.conda_install(env, ["mkl<2024.1"], channel=None),)),
            Fix("conda", msg("TC105.fix_move"), commands=tuple(move)),
        ],
    )


CHECK = Check.declared(__name__, run)
