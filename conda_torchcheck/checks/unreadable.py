"""TC901/TC902: parts of the env that could not be read are reported, not crashed on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Environment, Problem
from conda_torchcheck.messages import msg


def record_spec_from_filename(path: Path) -> str | None:
    """``pytorch-2.5.1-cpu_mkl_py311_h_100.json`` → ``pytorch=2.5.1=cpu_mkl_py311_h_100`` (conda names the file
    ``<name>-<version>-<build>.json``; names may contain dashes, versions and builds may not)."""
    parts = path.stem.rsplit("-", 2)
    if len(parts) != 3 or not all(parts):
        return None
    return "=".join(parts)


#: conda-meta/history is read up to this size (it grows by one block per transaction)
HISTORY_LIMIT = 8 << 20
#: records that come from the channel pytorch itself came from (a readable sibling names it)
_SIBLINGS = ("pytorch-mutex", "pytorch-cuda", "cpuonly", "torchvision", "torchaudio", "libtorch", "pytorch")


def record_channel(env: Environment, record: Path) -> str | None:
    """The channel an unreadable record's package came from: conda-meta/history's ``+channel::name-ver-build``
    line for it, else the channel of a readable sibling of torch's family, else ``pytorch`` when the file's build
    string is one only that channel builds; None when none of them says (a wrong channel would install another
    build, so none is guessed)."""
    stem = record.name.removesuffix(".json")
    history = record.parent / "history"
    try:
        with fs.open_binary(history) as handle:  # a FIFO named history must not block the check
            text = handle.read(HISTORY_LIMIT).decode("utf-8", "replace")
    except OSError:
        text = ""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("+") and line.endswith("::" + stem):
            channel = line[1 : -(len(stem) + 2)]
            if "://" in channel:  # older conda wrote the URL: https://conda.anaconda.org/pytorch/linux-64
                parts = [p for p in channel.split("://", 1)[1].split("/")[1:] if p]
                channel = parts[0] if len(parts) >= 1 and "anaconda.org" in channel else ""
            if channel:
                return channel
    name = stem.rsplit("-", 2)[0]
    if name in _SIBLINGS:
        for rec in env.conda_records:
            if rec.name in _SIBLINGS and rec.channel and rec.channel != "unknown" and "://" not in rec.channel:
                return rec.channel
        # the file's own build string, when it is one only the pytorch channel builds (py3.11_cuda12.1_cudnn9_0)
        from conda_torchcheck.envspec.intent import build_builder

        parts = stem.rsplit("-", 2)
        if len(parts) == 3 and build_builder(parts[2]) == "pytorch":
            return "pytorch"
    return None


def _conda_meta(ctx: CheckContext, problem: Problem) -> Finding:
    env = ctx.env
    evidence = {"file": problem.path, "problem": problem.detail}
    if problem.kind == "conda-meta-unreadable":
        return finding(
            "TC901",
            Severity.WARNING,
            variant="unreadable",
            path=str(problem.path),
            detail=problem.detail,
            evidence=evidence,
            fixes=[Fix("file", msg("TC901.fix_permissions"))],
        )
    spec = record_spec_from_filename(problem.path)
    native = cmd.native_path(env, problem.path)
    move = f'move "{native}" "{native}.broken"' if env.is_windows else f'mv "{native}" "{native}.broken"'
    commands = [move]
    if spec is not None:
        channel = record_channel(env, problem.path)
        # the pytorch channel's CUDA builds take their CUDA libraries from the nvidia channel
        extra = ("-c", "nvidia") if channel == "pytorch" and "cuda" in spec else ()
        commands.append(cmd.conda_install(env, [spec], channel=channel, extra=extra))
    return finding(
        "TC901",
        Severity.WARNING,
        path=str(problem.path),
        detail=problem.detail,
        evidence=evidence,
        fixes=[Fix("conda", msg("TC901.fix"), commands=tuple(commands))],
    )


def _dist(ctx: CheckContext, problem: Problem) -> Finding:
    env = ctx.env
    evidence = {"file": problem.path, "problem": problem.detail}
    if problem.kind == "path-file":
        return finding(
            "TC902",
            Severity.WARNING,
            variant="path_file",
            path=str(problem.path),
            detail=problem.detail,
            evidence=evidence,
            fixes=[Fix("file", msg("TC902.path_file.fix"))],
        )
    if problem.kind == "unreadable" and fs.is_dir(problem.path):
        return finding(
            "TC902",
            Severity.WARNING,
            variant="folder",
            path=str(problem.path),
            detail=problem.detail,
            evidence=evidence,
            fixes=[Fix("file", msg("TC901.fix_permissions"))],
        )
    fixes = []
    meta_dir = problem.path.parent if problem.path.parent.name.endswith((".dist-info", ".egg-info")) else problem.path
    stem = meta_dir.name.rsplit(".", 1)[0]
    if "-" in stem and meta_dir.name.endswith((".dist-info", ".egg-info")):
        name, version = stem.split("-", 1)
        version = version.split("-py")[0]
        fixes.append(
            Fix(
                "pip",
                msg("TC902.fix"),
                commands=(cmd.pip(env, f"install --force-reinstall --no-deps {name}=={version}"),),
            )
        )
    return finding(
        "TC902",
        Severity.WARNING,
        path=str(problem.path),
        detail=problem.detail,
        evidence=evidence,
        fixes=fixes,
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    for problem in ctx.env.problems:
        if problem.kind.startswith("conda-meta"):
            yield _conda_meta(ctx, problem)
        else:
            yield _dist(ctx, problem)


CHECK = Check.declared(__name__, run)
