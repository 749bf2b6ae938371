"""TC302: the Visual C++ runtime that actually wins in this process is too old for this torch.

Judged on the copy Windows loads, not on what is installed somewhere: torch's ctypes probe loads msvcp140.dll
with the default search (python.exe's folder, the added folders, System32) and every later import gets that copy.
In a conda env the env's own copy next to python.exe wins, so a newer system redistributable changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import (
    VC_RECOMMENDED,
    error_line,
    owner_of,
    pip_index,
    python_command,
    vc_fixes,
    vc_origin_key,
    windows_graph,
)
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.knowledge.version import numbers
from conda_torchcheck.messages import msg, translate

RUNTIME_NAMES = ("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll")


def runtime_sources(ctx: CheckContext, graph) -> dict[str, str]:
    """Which copy of each runtime DLL this process uses, and where it comes from."""
    out: dict[str, str] = {}
    for name in RUNTIME_NAMES:
        bound = graph.loaded.get(name)
        if bound is None:
            continue
        path, how = bound
        if path is None:
            out[name] = how.note or how.step
            continue
        version = graph.module_version(path) or "?"
        origin = translate(vc_origin_key(graph, path, how.step))
        owner = owner_of(ctx, path)
        out[name] = f"{path} ({version}; {origin}{'; ' + owner if owner else ''})"
    return out


def run(ctx: CheckContext) -> Iterator[Finding]:
    from conda_torchcheck.loader.windows import ERROR_DLL_INIT_FAILED, vc_minimum

    graph = windows_graph(ctx)
    if graph is None:
        return
    bound = graph.loaded.get("msvcp140.dll")
    if bound is None or bound[0] is None:
        return  # missing (TC301) or not examined (TC310)
    path, how = bound
    have = graph.module_version(path)
    if not have:
        return
    torch_version = ctx.torch.version or "?"
    origin = translate(vc_origin_key(graph, path, how.step))
    owner = owner_of(ctx, path)
    if owner:
        origin = f"{origin}, {owner}"
    linkers = graph.linker_versions()
    toolset = max(linkers) if linkers else None
    toolset_text = f"{toolset[0]}.{toolset[1]}" if toolset else "?"
    evidence = {
        "msvcp140_loaded": str(path),
        "version": have,
        "found_by": how.note or how.step,
        "torch_built_with": toolset_text,
        "runtime_in_this_process": runtime_sources(ctx, graph),
    }
    env_wins = vc_origin_key(graph, path, how.step) in ("TC302.origin.env", "TC302.origin.app")
    for rule in vc_minimum(ctx.torch.version):
        if rule["dll"].lower() != "msvcp140.dll":
            continue
        need = rule["version"]
        if numbers(have)[:2] >= numbers(need)[:2]:
            continue
        failing = next((o for o in graph.outcomes if o.error == ERROR_DLL_INIT_FAILED), None)
        module = failing.failing[0].name if failing and failing.failing else "c10.dll"
        evidence["needs"] = f">= {need} ({rule['source']})"
        fixes = vc_fixes(ctx, graph, minimum=VC_RECOMMENDED, env_copy_wins=env_wins)
        if ctx.torch.source != "conda":
            cmd = f'{python_command(ctx)} -m pip install "torch<2.9"{pip_index(ctx)}'
            fixes.append(Fix("pip", msg("TC302.fix.pin"), commands=(cmd,)))
        yield finding(
            "TC302",
            Severity.ERROR,
            torch=torch_version,
            have=have,
            need=need,
            toolset=toolset_text,
            winner=str(path),
            origin=origin,
            module=module,
            error_line=error_line(graph, failing),
            evidence=evidence,
            fixes=fixes,
        )
        return
    if toolset is not None and numbers(have)[:2] < toolset:
        yield finding(
            "TC302",
            Severity.WARNING,
            variant="toolset",
            torch=torch_version,
            have=have,
            toolset=toolset_text,
            winner=str(path),
            origin=origin,
            evidence=evidence,
            fixes=vc_fixes(ctx, graph, minimum=f"{toolset[0]}.{toolset[1]}", env_copy_wins=env_wins),
        )


CHECK = Check.declared(__name__, run)
