"""torch's own loading steps on Windows: its preloads, the extension module, the graph of ``import torch``
(and of one file loaded after it), and what shares the process with torch."""

from __future__ import annotations

import os
from pathlib import Path

from conda_torchcheck.binaries.pe import Unreadable
from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.windows.engine import RootOutcome, WindowsLoadGraph, _Attempt, _Simulation, closure
from conda_torchcheck.loader.windows.search import (
    ERROR_DLL_INIT_FAILED,
    STEP_PATH,
    Place,
    ProcessModel,
    _lookup,
    process_model,
    torch_rules,
    vc_minimum,
    version_tuple,
)
from conda_torchcheck.messages import translate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conda_torchcheck.loader.contract import LoaderContext


def read_record(path: Path) -> tuple[tuple[str, str, str], ...]:
    """The rows of a wheel's RECORD (parsed once per file version; the loader and the file check both need it)."""
    from conda_torchcheck.inventory.dists import record_rows

    return record_rows(path)


def _own_paths(torch_info, env) -> set[str]:
    """The binaries that belong to the installed torch build (its wheel RECORD or its conda packages)."""
    own: set[str] = set()
    dist = torch_info.dist
    if torch_info.source != "conda" and dist is not None and dist.has_record:
        # the wheel's RECORD: a DLL it does not list (a leftover, a hand-copied file) is not part of this build
        site = str(dist.site)
        for row in read_record(dist.record_path):
            if row[0].lower().endswith((".dll", ".pyd")):
                own.add(os.path.normcase(os.path.normpath(os.path.join(site, row[0]))))
    elif torch_info.package_dir is not None:
        for folder in (torch_info.package_dir, torch_info.package_dir / "lib", torch_info.package_dir / "bin"):
            for name, entry in fs.listing(folder).items():
                if name.endswith((".dll", ".pyd")):
                    own.add(os.path.normcase(str(entry)))
    for record in (torch_info.conda_record, torch_info.libtorch_record):
        if record is None or torch_info.source != "conda":
            continue
        for rel in record.files:
            if rel.lower().endswith((".dll", ".pyd")):
                own.add(os.path.normcase(str(env.prefix / rel)))
    return own


def _extension_module(torch_dir: Path, tag: str | None, model: ProcessModel) -> tuple[Path | None, str | None]:
    candidates = sorted(
        entry for name, entry in fs.listing(torch_dir).items() if name.startswith("_c.") and name.endswith(".pyd")
    )
    if not candidates:
        return None, None
    if tag:
        for entry in candidates:
            if f".cp{tag}-" in entry.name.lower():
                return entry, None
    return candidates[0], translate("win.note.pyd_tag", name=candidates[0].name, tag=tag or "?")


def preload_list(lib_dir: Path | None) -> list[Path]:
    """``glob(torch\\lib\\*.dll)`` in the order NTFS lists a directory (case-insensitive, upper-cased names)."""
    if lib_dir is None:
        return []
    entries = [e for n, e in fs.listing(lib_dir).items() if n.endswith(".dll")]
    return sorted((e for e in entries if e.is_file()), key=lambda e: e.name.upper())


def build_torch_graph(ctx: LoaderContext) -> WindowsLoadGraph | None:
    """The whole of ``import torch`` on Windows for this env; None when torch is not installed here."""
    torch_info = ctx.torch
    if not torch_info.installed or torch_info.package_dir is None:
        return None
    env = ctx.env
    model = process_model(ctx, torch_info)
    graph = WindowsLoadGraph(platform="windows", torch_version=torch_info.version, process=model)
    graph.own_paths = frozenset(_own_paths(torch_info, env))
    rules = torch_rules(torch_info.version)
    sim = _Simulation(model, graph)
    sim.seed_interpreter()
    if rules["vc_probe"] is not None:
        dlls = [d for d in rules["vc_probe"]["dlls"]]
        if model.arch == "arm64":
            dlls = [d for d in dlls if d not in rules["vc_probe"]["skip_on_arm64"]]
        graph.vc_probe = sim.vc_probe(dlls)
    lib_dir = fs.find_child(torch_info.package_dir, "lib")
    preload = preload_list(lib_dir) if rules["preload"] else []
    graph.layout = "wheel" if preload else "conda"
    if not preload:
        library_bin = fs.find_path(env.prefix, "Library", "bin")
        if library_bin is not None and _lookup(library_bin, "torch_cpu.dll") is not None:
            graph.notes.append(translate("win.note.conda_layout", path=str(library_bin)))
    fallback_prefix = [Place(STEP_PATH, p.directory, p.shown, "prepended by torch") for p in model.torch_dirs]
    index = 0
    for dll in preload:
        graph.roots.append(dll)
        graph.outcomes.append(sim.load_root(dll, "preload", index, fallback_prefix=fallback_prefix))
        index += 1
    pyd, note = _extension_module(torch_info.package_dir, model.python_tag, model)
    if note:
        graph.notes.append(note)
    if pyd is not None:
        graph.roots.append(pyd)
        flags_fallback = None  # Python raises ImportError at once: no fallback for extension modules
        py = ctx.env.python.major_minor
        if py is not None and py < (3, 8):
            # before the preload (torch < 1.5.1) torch put its directories on PATH at import, unconditionally
            attempt_order = model.classic_order(fallback_prefix if not rules["preload"] else (), load_dir=pyd.parent)
            outcome = RootOutcome(pyd, "extension", index)
            attempt = _Attempt(attempt_order, "classic", record=True)
            sim.load(pyd, attempt, [pyd])
            outcome.error = outcome.first_error = attempt.error
            outcome.failing, outcome.chain, outcome.uncertain = attempt.failing, attempt.chain, attempt.uncertain
            graph.outcomes.append(outcome)
        else:
            graph.outcomes.append(sim.load_root(pyd, "extension", index, fallback_prefix=flags_fallback))
    _apply_vc_minimum(graph, sim, torch_info.version)
    graph.search_order = [p.searched() for p in model.safe_order(lib_dir or torch_info.package_dir)]
    graph.notes = model.notes + graph.notes
    return graph


def _apply_vc_minimum(graph: WindowsLoadGraph, sim: _Simulation, torch_version: str | None) -> None:
    """torch >= 2.9 needs msvcp140.dll >= 14.40: an older loaded copy makes c10.dll's initialisation fail (1114)."""
    for rule in vc_minimum(torch_version):
        name = rule["dll"].lower()
        bound = sim.loaded.get(name)
        if bound is None or bound[0] is None:
            continue
        info = sim.info(bound[0])
        if isinstance(info, Unreadable) or not info.file_version:
            continue
        have = version_tuple(info.file_version) or ()
        need = version_tuple(rule["version"]) or ()
        if have[: len(need)] >= need:
            continue
        for outcome in graph.outcomes:
            if outcome.error is not None:
                continue
            for module in closure(graph, outcome.path):
                if module.extra.get("own") and any(d.name.lower() == name for d in module.dependencies):
                    outcome.error = ERROR_DLL_INIT_FAILED
                    outcome.failing = (module.path, rule["dll"])
                    outcome.chain = graph.chain_to(module.path)
                    break
            if outcome.error is not None:
                return


def report_facts(ctx: LoaderContext, *, compute: bool = True) -> dict[str, str]:
    """``vc_runtime``: the msvcp140.dll the model binds (the copy that wins, with its version)."""
    # the key a check run memoizes the torch graph under (CheckContext.load_graph)
    if not compute and ctx.computed("load_graph") is None:
        return {}
    graph = ctx.memo("load_graph", lambda: build_torch_graph(ctx))
    bound = graph.loaded.get("msvcp140.dll") if graph is not None else None
    if bound is None:
        return {}
    path, how = bound
    if path is None:
        return {"vc_runtime": f"msvcp140.dll: {how.note or how.step}"}
    return {"vc_runtime": f"msvcp140.dll {graph.module_version(path) or '?'}: {path} ({how.step})"}


def build_graph_for_file(ctx: LoaderContext, path: Path) -> WindowsLoadGraph:
    """``path`` loaded with LoadLibraryExW(0x1100) in this env's Python after ``import torch`` added its folders."""
    path = Path(path)
    torch_info = ctx.torch
    model = process_model(ctx, torch_info if torch_info.installed else None)
    graph = WindowsLoadGraph(platform="windows", torch_version=torch_info.version, process=model)
    if torch_info.installed:
        graph.own_paths = frozenset(_own_paths(torch_info, ctx.env))
    sim = _Simulation(model, graph, check_all_symbols=True)
    sim.seed_interpreter()
    graph.roots.append(path)
    graph.outcomes.append(sim.load_root(path, "file", 0, fallback_prefix=None))
    graph.search_order = [p.searched() for p in model.safe_order(path.parent)]
    # no PATH fallback happens for a single LoadLibraryExW: the PATH note would only distract
    graph.notes = [n for n in model.notes if n != translate("win.note.path_unknown")]
    graph.notes.append(translate("win.note.file_model" if torch_info.installed else "win.note.file_model_bare"))
    return graph


def package_load_winner(graph: WindowsLoadGraph, name: str, copy: Path, *, beside_extension: bool) -> Path | None:
    """Which file a package imported *before* torch gets when it loads ``name`` and ships ``copy``.

    The package's extension module is loaded with 0x1100 like torch's: its own folder first, then python.exe's
    folder, then the added folders (the package's own, most recently added) and System32. ``beside_extension``:
    the copy is in that extension's folder (found first); otherwise it is in a folder the package adds (PyQt5's
    Qt5\\bin), which comes after python.exe's folder. A module python.exe itself loaded at start is reused by base
    name whatever the package ships. Returns the file that wins (``copy`` or another one); None when python.exe's
    copy cannot be examined.
    """
    key = name.lower()
    bound = graph.loaded.get(key)
    if bound is not None and bound[1].note == "interpreter":
        return bound[0]  # loaded before any package: the already-loaded rule hands out this one
    if beside_extension:
        return copy
    model = graph.process
    if model is not None and model.app_dir is not None:
        hit = _lookup(model.app_dir, key)
        if hit is not None:
            return hit
    return copy


def system_file_version(graph: WindowsLoadGraph, name: str) -> tuple[Path | None, str | None]:
    """(file, FileVersion) of ``name`` in the System32 this model knows (live or --system-root); (None, None) when
    System32 is unknown or lacks it."""
    model = graph.process
    if model is None or not model.system_known or model.system_dir is None:
        return None, None
    hit = _lookup(model.system_dir, name)
    if hit is None:
        return None, None
    return hit, graph.module_version(hit)


def live_windows_version() -> tuple[int, int, int] | None:
    """The running Windows' (major, minor, build); None elsewhere. A seam the tests replace with a fake host."""
    import sys

    getter = getattr(sys, "getwindowsversion", None)
    if getter is None:
        return None
    info = getter()
    return (info.major, info.minor, info.build)


def windows_version(ctx: LoaderContext, graph: WindowsLoadGraph) -> tuple[tuple[int, ...], str] | None:
    """(version, where it was read) of the Windows the env runs on: the running one when live, else
    System32\\kernel32.dll's FileVersion (its first three fields are the OS version: 6.1.7601 is Windows 7 SP1)."""
    if ctx.host.live:
        live = live_windows_version()
        if live is not None:
            return live, "sys.getwindowsversion()"
    path, version = system_file_version(graph, "kernel32.dll")
    parts = version_tuple(version)
    if path is None or not parts:
        return None
    return parts[:3], f"{path} (FileVersion {version})"
