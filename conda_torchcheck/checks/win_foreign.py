"""TC311: another package ships its own copy of a DLL torch imports; imported before torch, its copy is torch's.

Windows reuses a module already loaded with the same base name without searching (knowledge/windows_foreign.toml
[MS-SEARCH]). So when a package that loads its own msvcp140.dll (PyQt5-Qt5's 14.26 in PyQt5\\Qt5\\bin) or
cudart64_12.dll is imported first, every later import of that name by torch's DLLs gets that copy. Two import
orders matter: torch first (the load graph: torch's copy wins, the package gets it too) and that package first
(modelled here with :func:`loader.windows.package_load_winner`). A copy is reported only when it wins in the
second order and is older than the copy torch gets in the first one, or lacks functions torch imports from it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import ERROR_REASON, is_conda_like, python_command, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge.version import numbers
from conda_torchcheck.messages import msg, translate


class Copy:
    """One file another package ships whose name is in torch's closure."""

    __slots__ = (
        "name",
        "path",
        "owner",
        "dist_name",
        "version",
        "import_name",
        "beside_extension",
        "source",
        "binaries",
        "known",
    )

    def __init__(
        self,
        name: str,
        path: Path,
        owner: str,
        dist_name: str,
        version: str,
        import_name: str,
        beside_extension: bool,
        source: str,
        binaries: tuple[Path, ...] = (),
        known: bool = False,
    ) -> None:
        self.name = name
        self.path = path
        self.owner = owner  # "pip: PyQt5-Qt5 5.15.2" / "conda: NAME VERSION (CHANNEL)"
        self.dist_name = dist_name
        self.version = version
        self.import_name = import_name  # what the user imports: PyQt5
        self.beside_extension = beside_extension
        self.source = source  # "pip" | "conda"
        #: the package's other .pyd/.dll files: one of them must import the name for the package to load it
        self.binaries = binaries
        #: how the package loads its copies is known (knowledge/windows_foreign.toml)
        self.known = known


def closure_names(graph) -> frozenset[str]:
    """Lower-case names of every DLL torch's import loads or looks for (imports, not delay-loads)."""
    names = set(graph.loaded)
    for module, dep in graph.iter_edges():
        if dep.kind != "delay-import":
            names.add(dep.name.lower())
        names.add(module.path.name.lower())
    return frozenset(n for n in names if n.endswith(".dll") and not n.startswith(("api-ms-", "ext-ms-")))


def _norm(path: Path | str) -> str:
    return os.path.normcase(os.path.normpath(str(path)))


def _lists_a_dll(record: Path) -> bool:
    """A cheap look at the RECORD text first: most packages ship no DLL, and parsing 300 RECORDs costs ~25 ms."""
    try:
        return b".dll" in fs.read_bytes(record).lower()
    except OSError:
        return False


def inventory(ctx: CheckContext, graph) -> list[Copy]:
    """Every DLL a pip or conda package other than torch installed whose name torch's closure has.

    From the packages' file lists (RECORD, conda-meta), so nothing is walked: site-packages and Library\\bin alike.
    """
    from conda_torchcheck.knowledge.windows import foreign_packages
    from conda_torchcheck.loader.windows import read_record

    names = closure_names(graph)
    known = foreign_packages()
    torch_names = {"torch", "pytorch", "libtorch", "pytorch-cuda", "pytorch-gpu", "pytorch-cpu"}
    out: list[Copy] = []
    seen: set[str] = set()
    for dist in ctx.env.distributions:
        key = dist.name.lower().replace("_", "-")
        if key in torch_names or not dist.has_record:
            continue
        if not _lists_a_dll(dist.record_path):
            continue
        rows = [row[0] for row in read_record(dist.record_path)]
        hits = [
            r for r in rows if r.lower().endswith(".dll") and r.replace("\\", "/").rsplit("/", 1)[-1].lower() in names
        ]
        if not hits:
            continue
        ext_dirs = {_norm(os.path.dirname(r)) for r in rows if r.lower().endswith(".pyd")}
        info = known.get(key)
        if not ext_dirs and info is None:
            # data-only wheels (nvidia-*-cu12): their DLLs load only when some other package loads them, and
            # "import <it> first" would not be true; say nothing rather than name the wrong import
            continue
        for rel in hits:
            path = Path(os.path.normpath(os.path.join(str(dist.site), rel)))
            if _norm(path) in seen or graph.is_own(path) or not fs.is_file(path):
                continue
            seen.add(_norm(path))
            top = rel.replace("\\", "/").split("/", 1)[0]
            out.append(
                Copy(
                    path.name.lower(),
                    path,
                    f"pip: {dist.raw_name} {dist.version}",
                    dist.raw_name,
                    str(dist.version),
                    (info.import_name if info else None)
                    or (top if not top.endswith((".libs", ".data")) else dist.raw_name),
                    _norm(os.path.dirname(rel)) in ext_dirs,
                    "pip",
                    tuple(
                        Path(os.path.normpath(os.path.join(str(dist.site), r)))
                        for r in rows
                        if r.lower().endswith((".pyd", ".dll")) and r != rel
                    ),
                    bool(info),
                )
            )
    prefix = ctx.env.prefix
    for rec in ctx.env.conda_records:
        if rec.name in torch_names or rec.name in ("vc14_runtime", "vc", "vs2015_runtime", "ucrt"):
            continue  # vc14_runtime's copies are the env's own runtime, the load graph's to judge (TC302)
        if not any(f.lower().endswith(".pyd") for f in rec.files):
            # a library package (its DLLs in Library\bin, already in torch's own search: the load graph and
            # TC302/TC303 name its owner); only a package with an extension module is something one imports
            continue
        for rel in rec.files:
            low = rel.replace("\\", "/").lower()
            if not low.endswith(".dll") or low.rsplit("/", 1)[-1] not in names:
                continue
            path = prefix / rel
            if _norm(path) in seen or graph.is_own(path) or not fs.is_file(path):
                continue
            seen.add(_norm(path))
            folder = low.rsplit("/", 1)[0] if "/" in low else ""
            # a copy beside the package's own extension module is found before python.exe's folder
            beside = any(
                f.replace("\\", "/").lower().rsplit("/", 1)[0] == folder for f in rec.files if f.endswith(".pyd")
            )
            out.append(
                Copy(
                    path.name.lower(),
                    path,
                    f"conda: {rec.name} {rec.version} ({rec.channel})",
                    rec.name,
                    rec.version,
                    rec.name,
                    beside,
                    "conda",
                    tuple(prefix / f for f in rec.files if f.lower().endswith((".pyd", ".dll")) and f != rel),
                )
            )
    return out


@functools.cache
def _versioned_prefixes() -> tuple[str, ...]:
    from conda_torchcheck.knowledge.windows import versioned_dll_prefixes

    return versioned_dll_prefixes()


def _versioned(name: str) -> bool:
    return name.startswith(_versioned_prefixes())


def _importers(graph, name: str, torch_copy: Path | None) -> list:
    """torch's own modules that import ``name`` and would get the package's module.

    A name torch ships in torch\\lib is preloaded by full path; only its importers loaded before that preload bind
    to the copy already loaded (after it, two modules of that name are loaded and which one a later import gets
    is not something this tool claims).
    """
    from conda_torchcheck.checks.win_common import first_outcome_with

    own_root = next((o for o in graph.outcomes if torch_copy is not None and o.path == torch_copy), None)
    out = []
    for module in graph.modules.values():
        if not module.extra.get("own"):
            continue
        if not any(d.name.lower() == name and d.kind == "import" for d in module.dependencies):
            continue
        if own_root is not None:
            first = first_outcome_with(graph, module.path)
            if first is None or first.index >= own_root.index:
                continue
        out.append(module)
    return out


def _missing_symbols(importers, name: str, copy: Path) -> dict[str, list[str]]:
    from conda_torchcheck.binaries.pe import PEInfo, Unreadable, read_exports, read_pe

    exports = read_exports(copy)
    if isinstance(exports, Unreadable):
        return {}
    out: dict[str, list[str]] = {}
    for module in importers:
        info = read_pe(module.path, version=False, symbols=lambda n: n.lower() == name)
        if not isinstance(info, PEInfo):
            continue
        for imported in info.normal_imports:
            if imported.name.lower() == name and imported.symbols:
                missing = [str(s) for s in imported.symbols if not exports.has(s)]
                if missing:
                    out[module.path.name] = missing
    return out


def _torch_copy(graph, name: str) -> Path | None:
    """The file torch's DLLs get for ``name`` when torch is imported first: the module loaded by that name, else
    (the load that would bind it failed for another reason) the file the search found for torch's import."""
    bound = graph.loaded.get(name)
    if bound is not None:
        return bound[0]
    for module, dep in graph.iter_edges():
        if module.extra.get("own") and dep.name.lower() == name and dep.resolution is not None:
            return dep.resolution.path
    return None


def verdict(ctx: CheckContext, graph, copy: Copy) -> dict | None:
    """What happens to torch when ``copy``'s package is imported first; None when nothing goes wrong."""
    from conda_torchcheck.loader.windows import dll_kind, package_load_winner, vc_minimum

    winner = package_load_winner(graph, copy.name, copy.path, beside_extension=copy.beside_extension)
    if winner is None or _norm(winner) != _norm(copy.path):
        return None  # python.exe's folder (or python.exe itself) hands out another copy: this one never loads first
    torch_copy = _torch_copy(graph, copy.name)
    if torch_copy is not None and _norm(torch_copy) == _norm(copy.path):
        return None  # the copy torch gets anyway: TC302/TC303 judge it
    have = graph.module_version(copy.path)
    theirs = graph.module_version(torch_copy) if torch_copy is not None else None
    if torch_copy is not None:
        if copy.path.stat().st_size == torch_copy.stat().st_size and fs.sha256_file(copy.path) == fs.sha256_file(
            torch_copy
        ):
            return None  # identical
        if _versioned(copy.name) and have and theirs and numbers(have) >= numbers(theirs):
            return None  # new enough
    importers = _importers(graph, copy.name, torch_copy)
    if not importers:
        return None
    result = {"winner_torch_first": str(torch_copy) if torch_copy else None, "torch_first_version": theirs}
    for rule in vc_minimum(ctx.torch.version):
        if rule["dll"].lower() == copy.name and theirs and numbers(theirs)[:2] < numbers(rule["version"])[:2]:
            return None  # torch fails in either order: TC302's finding, and "import torch first" would not help
        if rule["dll"].lower() == copy.name and have and numbers(have)[:2] < numbers(rule["version"])[:2]:
            return {
                **result,
                "kind": "1114",
                "need": rule["version"],
                "importer": importers[0],
                "source": rule["source"],
            }
    missing = _missing_symbols(importers, copy.name, copy.path)
    if missing:
        first = next(m for m in importers if m.path.name in missing)
        return {**result, "kind": "127", "missing": missing, "importer": first}
    if not (_versioned(copy.name) and have and theirs and numbers(have) < numbers(theirs)):
        return None
    if dll_kind(copy.name) == "vc-runtime":
        # older than torch's copy is fine down to the toolset that built torch (Microsoft's rule, TC302.toolset)
        linkers = graph.linker_versions()
        if not linkers or numbers(have)[:2] >= max(linkers):
            return None
    if copy.name.startswith("cudnn64_") and numbers(have)[:2] < numbers(theirs)[:2]:
        # torch.backends.cudnn refuses a runtime minor older than the one torch was built with (the copy it
        # ships or was solved with stands for that); knowledge/windows_cuda.toml [TORCH-CUDNN]
        return {**result, "kind": "cudnn", "importer": importers[0]}
    return {**result, "kind": "older", "importer": importers[0]}


def _package_loads(copy: Copy) -> bool:
    """Whether one of the package's own binaries imports the name (else the package ships it for something else,
    a helper .exe, and importing the package does not load it). Read only for a copy that would be reported."""
    from conda_torchcheck.binaries.pe import PEInfo, read_pe

    for path in copy.binaries:
        info = read_pe(path, version=False)
        if isinstance(info, PEInfo) and any(i.name.lower() == copy.name for i in info.imports):
            return True
    return False


def _error_line(graph, importer, code: int) -> str:
    from conda_torchcheck.checks.win_common import first_outcome_with

    outcome = first_outcome_with(graph, importer.path)
    reason = translate(ERROR_REASON.get(code, "win.error.r126"))
    if outcome is not None and outcome.kind == "extension":
        return translate("win.error.extension", reason=reason)
    path = outcome.path if outcome is not None else importer.path
    return translate("win.error.preload", code=code, reason=reason, path=str(path))


def fixes_for(ctx: CheckContext, copy: Copy, kind: str) -> list[Fix]:
    from conda_torchcheck.loader.windows import dll_kind

    fixes = [Fix("env", msg("TC311.fix.order", package=copy.import_name), commands=("import torch",))]
    if copy.source == "pip":
        cmd = f'{python_command(ctx)} -m pip install --upgrade "{copy.dist_name}"'
        fixes.append(Fix("pip", msg("TC311.fix.update", package=copy.dist_name), commands=(cmd,)))
    else:
        cmd = f'conda update -p "{ctx.env.prefix}" {copy.dist_name}'
        fixes.append(Fix("conda", msg("TC311.fix.update", package=copy.dist_name), commands=(cmd,)))
    if dll_kind(copy.name) == "vc-runtime" and not copy.beside_extension and kind != "127":
        # a runtime next to python.exe is found before the package's added folder: it wins for both orders
        if is_conda_like(ctx):
            cmd = f'conda install -p "{ctx.env.prefix}" -c conda-forge "vc14_runtime>=14.42"'
            fixes.append(Fix("conda", msg("TC311.fix.vc_conda"), commands=(cmd,)))
    return fixes


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None or graph.process is None:
        return
    for copy in inventory(ctx, graph):
        if copy.name == "libiomp5md.dll":
            continue  # two OpenMP runtimes abort whichever loads first: TC305's finding
        result = verdict(ctx, graph, copy)
        if result is None or not (copy.known or _package_loads(copy)):
            continue
        kind = result["kind"]
        importer = result["importer"]
        evidence = {
            "copy": str(copy.path),
            "version": graph.module_version(copy.path),
            "package": copy.owner,
            "import_first": copy.import_name,
            "how_it_loads": translate(
                "TC311.how.beside" if copy.beside_extension else "TC311.how.added", folder=str(copy.path.parent)
            ),
            "torch_gets_when_torch_is_first": result["winner_torch_first"] or "?",
            "its_version": result["torch_first_version"] or "?",
            "torch_importer": importer.path.name,
        }
        params = dict(
            dll=copy.name,
            package=copy.import_name,
            owner=copy.owner,
            copy=str(copy.path),
            have=graph.module_version(copy.path) or "?",
            torch=ctx.torch.version or "?",
            importer=importer.path.name,
            theirs=result["torch_first_version"] or "?",
        )
        if kind == "1114":
            evidence["needs"] = f">= {result['need']} ({result['source']})"
            yield finding(
                "TC311",
                Severity.WARNING,
                need=result["need"],
                error_line=_error_line(graph, importer, 1114),
                evidence=evidence,
                fixes=fixes_for(ctx, copy, kind),
                **params,
            )
        elif kind == "127":
            missing = result["missing"]
            evidence["missing_functions"] = missing
            names = sorted({s for syms in missing.values() for s in syms})
            yield finding(
                "TC311",
                Severity.WARNING,
                variant="exports",
                count=len(names),
                symbols=", ".join(names[:5]) + (" …" if len(names) > 5 else ""),
                error_line=_error_line(graph, importer, 127),
                evidence=evidence,
                fixes=fixes_for(ctx, copy, kind),
                **params,
            )
        elif kind == "cudnn":
            yield finding(
                "TC311",
                Severity.WARNING,
                variant="cudnn",
                evidence=evidence,
                fixes=fixes_for(ctx, copy, kind),
                **params,
            )
        else:
            yield finding(
                "TC311",
                Severity.INFO,
                variant="older",
                evidence=evidence,
                fixes=fixes_for(ctx, copy, kind),
                **params,
            )


CHECK = Check.declared(__name__, run)
