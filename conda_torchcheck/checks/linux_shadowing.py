"""TC404: a library found through LD_LIBRARY_PATH, or put first into the process by LD_PRELOAD, that differs
from the copy that would load without it."""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.binaries.elf import ElfFile, read_elf
from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.loader import linux
from conda_torchcheck.messages import msg


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = linux.torch_load(ctx)
    if load is None:
        return
    yield from _preloaded(ctx, load)
    if not load.search.ld_library_path:
        return
    reported: set[str] = set()
    objects = {str(o.path): o for o in load.ldso.every_object}
    for module, dep in load.graph.iter_edges():
        res = dep.resolution
        if res is None or res.path is None or res.found_by.step != linux.STEP_LD_LIBRARY_PATH:
            continue
        key = str(res.path)
        if key in reported:
            continue
        requirer = objects.get(str(module.path))
        if requirer is None:
            continue
        other, how = load.ldso.alternative(dep.name, requirer)
        if other is None or os.path.realpath(other) == os.path.realpath(res.path):
            continue
        difference = _difference(str(res.path), other)
        if difference is None:
            continue
        reported.add(key)
        directory = res.found_by.directory or os.path.dirname(key)
        yield finding(
            "TC404",
            Severity.WARNING,
            library=dep.name,
            winner=key,
            shadowed=other,
            requirer=module.path.name,
            step=how.step if how else "?",
            directory=directory,
            difference=difference,
            evidence={
                "library": dep.name,
                "loaded_copy": key,
                "shadowed_copy": other,
                "shadowed_found_by": how.to_dict() if how else None,
                "needed_by": str(module.path),
                "ld_library_path": list(load.search.ld_library_path),
                "difference": difference,
            },
            fixes=[_fix(ctx, directory)],
        )


def _preloaded(ctx: CheckContext, load: linux.LinuxLoad) -> Iterator[Finding]:
    """A library LD_PRELOAD loads before everything else: every later lookup of its name (and its soname) finds
    it, so it stands in for the copy torch would load, a torch library of another build included."""
    if not load.search.preload:
        return
    needs: dict[str, str] = {}  # library name -> the first object that needs it (not the preload itself)
    for module, dep in load.graph.iter_edges():
        if dep.kind != "preload":
            needs.setdefault(dep.name, str(module.path))
    objects = {str(o.path): o for o in load.ldso.every_object}
    torch_lib = os.path.join(str(ctx.torch.package_dir), "lib") if ctx.torch.package_dir else None
    for _module, dep in load.graph.iter_edges():
        res = dep.resolution
        if dep.kind != "preload" or res is None or res.path is None:
            continue
        path = str(res.path)
        name = os.path.basename(path)
        own = os.path.join(torch_lib, name) if torch_lib else None
        if own and os.path.isfile(own) and os.path.realpath(own) != os.path.realpath(path):
            other: str | None = own
        else:
            requirer = objects.get(needs.get(name, ""))
            if requirer is None:
                continue  # nothing torch loads asks for it by that name
            other, _how = load.ldso.alternative(name, requirer)
        if other is None or os.path.realpath(other) == os.path.realpath(path):
            continue
        difference = _difference(path, other)
        if difference is None:
            continue
        yield finding(
            "TC404",
            Severity.WARNING,
            variant="preload",
            library=name,
            winner=path,
            shadowed=other,
            difference=difference,
            evidence={
                "library": name,
                "loaded_copy": path,
                "shadowed_copy": other,
                "ld_preload": list(load.search.preload),
                "difference": difference,
            },
            fixes=[_preload_fix(ctx, dep.name)],
        )


def _preload_fix(ctx: CheckContext, entry: str) -> Fix:
    value = ctx.host.get("LD_PRELOAD") or ""
    kept = [p for p in value.replace(":", " ").split() if p != entry]
    command = f'export LD_PRELOAD="{" ".join(kept)}"' if kept else "unset LD_PRELOAD"
    return Fix("env", msg("TC404.preload.fix", entry=entry), commands=(command,))


def _difference(winner: str, other: str) -> str | None:
    """How two copies differ (real file names, newest symbol versions, sizes); None when identical."""
    real_a, real_b = os.path.realpath(winner), os.path.realpath(other)
    try:
        size_a, size_b = os.path.getsize(real_a), os.path.getsize(real_b)
    except OSError:
        return None
    parts = []
    if os.path.basename(real_a) != os.path.basename(real_b):
        parts.append(f"{os.path.basename(real_a)} vs {os.path.basename(real_b)}")
    a, b = read_elf(real_a), read_elf(real_b)
    if isinstance(a, ElfFile) and isinstance(b, ElfFile):
        only_b = [v for v in b.version_defs if v not in a.version_defs]
        if only_b:
            parts.append("versions only in the shadowed copy: " + ", ".join(only_b[-3:]))
    if size_a != size_b:
        parts.append(f"{size_a:,} vs {size_b:,} bytes")
    elif not parts:
        with open(real_a, "rb") as fa, open(real_b, "rb") as fb:
            if fa.read(1 << 16) == fb.read(1 << 16):
                return None
        parts.append("same size, different content")
    return "; ".join(parts)


def _fix(ctx: CheckContext, directory: str) -> Fix:
    value = ctx.host.get("LD_LIBRARY_PATH") or ""
    kept = [p for p in value.split(":") if p and os.path.normpath(p) != os.path.normpath(directory)]
    command = f'export LD_LIBRARY_PATH="{":".join(kept)}"' if kept else "unset LD_LIBRARY_PATH"
    return Fix("env", msg("TC404.fix", directory=directory), commands=(command,))


CHECK = Check.declared(__name__, run)
