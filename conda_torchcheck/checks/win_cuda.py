"""TC312: cuDNN's sub-libraries, which cuDNN loads only on first use, are missing or from another cuDNN build.

cudnn64_8.dll / cudnn64_9.dll are what torch's DLLs import; the work is in sub-libraries (cudnn_ops_infer64_8.dll,
cudnn_ops64_9.dll, ...) that cuDNN loads by name the first time an operation needs them. No import table names
them, so the load graph (TC301) cannot see a missing one: `import torch` works and the first convolution on the GPU
fails. The list per cuDNN major is knowledge/windows_cuda.toml. torch +cuXXX wheels ship them in torch\\lib; conda
builds take them from Library\\bin (the cudnn package).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.win_common import owner_of, python_command, reinstall_fixes, windows_graph
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge.windows import cudnn_libraries
from conda_torchcheck.messages import msg


def _main_copy(ctx: CheckContext, graph, name: str) -> Path | None:
    """The cudnn64_N.dll torch gets: the one the load graph bound, else the one in torch\\lib or Library\\bin."""
    bound = graph.loaded.get(name)
    if bound is not None and bound[0] is not None:
        return bound[0]
    for module in graph.modules.values():
        if module.path.name.lower() == name:
            return module.path
    folders = []
    if ctx.torch.package_dir is not None:
        folders.append(fs.find_child(ctx.torch.package_dir, "lib"))
    folders.append(fs.find_path(ctx.env.prefix, "Library", "bin"))
    for folder in folders:
        if folder is not None and name in fs.listing(folder):
            return fs.listing(folder)[name]
    return None


def _find(graph, folder: Path, name: str) -> Path | None:
    """cuDNN's own search for a sub-library: its own folder, then the default DLL directories of the process."""
    hit = fs.listing(folder).get(name)
    if hit is not None:
        return hit
    for place in graph.process.default_dirs():
        if place.directory is not None:
            hit = fs.listing(place.directory).get(name)
            if hit is not None:
                return hit
    return None


def _fixes(ctx: CheckContext) -> list[Fix]:
    if ctx.torch.source == "conda":
        cmd = f'conda install -p "{ctx.env.prefix}" -c conda-forge --force-reinstall cudnn'
        return [Fix("conda", msg("TC312.fix.conda"), commands=(cmd,))]
    fixes = reinstall_fixes(ctx)
    if any(d.name.lower().startswith("nvidia-cudnn") for d in ctx.env.distributions):
        cmd = f"{python_command(ctx)} -m pip install --force-reinstall --no-deps nvidia-cudnn-cu12"
        fixes.append(Fix("pip", msg("TC312.fix.wheel"), commands=(cmd,)))
    return fixes


def run(ctx: CheckContext) -> Iterator[Finding]:
    from conda_torchcheck.loader.windows import version_tuple

    if ctx.torch.variant != "cuda":
        return
    graph = windows_graph(ctx)
    if graph is None or graph.process is None:
        return
    for libraries in cudnn_libraries():
        major = libraries.major
        main = _main_copy(ctx, graph, libraries.main)
        if main is None:
            continue
        main_version = graph.module_version(main)
        missing: list[str] = []
        mismatched: list[str] = []
        for sub in libraries.sublibraries:
            hit = _find(graph, main.parent, sub)
            if hit is None:
                missing.append(sub)
                continue
            theirs = graph.module_version(hit)
            # one cuDNN release ships every DLL with one FileVersion (CUDA-style: the release is in the last field)
            if main_version and theirs and version_tuple(theirs) != version_tuple(main_version):
                mismatched.append(f"{hit} ({theirs})")
        evidence = {
            "cudnn": f"{main} ({main_version or '?'})",
            "owner": owner_of(ctx, main) or "-",
            "searched": [str(main.parent)] + [p.shown for p in graph.process.default_dirs()],
        }
        if missing:
            evidence["missing"] = missing
            yield finding(
                "TC312",
                Severity.WARNING,
                major=major,
                main=str(main),
                count=len(missing),
                dlls=", ".join(missing),
                folder=str(main.parent),
                error=libraries.error.format(dll=missing[0]),
                evidence=evidence,
                fixes=_fixes(ctx),
            )
        elif mismatched:
            evidence["other_build"] = mismatched
            yield finding(
                "TC312",
                Severity.WARNING,
                variant="mismatch",
                major=major,
                main=str(main),
                version=main_version or "?",
                dlls=", ".join(mismatched),
                evidence=evidence,
                fixes=_fixes(ctx),
            )


CHECK = Check.declared(__name__, run)
