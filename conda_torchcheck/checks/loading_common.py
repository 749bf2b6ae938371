"""What the loading checks of Linux (TC4xx) and macOS (TC45x) share: the chain that led to a library, and the
library files torch's own package lists."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.loader.graph import LoadGraph


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
            from conda_torchcheck.inventory.dists import read_record_file

            for path, _digest, _size in read_record_file(dist):
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
