"""TC102: cpu and cuda builds mixed in the conda torch family (build strings, pytorch-cuda, cpuonly,
pytorch-mutex, pytorch-cpu/-gpu). TC103: a pytorch-cuda (or, for the pytorch channel's builds before pytorch-cuda
existed, a cudatoolkit) that the installed pytorch was not built for."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import builder, channel_label, family_records, record_variant
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge import minor_of, torch_release
from conda_torchcheck.messages import msg

_BUILT = ("pytorch", "libtorch", "torchvision", "torchaudio", "torchtext")
_FROZEN_SELECTORS = ("pytorch-cuda", "cpuonly", "pytorch-mutex")


def _describe(rec) -> str:
    bv = record_variant(rec)
    what = bv.variant or "?"
    if bv.cuda:
        what += f" {bv.cuda}"
    return f"{rec.version} {rec.build} ({channel_label(rec)}) → {what}"


def _family_specs(ctx: CheckContext, variant: str) -> list[str]:
    env = ctx.env
    specs = [f"conda-forge::pytorch=*={variant}*"]
    specs += [f"conda-forge::{name}" for name in ("torchvision", "torchaudio") if env.record(name) is not None]
    return specs


def _selectors_present(ctx: CheckContext) -> list[str]:
    return [name for name in _FROZEN_SELECTORS if ctx.env.record(name) is not None]


def _unify_fixes(ctx: CheckContext) -> list[Fix]:
    env = ctx.env
    fixes = []
    selectors = _selectors_present(ctx)
    for variant in ("cuda", "cpu"):
        commands = []
        if selectors:
            commands.append(cmd.conda_remove(env, selectors, force=True))
        commands.append(cmd.conda_install(env, _family_specs(ctx, variant)))
        fixes.append(Fix("conda", msg(f"TC102.fix_{variant}"), commands=tuple(commands)))
    return fixes


def _mixed(ctx: CheckContext) -> Iterator[Finding]:
    records = family_records(ctx.env)
    if not records:
        return
    signals = {rec.name: record_variant(rec) for rec in records}
    kinds = {bv.variant for bv in signals.values() if bv.variant in ("cpu", "cuda", "rocm")}
    evidence: dict[str, object] = {rec.name: _describe(rec) for rec in records if signals[rec.name].variant}
    t = ctx.torch
    if t.version_py is not None and t.package_dir is not None:
        evidence["torch/version.py"] = f"cuda = {t.version_py.cuda!r}"
    if len(kinds) > 1:
        yield finding(
            "TC102",
            Severity.WARNING,
            variant="mixed",
            cpu=", ".join(n for n, bv in signals.items() if bv.variant == "cpu"),
            cuda=", ".join(n for n, bv in signals.items() if bv.variant in ("cuda", "rocm")),
            evidence=evidence,
            fixes=_unify_fixes(ctx),
        )
        return
    cudas = {signals[name].cuda for name in _BUILT if name in signals and signals[name].cuda}
    if len(cudas) > 1:
        yield finding(
            "TC102",
            Severity.WARNING,
            variant="cuda_versions",
            versions=", ".join(sorted(cudas)),
            evidence=evidence,
            fixes=_unify_fixes(ctx)[:1],
        )


def _pytorch_cuda(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    pc = env.record("pytorch-cuda")
    if pc is None:
        return
    t = ctx.torch
    pc_cuda = ".".join(pc.version.split(".")[:2])
    dependents = sorted(r.name for r in env.conda_records if any(d.split()[0] == "pytorch-cuda" for d in r.depends))
    base_evidence: dict[str, object] = {"pytorch-cuda": f"{pc.version} {pc.build} ({channel_label(pc)})"}
    if dependents:
        base_evidence["required by"] = dependents
    if t.source in ("pip", "pip-over-conda"):
        yield finding(
            "TC103",
            Severity.INFO,
            variant="pip",
            pytorch_cuda=pc.version,
            torch=t.version or "?",
            evidence={**base_evidence, "torch": f"{t.version} from pip ({t.variant}, CUDA {t.cuda_version or '-'})"},
            fixes=[
                Fix("conda", msg("TC103.fix_remove"), commands=(cmd.conda_remove(env, ["pytorch-cuda"], force=True),))
            ],
        )
        return
    rec = t.conda_record
    if rec is None:
        return
    bv = record_variant(rec)
    variant = bv.variant or (t.variant if t.variant in ("cpu", "cuda") else None)
    if variant != "cuda":
        return  # a cpu pytorch beside pytorch-cuda is TC102's mixed variant
    if builder(rec.channel) != "pytorch":
        yield finding(
            "TC103",
            Severity.WARNING,
            variant="foreign",
            pytorch_cuda=pc.version,
            channel=channel_label(rec),
            evidence={**base_evidence, "pytorch": _describe(rec)},
            fixes=[Fix("conda", msg("TC103.fix_remove"), commands=(cmd.conda_remove(env, ["pytorch-cuda"]),))],
        )
        return
    built = bv.cuda or (t.cuda_version if t.source == "conda" else None)
    release = torch_release(rec.version)
    published = release.pytorch_cuda if release else ()
    wrong_build = built is not None and built != pc_cuda
    unpublished = built is None and bool(published) and pc_cuda not in published
    if not (wrong_build or unpublished):
        return
    evidence = {**base_evidence, "pytorch": _describe(rec)}
    if published:
        evidence[f"pytorch-cuda published for {minor_of(rec.version)}"] = list(published)
    fixes = []
    if built:
        fixes.append(
            Fix(
                "conda",
                msg("TC103.fix_match", cuda=built),
                commands=(
                    cmd.conda_install(
                        env, [f"pytorch-cuda={built}"], channel=None, extra=("-c", "pytorch", "-c", "nvidia")
                    ),
                ),
            )
        )
    fixes.append(
        Fix(
            "conda",
            msg("TC102.fix_cuda"),
            commands=(
                cmd.conda_remove(env, _selectors_present(ctx), force=True),
                cmd.conda_install(env, _family_specs(ctx, "cuda")),
            ),
        )
    )
    variant, severity = ("version" if wrong_build else "unpublished"), Severity.WARNING
    if wrong_build and built.split(".")[0] != pc_cuda.split(".")[0]:
        # another CUDA major: the libraries of the build's major (libcudart.so.11.0 for CUDA 11.x) come only
        # from a runtime package of that major; without one, the dynamic loader finds none and the import fails
        runtimes = _cuda_runtimes(env)
        evidence["CUDA runtime packages"] = [f"{name} {version}" for name, version in runtimes] or "none"
        if not any(version.split(".")[0] == built.split(".")[0] for _, version in runtimes):
            variant, severity = "version_breaks", Severity.ERROR
    yield finding(
        "TC103",
        severity,
        variant=variant,
        pytorch_cuda=pc_cuda,
        built=built or "?",
        minor=minor_of(rec.version) or "?",
        torch=rec.version,
        evidence=evidence,
        fixes=fixes,
    )


#: conda packages that carry the CUDA runtime library (libcudart) of their version's major
_CUDA_RUNTIME_PACKAGES = ("cuda-cudart", "cudatoolkit", "cuda-runtime", "cuda-toolkit")


def _cuda_runtimes(env) -> list[tuple[str, str]]:
    """(name, version) of the env's conda packages that install a CUDA runtime."""
    return [(r.name, r.version) for r in env.conda_records if r.name in _CUDA_RUNTIME_PACKAGES]


def _cudatoolkit(ctx: CheckContext) -> Iterator[Finding]:
    """A pytorch-channel CUDA build (before 2.0: built for one cudatoolkit minor, ``cudatoolkit >=11.1,<11.2``)
    beside a cudatoolkit of another CUDA version: its libcublas/libcublasLt are not the ones torch was built for."""
    env = ctx.env
    toolkit = env.record("cudatoolkit")
    rec = ctx.torch.conda_record
    if toolkit is None or rec is None or env.record("pytorch-cuda") is not None or builder(rec.channel) != "pytorch":
        return
    bv = record_variant(rec)
    have = ".".join(toolkit.version.split(".")[:2])
    if bv.variant != "cuda" or not bv.cuda or have == bv.cuda:
        return
    yield finding(
        "TC103",
        Severity.WARNING,
        variant="cudatoolkit",
        cudatoolkit=toolkit.version,
        built=bv.cuda,
        torch=rec.version,
        evidence={
            "cudatoolkit": f"{toolkit.version} {toolkit.build} ({channel_label(toolkit)})",
            "pytorch": _describe(rec),
        },
        fixes=[
            Fix(
                "conda",
                msg("TC103.fix_cudatoolkit", cuda=bv.cuda),
                commands=(
                    cmd.conda_install(
                        env, [f"cudatoolkit={bv.cuda}"], channel=None, extra=("-c", "pytorch", "-c", "nvidia")
                    ),
                ),
            )
        ],
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.torch.source in ("pip", "pip-over-conda"):
        # conda's records no longer describe the torch that imports; TC2xx reports that, TC103 says what
        # pytorch-cuda means then
        yield from _pytorch_cuda(ctx)
        return
    yield from _mixed(ctx)
    yield from _pytorch_cuda(ctx)
    yield from _cudatoolkit(ctx)


CHECK = Check.declared(__name__, run)
