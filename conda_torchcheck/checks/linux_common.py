"""Facts and fixes the Linux loading checks (TC4xx) share: who ships a library, how to reinstall torch."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks import loading_common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.loading_common import (  # noqa: F401 - the checks reach them through this module
    chain,
    is_conda_env,
    reinstall_torch_fix,
)
from conda_torchcheck.findings import Fix
from conda_torchcheck.inventory.names import normalize
from conda_torchcheck.knowledge.linux import apt_package_for as apt_package_for
from conda_torchcheck.knowledge.linux import conda_package_for as conda_package_for
from conda_torchcheck.knowledge.linux import nvidia_base_for as nvidia_base_for
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.loader.graph import LoadGraph, SearchPlace
from conda_torchcheck.messages import Text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.requirements import Requirement


def describe_place(place: SearchPlace) -> str:
    text = place.step
    if place.directory:
        text += f" {place.directory}"
    if place.note:
        text += f" ({place.note})"
    return text


def describe_searched(places: Sequence[SearchPlace]) -> list[str]:
    return [describe_place(p) for p in places]


def original_place(graph: LoadGraph, path: Path) -> SearchPlace | None:
    """How ``path`` was found when it was first loaded (skipping later "already-loaded" reuses)."""
    fallback = None
    for _module, dep in graph.iter_edges():
        res = dep.resolution
        if res is None or res.path != path:
            continue
        if res.found_by.step != "already-loaded":
            return res.found_by
        fallback = fallback or res.found_by
    return fallback


def describe_resolution(graph: LoadGraph, place: SearchPlace | None, path: Path) -> str:
    """``runpath /x (DT_RUNPATH of libfoo.so)``; for a reused object also how it was first found."""
    if place is None:
        return "?"
    text = describe_place(place)
    if place.step == "already-loaded":
        first = original_place(graph, path)
        if first is not None and first.step != "already-loaded":
            text += "; first found by " + describe_place(first)
    return text


def torch_platform_requirements(ctx: CheckContext) -> list[Requirement]:
    """torch's Requires-Dist lines whose markers hold on this env's platform (Linux, its machine)."""
    return ctx.memo("linux_torch_requirements", lambda: _platform_requirements(ctx, _torch_requires(ctx)))


def torch_nvidia_requirements(ctx: CheckContext) -> list[Requirement]:
    """The requirements of :func:`torch_platform_requirements` named ``nvidia-*``, the only ones the loading
    checks ask about. A line whose name cannot normalise to ``nvidia-...`` is not parsed, so a torch without
    NVIDIA pins (a CPU build) never imports the requirement parser."""

    def compute() -> list[Requirement]:
        return _platform_requirements(ctx, [line for line in _torch_requires(ctx) if _NVIDIA_NAME.match(line)])

    return ctx.memo("linux_torch_nvidia_requirements", compute)


#: how a requirement whose name normalises to ``nvidia-...`` starts (a superset: packaging parses the rest)
_NVIDIA_NAME = LazyPattern(r"\s*nvidia[-_.]", re.IGNORECASE)


def _torch_requires(ctx: CheckContext) -> tuple[str, ...]:
    dist = ctx.torch.dist
    return () if dist is None else tuple(dist.requires)


def _platform_requirements(ctx: CheckContext, lines: Sequence[str]) -> list[Requirement]:
    """The requirements among ``lines`` whose markers hold on this env's platform (Linux, its machine)."""
    if not lines:
        return []
    from packaging.requirements import InvalidRequirement, Requirement

    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "ppc64": "ppc64le"}.get(
        ctx.env.python.arch or "x86_64", "x86_64"
    )
    py = ctx.env.python.version or "3.11"
    environment = {
        "platform_system": "Linux",
        "sys_platform": "linux",
        "platform_machine": machine,
        "os_name": "posix",
        "python_version": ".".join(py.split(".")[:2]),
        "python_full_version": py,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    out = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        try:
            if req.marker is not None and not req.marker.evaluate(environment):
                continue
        except Exception:  # an unknown marker variable: keep the requirement rather than guess
            pass
        out.append(req)
    return out


def nvidia_requirement_for(ctx: CheckContext, soname: str) -> Requirement | None:
    """The torch pin of the NVIDIA wheel that ships ``soname`` (``nvidia-nccl-cu12==2.21.5``), if any."""
    found = nvidia_base_for(soname)
    if found is None:
        return None
    base = found[0]
    requirements = torch_nvidia_requirements(ctx) if base.startswith("nvidia-") else torch_platform_requirements(ctx)
    for req in requirements:
        name = normalize(req.name)
        if name == base or re.fullmatch(re.escape(base) + r"-cu\d+", name):
            return req
    return None


def torch_record_libs(ctx: CheckContext) -> frozenset[str]:
    """File names under torch/lib that torch's own package lists (pip RECORD or conda records)."""
    return loading_common.torch_record_libs(
        ctx, lambda f: f.rsplit("/", 1)[0].endswith(("torch/lib", "lib")) and ".so" in f
    )


def ships_with_torch(ctx: CheckContext, name: str) -> bool:
    return name in torch_record_libs(ctx) or (
        ctx.torch.lib_dir is not None and name.startswith(("libtorch", "libc10", "libshm", "libcaffe2"))
    )


def pip_install_fix(ctx: CheckContext, requirement: str, summary: Text) -> Fix:
    return Fix("pip", summary, commands=(cmd.pip(ctx.env, f'install "{requirement}"', dist=ctx.torch.dist),))


def dedupe(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


# --- extensions of other packages, imported after torch ---------------------------------------------------

#: at most this many extension modules are simulated per env (each costs a dlopen of its closure)
MAX_EXTENSIONS = 64
EXTENSION_STEP = "import {package} after torch: dlopen({name}, RTLD_LOCAL)"
_TORCH_LIBS = LazyPattern(r"^lib(?:c10|torch)[\w.-]*\.so")
#: a Python extension module (``_C.cpython-311-x86_64-linux-gnu.so``, ``_ext.abi3.so``, ``ops.so``); ``lib*.so``
#: files are libraries a package may load only in some cases (bitsandbytes ships one per CUDA version)
_EXTENSION = LazyPattern(r"^(?!lib)[A-Za-z_]\w*(?:\.cpython-(?P<tag>\d+t?)[^.]*|\.abi3)?\.so$")


class ExtensionImport:
    """Another package's extension module as Python imports it once torch is imported."""

    __slots__ = ("package", "path", "label")

    def __init__(self, package: str, path: Path, label: str) -> None:
        self.package = package
        self.path = path
        self.label = label


def _torch_extensions(ctx: CheckContext) -> list[tuple[str, Path]]:
    """(package, .so) of every distribution that requires torch or whose modules link to torch's libraries."""
    from conda_torchcheck.binaries.elf import ElfFile, read_elf
    from conda_torchcheck.inventory.dists import record_paths

    out: list[tuple[str, Path]] = []
    torch_dir = ctx.torch.package_dir
    for dist in ctx.env.distributions:
        if dist.name in ("torch", "triton") or dist.name.startswith("nvidia-") or not dist.has_record:
            continue
        requires_torch = None  # asked once the package has an extension module
        for rel in record_paths(dist, mentioning=".so"):
            if not rel.endswith(".so") or rel.startswith(("torch/", "../")):
                continue
            m = _EXTENSION.match(rel.rsplit("/", 1)[-1])
            tag = ctx.env.python.tag
            if m is None or (m.group("tag") and tag and m.group("tag") != tag):
                continue  # not a module, or one for another Python (never imported here)
            path = dist.site / rel
            if torch_dir is not None and path.parent == torch_dir:
                continue
            info = read_elf(path)
            if not isinstance(info, ElfFile):
                continue
            if requires_torch is None:
                requires_torch = _requires_torch(dist)
            if requires_torch or any(_TORCH_LIBS.match(n) for n in info.needed):
                out.append((dist.raw_name, path))
            if len(out) >= MAX_EXTENSIONS:
                return out
    return out


def _requires_torch(dist) -> bool:
    """Whether one of ``dist``'s requirements names torch (only a line holding "torch" is parsed: a name that
    normalises to ``torch`` is those five letters in some case)."""
    return any(_requirement_name(r) == "torch" for r in dist.requires if "torch" in r.lower())


def _requirement_name(text: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return normalize(Requirement(text).name)
    except InvalidRequirement:
        return None


def extension_load(ctx: CheckContext):
    """A second simulated ``import torch`` followed by importing every torch extension of other packages (each
    its own RTLD_LOCAL dlopen, as Python imports extension modules): (load, extension imports, symbol misses of
    those imports). None when torch does not load or no package has extensions. Computed once per context."""

    def compute():
        from conda_torchcheck.loader import linux

        extensions = _torch_extensions(ctx)
        if not extensions:
            return None
        load = linux.simulate_torch_import(ctx)
        if load is None or load.first_error is not None:
            return None  # torch itself fails: its own findings come first
        imports = []
        for package, path in extensions:
            label = EXTENSION_STEP.format(package=package, name=path.name)
            load.ldso.dlopen(path, label, rtld_global=False, fatal=True)
            imports.append(ExtensionImport(package, path, label))
        labels = {i.label for i in imports}
        misses = [m for m in linux.check_symbols(load) if m.step in labels]
        return load, imports, misses

    return ctx.memo("linux_extension_load", compute)


def extension_fix(ctx: CheckContext, package: str) -> Fix:
    """Reinstall ``package`` built for the torch (and CUDA) of this env."""
    from conda_torchcheck.messages import msg

    t = ctx.torch
    return Fix(
        "pip",
        msg("TC401.fix.extension", package=package, torch=t.version or "?", cuda=t.cuda_version or "none (CPU build)"),
    )
