"""torch's own loading steps, as ``torch/__init__.py`` takes them on Linux: the plan read from the package,
the simulated ``import torch`` on the engine, and its graph with the symbol check's misses marked."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.graph import Dependency, LoadGraph, SearchPlace
from conda_torchcheck.loader.linux.engine import FileReads, LdSo, LinuxLoad, LoadStep, _new_graph
from conda_torchcheck.loader.linux.search import GROUP_C, GROUP_GLOBAL_DEPS, STEP_LOADED, STEP_PATH, search_context
from conda_torchcheck.loader.linux.symbols import SymbolMiss
from conda_torchcheck.loader.torch_import import record_missing_extension, start_python
from conda_torchcheck.messages import msg
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from conda_torchcheck.loader.contract import LoaderContext


class TorchLoadPlan(Record):
    """What ``torch/__init__.py`` of the installed version does on Linux, read from that file."""

    __slots__ = (
        "package_dir", "global_deps", "c_module", "cuda_libs", "optional_cuda_libs", "proactive_preload",
        "cuda_major_dir", "rtld_global", "source",
    )  # fmt: skip

    def __init__(
        self,
        package_dir: Path,
        global_deps: Path | None,
        c_module: Path | None,
        cuda_libs: tuple[tuple[str, str], ...] = (),
        optional_cuda_libs: tuple[tuple[str, str], ...] = (),
        proactive_preload: bool = False,
        cuda_major_dir: bool = False,
        rtld_global: bool = False,
        source: str = "torch/__init__.py",
    ) -> None:
        self.package_dir = package_dir
        self.global_deps = global_deps
        self.c_module = c_module
        self.cuda_libs = cuda_libs
        self.optional_cuda_libs = optional_cuda_libs
        self.proactive_preload = proactive_preload
        self.cuda_major_dir = cuda_major_dir
        self.rtld_global = rtld_global
        self.source = source


# patterns, not compiled regexes: only the torch import needs them, and `tree FILE` must not compile them
_PAIR_TUPLE = r"""\(\s*["'](\w+)["']\s*,\s*["'](lib[^"']+)["']\s*\)"""
_PAIR_DICT = r"""["'](\w+)["']\s*:\s*["'](lib[^"']+)["']"""
_OPTIONAL = r"""_preload_cuda_lib\(\s*["'](\w+)["']\s*,\s*["'](lib[^"']+)["']\s*,\s*required=False"""


def torch_load_plan(package_dir: Path, python_tag: str | None, host: Any = None) -> TorchLoadPlan:
    """Read the CUDA preload list and flags from the installed ``torch/__init__.py`` (never executing it)."""
    try:
        text = fs.read_text(package_dir / "__init__.py", fs.SMALL_LIMIT)
    except OSError:
        text = ""
    cuda_libs: list[tuple[str, str]] = []
    start = text.find("cuda_libs")
    if start >= 0:
        end = text.find("\ndef ", start)
        block = text[start : end if end > 0 else len(text)]
        cuda_libs = re.findall(_PAIR_TUPLE, block) or re.findall(_PAIR_DICT, block)
    optional = re.findall(_OPTIONAL, text)
    lib_dir = package_dir / "lib"
    uses_global_deps = "_load_global_deps" in text or not text
    global_deps = lib_dir / "libtorch_global_deps.so" if uses_global_deps else None
    rtld_global = bool(host is not None and host.get("TORCH_USE_RTLD_GLOBAL")) and "TORCH_USE_RTLD_GLOBAL" in text
    return TorchLoadPlan(
        package_dir=package_dir,
        global_deps=global_deps,
        c_module=find_c_module(package_dir, python_tag),
        cuda_libs=tuple(cuda_libs),
        optional_cuda_libs=tuple(optional),
        proactive_preload="/proc/self/maps" in text,
        cuda_major_dir='f"cu{' in text or "f'cu{" in text,
        rtld_global=rtld_global,
        source="torch/__init__.py" if text else "default",
    )


def find_c_module(package_dir: Path, python_tag: str | None) -> Path | None:
    """``torch/_C.cpython-311-x86_64-linux-gnu.so`` for the env's Python, as Python's import system finds it.

    Python only loads an extension whose suffix is one of the running interpreter's EXTENSION_SUFFIXES
    (``.cpython-3XY[t]-<platform>.so``, ``.abi3.so`` for GIL builds, ``.so``): a ``_C`` built for another
    Python is invisible to it (TC111 reports that), so it is not a candidate here.
    """
    try:
        names = sorted(n for n in os.listdir(package_dir) if n.startswith("_C.") and n.endswith(".so"))
    except OSError:
        return None
    if not python_tag:
        return package_dir / names[0] if names else None
    digits = python_tag.rstrip("t")
    free_threaded = python_tag.endswith("t")
    wanted = f"_C.cpython-{digits}{'t' if free_threaded else ''}-"
    for n in names:
        if n.startswith(wanted):
            return package_dir / n
    for n in names:
        if (n.startswith("_C.abi3") and not free_threaded) or n == "_C.so":
            return package_dir / n
    return None


def cuda_preload_candidates(
    site_dirs: Sequence[Path], folder: str, pattern: str, cuda_version: str | None, cuda_major_dir: bool
) -> list[Path]:
    """``_get_cuda_dep_paths`` for every sys.path entry: the first entry with a match wins."""
    for site in site_dirs:
        dirs = [site / "nvidia" / folder / "lib"]
        if cuda_major_dir and cuda_version:
            dirs.append(site / "nvidia" / f"cu{cuda_version.split('.')[0]}" / "lib")
        dirs.append(site / folder / "lib")
        found: list[Path] = []
        for d in dirs:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            found += [d / n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if found:
            return found
    return []


def simulate_torch_import(ctx: LoaderContext) -> LinuxLoad | None:
    """Model ``import torch`` in ``ctx.env`` on ``ctx.host``; None when the env has no torch package."""
    env = ctx.env
    torch = ctx.torch
    if torch is None or torch.package_dir is None:
        return None
    search = search_context(env, ctx.host)
    graph = _new_graph(search)
    ldso = LdSo(search, graph, ctx.memo("linux_file_reads", FileReads))
    plan = torch_load_plan(torch.package_dir, env.python.tag, ctx.host)
    start_python(ldso, graph, env, msg("TC4.note.no_python").render())
    load = LinuxLoad(graph, ldso, plan, search)
    sites = [s.path for s in env.site_dirs if s.active]
    cuda_version = torch.cuda_version
    if plan.rtld_global:
        graph.notes.append(msg("TC4.note.rtld_global").render())
    if plan.global_deps is not None:
        label = GROUP_GLOBAL_DEPS
        step = ldso.dlopen(plan.global_deps, label, rtld_global=True)
        if step.failed:
            cuda_names = tuple(lib.split(".", 1)[0] for _f, lib in plan.cuda_libs)
            if plan.cuda_libs and any(n in (step.error or "") for n in cuda_names):
                # torch: "Can happen for wheel with cuda libs as PYPI deps": preload them, then retry
                graph.notes.append(msg("TC4.note.preload_after_failure").render())
                error = _preload_cuda(load, sites, cuda_version, required=True)
                if error is None:
                    step = ldso.dlopen(plan.global_deps, label + " (retry)", rtld_global=True)
                    if step.failed:
                        load.first_error = load.first_error or step.error
                else:
                    load.first_error = load.first_error or error
            else:
                load.first_error = step.error
        elif plan.proactive_preload and plan.cuda_libs and _cudart_mapped(ldso):
            graph.notes.append(msg("TC4.note.preload_proactive").render())
            _preload_cuda(load, sites, cuda_version, required=False)
    if plan.c_module is not None:
        step = ldso.dlopen(plan.c_module, GROUP_C, rtld_global=plan.rtld_global)
        if step.failed and load.first_error is None:
            load.first_error = step.error
    elif plan.global_deps is not None and not any(plan.package_dir.glob("_C.*.so")):
        # a real torch (it has the loading code) without its extension module: the import fails there
        # (a _C for another Python is TC111's finding, not a missing library)
        name = f"_C.cpython-{env.python.tag or '3XY'}-{search.arch}-linux-gnu.so"
        step = LoadStep(GROUP_C, None, error="ModuleNotFoundError: No module named 'torch._C'")
        record_missing_extension(ldso, step, name, SearchPlace(STEP_PATH, str(plan.package_dir)))
        graph.notes.append(msg("TC4.note.no_c_module", dir=str(plan.package_dir)).render())
        load.first_error = load.first_error or step.error
    return load


def _cudart_mapped(ldso: LdSo) -> bool:
    return any(o.path.name.startswith("libcudart.so") for o in ldso.loaded)


def _preload_cuda(load: LinuxLoad, sites: list[Path], cuda_version: str | None, *, required: bool) -> str | None:
    """torch's ``_preload_cuda_deps``: dlopen the first ``nvidia/<folder>/lib/<glob>`` on sys.path.

    On the failure path a required library that is not found raises ValueError (import fails); on the
    proactive path that exception is swallowed, so preloading silently stops at the first gap.
    """
    plan = load.plan
    assert plan is not None
    for folder, pattern, must in [(f, p, True) for f, p in plan.cuda_libs] + [
        (f, p, False) for f, p in plan.optional_cuda_libs
    ]:
        found = cuda_preload_candidates(sites, folder, pattern, cuda_version, plan.cuda_major_dir)
        if not found:
            if must:
                text = f"{pattern} not found in the system path"
                if required:
                    return text
                load.graph.notes.append(msg("TC4.note.preload_stopped", pattern=pattern).render())
                return None
            continue
        label = f"torch preload {found[0].name} dlopen(RTLD_LOCAL)"
        step = load.ldso.dlopen(found[0], label, rtld_global=False, fatal=required)
        load.preloaded.append(found[0])
        if step.failed:
            if required:
                return step.error
            load.graph.notes.append(msg("TC4.note.preload_stopped", pattern=pattern).render())
            return None
    return None


def build_torch_graph(ctx: LoaderContext) -> LoadGraph | None:
    """The load graph of ``import torch`` for a Linux env (None when torch is absent), with undefined
    symbols marked on the edge that loads the library needing them (Python binds them all at import)."""
    load = torch_load(ctx)
    if load is None:
        return None
    mark_symbol_misses(load, torch_symbol_misses(ctx))
    return load.graph


def mark_symbol_misses(load: LinuxLoad, misses: Sequence[SymbolMiss]) -> None:
    """Add ``missing-symbols:<names>`` to the edge that loads each library with undefined symbols."""
    by_module: dict[Path, list[str]] = {}
    for miss in misses:
        by_module.setdefault(miss.required_by, []).append(miss.name)
    if not by_module:
        return
    for module in load.graph.modules.values():
        for i, dep in enumerate(module.dependencies):
            res = dep.resolution
            if res is None or res.path not in by_module or res.found_by.step == STEP_LOADED:
                continue
            problem = "missing-symbols:" + ", ".join(by_module.pop(res.path))
            module.dependencies[i] = Dependency(dep.name, dep.kind, res, dep.searched, dep.problems + (problem,))


def torch_load(ctx: LoaderContext) -> LinuxLoad | None:
    """The simulated import, computed once per check context."""
    return ctx.memo("linux_load", lambda: simulate_torch_import(ctx))


def report_facts(ctx: LoaderContext, *, compute: bool = True) -> dict[str, str]:
    """``libstdcxx``: the libstdc++.so.6 the model maps, with the newest GLIBCXX it defines."""
    if not compute and ctx.computed("linux_load") is None:
        return {}
    load = torch_load(ctx)
    obj = load.ldso.find_loaded("libstdc++.so.6") if load is not None else None
    if obj is None:
        return {}
    versions = [v for v in (obj.elf.version_defs if obj.elf else ()) if v.startswith("GLIBCXX_3.4.")]
    newest = max(versions, key=lambda v: int(v.rsplit(".", 1)[1]) if v.rsplit(".", 1)[1].isdigit() else 0)
    return {"libstdcxx": f"{obj.path} (up to {newest})" if versions else str(obj.path)}


def torch_symbol_misses(ctx: LoaderContext) -> list[SymbolMiss]:
    """Symbol misses of the simulated ``import torch``, computed once per context."""
    load = torch_load(ctx)
    if load is None:
        return []
    from conda_torchcheck.loader.linux.symbol_cache import cached_check_symbols

    return ctx.memo("linux_symbol_misses", lambda: cached_check_symbols(load))
