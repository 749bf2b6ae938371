"""TC306 DLLs that torch's PATH fallback finds (or swaps in) and TC307 conda DLL folders on PATH.

Since torch 1.5.1 PATH matters only in one place: after ``LoadLibraryExW(dll, 0x1100)`` fails with error 126,
torch prepends its folders to PATH and retries with plain ``LoadLibraryW`` (the classic order: python.exe's
folder, System32, System, Windows, the current folder, PATH). These checks report PATH and CWD only where that
fallback really happens, and say that PATH advice is redundant where it does not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.messages import msg, translate

CONDA_DLL_FOLDERS = (("library", "bin"), ("library", "mingw-w64", "bin"), ("library", "usr", "bin"), ("scripts",))


def _norm(path: str | Path) -> str:
    # Windows paths compare case-insensitively, also when the env is examined from Linux
    return os.path.normpath(str(path)).replace("\\", "/").rstrip("/").lower()


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None or graph.process is None:
        return
    yield from _fallback_findings(ctx, graph)
    yield from _path_entries(ctx, graph)


def _fallback_findings(ctx: CheckContext, graph) -> Iterator[Finding]:
    from conda_torchcheck.loader.windows import closure

    roots = [o for o in graph.outcomes if o.fallback_used]
    if not roots:
        return
    # what the safe (0x1100) search found or missed, by DLL name
    first_found: dict[str, Path] = {}
    first_missed: dict[str, list] = {}
    for module, dep in graph.iter_edges():
        if module.extra.get("resolved") != "0x1100" or dep.kind == "delay-import":
            continue
        key = dep.name.lower()
        if dep.resolution is None:
            first_missed.setdefault(key, []).append((module, dep))
        elif dep.resolution.path is not None:
            first_found.setdefault(key, dep.resolution.path)
    reported: set[str] = set()
    for module in graph.modules.values():
        for name, binding in module.extra.get("fallback", {}).items():
            res = binding.get("resolution")
            if not res or not res.get("path") or name in reported:
                continue
            step = res["found_by"]["step"]
            if step not in ("path", "cwd", "system32", "windows-dir", "system"):
                continue
            if step == "path" and res["found_by"].get("note") == "prepended by torch":
                continue  # one of torch's own folders, only reached through PATH here
            root = next((o for o in roots if any(m.path == module.path for m in closure(graph, o.path))), None)
            root_name = root.path.name if root else module.path.name
            step_label = translate(f"tree.step.{step}")
            where = res["found_by"].get("directory") or ""
            if name in first_missed:
                reported.add(name)
                importer, dep = first_missed[name][0]
                yield finding(
                    "TC306",
                    Severity.WARNING,
                    dll=dep.name,
                    root=root_name,
                    found=res["path"],
                    step=f"{step_label} ({where})",
                    evidence={
                        "needed_by": str(importer.path),
                        "found_by_fallback": res["path"],
                        "how": f"{step_label}: {where}",
                        "first_attempt_searched": [f"{p.step}: {p.directory}" for p in dep.searched],
                    },
                    fixes=[Fix("env", msg("TC306.fix.install", dll=dep.name))],
                )
            elif name in first_found and _norm(first_found[name]) != _norm(res["path"]):
                reported.add(name)
                dll = Path(res["path"]).name
                yield finding(
                    "TC306",
                    Severity.WARNING,
                    variant="shadow",
                    dll=dll,
                    root=root_name,
                    found=res["path"],
                    expected=str(first_found[name]),
                    step=f"{step_label} ({where})",
                    evidence={
                        "needed_by": str(module.path),
                        "safe_search_uses": str(first_found[name]),
                        "fallback_uses": res["path"],
                        "how": f"{step_label}: {where}",
                    },
                    fixes=[Fix("file", msg("TC306.fix.remove", found=res["path"], step=f"{step_label} ({where})"))],
                )


def _classify(entry: str, local: Path | None, ctx: CheckContext) -> str | None:
    prefix = ctx.env.prefix
    norm = _norm(local) if local is not None else None
    for parts in CONDA_DLL_FOLDERS:
        mine = prefix.joinpath(*parts)
        if norm is not None and norm == _norm(mine):
            return "redundant"
    lowered = entry.replace("/", "\\").lower().rstrip("\\")
    if re.search(r"nvidia gpu computing toolkit\\cuda\\v[\d.]+\\(bin|libnvvp)$", lowered):
        return "cuda"
    if lowered.endswith(("\\library\\bin", "\\library\\mingw-w64\\bin", "\\library\\usr\\bin")):
        return "other_env"
    return None


def _path_entries(ctx: CheckContext, graph) -> Iterator[Finding]:
    model = graph.process
    if model.path_entries is None:
        return
    version = parse_version(ctx.torch.version)
    if version is not None and version.release < (1, 5, 1):
        return  # before 1.5.1 torch relied on PATH: that advice was right then
    rows = []
    for entry, local in model.path_entries:
        kind = _classify(entry, local, ctx)
        if kind is not None:
            rows.append({"entry": entry, "relevance": translate(f"TC307.relevance.{kind}")})
    if not rows:
        return
    reached = any(o.fallback_used for o in graph.outcomes)
    yield finding(
        "TC307",
        Severity.INFO,
        variant="reached" if reached else None,
        count=len(rows),
        torch=ctx.torch.version or "?",
        evidence={"path_entries": rows, "torch_fallback_reached": reached},
        fixes=[Fix("env", msg("TC307.fix.path"))],
    )


CHECK = Check.declared(__name__, run)
