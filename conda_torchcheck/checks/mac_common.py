"""Facts and fixes the macOS loading checks (TC45x) share: who ships a dylib, how to reinstall torch."""

from __future__ import annotations

from conda_torchcheck.checks import loading_common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.loading_common import chain  # noqa: F401 - the checks reach it through this module
from conda_torchcheck.findings import Fix
from conda_torchcheck.loader.graph import SearchPlace
from conda_torchcheck.messages import Text


def describe_place(place: SearchPlace) -> str:
    """``LC_RPATH '/x/libc10.dylib' (no such file; @loader_path/lib of _C.so)``: dyld's step, path, reason."""
    text = place.step
    if place.directory:
        text += f" '{place.directory}'"
    if place.note:
        text += f" ({place.note})"
    return text


def torch_record_libs(ctx: CheckContext) -> frozenset[str]:
    """File names under torch/lib that torch's own package lists (pip RECORD or conda records)."""
    return loading_common.torch_record_libs(ctx, lambda f: f.endswith(".dylib"))


def ships_with_torch(ctx: CheckContext, name: str) -> bool:
    leaf = name.rsplit("/", 1)[-1]
    return leaf in torch_record_libs(ctx) or (
        ctx.torch.package_dir is not None and leaf.startswith(("libtorch", "libc10", "libshm", "libcaffe2", "_C."))
    )


def reinstall_torch_fix(ctx: CheckContext, summary: Text) -> Fix:
    from conda_torchcheck.checks.linux_common import reinstall_torch_fix as generic

    # the reinstall command does not depend on the OS (conda spec or pip ==version), only the summary does
    return generic(ctx, summary)


def is_conda_env(ctx: CheckContext) -> bool:
    return ctx.env.layout in ("conda", "pixi")


def host_macos(ctx: CheckContext) -> tuple[str | None, str]:
    from conda_torchcheck.loader.macos import search_context

    search = ctx.memo("macos_search", lambda: search_context(ctx.env, ctx.host))
    return search.macos, search.macos_source
