"""TC303 missing export (WinError 127) and TC304 wrong architecture (WinError 193) on Windows.

Both come from a DLL that *is* found: the right name, the wrong build. Windows takes the first file of that name
in the search order (or a module already loaded by that name) and does not look further.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import error_line, first_outcome_with, owner_of, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

SHOWN_SYMBOLS = 8


def _outcome_for(graph, issue):
    for outcome in graph.outcomes:
        if outcome.failing and outcome.failing[0] == issue.importer and outcome.failing[1] == issue.name:
            return outcome
    return first_outcome_with(graph, issue.importer)


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None:
        return
    process_arch = graph.process.arch if graph.process else None
    for issue in graph.issues:
        outcome = _outcome_for(graph, issue)
        line = error_line(graph, outcome) if outcome is not None and outcome.error else ""
        chain = graph.chain_to(issue.importer)
        if issue.kind in ("symbols", "forwarder"):
            shown = list(issue.detail[:SHOWN_SYMBOLS]) + (["…"] if len(issue.detail) > SHOWN_SYMBOLS else [])
            owner = owner_of(ctx, issue.provider)
            evidence = {
                "importer": str(issue.importer),
                "dll": issue.name,
                "found": str(issue.provider),
                "found_version": graph.module_version(issue.provider),
                "owner": owner,
                "missing_functions": list(issue.detail),
                "chain": " -> ".join([p.name for p in chain] + [issue.name]),
                "error": line,
            }
            if issue.kind == "forwarder":
                evidence["forwarded_by"] = str(issue.importer)
            yield finding(
                "TC303",
                Severity.ERROR,
                provider_name=issue.provider.name if issue.provider else issue.name,
                importer_name=issue.importer.name,
                count=len(issue.detail),
                dll=issue.name,
                provider=str(issue.provider),
                symbols=", ".join(shown),
                error_line=line,
                evidence={k: v for k, v in evidence.items() if v is not None},
                fixes=[
                    Fix("file", msg("TC303.fix.stray", dll=issue.name, provider=str(issue.provider))),
                    Fix(
                        "env",
                        msg("TC303.fix.update", provider=str(issue.provider), importer_name=issue.importer.name),
                    ),
                ],
            )
        elif issue.kind == "arch":
            found_arch = issue.detail[0] if issue.detail else "?"
            is_root = issue.importer == issue.provider
            evidence = {
                "process": f"python.exe {process_arch}",
                "file": str(issue.provider),
                "file_arch": found_arch,
                "owner": owner_of(ctx, issue.provider),
                "error": line,
            }
            if not is_root:
                evidence["chain"] = " -> ".join([p.name for p in chain] + [issue.name])
            params = dict(
                name=issue.name,
                found_arch=found_arch,
                process_arch=process_arch or "?",
                importer_name=issue.importer.name,
                path=str(issue.provider),
                error_line=line,
            )
            if is_root:
                fixes = [Fix("env", msg("TC304.fix.python", process_arch=process_arch or "?"))]
            else:
                fixes = [Fix("file", msg("TC304.fix.remove", path=str(issue.provider), process_arch=process_arch))]
            yield finding(
                "TC304",
                Severity.ERROR,
                variant="torch" if is_root else None,
                evidence={k: v for k, v in evidence.items() if v is not None},
                fixes=fixes,
                **params,
            )


CHECK = Check(
    name="win_binaries",
    ids=("TC303", "TC304"),
    summary="DLLs that are found but are the wrong build: missing exports (127) or architecture (193)",
    run=run,
    platforms=("windows",),
)
