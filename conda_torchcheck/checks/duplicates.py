"""TC203: several torch metadata folders (dist-info / egg-info) on the import path. TC204: leftovers of
interrupted pip runs (``~orch``-style folders), a torch folder nobody installed, or torch metadata without the
package it describes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import torch_installs
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Distribution, Environment
from conda_torchcheck.messages import msg

# import names and distributions of the torch stack whose pip-renamed leftovers (first letter → ~) we recognise
TORCH_STACK = (
    "torch",
    "torchvision",
    "torchaudio",
    "torchtext",
    "torchgen",
    "functorch",
    "caffe2",
    "triton",
    "nvidia",
)
#: sites whose duplicates have their own finding (TC205 user site, TC206 PYTHONPATH and .pth folders)
_OWN_FINDING_SITES = ("user", "pythonpath", "pth")


def remove_dir(env: Environment, path: Path) -> str:
    native = cmd.native_path(env, path)
    return f'rmdir /s /q "{native}"' if env.is_windows else f'rm -rf "{native}"'


def leftover_package(name: str) -> str | None:
    """``~orch`` → torch, ``~orch-2.3.0.dist-info`` → torch, ``~orchvision`` → torchvision (pip renames the first
    letter to ``~`` while it uninstalls)."""
    rest = name[1:].lower()
    for pkg in sorted(TORCH_STACK, key=len, reverse=True):
        tail = pkg[1:]
        if rest == tail or rest.startswith((tail + "-", tail + "_")):
            return pkg
    return None


def _dist_line(dist: Distribution, owned: bool) -> str:
    who = "conda" if owned else (dist.installer or "unknown installer")
    return f"{dist.metadata_dir} ({dist.version}, {who})"


def _pip_reinstall(ctx: CheckContext, version: str | None, dist: Distribution | None) -> str:
    target = f"torch=={cmd.base_version(version)}" if version else "torch"
    local = dist.local_version if dist is not None else None
    index = ""
    if local and (local == "cpu" or local.startswith(("cu", "rocm", "xpu"))):
        index = f" --index-url {cmd.pip_index_url(local)}"
    return cmd.pip(ctx.env, f"install --force-reinstall --no-deps {target}{index}", dist=dist)


def _duplicates(ctx: CheckContext) -> Iterator[Finding]:
    inst = torch_installs(ctx)
    if len(inst.dists) < 2:
        return
    owned = set(id(d) for d in inst.conda_owned)
    by_site: dict[str, list[Distribution]] = {}
    for dist in inst.dists:
        by_site.setdefault(str(dist.site), []).append(dist)
    imported_version = ctx.torch.version_py.version if ctx.torch.version_py else None
    for site, dists in by_site.items():
        foreign = [d for d in dists if id(d) not in owned]
        conda = [d for d in dists if id(d) in owned]
        # one conda folder + one pip folder is TC201's case (pip beside conda), with its own fixes
        if len(foreign) < 2 and len(conda) < 2:
            continue
        stale = [d for d in dists if imported_version and cmd.base_version(d.version) != imported_version]
        keep = next((d for d in dists if d not in stale), dists[0])
        commands = [remove_dir(ctx.env, d.metadata_dir) for d in stale if id(d) not in owned]
        commands.append(_pip_reinstall(ctx, keep.version, keep))
        yield finding(
            "TC203",
            Severity.WARNING,
            variant="same_site",
            count=len(dists),
            site=site,
            versions=", ".join(d.version for d in dists),
            evidence={
                "metadata folders": [_dist_line(d, id(d) in owned) for d in dists],
                "torch/version.py": imported_version,
            },
            fixes=[Fix("pip", msg("TC203.fix"), commands=tuple(commands))],
        )
    sites_with_torch = [s for s, ds in by_site.items() if ds[0].site_kind not in _OWN_FINDING_SITES]
    if len(sites_with_torch) > 1:
        first = by_site[sites_with_torch[0]][0]
        shadowed = [d for s in sites_with_torch[1:] for d in by_site[s]]
        yield finding(
            "TC203",
            Severity.WARNING,
            variant="across_sites",
            count=len(sites_with_torch),
            used=str(first.site),
            evidence={
                "imported from": _dist_line(first, id(first) in owned),
                "shadowed": [_dist_line(d, id(d) in owned) for d in shadowed],
            },
            fixes=[
                Fix(
                    "pip",
                    msg("TC203.fix_across"),
                    commands=tuple(_remove_copy(ctx, [d for d in shadowed if id(d) not in owned])),
                )
            ],
        )


def _remove_copy(ctx: CheckContext, dists: list[Distribution]) -> list[str]:
    """Delete pip-installed copies: their metadata and the torch folder beside it."""
    commands = []
    for site in dict.fromkeys(d.site for d in dists):
        package = site / "torch"
        if fs.is_dir(package):
            commands.append(remove_dir(ctx.env, package))
    commands += [remove_dir(ctx.env, d.metadata_dir) for d in dists]
    return commands


def _leftovers(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    if not env.leftovers:
        return
    torch_related = {str(p): leftover_package(p.name) for p in env.leftovers}
    related = sorted({pkg for pkg in torch_related.values() if pkg})
    commands = [remove_dir(env, p) for p in env.leftovers]
    if "torch" in related and ctx.torch.installed:
        commands.append(_pip_reinstall(ctx, ctx.torch.version, ctx.torch.dist))
    yield finding(
        "TC204",
        Severity.WARNING if related else Severity.INFO,
        variant="tilde",
        count=len(env.leftovers),
        names=", ".join(p.name for p in env.leftovers[:6]) + (" …" if len(env.leftovers) > 6 else ""),
        evidence={
            "folders": [str(p) for p in env.leftovers],
            **({"belonged to": related} if related else {}),
        },
        fixes=[Fix("file", msg("TC204.fix_tilde"), commands=tuple(commands))],
    )


def _orphans(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    t = ctx.torch
    inst = torch_installs(ctx)
    if t.package_dir is not None:
        site = t.package_dir.parent
        same_site = [d for d in inst.dists if d.site == site]
        if not same_site and inst.record is None:
            yield finding(
                "TC204",
                Severity.WARNING,
                variant="orphan",
                path=str(t.package_dir),
                version=t.version or "?",
                evidence={"package": t.package_dir, "torch/version.py": t.version, "metadata": "none"},
                fixes=[
                    Fix(
                        "file",
                        msg("TC204.fix_orphan"),
                        commands=(remove_dir(env, t.package_dir), _pip_reinstall(ctx, t.version, None)),
                    )
                ],
            )
        return
    if inst.record is not None and (inst.anchor is None or not inst.anchor.present):
        return  # conda's own metadata is gone too: TC202 tells that story
    claims = [f"{d.metadata_dir} ({d.version}, {d.installer or 'unknown installer'})" for d in inst.dists]
    if inst.record is not None:
        claims.append(f"conda-meta/{inst.record.source.name}")
    if not claims:
        return
    version = inst.dists[0].version if inst.dists else (inst.record.version if inst.record else None)
    if inst.record is not None and (not inst.dists or inst.dists[0] in inst.conda_owned):
        fix_cmd = cmd.conda_install(
            env, [cmd.exact_conda_spec(inst.record)], channel=None, extra=("--force-reinstall",)
        )
        fix = Fix("conda", msg("TC204.fix_no_package"), commands=(fix_cmd,))
    else:
        fix = Fix("pip", msg("TC204.fix_no_package"), commands=(_pip_reinstall(ctx, version, inst.dists[0]),))
    yield finding(
        "TC204",
        Severity.ERROR,
        variant="no_package",
        version=version or "?",
        evidence={"installed according to": claims, "searched": [str(s.path) for s in env.site_dirs if s.active]},
        fixes=[fix],
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    yield from _duplicates(ctx)
    yield from _leftovers(ctx)
    yield from _orphans(ctx)


CHECK = Check.declared(__name__, run)
