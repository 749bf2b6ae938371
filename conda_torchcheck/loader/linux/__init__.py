"""ld.so, modelled: how Linux would load torch's shared objects in this env, and why each one is found where.

The model follows glibc's ``elf/dl-load.c`` (``_dl_map_object``) for every DT_NEEDED entry of an object X:

1. a loaded object whose name, path or SONAME matches is reused (this is how torch's preloading works);
2. if X has no DT_RUNPATH: the DT_RPATH of X, then of the object that loaded X, and so on up to the
   executable (an object's DT_RPATH is ignored when it also has DT_RUNPATH);
3. LD_LIBRARY_PATH;
4. X's own DT_RUNPATH (it applies to X's direct dependencies only, never to theirs);
5. ``/etc/ld.so.cache``; 6. the default directories (both skipped when X has DF_1_NODEFLIB).

``$ORIGIN`` is the directory of the path the object was opened by (symlinks are not resolved, except for the
executable, whose origin comes from ``/proc/self/exe``). A candidate of the wrong ELF class or machine is
skipped; a candidate that is not a valid ELF file stops the load (``file too short``/``invalid ELF header``).
Files reached through different paths are one object when they are the same file (device and inode).

Then, as ``torch/__init__.py`` does it: ``libtorch_global_deps.so`` is dlopened with RTLD_GLOBAL (with the
CUDA libraries of ``site-packages/nvidia/*/lib`` preloaded when that fails for one of them, and proactively
when ``libcudart`` got mapped, on versions that do so), then ``torch/_C*.so`` with RTLD_LOCAL. Version needs
(``GLIBCXX_3.4.30``) are checked against the object that actually won, and (:func:`check_symbols`) every
undefined symbol against the lookup scope of its dlopen: the global scope plus the dlopen's own closure.
"""

from __future__ import annotations

from conda_torchcheck.loader.linux.engine import (
    LdSo,
    LinuxLoad,
    LoadedObject,
    LoadStep,
    build_graph_for_file,
    load_file,
)
from conda_torchcheck.loader.linux.engine import _new_graph as _new_graph
from conda_torchcheck.loader.linux.search import (
    ASSUMED_SYSTEM,
    GROUP_C,
    GROUP_GLOBAL_DEPS,
    GROUP_PROCESS,
    GROUP_PROCESS_SUFFIX,
    INTERPRETERS,
    STEP_CACHE,
    STEP_DEFAULT_DIRS,
    STEP_LD_LIBRARY_PATH,
    STEP_LOADED,
    STEP_PATH,
    STEP_RPATH,
    STEP_RUNPATH,
    STEP_UNKNOWN_SYSTEM,
    STEPS,
    SYSTEM_SONAMES,
    UNKNOWN_SYSTEM,
    LinuxSearch,
    search_context,
)

# the symbol check and torch's import plan are imported when first asked for: `tree FILE` needs neither
_LAZY = {
    "SymbolMiss": "symbols",
    "check_symbols": "symbols",
    "symbols_of": "symbols",
    "TorchLoadPlan": "torch_plan",
    "build_torch_graph": "torch_plan",
    "cuda_preload_candidates": "torch_plan",
    "find_c_module": "torch_plan",
    "mark_symbol_misses": "torch_plan",
    "report_facts": "torch_plan",
    "simulate_torch_import": "torch_plan",
    "torch_load": "torch_plan",
    "torch_load_plan": "torch_plan",
    "torch_symbol_misses": "torch_plan",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conda_torchcheck.loader.linux.symbols import SymbolMiss, check_symbols, symbols_of
    from conda_torchcheck.loader.linux.torch_plan import (
        TorchLoadPlan,
        build_torch_graph,
        cuda_preload_candidates,
        find_c_module,
        mark_symbol_misses,
        report_facts,
        simulate_torch_import,
        torch_load,
        torch_load_plan,
        torch_symbol_misses,
    )


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ASSUMED_SYSTEM",
    "GROUP_C",
    "GROUP_GLOBAL_DEPS",
    "GROUP_PROCESS",
    "GROUP_PROCESS_SUFFIX",
    "INTERPRETERS",
    "LdSo",
    "LinuxLoad",
    "LinuxSearch",
    "LoadStep",
    "LoadedObject",
    "STEPS",
    "STEP_CACHE",
    "STEP_DEFAULT_DIRS",
    "STEP_LD_LIBRARY_PATH",
    "STEP_LOADED",
    "STEP_PATH",
    "STEP_RPATH",
    "STEP_RUNPATH",
    "STEP_UNKNOWN_SYSTEM",
    "SYSTEM_SONAMES",
    "SymbolMiss",
    "TorchLoadPlan",
    "UNKNOWN_SYSTEM",
    "build_graph_for_file",
    "build_torch_graph",
    "check_symbols",
    "cuda_preload_candidates",
    "find_c_module",
    "load_file",
    "mark_symbol_misses",
    "report_facts",
    "search_context",
    "simulate_torch_import",
    "symbols_of",
    "torch_load",
    "torch_load_plan",
    "torch_symbol_misses",
]
