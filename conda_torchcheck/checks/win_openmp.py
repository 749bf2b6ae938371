"""TC305: two different libiomp5md.dll files in reach of one process (OMP: Error #15). TC305.clobbered: two conda
packages install the same OpenMP runtime file into Library\\bin (intel-openmp's libiomp5md.dll and llvm-openmp's
same-named compatibility copy): the one installed last overwrote the other, so what DLLs built for one runtime get
may be the other's (w032: WinError 182 for fbgemm.dll).

torch's preload loads ``torch\\lib\\libiomp5md.dll`` by full path; MKL-based packages load ``libiomp5md.dll`` by
name from the DLL search (the env's Library\\bin, python.exe's folder, System32) or by full path from their own
package folder. Windows keeps copies from different folders apart, even identical ones, and Intel's runtime aborts
when the second one initialises.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import owner_of, python_command, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.messages import msg

NAME = "libiomp5md.dll"


def copies_in_reach(ctx: CheckContext, graph) -> list[tuple[Path, str]]:
    """(file, how it gets loaded) for every libiomp5md.dll this process can load, torch's first."""
    model = graph.process
    found: list[tuple[Path, str]] = []
    seen: set[str] = set()

    def add(path: Path | None, how: str) -> None:
        if path is None:
            return
        key = os.path.normcase(os.path.normpath(str(path)))
        if key not in seen:
            seen.add(key)
            found.append((path, how))

    lib = fs.find_child(ctx.torch.package_dir, "lib") if ctx.torch.package_dir is not None else None
    if lib is not None:
        add(fs.listing(lib).get(NAME), "torch's preload (full path)")
    for place in model.default_dirs():
        if place.directory is not None:
            add(fs.listing(place.directory).get(NAME), f"by name: {place.step} {place.shown}")
    library_bin = fs.find_path(ctx.env.prefix, "Library", "bin")
    if library_bin is not None:
        add(fs.listing(library_bin).get(NAME), f"by name: {library_bin}")
    site = ctx.env.env_site
    if site is not None:
        # packages that ship their own copy and load it by full path (ctranslate2, some wheels' *.libs folders)
        for name, entry in fs.listing(site).items():
            if name in ("torch",) or not fs.is_dir(entry) or name.endswith((".dist-info", ".egg-info")):
                continue
            add(fs.listing(entry).get(NAME), f"package folder {entry.name}")
    # deeper in a package (pkg\\bin, pkg\\Qt\\bin): from the packages' RECORDs, nothing is walked (issue 14).
    # Rows outside site-packages (../../Library/bin: the intel-openmp wheel) are the by-name copies above.
    from conda_torchcheck.loader.windows import read_record

    for dist in ctx.env.distributions:
        if dist.name.lower() == "torch" or not dist.has_record:
            continue
        for row in read_record(dist.record_path):
            rel = row[0].replace("\\", "/")
            if rel.lower().endswith("/" + NAME) and not rel.startswith("../") and rel.count("/") >= 2:
                path = Path(os.path.normpath(os.path.join(str(dist.site), rel)))
                if fs.is_file(path):
                    add(path, f"package folder {rel.split('/', 1)[0]}")
    return found


def _can_load_second(ctx: CheckContext, copy: tuple[Path, str]) -> bool:
    """Whether something can load this copy next to torch's.

    A package folder's copy is loaded by full path by its package: always a second copy. A copy found by name is
    loaded as a second copy only when something loads it before torch's preload has put torch's copy in place
    (later loads by name get the module already loaded): MKL-linked conda packages (numpy, scipy) imported first,
    or programs that dropped it into System32 / python.exe's folder. A pip intel-openmp copy in Library\bin is
    used only by the pip mkl that torch 2.3 itself loads, after its preload, so it never becomes a second copy.
    """
    path, how = copy
    if how.startswith("package folder"):
        return True
    owner = owner_of(ctx, path) or ""
    if owner.startswith("pip:"):
        return False
    if owner.startswith("conda:"):
        return True
    return True  # unowned: dropped there by some other program


#: OpenMP runtime files more than one conda package installs under the same name
RUNTIME_FILES = ("Library/bin/libiomp5md.dll", "Library/bin/libomp.dll", "Library/bin/libomp140.x86_64.dll")


def _clobbered(ctx: CheckContext, graph) -> Iterator[Finding]:
    """One OpenMP runtime file that two or more conda records list: conda let the later package overwrite it."""
    for rel in RUNTIME_FILES:
        claimants = [rec for rec in ctx.env.conda_records if any(f.lower() == rel.lower() for f in rec.files)]
        if len(claimants) < 2:
            continue
        # keep Intel's first: torch's Windows builds (the wheels' own copy, the pytorch channel) use Intel's runtime
        claimants.sort(key=lambda rec: (rec.name != "intel-openmp", rec.name))
        path = fs.find_path(ctx.env.prefix, *rel.split("/"))
        packages = ", ".join(f"{rec.name} {rec.version}" for rec in claimants)
        yield finding(
            "TC305",
            Severity.WARNING,
            variant="clobbered",
            file=rel.rsplit("/", 1)[1],
            packages=packages,
            evidence={
                "file": str(path) if path is not None else str(ctx.env.prefix / rel),
                "installed by": [f"conda: {rec.name} {rec.version} {rec.build} ({rec.channel})" for rec in claimants],
                "version": graph.module_version(path) if path is not None else None,
            },
            fixes=[
                Fix(
                    "conda",
                    msg("TC305.fix.clobbered"),
                    commands=(
                        f'conda remove -p "{ctx.env.prefix}" {" ".join(rec.name for rec in claimants[1:])}',
                        f'conda install -p "{ctx.env.prefix}" --force-reinstall {claimants[0].name}',
                    ),
                )
            ],
        )


def run(ctx: CheckContext) -> Iterator[Finding]:
    graph = windows_graph(ctx)
    if graph is None or graph.process is None:
        return
    yield from _clobbered(ctx, graph)
    copies = copies_in_reach(ctx, graph)
    torch_copy = next((c for c in copies if c[1].startswith("torch's preload")), None)
    if torch_copy is None:
        return  # conda builds use the env's OpenMP and keep no copy in torch\lib
    copies = [c for c in copies if c is torch_copy or _can_load_second(ctx, c)]
    if len(copies) < 2:
        return
    torch_digest = fs.sha256_file(torch_copy[0])
    rows = []
    for path, how in copies:
        digest = fs.sha256_file(path)
        rows.append(
            {
                "file": str(path),
                "loaded": how,
                "version": graph.module_version(path),
                "owner": owner_of(ctx, path) or "-",
                "identical_to_torch_copy": digest == torch_digest if path != torch_copy[0] else None,
            }
        )
    others = [str(p) for p, _ in copies if p != torch_copy[0]]
    fixes = []
    prefix = ctx.env.prefix
    if ctx.env.layout in ("conda", "pixi") and ctx.torch.source in ("pip", "pip-over-conda"):
        fixes.append(
            Fix(
                "conda",
                msg("TC305.fix.one_manager"),
                commands=(
                    f"{python_command(ctx)} -m pip uninstall torch",
                    f'conda install -p "{prefix}" -c conda-forge pytorch',
                ),
            )
        )
        channel_python = ctx.env.record("python")
        if channel_python is not None and channel_python.channel == "defaults":
            nomkl = f'conda install -p "{prefix}" nomkl'
        else:
            nomkl = f'conda install -p "{prefix}" -c conda-forge "libblas=*=*openblas"'
        fixes.append(Fix("conda", msg("TC305.fix.nomkl"), commands=(nomkl,)))
    else:
        fixes.append(Fix("pip", msg("TC305.fix.one_manager")))
    fixes.append(Fix("env", msg("TC305.fix.kmp"), commands=("set KMP_DUPLICATE_LIB_OK=TRUE",)))
    yield finding(
        "TC305",
        Severity.WARNING,
        count=len(copies),
        torch_copy=str(torch_copy[0]),
        others=", ".join(others),
        evidence={"copies": rows},
        fixes=fixes,
    )


CHECK = Check.declared(__name__, run)
