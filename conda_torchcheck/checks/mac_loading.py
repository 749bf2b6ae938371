"""TC450/TC451/TC453/TC456: what dyld would fail on (or silently substitute) when ``import torch`` runs on macOS.

All facts come from the simulated import (``loader.macos``): which file each load command resolves to and how,
every place tried for a miss (in dyld's order, with dyld's reason for each), and the candidates dyld skipped
because of their architecture or their minimum macOS.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks import mac_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.loader import macos
from conda_torchcheck.messages import msg

ARCH_WORDS = ("incompatible architecture", "missing compatible architecture")
MINOS_WORDS = "newer than running OS"


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = macos.torch_load(ctx)
    if load is None:
        return
    yield from _architecture(ctx, load)
    yield from _minimum_macos(ctx, load)
    yield from _missing(ctx, load)
    yield from _substituted(ctx, load)
    yield from _inserted(ctx)


def _reasons(dep) -> list[str]:
    return [(p.note or "").split("; ", 1)[0] for p in dep.searched]


# --- TC450 ------------------------------------------------------------------------------------------------


def _missing(ctx: CheckContext, load: macos.MacLoad) -> Iterator[Finding]:
    seen: set[str] = set()
    for step in load.steps:
        for requirer, dep in step.misses:
            if dep.name in seen:
                continue
            seen.add(dep.name)
            reasons = _reasons(dep)
            if any(p.startswith("arch:") for p in dep.problems):
                continue  # TC451 reports it
            if any(any(w in r for w in ARCH_WORDS) or MINOS_WORDS in r for r in reasons):
                continue  # a copy exists but has the wrong architecture or is too new: TC451 / TC453 say why
            library = dep.name.rsplit("/", 1)[-1]
            own = common.ships_with_torch(ctx, library)
            foreign = any(macos.NOT_EXAMINED in (p.note or "") or p.step == "unexamined" for p in dep.searched)
            severity = Severity.WARNING if foreign and not own else Severity.ERROR
            message = (
                step.error
                if step.error and dep.name in step.error
                else macos.library_not_loaded(
                    dep.name, requirer.path if requirer is not None else dep.name, list(dep.searched)
                )
            )
            searched = [common.describe_place(p) for p in dep.searched]
            needed_by = str(requirer.path) if requirer is not None else "python"
            yield finding(
                "TC450",
                severity,
                variant="foreign" if severity is Severity.WARNING else None,
                library=library,
                name=dep.name,
                needed_by=needed_by,
                searched="; ".join(searched) or "-",
                message=message,
                evidence={
                    "library": dep.name,
                    "needed_by": needed_by,
                    "chain": common.chain(load.graph, requirer.path if requirer is not None else None, dep.name),
                    "tried": searched,
                    "dyld_message": message,
                    "load_step": step.label,
                    "process_arch": load.search.arch,
                },
                fixes=_missing_fixes(ctx, library, own),
            )


def _missing_fixes(ctx: CheckContext, library: str, own: bool) -> list[Fix]:
    fixes: list[Fix] = []
    if own or library == "libtorch_global_deps.dylib":
        fixes.append(common.reinstall_torch_fix(ctx, msg("TC450.fix.reinstall_torch")))
    elif library == "libomp.dylib" and common.is_conda_env(ctx):
        fixes.append(
            Fix(
                "conda",
                msg("TC450.fix.conda_package", library=library),
                commands=(cmd.conda_install(ctx.env, ["llvm-openmp"]),),
            )
        )
    if not fixes:
        fixes.append(Fix("system", msg("TC450.fix.find_provider", library=library)))
    return fixes


# --- TC451 ------------------------------------------------------------------------------------------------


def _architecture(ctx: CheckContext, load: macos.MacLoad) -> Iterator[Finding]:
    for step in load.steps:
        for _image, _dep, path, problem in step.rejected:
            if not any(w in problem for w in ARCH_WORDS):
                continue
            have = problem.split("have '", 1)[-1].split("'", 1)[0] if "have '" in problem else "?"
            need = load.search.arch
            python = str(ctx.env.python.executable) if ctx.env.python.executable else "python"
            fixes = []
            if need == "x86_64" and "arm64" in have:
                fixes.append(Fix("conda", msg("TC451.fix.arm64_env")))
            fixes.append(common.reinstall_torch_fix(ctx, msg("TC451.fix.reinstall_torch", need=need)))
            yield finding(
                "TC451",
                Severity.ERROR,
                path=path,
                have=have,
                need=need,
                python=f"{python}, {ctx.env.python.arch or '?'}",
                message=f"'{path}' ({problem})",
                evidence={
                    "file": path,
                    "file_archs": have.split(","),
                    "process_arch": need,
                    "process_arch_from": load.search.arch_source,
                    "python": python,
                    "dyld_message": step.error or f"'{path}' ({problem})",
                },
                fixes=fixes,
            )
            return  # one is enough: every torch file has the same architecture


# --- TC453 ------------------------------------------------------------------------------------------------


def _minimum_macos(ctx: CheckContext, load: macos.MacLoad) -> Iterator[Finding]:
    host, source = load.search.macos, load.search.macos_source
    if host is None:
        return
    seen: set[str] = set()
    for step in load.steps:
        for _image, _dep, path, problem in step.rejected:
            if MINOS_WORDS not in problem or path in seen:
                continue
            seen.add(path)
            minos = problem.split("built for macOS ", 1)[-1].split(" ", 1)[0]
            library = path.rsplit("/", 1)[-1]
            yield finding(
                "TC453",
                Severity.ERROR,
                library=library,
                path=path,
                minos=minos,
                host=host,
                source=source,
                evidence={"file": path, "minos": minos, "host_macos": host, "host_macos_from": source},
                fixes=[
                    Fix(
                        "conda" if common.is_conda_env(ctx) else "pip",
                        msg("TC453.fix.older_build", host=host, library=library),
                    ),
                    Fix("system", msg("TC453.fix.update_macos", minos=minos), needs_admin=True),
                ],
            )


# --- TC456 ------------------------------------------------------------------------------------------------


def _substituted(ctx: CheckContext, load: macos.MacLoad) -> Iterator[Finding]:
    """torch's own dylib resolved outside torch's package: an earlier LC_RPATH (the build machine's
    /Users/runner/...), DYLD_LIBRARY_PATH or a copy loaded first by install name wins over torch/lib."""
    pkg = ctx.torch.package_dir
    if pkg is None:
        return
    seen: set[str] = set()
    for module, dep in load.graph.iter_edges():
        res = dep.resolution
        if res is None or res.path is None or not dep.name.startswith("@rpath/"):
            continue
        library = dep.name.rsplit("/", 1)[-1]
        if library in seen or not common.ships_with_torch(ctx, library) or not fs.is_file(pkg / "lib" / library):
            continue
        if not _inside(module.path, pkg) or _inside(res.path, pkg):
            continue
        seen.add(library)
        how = common.describe_place(res.found_by)
        fixes = [common.reinstall_torch_fix(ctx, msg("TC456.fix.reinstall_torch"))]
        if res.found_by.step == macos.STEP_DYLD_LIBRARY_PATH:
            fixes.insert(0, Fix("system", msg("TC456.fix.unset_dyld", directory=res.found_by.note or "")))
        else:
            fixes.insert(0, Fix("system", msg("TC456.fix.remove_copy", path=str(res.path))))
        yield finding(
            "TC456",
            Severity.WARNING,
            library=library,
            path=str(res.path),
            needed_by=str(module.path),
            how=how,
            expected=str(pkg / "lib" / library),
            evidence={
                "library": dep.name,
                "loads": str(res.path),
                "found_by": how,
                "torch_copy": str(pkg / "lib" / library),
                "needed_by": str(module.path),
                "chain": common.chain(load.graph, res.path),
            },
            fixes=fixes,
        )


def _inserted(ctx: CheckContext) -> Iterator[Finding]:
    """TC456.inserted: DYLD_INSERT_LIBRARIES (macOS's LD_PRELOAD; a conda or venv python is not protected by
    SIP, so dyld honours it) names a torch library from outside torch: dyld loads it before python, and torch's
    own copy of that install name is never used."""
    pkg = ctx.torch.package_dir
    value = ctx.host.get("DYLD_INSERT_LIBRARIES") or ""
    if pkg is None or not value:
        return
    entries = [e for e in value.split(":") if e]
    for entry in entries:
        library = entry.rsplit("/", 1)[-1]
        own = pkg / "lib" / library
        if not common.ships_with_torch(ctx, library) or not fs.is_file(own) or _inside(Path(entry), pkg):
            continue
        kept = [e for e in entries if e != entry]
        command = f'export DYLD_INSERT_LIBRARIES="{":".join(kept)}"' if kept else "unset DYLD_INSERT_LIBRARIES"
        yield finding(
            "TC456",
            Severity.WARNING,
            variant="inserted",
            library=library,
            path=entry,
            expected=str(own),
            evidence={
                "library": library,
                "loads": entry,
                "found_by": "DYLD_INSERT_LIBRARIES",
                "torch_copy": str(own),
                "dyld_insert_libraries": entries,
            },
            fixes=[Fix("env", msg("TC456.inserted.fix", path=entry), commands=(command,))],
        )


def _inside(path, folder) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


CHECK = Check.declared(__name__, run)
