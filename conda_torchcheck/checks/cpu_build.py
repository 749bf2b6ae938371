"""TC108: torch here is a CPU-only build while something in the env or on the machine says CUDA was wanted.

Silent without such a signal: a CPU build on a machine with no NVIDIA driver and no CUDA packages is what
the solver or pip should pick, not a problem. macOS builds have no CUDA variant and are never reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import builder, dist_variant, record_variant
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import find_child
from conda_torchcheck.knowledge import conda_channels, minor_of, parse_version, torch_release, torch_releases
from conda_torchcheck.messages import msg

#: files that exist when an NVIDIA driver is installed on a live Linux host (kernel module; WSL's GPU bridge)
LINUX_DRIVER_MARKERS = (Path("/proc/driver/nvidia/version"), Path("/usr/lib/wsl/lib/libcuda.so.1"))


def driver_signal(ctx: CheckContext) -> str | None:
    """Where an NVIDIA driver was seen, if anywhere (shared through ctx.memo)."""

    def find() -> str | None:
        env, host = ctx.env, ctx.host
        if env.os == "windows":
            system32 = host.system32
            if system32 is not None:
                dll = find_child(system32, "nvcuda.dll")
                if dll is not None:
                    return str(dll)
            return None
        if env.os == "linux" and host.live:
            for marker in LINUX_DRIVER_MARKERS:
                if fs.exists(marker):
                    return str(marker)
        return None

    return ctx.memo("nvidia_driver", find)


def cuda_signals(ctx: CheckContext) -> dict[str, str]:
    """Evidence that CUDA was wanted: CUDA packages (conda or pip), a CUDA torchvision/torchaudio, a driver."""
    env = ctx.env
    conda_names, pip_prefixes = conda_channels.cuda_signals()
    found: dict[str, str] = {}
    for name in conda_names:
        rec = env.record(name)
        if rec is not None:
            found[name] = f"{rec.version} ({rec.channel})"
    mutex = env.record("pytorch-mutex")
    if mutex is not None and record_variant(mutex).variant == "cuda":
        found["pytorch-mutex"] = f"{mutex.version} {mutex.build}"
    for name in ("torchvision", "torchaudio"):
        rec = env.record(name)
        if rec is not None and record_variant(rec).variant == "cuda":
            found[name] = f"{rec.version} {rec.build}"
        dist = env.dist(name)
        if dist is not None and dist_variant(dist).variant == "cuda":
            found[name] = dist.version
    nvidia = [d for d in env.distributions if d.name.startswith(pip_prefixes)]
    if nvidia:
        found["pip"] = ", ".join(f"{d.raw_name} {d.version}" for d in nvidia[:4]) + (" …" if len(nvidia) > 4 else "")
    for rec in env.conda_records:
        for wanted in rec.requested_specs:
            if "cuda" in wanted.lower() and rec.name in ("pytorch", "libtorch", "pytorch-gpu"):
                found["requested"] = wanted
    driver = driver_signal(ctx)
    if driver:
        found["driver"] = driver
    return found


def _wanted_cuda(ctx: CheckContext, signals: dict[str, str]) -> str | None:
    """A CUDA version the env already points at (pytorch-cuda, cuda-version, nvidia-cuda-runtime-cuXY)."""
    env = ctx.env
    for name in ("pytorch-cuda", "cuda-version", "cudatoolkit"):
        rec = env.record(name)
        if rec is not None:
            return ".".join(rec.version.split(".")[:2])
    for dist in env.distributions:
        if dist.name.startswith("nvidia-cuda-runtime-cu"):
            v = parse_version(dist.version)
            if v is not None and len(v.release) >= 2:
                return f"{v.release[0]}.{v.release[1]}"
    return None


def pip_cuda_tag(torch_version: str | None, wanted: str | None) -> str:
    """The download.pytorch.org/whl tag to offer: one built for this torch release, nearest to ``wanted``."""
    release = torch_release(torch_version)
    tags = list(release.pip_cuda) if release else []
    if not tags:
        # a release beyond the tables: the newest one whose every CUDA variant the tables list
        newest = next(r for r in reversed(torch_releases()) if r.pip_cuda and r.pip_cuda_known)
        tags = list(newest.pip_cuda)
    if wanted:
        exact = "cu" + wanted.replace(".", "")
        if exact in tags:
            return exact
        major = wanted.split(".")[0]
        same_major = [t for t in tags if t[2:-1] == major]
        if same_major:
            return same_major[-1]
    # cu12x works with any driver >= 525 (CUDA minor-version compatibility); prefer the newest 12.x
    twelve = [t for t in tags if t.startswith("cu12")]
    return (twelve or tags)[-1]


def _conda_fixes(ctx: CheckContext, wanted: str | None) -> list[Fix]:
    env = ctx.env
    t = ctx.torch
    rec = t.conda_record
    extra = [f"conda-forge::{n}" for n in ("torchvision", "torchaudio") if env.record(n) is not None]
    fixes: list[Fix] = []
    commands = []
    selectors = [n for n in ("cpuonly", "pytorch-mutex", "pytorch-cpu", "pytorch-cuda") if env.record(n) is not None]
    if selectors:
        commands.append(cmd.conda_remove(env, selectors, force=True))
    install = cmd.conda_install(env, ["conda-forge::pytorch=*=cuda*", *extra])
    commands.append(install)
    fixes.append(Fix("conda", msg("TC108.fix_conda_forge"), commands=tuple(commands)))
    if driver_signal(ctx) is None:
        # no driver seen here: conda's __cuda virtual package is absent too, and the solver will keep picking
        # the cpu build unless told which CUDA the machine that runs the env has
        cf = conda_channels.conda_forge_cuda().on(env.platform)
        override = wanted or next((v for v in cf if v.startswith("12.")), cf[0] if cf else "12.9")
        over = (
            f"set CONDA_OVERRIDE_CUDA={override} && {install}"
            if env.is_windows
            else f"CONDA_OVERRIDE_CUDA={override} {install}"
        )
        fixes.append(Fix("conda", msg("TC108.fix_override", cuda=override), commands=(over,)))
    if rec is not None and builder(rec.channel) == "anaconda":
        fixes.insert(
            0,
            Fix(
                "conda", msg("TC108.fix_defaults"), commands=(cmd.conda_install(env, ["pytorch=*=gpu*"], channel=None),)
            ),
        )
    return fixes


def _pip_fix(ctx: CheckContext, wanted: str | None) -> Fix:
    env = ctx.env
    t = ctx.torch
    tag = pip_cuda_tag(t.version, wanted)
    base = cmd.base_version(t.version)
    release = torch_release(t.version)
    pins = [f"torch=={base}" if base else "torch"]
    for name in ("torchvision", "torchaudio"):
        if env.dist(name) is not None:
            if release is not None:
                want = release.torchvision if name == "torchvision" else release.torchaudio
                pins.append(cmd.spec(f"{name}=={want}.*"))
            else:
                pins.append(name)
    args = "install --force-reinstall " + " ".join(pins) + f" --index-url {cmd.pip_index_url(tag)}"
    return Fix("pip", msg("TC108.fix_pip", tag=tag), commands=(cmd.pip(env, args, dist=t.dist),))


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    t = ctx.torch
    if not t.installed or t.variant != "cpu":
        return
    signals = cuda_signals(ctx)
    if not signals:
        return
    wanted = _wanted_cuda(ctx, signals)
    if t.source == "conda":
        rec = t.conda_record
        frozen = rec is not None and builder(rec.channel) == "pytorch"
        variant = "conda_frozen" if frozen else "conda"
        fixes = _conda_fixes(ctx, wanted)
    else:
        pypi_windows = env.is_windows and (t.dist is None or t.dist.local_version is None)
        variant = "pip_windows" if pypi_windows else "pip"
        fixes = [_pip_fix(ctx, wanted)]
    yield finding(
        "TC108",
        Severity.INFO,
        variant=variant,
        version=t.version or "?",
        minor=minor_of(t.version) or "?",
        evidence={"torch": f"{t.version} ({t.source}, cpu)", "signals": signals},
        fixes=fixes,
    )


CHECK = Check.declared(__name__, run)
