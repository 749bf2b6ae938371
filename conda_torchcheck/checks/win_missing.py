"""TC301 missing DLL, TC310 conclusions that depend on an unexamined System32, TC903 unreadable binaries.

Windows names only the DLL it was loading; these findings name the file that is missing, the chain from the
torch DLL the error message blames, the places searched in order, and the fix for this kind of env.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import (
    CUDA_PREFIXES,
    VC_RECOMMENDED,
    chain_names,
    error_line,
    first_outcome_with,
    pip_index,
    python_command,
    record_paths,
    reinstall_fixes,
    searched_lines,
    vc_fixes,
    windows_graph,
)
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge.windows import runtime_minimum
from conda_torchcheck.messages import msg

NEW_VC_DLLS = ("vcruntime140_threads.dll", "msvcp140_atomic_wait.dll")


@dataclass
class Miss:
    name: str  # as the first importer spells it
    importers: list[Path] = field(default_factory=list)
    dependency: object | None = None  # the first Dependency (for the places searched)
    uncertain: bool = False


def _rescued(graph, name: str) -> bool:
    """Missing from the 0x1100 attempt but found by torch's PATH fallback, and no load fails on it."""
    key = name.lower()
    found = False
    for module in graph.modules.values():
        binding = module.extra.get("fallback", {}).get(key)
        if binding and binding.get("resolution"):
            found = True
    if not found:
        return False
    return not any(o.error is not None and o.failing and o.failing[1].lower() == key for o in graph.outcomes)


def collect_misses(graph) -> dict[str, Miss]:
    misses: dict[str, Miss] = {}
    for module, dep in graph.missing():
        if dep.kind == "forward":
            continue
        miss = misses.setdefault(dep.name.lower(), Miss(dep.name, dependency=dep))
        if module.path not in miss.importers:
            miss.importers.append(module.path)
        if any(p.note == "not examined" for p in dep.searched):
            miss.uncertain = True
    return misses


def _expected_torch_names(ctx: CheckContext) -> set[str]:
    t = ctx.torch
    names: set[str] = set()
    if t.dist is not None and t.dist.has_record:
        names.update(Path(p).name.lower() for p in record_paths(t.dist.record_path) if p.lower().endswith(".dll"))
    for rec in (t.conda_record, t.libtorch_record):
        if rec is not None and t.source == "conda":
            names.update(Path(p).name.lower() for p in rec.files if p.lower().endswith(".dll"))
    return names


def _variant(ctx: CheckContext, name: str, expected: set[str]) -> str:
    key = name.lower()
    from conda_torchcheck.loader.windows import dll_kind

    kind = dll_kind(key)
    if kind == "vc-runtime":
        return "vc_runtime"
    if kind == "python":
        return "python"
    if fnmatch.fnmatch(key, "mkl_*.dll"):
        return "mkl"
    if key == "libomp140.x86_64.dll":
        return "libomp140"
    if key in expected:
        return "torch_file"
    if key.startswith(CUDA_PREFIXES):
        return "cuda"
    return "generic"


def _elsewhere(ctx: CheckContext, graph, name: str) -> list[str]:
    """Copies of ``name`` in places this load does not search (they explain "but the file is there!")."""
    model = graph.process
    places: list[Path] = []
    searched = {str(p.directory) for p in model.user_dirs() if p.directory is not None}
    searched.add(str(model.app_dir))
    env = ctx.env
    candidates = [
        fs.find_path(env.prefix, "Library", "bin"),
        fs.find_child(env.prefix, "DLLs"),
        fs.find_child(env.prefix, "Scripts"),
        fs.find_path(ctx.torch.package_dir, "bin") if ctx.torch.package_dir is not None else None,
    ]
    from conda_torchcheck.loader.windows import _userbase

    userbase = _userbase(env, ctx.host)
    if userbase is not None:
        candidates.append(fs.find_path(userbase, "Library", "bin"))
    for _text, local in model.path_entries or ():
        candidates.append(local)
    for folder in candidates:
        if folder is None or str(folder) in searched:
            continue
        hit = fs.listing(folder).get(name.lower())
        if hit is not None and hit not in places:
            places.append(hit)
    return [str(p) for p in places]


_CUDA_MAJOR = re.compile(r"^(?P<stem>[a-z_]+?64_)(?P<major>\d+)\.dll$")


def other_cuda_majors(ctx: CheckContext, graph, name: str) -> list[str]:
    """Files of the same CUDA library with another major (cudnn64_8.dll for cudnn64_9.dll, cublas64_11.dll for
    cublas64_12.dll) where torch keeps its CUDA DLLs or the load searches."""
    m = _CUDA_MAJOR.match(name.lower())
    if m is None:
        return []
    model = graph.process
    folders = [p.directory for p in model.default_dirs() if p.directory is not None]
    if ctx.torch.package_dir is not None:
        folders.insert(0, fs.find_child(ctx.torch.package_dir, "lib"))
    folders.append(fs.find_path(ctx.env.prefix, "Library", "bin"))
    folders.extend(local for _text, local in model.path_entries or ())
    found: list[str] = []
    for folder in folders:
        if folder is None:
            continue
        for entry_name, entry in sorted(fs.listing(folder).items()):
            other = _CUDA_MAJOR.match(entry_name)
            if other and other["stem"] == m["stem"] and other["major"] != m["major"] and str(entry) not in found:
                found.append(str(entry))
    return found


def _fallback_note(graph, importer: Path, name: str) -> str | None:
    module = graph.module(importer)
    if module is None:
        return None
    binding = module.extra.get("fallback", {}).get(name.lower())
    if binding is None:
        return None
    res = binding.get("resolution")
    if res and res.get("path"):
        return res["path"]
    from conda_torchcheck.messages import translate

    return translate("tree.fallback_missing")


def _fixes(ctx: CheckContext, graph, variant: str, names: list[str]) -> list[Fix]:
    t = ctx.torch
    py = python_command(ctx)
    if variant in ("vc_runtime", "vc_runtime_new"):
        return vc_fixes(ctx, graph, minimum=VC_RECOMMENDED)
    if variant == "mkl":
        return [
            Fix("pip", msg("TC301.fix.mkl_upgrade"), commands=(f'{py} -m pip install "torch>=2.3.1"{pip_index(ctx)}',)),
            Fix("pip", msg("TC301.fix.mkl_install"), commands=(f'{py} -m pip install "mkl>=2021.1.1,<=2021.4.0"',)),
        ]
    if variant == "libomp140":
        if t.source == "conda":
            cmd = f'conda install -p "{ctx.env.prefix}" -c conda-forge pytorch'
            return [Fix("conda", msg("TC301.fix.libomp_conda"), commands=(cmd,))]
        return [
            Fix(
                "pip",
                msg("TC301.fix.libomp_upgrade"),
                commands=(f'{py} -m pip install "torch>=2.4.1"{pip_index(ctx)}',),
            )
        ]
    if variant in ("torch_file", "cuda", "cuda_major"):
        return reinstall_fixes(ctx)
    if variant == "python":
        version = t.version or ""
        pin = f'"torch=={version}"' if version else "torch"
        cmd = f"{py} -m pip install --force-reinstall {pin}{pip_index(ctx)}"
        return [Fix("pip", msg("TC301.fix.python", python=ctx.env.python.version or "?"), commands=(cmd,))]
    folder = fs.find_path(ctx.env.prefix, "Library", "bin") or ctx.env.prefix / "Library" / "bin"
    return [Fix("env", msg("TC301.fix.generic", dll=names[0], folder=str(folder)))]


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None:
        return
    yield from _unreadable(graph)
    misses = collect_misses(graph)
    expected = _expected_torch_names(ctx)
    groups: list[tuple[str, list[Miss]]] = []
    vc: list[Miss] = []
    for key, miss in misses.items():
        if _rescued(graph, key):
            continue  # TC306 explains it
        variant = _variant(ctx, miss.name, expected)
        if variant == "vc_runtime":
            vc.append(miss)  # one finding for the whole runtime: one fix installs all of it
        else:
            groups.append((variant, [miss]))
    if vc:
        groups.append(("vc_runtime_new" if all(m.name.lower() in NEW_VC_DLLS for m in vc) else "vc_runtime", vc))
    # in the order Windows meets them: the first one is what the error message is about
    groups.sort(key=lambda g: min(_first_index(graph, m) for m in g[1]))
    for variant, members in groups:
        yield _finding(ctx, graph, variant, members)
    unexamined = _unexamined(graph, misses)
    if unexamined:
        yield unexamined_finding(ctx, graph, unexamined)


def _first_index(graph, miss: Miss) -> int:
    outcome = first_outcome_with(graph, miss.importers[0]) if miss.importers else None
    return outcome.index if outcome is not None else 1 << 30


def _finding(ctx: CheckContext, graph, variant: str, misses: list[Miss]) -> Finding:
    first = min(misses, key=lambda m: _first_index(graph, m))
    importer = first.importers[0]
    outcome = first_outcome_with(graph, importer)
    chain = graph.chain_to(importer)
    if outcome is not None and outcome.path in chain:
        chain = chain[chain.index(outcome.path) :]
    blamed = outcome.path.name if outcome is not None else importer.name
    names = [m.name for m in misses]
    evidence: dict[str, object] = {}
    if len(misses) == 1:
        evidence["missing"] = first.name
        evidence["needed_by"] = [str(p) for p in first.importers]
    else:
        evidence["missing"] = names
        evidence["needed_by"] = {m.name: [p.name for p in m.importers] for m in misses}
    evidence["chain"] = " -> ".join([*chain_names(chain), first.name])
    evidence["windows_blames"] = blamed
    evidence["error"] = error_line(graph, outcome)
    earliest = graph.blamed()
    if earliest is not None and outcome is not None and earliest is not outcome:
        # another load fails earlier (e.g. c10.dll with 1114): that is the message the user sees first
        evidence["fails_earlier"] = error_line(graph, earliest)
    evidence["searched"] = searched_lines(first.dependency)  # type: ignore[arg-type]
    elsewhere = {m.name: _elsewhere(ctx, graph, m.name) for m in misses}
    elsewhere = {k: v for k, v in elsewhere.items() if v}
    if elsewhere:
        evidence["present_but_not_searched"] = elsewhere
    fallback = _fallback_note(graph, importer, first.name)
    if fallback is not None:
        evidence["torch_path_fallback"] = fallback
    if first.uncertain:
        evidence["not_examined"] = [line for line in evidence["searched"] if "not examined" in line]  # type: ignore[union-attr]
    if variant.startswith("vc_runtime"):
        found = {}
        for name in ("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"):
            bound = graph.loaded.get(name)
            if bound is not None:
                path, how = bound
                version = graph.module_version(path) if path else None
                if path is None:
                    found[name] = how.note or how.step
                else:
                    found[name] = f"{path} ({version})" if version else str(path)
        if found:
            evidence["runtime_found"] = found
    others: list[str] = []
    if variant == "cuda":
        others = other_cuda_majors(ctx, graph, first.name)
        if others:
            # cudnn64_8.dll where torch imports cudnn64_9.dll: a CUDA library of another major, not a missing file
            variant = "cuda_major"
            evidence["other_major"] = others
    params = {
        "others": ", ".join(others),
        "dll": first.name,
        "dlls": ", ".join(names),
        "importer": importer.name,
        "blamed": blamed,
        "error_line": evidence["error"],
        "torch": ctx.torch.version or "?",
        "python": ctx.env.python.version or "?",
    }
    return finding(
        "TC301",
        Severity.ERROR,
        variant=None if variant == "generic" else variant,
        evidence=evidence,
        fixes=_fixes(ctx, graph, variant, names),
        **params,
    )


def _unreadable(graph) -> Iterator[Finding]:
    for module in graph.modules.values():
        if module.unreadable:
            yield finding(
                "TC903",
                Severity.ERROR,
                path=str(module.path),
                format="PE",
                detail=module.unreadable,
                evidence={"file": str(module.path), "problem": module.unreadable, "windows": "WinError 193"},
            )


def _unexamined(graph, misses: dict[str, Miss]) -> list[str]:
    # Windows matches DLL names without regard to case: KERNEL32.dll and kernel32.dll are one DLL, named once
    names: dict[str, str] = {}
    for _module, dep in graph.iter_edges():
        res = dep.resolution
        if dep.kind != "delay-import" and res is not None and res.assumed and res.found_by.step == "unexamined":
            names.setdefault(dep.name.lower(), dep.name)
    for name, value in graph.vc_probe.items():
        if value is not None and value.assumed and value.found_by.step == "unexamined":
            names.setdefault(name.lower(), name)
    return list(names.values())


def unexamined_finding(ctx: CheckContext, graph, names: list[str]) -> Finding:
    from conda_torchcheck.loader.windows import dll_kind

    torch_version = ctx.torch.version
    requirement = ""
    vc = [n for n in names if dll_kind(n) == "vc-runtime"]
    if vc:
        need = runtime_minimum("msvcp140.dll", torch_version)
        if any(n.lower() in NEW_VC_DLLS for n in vc) or need:
            from conda_torchcheck.messages import translate

            requirement = translate("TC310.requirement.vc", torch=torch_version or "?", version=VC_RECOMMENDED)
    severity = Severity.WARNING if vc or any(dll_kind(n) == "driver" for n in names) else Severity.INFO
    example = "/mnt/c/Windows"
    return finding(
        "TC310",
        severity,
        dlls=", ".join(names),
        requirement=requirement,
        evidence={
            "depends_on_system32": names,
            "system_root": "unknown",
            "env_python": str(graph.process.app_dir_shown) if graph.process else None,
        },
        fixes=[
            Fix(
                "env",
                msg("TC310.fix.root"),
                commands=(f'conda-torchcheck -p "{ctx.env.prefix}" --system-root {example}',),
            )
        ],
    )


CHECK = Check.declared(__name__, run)
