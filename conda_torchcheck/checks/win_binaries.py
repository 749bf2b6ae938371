"""TC303 missing export (WinError 127) and TC304 wrong architecture (WinError 193) on Windows.

Both come from a DLL that *is* found: the right name, the wrong build. Windows takes the first file of that name
in the search order (or a module already loaded by that name) and does not look further.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import builder, channel_label
from conda_torchcheck.checks.win_common import error_line, first_outcome_with, owner_of, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

SHOWN_SYMBOLS = 8


def _outcome_for(graph, issue):
    for outcome in graph.outcomes:
        if outcome.failing and outcome.failing[0] == issue.importer and outcome.failing[1] == issue.name:
            return outcome
    return first_outcome_with(graph, issue.importer)


def _torch_owners(ctx: CheckContext) -> set[str]:
    """The owner labels (win_common.owners) of torch's own files: its pip dist, its conda pytorch/libtorch."""
    t = ctx.torch
    labels = set()
    if t.dist is not None:
        labels.add(f"pip: {t.dist.raw_name} {t.dist.version}")
    for rec in (t.conda_record, t.libtorch_record):
        if rec is not None:
            labels.add(f"conda: {rec.name} {rec.version} ({rec.channel})")
    return labels


def _leftover_importer(ctx: CheckContext, issue) -> bool:
    """A DLL in torch\\lib that no package owns imports a function torch's own file lacks: the leftover (of an older
    torch) is the wrong build, not torch's file. TC309 names it and says that it breaks the import."""
    t = ctx.torch
    if issue.provider is None or t.package_dir is None or owner_of(ctx, issue.importer) is not None:
        return False
    if not _same_dir(issue.importer.parent, t.package_dir / "lib"):
        return False
    return owner_of(ctx, issue.provider) in _torch_owners(ctx)


def _other_builder(ctx: CheckContext, provider) -> tuple[object, object] | None:
    """(torch's conda record, the provider's) when ``provider`` belongs to a conda package of another builder
    than torch's, one of them conda-forge (the pytorch channel's builds go with Anaconda's defaults)."""
    anchor = ctx.torch.conda_record
    if anchor is None or provider is None:
        return None
    key = os.path.normcase(os.path.normpath(str(provider)))
    for rec in ctx.env.conda_records:
        if rec is anchor or rec is ctx.torch.libtorch_record:
            continue
        if any(os.path.normcase(os.path.normpath(str(ctx.env.prefix / rel))) == key for rel in rec.files):
            ours, theirs = builder(anchor.channel), builder(rec.channel)
            if ours != theirs and "conda-forge" in (ours, theirs):
                return anchor, rec
            return None
    return None


def _same_dir(a, b) -> bool:
    return os.path.normcase(os.path.normpath(str(a))) == os.path.normcase(os.path.normpath(str(b)))


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None:
        return
    process_arch = graph.process.arch if graph.process else None
    for issue in graph.issues:
        if issue.kind in ("symbols", "forwarder") and _leftover_importer(ctx, issue):
            continue
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
            mix = _other_builder(ctx, issue.provider)
            channels = {}
            if mix is not None:
                anchor, rec = mix
                channels = {"torch_channel": channel_label(anchor), "provider_channel": channel_label(rec)}
                evidence["channels"] = {
                    anchor.name: f"{anchor.version} {anchor.build} ({channel_label(anchor)})",
                    rec.name: f"{rec.version} {rec.build} ({channel_label(rec)})",
                }
            yield finding(
                "TC303",
                Severity.ERROR,
                variant="channel" if mix is not None else None,
                package=mix[1].name if mix is not None else "",
                **channels,
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


CHECK = Check.declared(__name__, run)
