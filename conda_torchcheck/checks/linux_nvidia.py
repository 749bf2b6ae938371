"""TC410/TC412: the NVIDIA pip wheels a pip torch loads: versions against torch's pins, mixed CUDA variants."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks import linux_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.names import normalize
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import msg

_VARIANT = LazyPattern(r"^(nvidia-[a-z0-9-]+?)(?:-cu(\d+))?$")
# packages named nvidia-* that are not CUDA libraries with per-CUDA variants
_NOT_LIBRARIES = {"nvidia-ml-py", "nvidia-ml-py3", "nvidia-pyindex", "nvidia-dali", "nvidia-modelopt"}


def run(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    if torch.dist is None:
        return
    yield from _pins(ctx)
    yield from _variants(ctx)


def _pins(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    for req in common.torch_nvidia_requirements(ctx):
        name = normalize(req.name)
        if not name.startswith("nvidia-"):
            continue
        text = str(req).split(";")[0].strip()
        installed = ctx.env.dist(name)
        fix = common.pip_install_fix(ctx, text, msg("TC410.fix"))
        if installed is None:
            yield finding(
                "TC410",
                Severity.WARNING,
                variant="missing",
                package=name,
                requirement=text,
                torch=torch.version,
                evidence={"package": name, "required": text, "installed": None, "torch": torch.version},
                fixes=[fix],
            )
            continue
        if req.specifier and not req.specifier.contains(installed.version, prereleases=True):
            yield finding(
                "TC410",
                Severity.WARNING,
                package=name,
                installed=installed.version,
                requirement=text,
                torch=torch.version,
                evidence={
                    "package": name,
                    "required": text,
                    "installed": installed.version,
                    "installed_at": installed.metadata_dir,
                    "torch": torch.version,
                },
                fixes=[fix],
            )


def _variants(ctx: CheckContext) -> Iterator[Finding]:
    torch = ctx.torch
    groups: dict[str, list[tuple[str, str, int | None]]] = {}
    for dist in ctx.env.distributions:
        if dist.site_kind not in ("env", "user", "pythonpath", "pth") or dist.name in _NOT_LIBRARIES:
            continue
        m = _VARIANT.match(dist.name)
        if not m or not dist.name.startswith("nvidia-"):
            continue
        base, suffix = m.group(1), m.group(2)
        major = int(suffix) if suffix else _major(dist.version)
        groups.setdefault(base, []).append((dist.name, dist.version, major))
    wanted_major = int(torch.cuda_version.split(".")[0]) if torch.cuda_version else None
    pins = {normalize(r.name): str(r).split(";")[0].strip() for r in common.torch_nvidia_requirements(ctx)}
    for base, members in sorted(groups.items()):
        majors = {m for _n, _v, m in members if m is not None}
        if len(majors) < 2:
            continue
        wanted = [n for n, _v, m in members if m == wanted_major]
        others = [n for n, _v, m in members if m != wanted_major]
        wanted_text = next((pins[n] for n in pins if n.startswith(base)), wanted[0] if wanted else base)
        commands = [cmd.pip(ctx.env, "uninstall -y " + " ".join(others), dist=torch.dist)] if others else []
        if wanted_text:
            commands.append(cmd.pip(ctx.env, f'install --force-reinstall --no-deps "{wanted_text}"', dist=torch.dist))
        labels = [f"{n} {v}" for n, v, _m in members]
        yield finding(
            "TC412",
            Severity.WARNING,
            packages=", ".join(labels),
            torch=torch.version,
            cuda=torch.cuda_version or "-",
            wanted=wanted_text,
            evidence={"packages": labels, "torch_cuda": torch.cuda_version, "torch_needs": wanted_text},
            fixes=[Fix("pip", msg("TC412.fix"), commands=tuple(commands))],
        )


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() and int(head) in (10, 11, 12, 13, 14) else None


CHECK = Check.declared(__name__, run)
