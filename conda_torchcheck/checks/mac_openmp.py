"""TC454: two OpenMP runtimes that can end up in one Python process on macOS.

dyld reuses a loaded image when a later load command names its install name (``Loader::getLoader``), so two
copies that both call themselves ``@rpath/libomp.dylib`` (torch's wheel, conda-forge's llvm-openmp, lightgbm's
``@rpath`` reference) become one runtime: whichever loads first. Copies with different install names
(scikit-learn's wheel bundles ``/DLC/sklearn/.dylibs/libomp.dylib``; older torch wheels ``libiomp5.dylib``) load
side by side, and the LLVM/Intel runtime aborts with OMP Error #15 when the second initialises.

The second copy may come from another package (a conda runtime, another wheel: the default variant, evidence
``second_copy = "other-package"``) or from torch's own wheel (variant ``own``, ``second_copy = "torch-wheel"``):
torch 2.3.0's arm64 wheel shipped libomp.dylib in torch/.dylibs (delocate's /DLC/torch/.dylibs install name) and
in torch/lib (@rpath/libomp.dylib), and torch.compile's generated code links the copy torch itself does not load
(pytorch/pytorch#122705). Copies inside torch with torch's own install name are spares dyld never loads twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.binaries.macho import MachOFile, read_macho
from conda_torchcheck.checks import Check
from conda_torchcheck.checks import mac_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge.macos import openmp_bundled, openmp_runtimes
from conda_torchcheck.loader import macos
from conda_torchcheck.messages import msg

# folders below site-packages where wheels bundle dylibs (delocate's .dylibs, packages' own lib folders)
BUNDLE_GLOBS = ("*/.dylibs", "*/lib", "*/.libs")


def _runtime_files(ctx: CheckContext, names: frozenset[str]) -> list[Path]:
    out: list[Path] = []
    lib = ctx.env.prefix / "lib"
    for name in sorted(names):
        if fs.is_file(lib / name):
            out.append(lib / name)
    for site in ctx.env.site_dirs:
        if not site.active:
            continue
        for pattern in BUNDLE_GLOBS:
            try:
                folders = sorted(site.path.glob(pattern))
            except OSError:
                continue
            for folder in folders:
                for name in sorted(names):
                    if fs.is_file(folder / name):
                        out.append(folder / name)
    return out


def _owner(ctx: CheckContext, path: Path) -> str:
    bundled = openmp_bundled()
    for site in ctx.env.site_dirs:
        try:
            rel = path.parent.relative_to(site.path).as_posix()
        except ValueError:
            continue
        if rel in bundled:
            return bundled[rel]
        return f"{rel.split('/', 1)[0]} (pip wheel)"
    return bundled.get("lib", "conda")


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = macos.torch_load(ctx)
    if load is None:
        return
    names = openmp_runtimes()
    torch_runtime = next((img for img in load.dyld.loaded if img.path.name in names), None)
    if torch_runtime is None:
        return
    torch_install = torch_runtime.install_name or str(torch_runtime.path)
    torch_real = os.path.realpath(torch_runtime.path)
    others: dict[str, tuple[Path, str]] = {}
    torch_copies: dict[str, Path] = {}
    own = [ctx.torch.package_dir] if ctx.torch.package_dir is not None else []
    own += [p.parent / "functorch" for p in own]  # the same wheel: torch 2.2's libiomp5 sits in functorch/.dylibs
    for path in _runtime_files(ctx, names):
        if os.path.realpath(path) == torch_real:
            continue
        info = read_macho(path)
        if not isinstance(info, MachOFile):
            continue
        sl = info.slice_for(load.search.arch)
        if sl is None:
            continue
        install = sl.install_name or str(path)
        if install == torch_install:
            continue  # dyld reuses whichever loads first: one runtime (torch's spare copies included)
        if any(path.is_relative_to(folder) for folder in own):
            torch_copies.setdefault(install, path)  # torch's own wheel carries a second runtime
        else:
            others.setdefault(install, (path, _owner(ctx, path)))
    if torch_copies:
        yield _own_copies(ctx, torch_runtime.path, torch_install, torch_copies)
    if not others:
        return
    listed = [
        msg("TC454.other", path=str(p), owner=owner, install_name=install) for install, (p, owner) in others.items()
    ]
    runtimes = [torch_runtime.path.name] + [p.name for p, _o in others.values()]
    # one other copy (the usual case) stays a message, so it follows the reader's language
    others_text = listed[0] if len(listed) == 1 else "; ".join(t.render() for t in listed)
    yield finding(
        "TC454",
        Severity.WARNING,
        runtimes=", ".join(runtimes),
        torch_runtime=f"{torch_runtime.path} (install name {torch_install})",
        others=others_text,
        evidence={
            "torch_runtime": str(torch_runtime.path),
            "torch_install_name": torch_install,
            "second_copy": "other-package",
            "others": [{"path": str(p), "install_name": i, "from": o} for i, (p, o) in others.items()],
            "KMP_DUPLICATE_LIB_OK": ctx.host.get("KMP_DUPLICATE_LIB_OK"),
        },
        fixes=[
            Fix("conda" if common.is_conda_env(ctx) else "pip", msg("TC454.fix.one_source")),
            Fix("system", msg("TC454.fix.kmp")),
        ],
    )


def _own_copies(ctx: CheckContext, loaded: Path, install: str, copies: dict[str, Path]) -> Finding:
    """torch's wheel itself holds another copy of the runtime it loads, under another install name."""
    first_install, first = next(iter(copies.items()))
    return finding(
        "TC454",
        Severity.WARNING,
        variant="own",
        runtime=loaded.name,
        loaded=f"{loaded} (install name {install})",
        other=f"{first} (install name {first_install})",
        evidence={
            "torch_runtime": str(loaded),
            "torch_install_name": install,
            "second_copy": "torch-wheel",
            "others": [{"path": str(p), "install_name": i, "from": "torch (its own wheel)"} for i, p in copies.items()],
            "KMP_DUPLICATE_LIB_OK": ctx.host.get("KMP_DUPLICATE_LIB_OK"),
        },
        fixes=[
            Fix("conda" if common.is_conda_env(ctx) else "pip", msg("TC454.fix.other_torch")),
            Fix("system", msg("TC454.fix.kmp")),
        ],
    )


CHECK = Check.declared(__name__, run)
