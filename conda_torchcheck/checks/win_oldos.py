"""TC314: torch's DLLs import OS functions the Windows they run on does not have (Windows 7 with torch >= 2.4).

The loader resolves an import from kernel32.dll like any other: a function the OS's kernel32.dll does not export
stops the load with WinError 127. Which functions came with which Windows is data (knowledge/windows_os.toml,
found from the real wheels' import tables). The OS version is the running Windows' when live and kernel32.dll's
FileVersion under ``--system-root`` otherwise; a current Windows costs nothing here (no import table is read).
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import ERROR_REASON, first_outcome_with, python_command, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge import windows
from conda_torchcheck.knowledge.version import release_key
from conda_torchcheck.messages import msg, translate

os_name = windows.os_name  # other modules import it from here


def too_new_imports(graph, version: tuple[int, ...]) -> list[tuple[object, str, str, str]]:
    """(module, dll, function, since) for each function torch's own DLLs import that this Windows lacks."""
    from conda_torchcheck.binaries.pe import PEInfo, read_pe

    table = [f for f in windows.os_functions() if version[:2] < f.since]
    if not table:
        return []
    wanted = {(f.dll.lower(), f.name): ".".join(map(str, f.since)) for f in table}
    dlls = {dll for dll, _ in wanted}
    out = []
    for module in graph.modules.values():
        if not module.extra.get("own") or module.unreadable:
            continue
        info = read_pe(module.path, version=False, symbols=lambda n: n.lower() in dlls)
        if not isinstance(info, PEInfo):
            continue
        for imported in info.normal_imports:
            for symbol in imported.symbols or ():
                since = wanted.get((imported.name.lower(), str(symbol)))
                if since is not None:
                    out.append((module, imported.name, str(symbol), since))
    return out


def run(ctx: CheckContext) -> Iterator[Finding]:
    from conda_torchcheck.loader.windows import windows_version

    graph = windows_graph(ctx)
    if graph is None or graph.process is None:
        return
    found = windows_version(ctx, graph)
    if found is None:
        return
    version, source = found
    hits = too_new_imports(graph, version)
    if not hits:
        return
    module, dll, _function, since = hits[0]
    outcome = first_outcome_with(graph, module.path)
    reason = translate(ERROR_REASON[127])
    if outcome is not None and outcome.kind == "extension":
        error_line = translate("win.error.extension", reason=reason)
    else:
        error_line = translate(
            "win.error.preload", code=127, reason=reason, path=str(outcome.path if outcome else module.path)
        )
    functions = sorted({f"{h[1]}!{h[2]}" for h in hits})
    shown = ".".join(str(p) for p in version)
    per_module: dict[str, list[str]] = {}
    for hit_module, hit_dll, hit_function, hit_since in hits:
        per_module.setdefault(hit_module.path.name, []).append(
            f"{hit_dll}!{hit_function} (since {os_name(release_key(hit_since))})"
        )
    last = windows.last_torch_without_new_os_functions()
    fixes = [Fix("system", msg("TC314.fix.upgrade", since=os_name(release_key(since))))]
    if ctx.torch.source != "conda":
        major, minor = release_key(last)[:2]
        cmd = f'{python_command(ctx)} -m pip install "torch<{major}.{minor + 1}"'
        fixes.append(Fix("pip", msg("TC314.fix.pin", last=last), commands=(cmd,)))
    yield finding(
        "TC314",
        Severity.ERROR,
        os=os_name(version),
        version=shown,
        torch=ctx.torch.version or "?",
        module=module.path.name,
        functions=", ".join(functions),
        since=os_name(release_key(since)),
        error_line=error_line,
        evidence={
            "windows": f"{os_name(version)} {shown}",
            "read_from": source,
            "imports_it_lacks": per_module,
        },
        fixes=fixes,
    )


CHECK = Check.declared(__name__, run)
