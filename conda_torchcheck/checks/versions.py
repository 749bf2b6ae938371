"""TC104: torchvision / torchaudio built for another torch release. TC207: pip local versions of the torch
family that name different builds (``+cpu`` torch with ``+cu121`` torchvision, ``cu121`` vs ``cu124``)."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import BuildVariant, dist_variant, manager_of, record_variant
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.model import Distribution, Environment
from conda_torchcheck.knowledge import parse_version, release_channels, torch_release
from conda_torchcheck.messages import msg
from conda_torchcheck.records import Record


class Installed(Record):
    __slots__ = ("name", "version", "manager", "dist")

    def __init__(self, name: str, version: str, manager: str, dist: Distribution | None) -> None:
        self.name = name
        self.version = version
        #: conda or pip
        self.manager = manager
        self.dist = dist


def installed(env: Environment, name: str) -> Installed | None:
    """The copy Python imports (first on sys.path), else conda's record for it."""
    dist = env.dist(name)
    if dist is not None:
        return Installed(name, dist.version, manager_of(env, dist), dist)
    conda_name = "pytorch" if name == "torch" else name
    rec = env.record(conda_name)
    if rec is not None:
        return Installed(name, rec.version, "conda", None)
    return None


def expected_torchvision(torch_version: str) -> tuple[tuple[str, ...], bool]:
    """Acceptable torchvision minors (or exact patches) for this torch, and whether that was extrapolated."""
    release = torch_release(torch_version)
    if release is not None:
        return release.torchvision_for(torch_version), False
    v = parse_version(torch_version)
    if v is None or v.major != 2:
        return (), False
    # 2.0 → 0.15 … 2.13 → 0.28: torchvision's minor is torch's + 15 through the whole 2.x series
    return (f"0.{v.minor + 15}",), True


def _matches(version: str, accepted: tuple[str, ...]) -> bool:
    v = parse_version(version.split("+", 1)[0])
    if v is None:
        return True  # unparseable: say nothing rather than guess
    for item in accepted:
        want = item.split(".")
        have = [str(x) for x in v.release]
        if have[: len(want)] == want:
            return True
    return False


def torchaudio_ok(torch_version: str, audio_version: str) -> tuple[bool, str]:
    """(compatible, what is expected). torchaudio ≥ 2.11 is built on torch's stable ABI and works with its own
    and every later torch release; older torchaudio is tied to one torch minor."""
    t = parse_version(torch_version.split("+", 1)[0])
    a = parse_version(audio_version.split("+", 1)[0])
    if t is None or a is None:
        return True, ""
    stable_from = parse_version(release_channels().torchaudio_stable_abi_from)
    if a >= stable_from:
        ok = (t.major, t.minor) >= (a.major, a.minor)
        return ok, f"torch >= {a.major}.{a.minor}"
    release = torch_release(torch_version)
    if release is not None and release.torchaudio:  # "" = no pairing in the sources (torch < 1.4): say nothing
        accepted = release.torchaudio_for(torch_version)
        return _matches(audio_version, accepted), " / ".join(accepted)
    if t.major == 2 and a.major == 2:
        return (t.minor == a.minor), f"{t.major}.{t.minor}"
    return True, ""


def _pip_family_fix(ctx: CheckContext, torch: Installed, names: list[str], index_tag: str | None) -> Fix:
    env = ctx.env
    release = torch_release(torch.version)
    base = cmd.base_version(torch.version)
    pins = []
    for name in names:
        if name == "torchvision":
            want = release.torchvision_for(torch.version) if release else expected_torchvision(torch.version)[0]
            pins.append(f"torchvision=={want[0]}.*" if want and want[0].count(".") == 1 else f"torchvision=={want[0]}")
        elif name == "torchaudio":
            want = release.torchaudio_for(torch.version) if release else ()
            pins.append(f"torchaudio=={want[0]}.*" if want and want[0].count(".") == 1 else "torchaudio")
    if cmd.nvidia_build(torch.version):
        # NVIDIA's torch is not on any index: build the members against it instead of replacing it
        builds = [
            cmd.build_against_torch(env, p.split("==")[0], p.split("==")[1].rstrip(".*")) for p in pins if "==" in p
        ]
        return Fix("pip", msg("TC104.fix_nvidia_build", torch=torch.version), commands=tuple(c for c in builds if c))
    args = "install " + " ".join(cmd.spec(p) for p in [f"torch=={base}", *pins])
    if index_tag:
        args += f" --index-url {cmd.pip_index_url(index_tag)}"
    commands = [cmd.pip(env, args, dist=torch.dist)]
    conda_names = [n for n in names if env.dist(n) is None or manager_of(env, env.dist(n)) == "conda"]
    conda_names = [n for n in conda_names if env.record(n) is not None]
    if conda_names:  # conda's records would otherwise still claim the files pip rewrites
        commands.insert(0, cmd.conda_remove(env, conda_names, force=True))
    return Fix("pip", msg("TC104.fix_pip"), commands=tuple(commands))


def _conda_family_fix(ctx: CheckContext, names: list[str]) -> Fix:
    env = ctx.env
    rec = env.record("pytorch")
    pin = "conda-forge::pytorch"
    if rec is not None:
        # keep the variant explicit: an unconstrained re-solve can fall back to the cpu build (conda#14761)
        variant = record_variant(rec).variant
        pin += f"={rec.version}" + (f"={variant}*" if variant in ("cuda", "cpu") else "")
    specs = [pin, *[f"conda-forge::{n}" for n in names]]
    commands = [cmd.conda_install(env, specs)]
    pip_names = [n for n in names if (d := env.dist(n)) is not None and manager_of(env, d) == "pip"]
    if pip_names:  # pip's copies would keep shadowing conda's
        commands.insert(0, cmd.pip(env, "uninstall -y " + " ".join(pip_names), dist=env.dist(pip_names[0])))
    return Fix("conda", msg("TC104.fix_conda"), commands=tuple(commands))


def _index_tag(ctx: CheckContext) -> str | None:
    t = ctx.torch
    local = t.dist.local_version if t.dist is not None else None
    return local if local and (local == "cpu" or local.startswith(("cu", "rocm", "xpu"))) else None


def _versions(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    torch = installed(env, "torch")
    if torch is None or ctx.torch.version is None:
        return
    torch_version = ctx.torch.version  # version.py of the package that imports, when there is one
    torch = Installed(torch.name, torch_version, torch.manager, torch.dist)
    bad: dict[str, dict[str, str]] = {}
    vision = installed(env, "torchvision")
    if vision is not None:
        accepted, extrapolated = expected_torchvision(torch_version)
        if accepted and not _matches(vision.version, accepted):
            bad["torchvision"] = {
                "installed": f"{vision.version} ({vision.manager})",
                "expected": " / ".join(accepted) + (" (by the 2.x numbering rule)" if extrapolated else ""),
            }
    audio = installed(env, "torchaudio")
    if audio is not None:
        ok, expected = torchaudio_ok(torch_version, audio.version)
        if not ok:
            bad["torchaudio"] = {"installed": f"{audio.version} ({audio.manager})", "expected": expected}
    if not bad:
        return
    names = list(bad)
    evidence: dict[str, object] = {"torch": f"{torch_version} ({torch.manager})", **bad}
    if torch.manager == "pip":
        fixes = [_pip_family_fix(ctx, torch, names, _index_tag(ctx))]
    else:
        fixes = [_conda_family_fix(ctx, names)]
    yield finding(
        "TC104",
        Severity.ERROR,
        packages=", ".join(f"{n} {bad[n]['installed'].split(' ')[0]}" for n in names),
        torch=torch_version,
        evidence=evidence,
        fixes=fixes,
    )


def _describe_variant(bv: BuildVariant) -> str:
    if bv.variant == "cuda" and bv.cuda:
        return f"CUDA {bv.cuda}"
    return bv.variant or "?"


def _local_versions(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    t = ctx.torch
    if t.dist is None or t.source == "conda":
        return
    torch_bv = BuildVariant(t.variant, t.cuda_version) if t.variant in ("cpu", "cuda", "rocm", "xpu") else None
    if torch_bv is None:
        torch_bv = dist_variant(t.dist)
    if torch_bv.variant is None:
        return
    odd: dict[str, str] = {}
    for name in ("torchvision", "torchaudio"):
        dist = env.dist(name)
        if dist is None or manager_of(env, dist) != "pip":
            continue
        bv = dist_variant(dist)
        if bv.variant is None:
            continue  # no local tag: PyPI's default build, nothing explicit to compare
        if bv.variant != torch_bv.variant or (bv.variant == "cuda" and torch_bv.cuda and bv.cuda != torch_bv.cuda):
            odd[name] = f"{dist.version} → {_describe_variant(bv)}"
    if not odd:
        return
    tag = "cpu" if torch_bv.variant == "cpu" else (t.dist.local_version or None)
    if torch_bv.variant == "cuda" and torch_bv.cuda and not (tag or "").startswith("cu"):
        tag = "cu" + torch_bv.cuda.replace(".", "")
    pins = []
    release = torch_release(t.version)
    for name in odd:
        if name == "torchvision" and release:
            pins.append(f"torchvision=={release.torchvision_for(t.version or '')[0]}.*")
        elif name == "torchaudio" and release:
            want = release.torchaudio_for(t.version or "")[0]
            pins.append(f"torchaudio=={want}.*" if want.count(".") == 1 else f"torchaudio=={want}")
        else:
            pins.append(name)
    args = "install --force-reinstall --no-deps " + " ".join(cmd.spec(p) for p in pins)
    if tag:
        args += f" --index-url {cmd.pip_index_url(tag)}"
    yield finding(
        "TC207",
        Severity.WARNING,
        torch=t.version or "?",
        torch_build=_describe_variant(torch_bv),
        packages=", ".join(odd),
        evidence={"torch": f"{t.dist.version} → {_describe_variant(torch_bv)}", **odd},
        fixes=[Fix("pip", msg("TC207.fix"), commands=(cmd.pip(env, args, dist=t.dist),))],
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    yield from _versions(ctx)
    yield from _local_versions(ctx)


CHECK = Check.declared(__name__, run)
