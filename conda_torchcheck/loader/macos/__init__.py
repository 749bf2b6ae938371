"""dyld, modelled: how macOS would load torch's dylibs in this env, and why each one is found where.

Every rule below is dyld's own (apple-oss-distributions/dyld, dyld-1378; the dyld(1) man page); the sources
are listed in ``knowledge/macos_dyld.toml`` and docs/macos-loading.md. For a load command of image X naming
``name``:

1. ``@rpath/…`` already loaded: an image whose install name is ``name`` is reused, wherever it came from
   (``Loader::getLoader``); an absolute ``name`` is reused when a loaded image has that path or install name.
2. the candidate paths, in order (``PathOverrides::forEachPathVariant`` + ``Loader::forEachResolvedAtPathVar``):
   ``DYLD_LIBRARY_PATH`` directories with the leaf name; then the name itself, with ``@loader_path`` = X's
   folder, ``@executable_path`` = the main executable's folder, and ``@rpath`` = every LC_RPATH of X, then of
   the image that loaded X, and so on down to the main executable (each image's LC_RPATHs in order, each
   expanded against the image that carries it); then ``DYLD_FALLBACK_LIBRARY_PATH`` with the leaf name, or,
   when it is unset and X was built with an SDK older than macOS 14, ``/usr/local/lib`` and ``/usr/lib``.
3. a system path (``/usr/lib/…``, ``/System/Library/…``) with no file on disk is in the dyld shared cache
   (macOS 11+): present, not missing. A candidate with no slice for the process's architecture, or not a
   Mach-O file, is skipped with dyld's words for why, and the search goes on.
4. ``LC_LOAD_WEAK_DYLIB``: a miss is not an error. SIP purges every ``DYLD_*`` variable when a protected binary
   (``/usr/bin/python3``, ``/bin/sh`` running a script) starts.

torch's own steps (from the installed ``torch/__init__.py``): ``ctypes.CDLL(torch/lib/libtorch_global_deps.dylib,
RTLD_GLOBAL)``, then ``import torch._C`` (``dlopen(_C.cpython-3XY-darwin.so)``). For both, the rpath stack ends
with the caller (the interpreter) and the main executable, which is why dyld's "tried:" list shows the
interpreter's rpaths twice.
"""

from __future__ import annotations

from conda_torchcheck.loader.macos.engine import (
    Candidate,
    Dyld,
    Image,
    LoadStep,
    MacLoad,
    build_graph_for_file,
    dependency_kind,
    images_loaded,
    library_not_loaded,
    load_file,
)
from conda_torchcheck.loader.macos.search import (
    GROUP_C,
    GROUP_GLOBAL_DEPS,
    GROUP_PROCESS,
    KIND_BY_REF,
    NOT_EXAMINED,
    STEP_CACHE,
    STEP_DEFAULT_FALLBACK,
    STEP_DLOPEN,
    STEP_DYLD_LIBRARY_PATH,
    STEP_EXECUTABLE,
    STEP_FALLBACK,
    STEP_FILE_PATH,
    STEP_LOADED,
    STEP_LOADER,
    STEP_PATH,
    STEP_RPATH,
    STEP_UNEXAMINED,
    MacSearch,
    is_protected,
    process_arch,
    read_system_version,
    search_context,
    version_tuple,
)
from conda_torchcheck.loader.macos.symbols import SymbolMiss, check_symbols
from conda_torchcheck.loader.macos.torch_plan import (
    TorchLoadPlan,
    build_torch_graph,
    find_c_module,
    report_facts,
    simulate_torch_import,
    torch_load,
    torch_load_plan,
    torch_symbol_misses,
)

__all__ = [
    "Candidate",
    "Dyld",
    "GROUP_C",
    "GROUP_GLOBAL_DEPS",
    "GROUP_PROCESS",
    "Image",
    "KIND_BY_REF",
    "LoadStep",
    "MacLoad",
    "MacSearch",
    "NOT_EXAMINED",
    "STEP_CACHE",
    "STEP_DEFAULT_FALLBACK",
    "STEP_DLOPEN",
    "STEP_DYLD_LIBRARY_PATH",
    "STEP_EXECUTABLE",
    "STEP_FALLBACK",
    "STEP_FILE_PATH",
    "STEP_LOADED",
    "STEP_LOADER",
    "STEP_PATH",
    "STEP_RPATH",
    "STEP_UNEXAMINED",
    "SymbolMiss",
    "TorchLoadPlan",
    "build_graph_for_file",
    "build_torch_graph",
    "check_symbols",
    "dependency_kind",
    "find_c_module",
    "images_loaded",
    "is_protected",
    "library_not_loaded",
    "load_file",
    "process_arch",
    "read_system_version",
    "report_facts",
    "search_context",
    "simulate_torch_import",
    "torch_load",
    "torch_load_plan",
    "torch_symbol_misses",
    "version_tuple",
]
