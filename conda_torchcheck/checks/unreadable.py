"""TC901/TC902: parts of the env that could not be read are reported, not crashed on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Problem
from conda_torchcheck.messages import msg


def record_spec_from_filename(path: Path) -> str | None:
    """``pytorch-2.5.1-cpu_mkl_py311_h_100.json`` → ``pytorch=2.5.1=cpu_mkl_py311_h_100`` (conda names the file
    ``<name>-<version>-<build>.json``; names may contain dashes, versions and builds may not)."""
    parts = path.stem.rsplit("-", 2)
    if len(parts) != 3 or not all(parts):
        return None
    return "=".join(parts)


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
        commands.append(cmd.conda_install(env, [spec], channel=None))
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


CHECK = Check(
    name="unreadable",
    ids=("TC901", "TC902"),
    summary="conda-meta records or package metadata that cannot be read",
    run=run,
)
