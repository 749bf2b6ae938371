"""TC901/TC902: parts of the env that could not be read are reported, not crashed on."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def run(ctx: CheckContext) -> Iterator[Finding]:
    for problem in ctx.env.problems:
        if problem.kind.startswith("conda-meta"):
            yield finding(
                "TC901",
                Severity.WARNING,
                path=str(problem.path),
                detail=problem.detail,
                evidence={"file": problem.path, "problem": problem.detail},
                fixes=[
                    Fix(
                        "conda",
                        msg("TC901.fix"),
                        commands=(f'conda install --force-reinstall -p "{ctx.env.prefix}" <package>',),
                    ),
                ],
            )
        else:
            yield finding(
                "TC902",
                Severity.WARNING,
                path=str(problem.path),
                detail=problem.detail,
                evidence={"file": problem.path, "problem": problem.detail},
            )


CHECK = Check(
    name="unreadable",
    ids=("TC901", "TC902"),
    summary="conda-meta records or package metadata that cannot be read",
    run=run,
)
