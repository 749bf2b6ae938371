"""What the loading checks of Linux (TC4xx) and macOS (TC45x) share: the chain that led to a library, the
library files torch's own package lists, and how to reinstall torch (the command does not depend on the OS)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Fix
from conda_torchcheck.loader.graph import LoadGraph
from conda_torchcheck.messages import Text


def chain(graph: LoadGraph, path: Path | None, last: str | None = None) -> list[str]:
    """``python3.11 → _C.cpython-311….so → libtorch_python.so [→ last]`` as paths; from the graph's roots when
    ``path`` is None (the library the loader could not resolve)."""
    out = [str(p) for p in graph.chain_to(path)] if path is not None else [str(r) for r in graph.roots]
    if last is not None:
        out.append(last)
    return out


def torch_record_libs(ctx: CheckContext, is_library: Callable[[str], bool]) -> frozenset[str]:
    """File names under torch/lib that torch's own package lists: its pip RECORD, and the files of its conda
    records that ``is_library`` accepts (a conda pytorch keeps its libraries in ``<prefix>/lib``)."""

    def compute() -> frozenset[str]:
        names: set[str] = set()
        dist = ctx.torch.dist
        if dist is not None and dist.has_record:
            from conda_torchcheck.inventory.dists import record_paths

            for path in record_paths(dist, under="torch/lib"):
                parts = path.replace("\\", "/").split("/")
                if len(parts) == 3 and parts[0] == "torch" and parts[1] == "lib":
                    names.add(parts[2])
        for rec in (ctx.torch.conda_record, ctx.torch.libtorch_record):
            if rec is None:
                continue
            for f in rec.files:
                if "/" in f and is_library(f):
                    names.add(f.rsplit("/", 1)[1])
        return frozenset(names)

    return ctx.memo(f"torch_record_libs:{ctx.env.os}", compute)


def reinstall_torch_fix(ctx: CheckContext, summary: Text) -> Fix:
    """Reinstall exactly the torch that is there, from where it came (pip index or conda channel)."""
    torch = ctx.torch
    env = ctx.env
    if torch.source in ("conda",) and torch.conda_record is not None:
        specs = [cmd.exact_conda_spec(torch.conda_record)]
        if torch.libtorch_record is not None:
            specs.append(cmd.exact_conda_spec(torch.libtorch_record))
        return Fix(
            "conda", summary, commands=(cmd.conda_install(env, specs, channel=None, extra=("--force-reinstall",)),)
        )
    version = torch.dist.version if torch.dist is not None else torch.version
    target = f'"torch=={version}"' if version else "torch"
    local = torch.dist.local_version if torch.dist is not None else None
    index = f" --index-url {cmd.pip_index_url(local)}" if local else ""
    command = cmd.pip(env, f"install --force-reinstall --no-deps {target}{index}", dist=torch.dist)
    return Fix("pip", summary, commands=(command,))


def is_conda_env(ctx: CheckContext) -> bool:
    return ctx.env.layout in ("conda", "pixi")
