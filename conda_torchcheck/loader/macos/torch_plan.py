"""torch's own loading steps, as ``torch/__init__.py`` takes them on macOS: the plan read from the package,
the simulated ``import torch`` on the engine, and its symbol misses."""

from __future__ import annotations

import os
from pathlib import Path

from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.graph import LoadGraph, SearchPlace
from conda_torchcheck.loader.macos.engine import Dyld, LoadStep, MacLoad, _new_graph
from conda_torchcheck.loader.macos.search import GROUP_C, GROUP_GLOBAL_DEPS, STEP_FILE_PATH, search_context
from conda_torchcheck.loader.macos.symbols import SymbolMiss, check_symbols
from conda_torchcheck.loader.torch_import import record_missing_extension, start_python
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conda_torchcheck.loader.contract import LoaderContext


class TorchLoadPlan(Record):
    __slots__ = ("package_dir", "global_deps", "c_module", "source")

    def __init__(self, package_dir: Path, global_deps: Path | None, c_module: Path | None, source: str) -> None:
        self.package_dir = package_dir
        self.global_deps = global_deps
        self.c_module = c_module
        self.source = source


def find_c_module(package_dir: Path, python_tag: str | None) -> Path | None:
    """``torch/_C.cpython-311-darwin.so`` for the env's Python (one of its EXTENSION_SUFFIXES)."""
    try:
        names = sorted(n for n in os.listdir(package_dir) if n.startswith("_C.") and n.endswith(".so"))
    except OSError:
        return None
    if not python_tag:
        return package_dir / names[0] if names else None
    wanted = f"_C.cpython-{python_tag}-darwin.so"
    for n in names:
        if n == wanted:
            return package_dir / n
    for n in names:
        if (n.startswith("_C.abi3") and not python_tag.endswith("t")) or n == "_C.so":
            return package_dir / n
    return None


def torch_load_plan(package_dir: Path, python_tag: str | None) -> TorchLoadPlan:
    """Read from the installed ``torch/__init__.py`` whether it loads libtorch_global_deps (never executing it)."""
    try:
        text = fs.read_text(package_dir / "__init__.py", fs.SMALL_LIMIT)
    except OSError:
        text = ""
    uses_global_deps = "_load_global_deps" in text or not text
    global_deps = package_dir / "lib" / "libtorch_global_deps.dylib" if uses_global_deps else None
    return TorchLoadPlan(
        package_dir, global_deps, find_c_module(package_dir, python_tag), "torch/__init__.py" if text else "default"
    )


def simulate_torch_import(ctx: LoaderContext) -> MacLoad | None:
    """Model ``import torch`` in ``ctx.env`` on ``ctx.host``; None when the env has no torch package."""
    from conda_torchcheck.messages import msg

    env = ctx.env
    torch = ctx.torch
    if torch is None or torch.package_dir is None:
        return None
    search = search_context(env, ctx.host)
    graph = _new_graph(search)
    dyld = Dyld(search, graph, env.prefix)
    plan = torch_load_plan(torch.package_dir, env.python.tag)
    start_python(dyld, graph, env, msg("TC45.note.no_python").render())
    load = MacLoad(graph, dyld, plan, search, None)
    if plan.global_deps is not None:
        step = dyld.dlopen(plan.global_deps, GROUP_GLOBAL_DEPS, mode=0xA)  # RTLD_GLOBAL | RTLD_NOW
        if step.failed:
            load.first_error = step.error
    if load.first_error is None or plan.global_deps is None:
        if plan.c_module is not None:
            step = dyld.dlopen(plan.c_module, GROUP_C.replace("3XY", env.python.tag or "3XY"))
            if step.failed and load.first_error is None:
                load.first_error = step.error
        elif plan.global_deps is not None:
            name = f"_C.cpython-{env.python.tag or '3XY'}-darwin.so"
            step = LoadStep(GROUP_C, error="ModuleNotFoundError: No module named 'torch._C'")
            record_missing_extension(dyld, step, name, SearchPlace(STEP_FILE_PATH, str(plan.package_dir)))
            load.first_error = load.first_error or step.error
    return load


def torch_load(ctx: LoaderContext) -> MacLoad | None:
    """The simulated import, computed once per check context."""
    return ctx.memo("macos_load", lambda: simulate_torch_import(ctx))


def build_torch_graph(ctx: LoaderContext) -> LoadGraph | None:
    load = torch_load(ctx)
    return None if load is None else load.graph


def report_facts(ctx: LoaderContext, *, compute: bool = True) -> dict[str, str]:
    """Nothing of dyld's model goes into a bug report's environment table yet."""
    return {}


def torch_symbol_misses(ctx: LoaderContext) -> list[SymbolMiss]:
    load = torch_load(ctx)
    if load is None:
        return []
    return ctx.memo("macos_symbol_misses", lambda: check_symbols(load))
