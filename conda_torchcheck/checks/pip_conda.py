"""TC201: a pip torch beside conda's pytorch. TC202: pip torch *over* conda's pytorch (conda's metadata
folder is gone or now pip's; ``conda list`` then deletes conda's record). TC208: torchvision / torchaudio from
the other package manager than the torch that imports."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import (
    PIP_FAMILY,
    builder,
    channel_label,
    conda_site_short_path,
    manager_of,
    python_dependents,
    torch_installs,
)
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory.model import CondaRecord, Distribution
from conda_torchcheck.knowledge import torch_release
from conda_torchcheck.messages import msg


def _index_args(dist: Distribution | None) -> str:
    local = dist.local_version if dist is not None else None
    if local and (local == "cpu" or local.startswith(("cu", "rocm", "xpu"))):
        return f" --index-url {cmd.pip_index_url(local)}"
    return ""


def _choice_fixes(ctx: CheckContext, rec: CondaRecord, pip_dist: Distribution | None) -> list[Fix]:
    """Keep one of the two torches: conda's (pip uninstall, then conda rewrites its files) or pip's (conda
    forgets its record without touching pip's files, which share the same paths, then pip rewrites them)."""
    env = ctx.env
    conda_records = [rec.name] + [n for n in ("libtorch",) if env.record(n) is not None]
    keep_conda = Fix(
        "conda",
        msg("TC201.fix_keep_conda"),
        commands=(
            cmd.pip(env, "uninstall -y torch", dist=pip_dist),
            cmd.conda_install(env, [cmd.exact_conda_spec(rec)], channel=None, extra=("--force-reinstall",)),
        ),
    )
    version = cmd.base_version(pip_dist.version if pip_dist is not None else None)
    target = f"torch=={version}" if version else "torch"
    keep_pip = Fix(
        "pip",
        msg("TC201.fix_keep_pip"),
        commands=(
            cmd.conda_remove(env, conda_records, force=True),
            cmd.pip(env, f"install --force-reinstall --no-deps {target}{_index_args(pip_dist)}", dist=pip_dist),
        ),
    )
    return [keep_conda, keep_pip]


def _record_text(rec: CondaRecord) -> str:
    return f"{rec.version} {rec.build} ({channel_label(rec)}), {rec.source.name}"


def _dist_text(dist: Distribution) -> str:
    return f"{dist.version} installed by {dist.installer or 'unknown'} at {dist.metadata_dir}"


def _pip_over_conda(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    inst = torch_installs(ctx)
    rec = inst.record
    if rec is None:
        return
    env_foreign = [d for d in inst.foreign if d.site_kind == "env"]
    anchor = inst.anchor
    replaced = anchor is not None and anchor.present and (anchor.installer or "conda").lower() != "conda"
    gone = anchor is not None and not anchor.present
    if replaced or gone:
        pip_dist = env_foreign[0] if env_foreign else None
        if replaced:
            same = (lambda a, b: str(a).lower() == str(b).lower()) if env.is_windows else (lambda a, b: a == b)
            pip_dist = next((d for d in inst.dists if same(d.metadata_dir, anchor.path)), pip_dist)
        short_sp = conda_site_short_path(env)
        deletes = (
            gone
            and short_sp is not None
            and anchor.rel_path.startswith(short_sp + "/")
            and "/" not in anchor.rel_path[len(short_sp) + 1 :]
            and rec.name in python_dependents(env)
        )
        evidence: dict[str, object] = {
            "conda record": _record_text(rec),
            "conda's metadata": f"{anchor.rel_path} ({'missing' if gone else 'INSTALLER: ' + str(anchor.installer)})",
        }
        if pip_dist is not None:
            evidence["pip torch"] = _dist_text(pip_dist)
        if deletes:
            evidence["deleted by `conda list`"] = rec.source
        if replaced:
            variant = "replaced"
        else:
            variant = ("gone" if pip_dist is not None else "removed") + ("" if deletes else "_kept")
        fixes = _choice_fixes(ctx, rec, pip_dist) if pip_dist is not None else [_reinstall_conda(ctx, rec)]
        if deletes:
            fixes.insert(0, _backup_record(ctx, rec))
        yield finding(
            "TC202",
            Severity.WARNING,
            variant=variant,
            conda_version=rec.version,
            pip_version=pip_dist.version if pip_dist is not None else "?",
            record=rec.source.name,
            anchor=anchor.rel_path,
            evidence=evidence,
            fixes=fixes,
        )
        return
    if env_foreign:
        pip_dist = env_foreign[0]
        yield finding(
            "TC201",
            Severity.WARNING,
            conda_version=rec.version,
            pip_version=pip_dist.version,
            evidence={
                "conda record": _record_text(rec),
                "conda's metadata": anchor.rel_path if anchor is not None else "-",
                "pip torch": [_dist_text(d) for d in env_foreign],
                "imports": ctx.torch.package_dir or "-",
            },
            fixes=_choice_fixes(ctx, rec, pip_dist),
        )


def _reinstall_conda(ctx: CheckContext, rec: CondaRecord) -> Fix:
    return Fix(
        "conda",
        msg("TC202.fix_reinstall"),
        commands=(cmd.conda_install(ctx.env, [cmd.exact_conda_spec(rec)], channel=None, extra=("--force-reinstall",)),),
    )


def _backup_record(ctx: CheckContext, rec: CondaRecord) -> Fix:
    backup = cmd.native_path(ctx.env, rec.source)
    copy = "copy" if ctx.env.is_windows else "cp"
    return Fix("file", msg("TC202.fix_backup"), commands=(f'{copy} "{backup}" "{backup}.bak"',))


def _family_manager(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    t = ctx.torch
    if not t.installed or t.source == "none":
        return
    torch_manager = "conda" if t.source == "conda" else "pip"
    other: dict[str, str] = {}
    other_dists: dict[str, Distribution | None] = {}
    for name in PIP_FAMILY[1:]:
        dist = env.dist(name)
        if dist is not None:
            manager = manager_of(env, dist)
            where = f"{dist.version} ({manager}, {dist.metadata_dir.name})"
        elif env.record(name) is not None:
            manager = "conda"
            rec = env.record(name)
            where = f"{rec.version} {rec.build} (conda, {channel_label(rec)})"
        else:
            continue
        if manager != torch_manager:
            other[name] = where
            other_dists[name] = dist
    if not other:
        return
    names = list(other)
    if torch_manager == "conda":
        rec = t.conda_record
        channel = rec.channel if rec is not None and "://" not in rec.channel and rec.channel != "unknown" else None
        if rec is not None and builder(rec.channel) == "conda-forge":
            channel = "conda-forge"
        specs = [f"{channel}::{n}" if channel else n for n in names]
        fixes = [
            Fix(
                "conda",
                msg("TC208.fix_conda"),
                commands=(
                    cmd.pip(env, "uninstall -y " + " ".join(names), dist=next(iter(other_dists.values()))),
                    cmd.conda_install(env, specs, channel=None),
                ),
            )
        ]
    else:
        release = torch_release(t.version)
        pins = []
        for name in names:
            if release is not None and name == "torchvision":
                pins.append(cmd.spec(f"torchvision=={release.torchvision_for(t.version or '')[0]}.*"))
            elif release is not None and name == "torchaudio":
                want = release.torchaudio_for(t.version or "")[0]
                pins.append(cmd.spec(f"torchaudio=={want}.*" if want.count(".") == 1 else f"torchaudio=={want}"))
            else:
                pins.append(name)
        conda_names = [n for n in names if env.record(n) is not None]
        commands = []
        if conda_names:
            commands.append(cmd.conda_remove(env, conda_names, force=True))
        commands.append(
            cmd.pip(env, "install --force-reinstall --no-deps " + " ".join(pins) + _index_args(t.dist), dist=t.dist)
        )
        fixes = [Fix("pip", msg("TC208.fix_pip"), commands=tuple(commands))]
    yield finding(
        "TC208",
        Severity.WARNING,
        packages=", ".join(names),
        manager=torch_manager,
        evidence={"torch": f"{t.version} ({torch_manager})", **other},
        fixes=fixes,
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    yield from _pip_over_conda(ctx)
    yield from _family_manager(ctx)


CHECK = Check.declared(__name__, run)
