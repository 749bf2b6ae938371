"""Windows loader model: how ``import torch`` makes Windows load torch's DLLs in this env, step by step.

The model replays the process, not a generic search:

1. the interpreter starts: python.exe (for a venv: the base interpreter its launcher starts) loads pythonXY.dll
   and vcruntime140.dll; a conda Python adds its five folders with AddDllDirectory (knowledge/windows_python.toml);
2. torch/__init__.py adds its directories with os.add_dll_directory and probes the VC++ runtime with
   ``ctypes.CDLL`` (knowledge/windows_torch.toml); whatever copy that probe loads is the one every later import of
   that name gets, because Windows reuses a loaded module by base name;
3. torch preloads every ``torch\\lib\\*.dll`` in directory order with ``LoadLibraryExW(dll, NULL, 0x1100)``: the
   DLL's own folder, the folder of python.exe, the added folders (most recently added first), System32 - no PATH,
   no CWD. Only error 126 falls back to ``LoadLibraryW`` with torch's folders prepended to PATH (the classic order:
   python.exe's folder, System32, System, Windows, CWD, PATH). Any other error is raised at once;
4. Python loads ``torch\\_C.pyd`` with the same 0x1100 flags (Python >= 3.8).

conda-forge and defaults torch keep their DLLs in ``Library\bin``; then step 3 finds nothing to preload and the
first failure surfaces in step 4 as ``DLL load failed while importing _C``.

Every import gets a :class:`Resolution` (where it was found and by which step) or the ordered list of places
searched. What could not be examined (System32 of a Windows env read from Linux, a PATH entry on another drive)
is recorded as such, never guessed: OS DLLs are then *assumed* present, VC++ runtime and driver DLLs become
conclusions that depend on the host.
"""

from __future__ import annotations

from conda_torchcheck.loader.windows.engine import (
    EdgeIssue,
    RootOutcome,
    WindowsLoadGraph,
    closure,
    first_missing_chain,
    iter_unreadable,
)
from conda_torchcheck.loader.windows.engine import _Attempt as _Attempt
from conda_torchcheck.loader.windows.engine import _Simulation as _Simulation
from conda_torchcheck.loader.windows.search import (
    ERROR_BAD_EXE_FORMAT,
    ERROR_DLL_INIT_FAILED,
    ERROR_MOD_NOT_FOUND,
    ERROR_PROC_NOT_FOUND,
    STEP_API_SET,
    STEP_APP_DIR,
    STEP_CWD,
    STEP_DLL_LOAD_DIR,
    STEP_FULL_PATH,
    STEP_KNOWN_DLL,
    STEP_LOADED,
    STEP_PATH,
    STEP_SYSTEM16,
    STEP_SYSTEM32,
    STEP_UNEXAMINED,
    STEP_USER_DIR,
    STEP_WINDOWS,
    SYSTEM_STEPS,
    Place,
    ProcessModel,
    SystemTables,
    dll_kind,
    interpreter_rule,
    is_api_set,
    local_path,
    process_model,
    system_tables,
    torch_rules,
    vc_minimum,
    vc_runtime_table,
    version_tuple,
)
from conda_torchcheck.loader.windows.search import _userbase as _userbase
from conda_torchcheck.loader.windows.torch_plan import (
    build_graph_for_file,
    build_torch_graph,
    live_windows_version,
    package_load_winner,
    preload_list,
    read_record,
    report_facts,
    system_file_version,
    windows_version,
)

__all__ = [
    "ERROR_BAD_EXE_FORMAT",
    "ERROR_DLL_INIT_FAILED",
    "ERROR_MOD_NOT_FOUND",
    "ERROR_PROC_NOT_FOUND",
    "EdgeIssue",
    "Place",
    "ProcessModel",
    "RootOutcome",
    "STEP_API_SET",
    "STEP_APP_DIR",
    "STEP_CWD",
    "STEP_DLL_LOAD_DIR",
    "STEP_FULL_PATH",
    "STEP_KNOWN_DLL",
    "STEP_LOADED",
    "STEP_PATH",
    "STEP_SYSTEM16",
    "STEP_SYSTEM32",
    "STEP_UNEXAMINED",
    "STEP_USER_DIR",
    "STEP_WINDOWS",
    "SYSTEM_STEPS",
    "SystemTables",
    "WindowsLoadGraph",
    "build_graph_for_file",
    "build_torch_graph",
    "closure",
    "dll_kind",
    "first_missing_chain",
    "interpreter_rule",
    "is_api_set",
    "iter_unreadable",
    "live_windows_version",
    "local_path",
    "package_load_winner",
    "preload_list",
    "process_model",
    "read_record",
    "report_facts",
    "system_file_version",
    "system_tables",
    "torch_rules",
    "vc_minimum",
    "vc_runtime_table",
    "version_tuple",
    "windows_version",
]
