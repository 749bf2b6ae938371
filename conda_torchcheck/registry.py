"""Every finding id the tool can print, defined once: its default severity, the OSes it applies to, what emits it,
its message variants and a one-line summary. Everything else is derived from this table: the engine's OS filter
(checks/__init__.py), the ``CHECK`` objects of the check modules, ``spec check``'s rules, ``list-checks``, the docs
index (docs/findings/README.md) and the JSON schema's id enum (tests/test_registry.py keeps the last two equal).

An *emitter* is what produces findings: an engine check (``conda_torchcheck.checks.*``, run by ``check``), an
environment-file rule (``conda_torchcheck.envspec.rules.*``, run by ``spec check``), the activation scripts' shell
templates, or the check runner itself. Adding a check is: its module, one ``Emitter`` line, one ``FindingSpec``
line per id, messages (en and zh_CN), a docs page and a test (CONTRIBUTING.md).

Plain classes, not dataclasses, and only functools imported at module level: the OS filter reads this table
before any check module is imported.
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

WINDOWS, LINUX, DARWIN = ("windows",), ("linux",), ("darwin",)
ALL_OS = ("windows", "linux", "darwin")

ERROR, WARNING, INFO = "error", "warning", "info"

#: what an emitter is
CHECK, RULE, TEMPLATE, RUNNER = "check", "rule", "template", "runner"


class Emitter:
    """Something that produces findings: ``name`` is what ``--only``/``--skip`` and a finding's ``check`` say."""

    __slots__ = ("kind", "module", "name", "platforms", "summary")

    def __init__(
        self, name: str, module: str, summary: str, *, platforms: tuple[str, ...] = ALL_OS, kind: str = CHECK
    ) -> None:
        self.name = name
        #: dotted module (checks, rules, the runner) or package-relative folder (templates)
        self.module = module
        self.summary = summary
        self.platforms = platforms
        self.kind = kind

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(spec.id for spec in FINDINGS if self.name in spec.emitted_by)

    def __repr__(self) -> str:
        return f"Emitter({self.name!r}, {self.module!r})"


class FindingSpec:
    """One finding id. ``variants`` are the message variants (``<id>.<variant>.title`` in the catalogs)."""

    __slots__ = ("_platforms", "emitted_by", "id", "note", "severity", "summary", "variants")

    def __init__(
        self,
        id: str,
        severity: str,
        emitted_by: str | tuple[str, ...],
        summary: str,
        *,
        variants: tuple[str, ...] = (),
        platforms: tuple[str, ...] | None = None,
        note: bool | tuple[str, ...] = False,
    ) -> None:
        self.id = id
        #: a note about the file's upkeep, not a problem of its torch: reported after the findings, apart from them
        #: (JSON ``notes``), never counted among them and never outranking one (issue 23: channel hygiene). True
        #: for every variant, or the variants that are notes (a spare CUDA copy torch never loads: TC613.pip)
        self.note = note
        #: the usual severity; a check may raise or lower it for one env (the docs page says when)
        self.severity = severity
        self.emitted_by = (emitted_by,) if isinstance(emitted_by, str) else emitted_by
        self.summary = summary
        self.variants = variants
        self._platforms = platforms

    def is_note(self, variant: str | None) -> bool:
        """Whether a finding of this id (and message variant) is reported as a note."""
        return self.note is True or (isinstance(self.note, tuple) and variant in self.note)

    @property
    def platforms(self) -> tuple[str, ...]:
        """The OSes this id can be reported for: given, else those of its emitters."""
        if self._platforms is not None:
            return self._platforms
        found = {os for name in self.emitted_by for os in emitter(name).platforms}
        return tuple(os for os in ALL_OS if os in found)

    @property
    def message_keys(self) -> tuple[str, ...]:
        """The catalog keys of this id's title and explanation, one pair per variant (and the plain pair)."""
        bases = (self.id, *(f"{self.id}.{v}" for v in self.variants))
        return tuple(f"{base}.{part}" for base in bases for part in ("title", "explanation"))

    @property
    def docs_page(self) -> Path:
        from conda_torchcheck.findings import DOCS_DIR

        return DOCS_DIR / f"{self.id}.md"

    @property
    def group(self) -> str:
        """The id's family as the docs index heads it (``TC45x`` for macOS, else ``TC<n>xx``)."""
        return "TC45x" if self.id.startswith("TC45") else f"TC{self.id[2]}xx"

    def __repr__(self) -> str:
        return f"FindingSpec({self.id!r})"


_CHECKS = "conda_torchcheck.checks."
_RULES = "conda_torchcheck.envspec.rules."

#: the engine checks, in run order: inventory problems first, then conda-level, pip-level, loader-level checks
CHECKS: tuple[Emitter, ...] = (
    Emitter("unreadable", _CHECKS + "unreadable", "conda-meta records or package metadata that cannot be read"),
    Emitter(
        "torch_missing",
        _CHECKS + "torch_missing",
        "torch is not installed: say so, with the install command that fits this env",
    ),
    Emitter(
        "channels",
        _CHECKS + "channels",
        "torch-family conda packages from different builders (pytorch channel, conda-forge, defaults, nvidia)",
    ),
    Emitter(
        "variant",
        _CHECKS + "variant",
        "cpu and cuda builds mixed in the conda torch family; pytorch-cuda not matching pytorch",
    ),
    Emitter(
        "versions",
        _CHECKS + "versions",
        "torchvision/torchaudio built for another torch release or another build (+cpu vs +cuXYZ)",
    ),
    Emitter(
        "mkl_ijit",
        _CHECKS + "mkl_ijit",
        "mkl >= 2024.1 beside a pytorch-channel (dynamic MKL) pytorch: undefined symbol iJIT_NotifyEvent",
        platforms=LINUX,
    ),
    Emitter(
        "pip_conda",
        _CHECKS + "pip_conda",
        "pip torch beside or over conda's pytorch; torch family split between pip and conda",
    ),
    Emitter(
        "duplicates",
        _CHECKS + "duplicates",
        "several torch metadata folders; ~orch leftovers of interrupted pip runs; torch without metadata",
    ),
    Emitter(
        "requirements",
        _CHECKS + "requirements",
        "Python dependencies torch, torchvision or torchaudio declare that are missing or too old",
    ),
    Emitter("numpy_abi", _CHECKS + "numpy_abi", "NumPy 2 beside a torch built against NumPy 1 (before 2.3)"),
    Emitter(
        "python_abi",
        _CHECKS + "python_abi",
        "torch built for, or installed under, another Python version than the env's interpreter",
    ),
    Emitter(
        "shadowing",
        _CHECKS + "shadowing",
        "torch in the user site, in PYTHONPATH / .pth folders or in the working directory",
    ),
    Emitter("base_env", _CHECKS + "base_env", "torch in conda's base env; the checked env is not the active one"),
    Emitter(
        "cpu_build",
        _CHECKS + "cpu_build",
        "a CPU-only torch where CUDA packages, a CUDA torchvision or an NVIDIA driver say CUDA was wanted",
        platforms=("windows", "linux"),
    ),
    Emitter(
        "torch_files",
        _CHECKS + "torch_files",
        "torch's Python files against its pip RECORD (missing, cut short), on Linux and macOS",
        platforms=("linux", "darwin"),
    ),
    Emitter(
        "win_integrity",
        _CHECKS + "win_integrity",
        "torch's files against pip RECORD / conda-meta (missing, truncated, altered) and stale DLLs",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_missing",
        _CHECKS + "win_missing",
        "DLLs torch's import cannot find on Windows, with the chain and the places searched",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_vcruntime",
        _CHECKS + "win_vcruntime",
        "the Visual C++ runtime copy that wins in the process is older than this torch needs",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_binaries",
        _CHECKS + "win_binaries",
        "DLLs that are found but are the wrong build: missing exports (127) or architecture (193)",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_openmp",
        _CHECKS + "win_openmp",
        "two different libiomp5md.dll copies in reach of one process (OMP: Error #15)",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_path",
        _CHECKS + "win_path",
        "what PATH and the current folder really change for torch's DLL loading",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_foreign",
        _CHECKS + "win_foreign",
        "another package's copy of a DLL torch imports wins when that package is imported first",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_cuda",
        _CHECKS + "win_cuda",
        "cuDNN's lazily loaded sub-libraries are missing or from another cuDNN build (Windows CUDA builds)",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_cuda_driver",
        _CHECKS + "win_cuda_driver",
        "the NVIDIA driver (System32\\nvcuda.dll) against the CUDA build of torch, on Windows",
        platforms=WINDOWS,
    ),
    Emitter(
        "win_oldos",
        _CHECKS + "win_oldos",
        "torch's DLLs import Windows functions the OS version they run on lacks (Windows 7)",
        platforms=WINDOWS,
    ),
    Emitter(
        "linux_loading",
        _CHECKS + "linux_loading",
        "libraries ld.so cannot find, symbol versions the winning copy lacks, substituted torch libraries",
        platforms=LINUX,
    ),
    Emitter(
        "linux_symbols",
        _CHECKS + "linux_symbols",
        "undefined symbols no loaded library defines (MKL iJIT, NCCL, nvJitLink, mixed torch files)",
        platforms=LINUX,
    ),
    Emitter(
        "linux_shadowing",
        _CHECKS + "linux_shadowing",
        "LD_LIBRARY_PATH copies that shadow the libraries torch would otherwise load",
        platforms=LINUX,
    ),
    Emitter(
        "linux_nvidia",
        _CHECKS + "linux_nvidia",
        "NVIDIA pip wheels: versions against torch's pins, two CUDA variants of one library",
        platforms=LINUX,
    ),
    Emitter(
        "linux_openmp",
        _CHECKS + "linux_openmp",
        "two OpenMP runtimes that would both load into the torch process",
        platforms=LINUX,
    ),
    Emitter(
        "mac_loading",
        _CHECKS + "mac_loading",
        "dylibs dyld cannot load for torch (not found, wrong architecture, too new a macOS) or takes elsewhere",
        platforms=DARWIN,
    ),
    Emitter(
        "mac_symbols",
        _CHECKS + "mac_symbols",
        "symbols a torch dylib needs that the dylib it binds them to does not export (Symbol not found)",
        platforms=DARWIN,
    ),
    Emitter(
        "mac_x86",
        _CHECKS + "mac_x86",
        "an x86_64 Python on macOS: PyPI has no torch wheels for it after 2.2.2",
        platforms=DARWIN,
    ),
    Emitter(
        "mac_openmp",
        _CHECKS + "mac_openmp",
        "two OpenMP runtimes in one process on macOS (torch's and another package's, or two in torch's wheel)",
        platforms=DARWIN,
    ),
    Emitter(
        "mac_mps",
        _CHECKS + "mac_mps",
        "whether torch can use MPS (the Apple GPU) on this Mac: too old a macOS or torch for it is a warning",
        platforms=DARWIN,
    ),
    Emitter(
        "cuda_driver",
        _CHECKS + "cuda_driver",
        "NVIDIA driver version and GPU architecture against the CUDA build of torch",
        platforms=LINUX,
    ),
    Emitter(
        "linux_gpu_state",
        _CHECKS + "linux_gpu_state",
        "the GPU driver's kernel module against its user-space library, and the GPU device files this user can open",
        platforms=LINUX,
    ),
    Emitter(
        "linux_wsl",
        _CHECKS + "linux_wsl",
        "WSL: the Windows driver's CUDA bridge in /usr/lib/wsl/lib, and Linux drivers installed beside it",
        platforms=LINUX,
    ),
    Emitter(
        "linux_jetson",
        _CHECKS + "linux_jetson",
        "server-ARM (SBSA) CUDA wheels of torch on an NVIDIA Jetson",
        platforms=LINUX,
    ),
    Emitter(
        "activation_hooks",
        "conda_torchcheck.hooks.activation.check",
        "conda-torchcheck's activation scripts are out of date for this environment",
    ),
    Emitter(
        "import_test",
        _CHECKS + "import_test",
        "opt-in (--import-test): import torch in the env's own python and explain what goes wrong",
    ),
)

#: environment-file rules (``spec check``), in run order
RULES: tuple[Emitter, ...] = (
    Emitter("envspec.channels_missing", _RULES + "channels_missing", "the file names no channels", kind=RULE),
    Emitter(
        "envspec.channel_order",
        _RULES + "channel_order",
        "the channel order takes torch from another channel than the file means",
        kind=RULE,
    ),
    Emitter(
        "envspec.nodefaults", _RULES + "nodefaults", "no `nodefaults`, or conda-forge mixed with defaults", kind=RULE
    ),
    Emitter(
        "envspec.channel_for_package",
        _RULES + "channel_for_package",
        "a package listed without the channel that publishes it",
        kind=RULE,
    ),
    Emitter(
        "envspec.not_on_channel", _RULES + "not_on_channel", "a version or package the channel never had", kind=RULE
    ),
    Emitter("envspec.conda_and_pip", _RULES + "conda_and_pip", "torch from conda and from pip in one file", kind=RULE),
    Emitter(
        "envspec.pip_index", _RULES + "pip_index", "pip's CUDA torch against the wheel index the file names", kind=RULE
    ),
    Emitter(
        "envspec.triple", _RULES + "triple", "torch, torchvision and torchaudio versions that do not pair", kind=RULE
    ),
    Emitter(
        "envspec.cpu_and_cuda", _RULES + "cpu_and_cuda", "a CPU build and a CUDA build asked for at once", kind=RULE
    ),
    Emitter(
        "envspec.python_range", _RULES + "python_range", "a Python outside what the file's torch supports", kind=RULE
    ),
    Emitter("envspec.unpinned", _RULES + "unpinned", "an unpinned torch family", kind=RULE),
    Emitter(
        "envspec.torch_by_dependency",
        _RULES + "torch_by_dependency",
        "torch arriving only as another package's dependency",
        kind=RULE,
    ),
    Emitter("envspec.file_keys", _RULES + "file_keys", "what conda refuses or ignores in the file itself", kind=RULE),
    Emitter("envspec.exact_python", _RULES + "exact_python", "python==X.Y, which conda reads as X.Y.0 only", kind=RULE),
    Emitter(
        "envspec.pip_requires", _RULES + "pip_requires", "pip pins the pinned torch's own wheel refuses", kind=RULE
    ),
    Emitter(
        "envspec.pip_unservable",
        _RULES + "pip_unservable",
        "pip requirements no index the file names can serve",
        kind=RULE,
    ),
    Emitter(
        "envspec.pip_build_needs_torch",
        _RULES + "pip_build_needs_torch",
        "pip source builds that import torch, which pip's isolated build lacks",
        kind=RULE,
    ),
    Emitter("envspec.family_channels", _RULES + "family_channels", "the torch family from two builders", kind=RULE),
    Emitter(
        "envspec.cudatoolkit",
        _RULES + "cudatoolkit",
        "cudatoolkit beside a torch that takes its CUDA from elsewhere",
        kind=RULE,
    ),
    Emitter(
        "envspec.variant_implicit",
        _RULES + "variant_implicit",
        "conda-forge's cpu/cuda variant left to the machine that solves the file",
        kind=RULE,
    ),
    Emitter(
        "envspec.mkl_ijit",
        _RULES + "mkl_ijit",
        "mkl that can resolve to 2024.1 or newer beside a pytorch-channel torch",
        kind=RULE,
    ),
    Emitter(
        "envspec.cpu_build_silent",
        _RULES + "cpu_build_silent",
        "a file for a GPU whose torch resolves to a CPU build",
        kind=RULE,
    ),
    Emitter(
        "envspec.channel_names",
        _RULES + "channel_names",
        "a channel written so that conda does not read it as meant",
        kind=RULE,
    ),
)

#: what prints findings without being a check: the activation scripts (shell code) and the check runner
OTHERS: tuple[Emitter, ...] = (
    Emitter(
        "activation_scripts",
        "hooks/activation/templates",
        "the scripts `hooks install` puts in activate.d warn, on `conda activate`, of what shadows torch",
        kind=TEMPLATE,
    ),
    Emitter(
        "runner", "conda_torchcheck.checks", "the check runner: a check stopped by bad input or a bug", kind=RUNNER
    ),
)

EMITTERS: tuple[Emitter, ...] = (*CHECKS, *RULES, *OTHERS)

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "TC100",
        INFO,
        "torch_missing",
        "torch is not installed in this environment",
        variants=("missing", "other_python", "python_32bit", "python_unsupported", "site_off"),
    ),
    FindingSpec(
        "TC101", WARNING, "channels", "torch-family packages from different channels", variants=("family", "nvidia")
    ),
    FindingSpec(
        "TC102",
        WARNING,
        "variant",
        "cpu and CUDA builds mixed in the torch family",
        variants=("cuda_versions", "mixed"),
    ),
    FindingSpec(
        "TC103",
        WARNING,
        "variant",
        "pytorch-cuda does not match the installed pytorch",
        variants=("cudatoolkit", "foreign", "pip", "unpublished", "version", "version_breaks"),
        platforms=("windows", "linux"),
    ),
    FindingSpec("TC104", ERROR, "versions", "torchvision / torchaudio do not match torch"),
    FindingSpec(
        "TC105",
        ERROR,
        "mkl_ijit",
        "mkl ≥ 2024.1 beside a pytorch-channel pytorch: `undefined symbol: iJIT_NotifyEvent`",
    ),
    FindingSpec("TC106", WARNING, "base_env", "torch in conda's base environment"),
    FindingSpec(
        "TC107",
        INFO,
        "base_env",
        "the checked environment is not the active one",
        variants=("has_torch", "none", "other"),
    ),
    FindingSpec(
        "TC108",
        INFO,
        "cpu_build",
        "a CPU-only torch where CUDA seems to be wanted",
        variants=("conda", "conda_frozen", "pip", "pip_windows"),
    ),
    FindingSpec(
        "TC111",
        ERROR,
        "python_abi",
        "torch was built for, or installed under, another Python",
        variants=("capi", "extension", "stranded"),
    ),
    FindingSpec("TC201", WARNING, "pip_conda", "pip's torch beside conda's pytorch"),
    FindingSpec(
        "TC202",
        WARNING,
        "pip_conda",
        "pip changed or removed conda's pytorch",
        variants=("gone", "gone_kept", "removed", "removed_kept", "replaced"),
    ),
    FindingSpec(
        "TC203",
        WARNING,
        "duplicates",
        "several torch metadata folders on the import path",
        variants=("across_sites", "same_site"),
    ),
    FindingSpec(
        "TC204",
        WARNING,
        "duplicates",
        "leftovers of interrupted installs, or torch without its metadata",
        variants=("no_package", "orphan", "tilde"),
    ),
    FindingSpec("TC205", WARNING, "shadowing", "torch in the user site-packages", variants=("only", "shadow")),
    FindingSpec(
        "TC206",
        WARNING,
        "shadowing",
        "torch or another env's packages on PYTHONPATH, in a .pth folder or in the working directory",
        variants=("cwd", "cwd_module", "foreign_site", "pth", "pythonpath_module", "torch"),
    ),
    FindingSpec(
        "TC207",
        WARNING,
        "versions",
        "pip wheels of the torch family from different builds",
        platforms=("windows", "linux"),
    ),
    FindingSpec(
        "TC208", WARNING, "pip_conda", "torchvision / torchaudio installed by another package manager than torch"
    ),
    FindingSpec(
        "TC209", ERROR, "requirements", "torch lacks Python dependencies it declares", variants=("import", "later")
    ),
    FindingSpec("TC210", WARNING, "numpy_abi", "NumPy 2 beside a torch built against NumPy 1"),
    FindingSpec("TC211", ERROR, "torch_files", "torch's Python files are missing or cut short"),
    FindingSpec(
        "TC301",
        ERROR,
        "win_missing",
        "a DLL that torch needs cannot be found (WinError 126)",
        variants=("cuda", "cuda_major", "libomp140", "mkl", "python", "torch_file", "vc_runtime", "vc_runtime_new"),
    ),
    FindingSpec(
        "TC302",
        ERROR,
        "win_vcruntime",
        "the Visual C++ runtime this env loads is too old for this torch",
        variants=("toolset",),
    ),
    FindingSpec(
        "TC303",
        ERROR,
        "win_binaries",
        "a DLL that is found lacks a function that is imported from it (WinError 127)",
        variants=("channel",),
    ),
    FindingSpec(
        "TC304", ERROR, "win_binaries", "a DLL of the wrong architecture is found (WinError 193)", variants=("torch",)
    ),
    FindingSpec(
        "TC305",
        WARNING,
        "win_openmp",
        "two copies of libiomp5md.dll can be loaded into one process (OMP: Error #15)",
        variants=("clobbered",),
    ),
    FindingSpec(
        "TC306",
        WARNING,
        "win_path",
        "a DLL is found only through torch's PATH fallback, or the fallback swaps in another copy",
        variants=("shadow",),
    ),
    FindingSpec(
        "TC307", INFO, "win_path", "conda DLL folders on PATH, and what they change for torch", variants=("reached",)
    ),
    FindingSpec("TC308", ERROR, "win_integrity", "torch's files are missing, truncated or altered"),
    FindingSpec(
        "TC309",
        ERROR,
        "win_integrity",
        "DLLs in torch\\lib that are not part of the installed torch",
        variants=("breaks",),
    ),
    FindingSpec("TC310", WARNING, "win_missing", "System32 was not examined: some conclusions depend on it"),
    FindingSpec(
        "TC311",
        WARNING,
        "win_foreign",
        "another package's copy of a DLL torch imports wins when that package is imported first",
        variants=("cudnn", "exports", "older"),
    ),
    FindingSpec(
        "TC312",
        WARNING,
        "win_cuda",
        "cuDNN's sub-libraries, loaded on first use, are missing or from another cuDNN build",
        variants=("mismatch",),
    ),
    FindingSpec(
        "TC313",
        ERROR,
        "win_cuda_driver",
        "the NVIDIA driver (System32\\nvcuda.dll) is too old for torch's CUDA, or absent",
        variants=("none", "none_blocks"),
    ),
    FindingSpec(
        "TC314", ERROR, "win_oldos", "torch's DLLs import Windows functions this Windows does not have (Windows 7)"
    ),
    FindingSpec(
        "TC401", ERROR, "linux_loading", "a library that torch needs cannot be found", variants=("extension", "foreign")
    ),
    FindingSpec("TC402", ERROR, "linux_loading", "a symbol version is not provided by the copy that loads"),
    FindingSpec("TC403", ERROR, "linux_symbols", "undefined symbol", variants=("extension", "many")),
    FindingSpec(
        "TC404", WARNING, "linux_shadowing", "LD_LIBRARY_PATH or LD_PRELOAD shadows a library", variants=("preload",)
    ),
    FindingSpec("TC406", INFO, "linux_loading", "torch's own library is missing and another copy loads instead"),
    FindingSpec("TC410", WARNING, "linux_nvidia", "an NVIDIA wheel does not match torch's pin", variants=("missing",)),
    FindingSpec("TC412", WARNING, "linux_nvidia", "two CUDA variants of the same NVIDIA library"),
    FindingSpec("TC420", WARNING, "linux_openmp", "two OpenMP runtimes in the torch process"),
    FindingSpec("TC450", ERROR, "mac_loading", "dyld cannot load a library that torch needs", variants=("foreign",)),
    FindingSpec("TC451", ERROR, "mac_loading", "torch's binaries are for another architecture than python"),
    FindingSpec(
        "TC452", WARNING, "mac_x86", "no torch wheels for an x86_64 Python on macOS after 2.2.2", variants=("rosetta",)
    ),
    FindingSpec("TC453", ERROR, "mac_loading", "a dylib needs a newer macOS than the Mac runs"),
    FindingSpec(
        "TC454", WARNING, "mac_openmp", "two OpenMP runtimes in one Python process on macOS", variants=("own",)
    ),
    FindingSpec(
        "TC455",
        INFO,
        "mac_mps",
        "MPS (the Apple GPU) available, or not on this macOS or torch",
        variants=("no_backend", "old"),
    ),
    FindingSpec("TC456", WARNING, "mac_loading", "torch's own dylib loads from outside torch", variants=("inserted",)),
    FindingSpec("TC457", ERROR, "mac_symbols", "Symbol not found (macOS)"),
    FindingSpec("TC501", ERROR, "cuda_driver", "the NVIDIA driver is too old for torch's CUDA"),
    FindingSpec("TC502", INFO, "cuda_driver", "no NVIDIA driver on a machine with a CUDA build of torch"),
    FindingSpec("TC503", ERROR, "cuda_driver", "the GPU's architecture is not in this torch build", variants=("ptx",)),
    FindingSpec("TC504", WARNING, "linux_jetson", "a server-ARM (SBSA) CUDA build of torch on an NVIDIA Jetson"),
    FindingSpec(
        "TC505",
        WARNING,
        "linux_wsl",
        "WSL: the GPU is the Windows driver's, and it is not reachable as this CUDA build needs",
        variants=("wsl1", "no_bridge", "linux_driver"),
    ),
    FindingSpec(
        "TC506", ERROR, "linux_gpu_state", "the NVIDIA kernel module and its user-space driver are different releases"
    ),
    FindingSpec("TC507", ERROR, "linux_gpu_state", "this user cannot open the GPU's device files"),
    FindingSpec("TC601", WARNING, "envspec.channels_missing", "the file names no channels"),
    FindingSpec(
        "TC602",
        ERROR,
        "envspec.channel_order",
        "channel order takes pytorch from the wrong channel",
        variants=("defaults_cpu", "nvidia", "pytorch"),
    ),
    FindingSpec(
        "TC603",
        INFO,
        "envspec.nodefaults",
        "no `nodefaults`, or conda-forge mixed with defaults",
        variants=("missing", "mixed"),
        note=True,
    ),
    FindingSpec(
        "TC604",
        ERROR,
        "envspec.channel_for_package",
        "a package without the channel that publishes it",
        variants=("nvidia", "nvidia_build", "pytorch"),
    ),
    FindingSpec(
        "TC605",
        ERROR,
        "envspec.not_on_channel",
        "a version or package the channel never had",
        variants=(
            "cuda_package_for_torch",
            "cudatoolkit_for_torch",
            "deprecated_channel",
            "frozen",
            "frozen_fallback",
            "other_os_package",
            "pip_name",
            "pytorch_cuda_for_torch",
            "pytorch_cuda_version",
        ),
    ),
    FindingSpec(
        "TC606",
        ERROR,
        "envspec.conda_and_pip",
        "torch from conda and from pip in one file",
        variants=("conda_dependency", "conflict", "cross", "redundant"),
    ),
    FindingSpec(
        "TC607",
        ERROR,
        "envspec.pip_index",
        "pip CUDA torch and the wheel index",
        variants=(
            "extension_page",
            "extension_sdist_wins",
            "hides_pypi",
            "mismatch",
            "missing",
            "not_offered",
            "page_as_index",
            "unpinned_extra",
        ),
    ),
    FindingSpec(
        "TC608",
        ERROR,
        "envspec.triple",
        "torch, torchvision and torchaudio that do not pair",
        variants=("companions", "cuda", "extension", "extension_max"),
    ),
    FindingSpec("TC609", ERROR, "envspec.cpu_and_cuda", "CPU and CUDA asked for at once"),
    FindingSpec(
        "TC610",
        ERROR,
        "envspec.python_range",
        "Python outside what that torch supports",
        variants=("frozen", "pypi", "wheel"),
    ),
    FindingSpec("TC611", WARNING, "envspec.unpinned", "unpinned torch family", variants=("frozen",)),
    FindingSpec(
        "TC612",
        ERROR,
        "envspec.family_channels",
        "the torch family from two builders",
        variants=("build", "family", "nvidia", "pyg", "pytorch_build"),
    ),
    FindingSpec(
        "TC613",
        WARNING,
        "envspec.cudatoolkit",
        "cudatoolkit where the torch uses something else",
        variants=("conda_forge", "conda_forge_cuda11", "no_such_toolkit", "pip", "pytorch", "redundant"),
        note=("pip",),
    ),
    FindingSpec(
        "TC614",
        WARNING,
        "envspec.variant_implicit",
        "the conda-forge variant is chosen by the machine",
        variants=("cuda_not_forced", "implicit"),
    ),
    FindingSpec(
        "TC615",
        WARNING,
        "envspec.mkl_ijit",
        "mkl 2024.1 or newer can be solved beside a pytorch-channel torch",
    ),
    FindingSpec(
        "TC616",
        WARNING,
        "envspec.channel_names",
        "a channel name conda does not read as meant",
        variants=("single_colon", "typo"),
    ),
    FindingSpec(
        "TC617",
        ERROR,
        "envspec.cpu_build_silent",
        "the file wants CUDA, but its torch resolves to a CPU build",
        variants=("pypi_windows", "pytorch_channel"),
    ),
    FindingSpec(
        "TC618",
        WARNING,
        "envspec.file_keys",
        "conda refuses or ignores part of the file",
        variants=(
            "ignored_key",
            "bad_name",
            "reserved_name",
            "empty_item",
            "empty_pip_item",
            "dropped_pip_list",
            "pip_single_equals",
            "conda_mapping",
        ),
    ),
    FindingSpec("TC619", WARNING, "envspec.torch_by_dependency", "torch only as another package's dependency"),
    FindingSpec("TC620", WARNING, "envspec.exact_python", "`python==X.Y` matches only Python X.Y.0"),
    FindingSpec("TC621", ERROR, "envspec.pip_requires", "a pip pin torch's own wheel requires another release of"),
    FindingSpec(
        "TC622",
        ERROR,
        "envspec.pip_unservable",
        "a pip requirement no index the file names serves",
        variants=("local_version", "not_listed", "git_protocol", "invalid_requirement"),
    ),
    FindingSpec(
        "TC623",
        ERROR,
        "envspec.pip_build_needs_torch",
        "a pip requirement whose build imports torch, which pip's build lacks",
    ),
    FindingSpec(
        "TC701",
        ERROR,
        "import_test",
        "`import torch` fails in this environment (import test)",
        variants=("unrecognised",),
    ),
    FindingSpec("TC702", ERROR, "import_test", "`import torch` did not finish within the timeout (import test)"),
    FindingSpec("TC703", INFO, "import_test", "`import torch` works (import test)"),
    FindingSpec("TC704", WARNING, "import_test", "torch is a CUDA build but CUDA is not available (import test)"),
    FindingSpec("TC705", WARNING, "import_test", "the import test could not run"),
    FindingSpec(
        "TC706", WARNING, "import_test", "the environment's Python imports torch from another folder (import test)"
    ),
    FindingSpec("TC801", WARNING, "activation_scripts", "a folder comes before this environment's folders on PATH"),
    FindingSpec(
        "TC802",
        WARNING,
        "activation_scripts",
        "the current folder holds DLLs with the names of torch's dependencies",
        platforms=WINDOWS,
    ),
    FindingSpec(
        "TC803", WARNING, "activation_scripts", "CONDA_DLL_SEARCH_MODIFICATION_ENABLE is set", platforms=WINDOWS
    ),
    FindingSpec(
        "TC804",
        WARNING,
        "activation_scripts",
        "LD_LIBRARY_PATH holds libraries that shadow torch's own",
        platforms=LINUX,
    ),
    FindingSpec("TC810", WARNING, "activation_hooks", "the activation checks in this environment are out of date"),
    FindingSpec("TC901", WARNING, "unreadable", "a conda-meta record cannot be read", variants=("unreadable",)),
    FindingSpec(
        "TC902",
        WARNING,
        "unreadable",
        "package metadata or an import-path folder cannot be read",
        variants=("folder", "path_file"),
    ),
    FindingSpec("TC903", ERROR, ("win_missing", "linux_loading"), "a binary cannot be read"),
    FindingSpec("TC909", WARNING, "runner", "a value in the environment that a check cannot use stopped it early"),
    FindingSpec("TC990", WARNING, "runner", "internal error in a check"),
)


@functools.cache
def _by_id() -> dict[str, FindingSpec]:
    return {spec.id: spec for spec in FINDINGS}


@functools.cache
def _by_name() -> dict[str, Emitter]:
    return {e.name: e for e in EMITTERS}


def spec(finding_id: str) -> FindingSpec | None:
    """The registry entry of ``finding_id`` (``TC301``), None for an id the tool never prints."""
    return _by_id().get(finding_id.strip().upper())


def is_note(f: Any) -> bool:
    """Whether finding ``f`` is reported as a note; its variant is read from its title's catalog key
    (``TC613.pip.title``)."""
    entry = spec(f.id)
    if entry is None or entry.note is False:
        return False
    key = getattr(f.title, "key", "") or ""
    parts = key.split(".")
    return entry.is_note(parts[1] if len(parts) == 3 else None)


def emitter(name: str) -> Emitter:
    return _by_name()[name]


def emitter_of_module(module: str) -> Emitter:
    """The emitter whose code is ``module`` (a check or rule module's ``__name__``)."""
    for e in EMITTERS:
        if e.module == module:
            return e
    raise LookupError(f"{module} is not in conda_torchcheck.registry: add an Emitter line for it")


def ids() -> tuple[str, ...]:
    return tuple(spec.id for spec in FINDINGS)


def checks_for(target_os: str | None = None) -> tuple[Emitter, ...]:
    """The engine checks that can apply to ``target_os`` (every one for None), in run order."""
    return tuple(c for c in CHECKS if target_os is None or target_os in c.platforms)


# --- derived documents ------------------------------------------------------------------------------------------

_GROUP_TITLES = {
    "TC1xx": "conda channels and variants",
    "TC2xx": "pip vs conda",
    "TC3xx": "Windows loading",
    "TC4xx": "Linux loading",
    "TC45x": "macOS loading (dyld)",
    "TC5xx": "CUDA driver and GPU",
    "TC6xx": "environment.yml (`spec check`)",
    "TC7xx": "explain and the import test",
    "TC8xx": "conda hooks and activation",
    "TC9xx": "unreadable input and internal errors",
}


def docs_index() -> str:
    """docs/findings/README.md, as this table makes it (a test keeps the file equal to it)."""
    lines = [
        "# Finding ids",
        "",
        "One page per id. `conda-torchcheck list-checks` shows which check reports which id. This index is generated",
        "from `conda_torchcheck/registry.py`: `python -m conda_torchcheck.registry` rewrites it.",
    ]
    group = None
    for s in FINDINGS:
        if s.group != group:
            group = s.group
            lines += [
                "",
                f"## {group} — {_GROUP_TITLES[group]}",
                "",
                "| id | summary | emitted by | OS |",
                "|---|---|---|---|",
            ]
        os_names = "all" if s.platforms == ALL_OS else ", ".join(s.platforms)
        summary = s.summary.replace("|", "\\|")
        lines.append(f"| [{s.id}]({s.id}.md) | {summary} | {', '.join(s.emitted_by)} | {os_names} |")
    return "\n".join(lines) + "\n"


def schema_id_enum() -> list[str]:
    """The JSON schema's ``finding_id`` enum."""
    return list(ids())


def write_derived() -> list[str]:
    """Rewrite the files derived from this table (the docs index, the schema's id enum); the paths changed."""
    import json

    from conda_torchcheck.findings import DOCS_DIR
    from conda_torchcheck.schema import SCHEMA_FILE

    changed = []
    index = DOCS_DIR / "README.md"
    if index.read_text(encoding="utf-8") != docs_index():
        index.write_text(docs_index(), encoding="utf-8", newline="\n")
        changed.append(str(index))
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    if json.loads(text)["$defs"]["finding_id"]["enum"] != schema_id_enum():
        # only the enum's lines change: the rest of the file keeps its hand-written layout
        start = text.index('"enum": [', text.index('"finding_id": {'))
        end = text.index("]", start)
        key_indent = " " * (start - text.rindex("\n", 0, start) - 1)
        items = ",\n".join(f'{key_indent}  "{i}"' for i in schema_id_enum())
        SCHEMA_FILE.write_text(
            f'{text[:start]}"enum": [\n{items}\n{key_indent}{text[end:]}', encoding="utf-8", newline="\n"
        )
        changed.append(str(SCHEMA_FILE))
    return changed


if __name__ == "__main__":  # python -m conda_torchcheck.registry: after adding or changing an entry
    for path in write_derived():
        print(f"rewrote {path}")
