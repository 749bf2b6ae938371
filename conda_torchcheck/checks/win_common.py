"""Facts and fixes the Windows checks share (not a check itself: it is not listed in CHECK_MODULES)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Fix
from conda_torchcheck.inventory import fs
from conda_torchcheck.loader.graph import Dependency, Module
from conda_torchcheck.messages import msg, translate

ERROR_REASON = {126: "win.error.r126", 127: "win.error.r127", 193: "win.error.r193", 1114: "win.error.r1114"}
VC_RECOMMENDED = "14.42"
CUDA_PREFIXES = (
    "cudnn",
    "cublas",
    "cudart",
    "cufft",
    "curand",
    "cusparse",
    "cusolver",
    "nvrtc",
    "nvjitlink",
    "nvtoolsext",
    "zlibwapi",
    "nccl",
    "cupti",
    "caffe2_nvrtc",
    "nvfuser",
)


def windows_graph(ctx: CheckContext):
    """The Windows load graph of torch (None when torch is absent or the env is not Windows)."""
    from conda_torchcheck.loader.windows import WindowsLoadGraph

    graph = ctx.load_graph
    return graph if isinstance(graph, WindowsLoadGraph) else None


def error_line(graph, outcome) -> str:
    """What the user sees, as torch / Python words it (the reason in the report's language)."""
    if outcome is None or outcome.error is None:
        return ""
    reason = translate(ERROR_REASON.get(outcome.error, "win.error.r126"))
    if outcome.kind == "preload":
        return translate("win.error.preload", code=outcome.error, reason=reason, path=str(outcome.path))
    if outcome.kind == "extension":
        return translate("win.error.extension", reason=reason)
    return translate("win.error.file", code=outcome.error, reason=reason)


def first_outcome_with(graph, module_path: Path):
    """The first load (in the order torch makes them) whose dependency closure contains ``module_path``."""
    from conda_torchcheck.loader.windows import closure

    key = str(module_path)
    for outcome in graph.outcomes:
        if any(str(m.path) == key for m in closure(graph, outcome.path)):
            return outcome
    return None


def chain_names(chain: Iterable[Path]) -> list[str]:
    return [p.name for p in chain]


def searched_lines(dep: Dependency) -> list[str]:
    out = []
    for i, place in enumerate(dep.searched, 1):
        label = translate(f"tree.step.{place.step}")
        where = place.directory or "?"
        note = f" ({place.note})" if place.note else ""
        out.append(f"{i}. {label}: {where}{note}")
    return out


def python_command(ctx: CheckContext) -> str:
    exe = ctx.env.python.executable
    return f'"{exe}"' if exe else "python"


def pip_index(ctx: CheckContext) -> str:
    dist = ctx.torch.dist
    local = dist.local_version if dist is not None else None
    if local and (local.startswith("cu") or local == "cpu" or local.startswith("rocm") or local == "xpu"):
        return f" --index-url https://download.pytorch.org/whl/{local}"
    return ""


def reinstall_fixes(ctx: CheckContext) -> list[Fix]:
    t = ctx.torch
    prefix = ctx.env.prefix
    if t.source == "conda" and t.conda_record is not None:
        rec = t.conda_record
        names = [rec.name] + ([t.libtorch_record.name] if t.libtorch_record is not None else [])
        channel = rec.channel if rec.channel and "://" not in rec.channel else "conda-forge"
        cmd = f'conda install -p "{prefix}" -c {channel} --force-reinstall ' + " ".join(names)
        return [Fix("conda", msg("TC301.fix.reinstall_conda"), commands=(cmd,))]
    version = t.version or ""
    pin = f'"torch=={version}"' if version else "torch"
    cmd = f"{python_command(ctx)} -m pip install --force-reinstall --no-deps {pin}{pip_index(ctx)}"
    return [Fix("pip", msg("TC301.fix.reinstall_pip"), commands=(cmd,))]


def is_conda_like(ctx: CheckContext) -> bool:
    return ctx.env.layout in ("conda", "pixi")


def vc_fixes(
    ctx: CheckContext, graph, *, minimum: str = VC_RECOMMENDED, env_copy_wins: bool | None = None
) -> list[Fix]:
    """Fixes for a missing or old VC++ runtime that fit this env.

    In a conda env the runtime next to python.exe (vc14_runtime) is found before System32, so the conda package is
    the fix that always works and needs no administrator rights; the system redistributable helps only while the
    env has no copy of its own. A venv or python.org install can only use the system redistributable.
    """
    from conda_torchcheck.knowledge.windows import redist_url

    arch = ctx.env.python.arch or "x86_64"
    url = redist_url(arch)
    redist_arch = {"x86_64": "x64", "x86": "x86", "arm64": "ARM64"}.get(arch, arch)
    prefix = ctx.env.prefix
    spec = f'"vc14_runtime>={minimum}"'
    fixes: list[Fix] = []
    conda_base = None
    if ctx.env.layout == "venv" and ctx.env.base_prefix is not None:
        from conda_torchcheck.loader.windows import local_path

        base = local_path(ctx.env.base_prefix)
        if base is not None and fs.find_child(base, "conda-meta") is not None:
            conda_base = ctx.env.base_prefix
    if ctx.env.layout == "pixi":
        fixes.append(Fix("conda", msg("TC301.fix.vc_pixi"), commands=(f"pixi add {spec}",)))
    elif is_conda_like(ctx) or conda_base is not None:
        target = prefix if conda_base is None else conda_base
        fixes.append(
            Fix("conda", msg("TC301.fix.vc_conda"), commands=(f'conda install -p "{target}" -c conda-forge {spec}',))
        )
    if is_conda_like(ctx) or conda_base is not None:
        if env_copy_wins is None:
            env_copy_wins = _env_has_runtime(graph)
        if env_copy_wins:
            fixes.append(Fix("system", msg("TC302.fix.conda_only")))
        else:
            fixes.append(Fix("system", msg("TC301.fix.vc_redist_conda"), commands=(url,), needs_admin=True))
    else:
        fixes.append(Fix("system", msg("TC301.fix.vc_redist", arch=redist_arch), commands=(url,), needs_admin=True))
    return fixes


def _env_has_runtime(graph) -> bool:
    model = graph.process if graph is not None else None
    if model is None or model.app_dir is None:
        return False
    return fs.find_child(model.app_dir, "msvcp140.dll") is not None


def vc_origin_key(graph, path: Path | None, step: str | None) -> str:
    model = graph.process
    if path is None:
        return "TC302.origin.system"
    if model is not None and model.app_dir is not None and _same_dir(path.parent, model.app_dir):
        return "TC302.origin.app" if model.interpreter_mode == "none" else "TC302.origin.env"
    if model is not None and model.system_dir is not None and _same_dir(path.parent, model.system_dir):
        return "TC302.origin.system"
    if step in ("path", "cwd"):
        return "TC302.origin.fallback"
    return "TC302.origin.other"


def _same_dir(a: Path, b: Path) -> bool:
    return os.path.normcase(os.path.normpath(str(a))) == os.path.normcase(os.path.normpath(str(b)))


def owners(ctx: CheckContext) -> dict[str, str]:
    """normcase(absolute path) -> "conda: NAME VERSION (CHANNEL)" / "pip: NAME VERSION", for DLL files only."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        prefix = ctx.env.prefix
        for rec in ctx.env.conda_records:
            label = f"conda: {rec.name} {rec.version} ({rec.channel})"
            for rel in rec.files:
                if rel.lower().endswith((".dll", ".pyd")):
                    out.setdefault(os.path.normcase(str(prefix / rel)), label)
        for dist in ctx.env.distributions:
            if not dist.has_record:
                continue
            label = f"pip: {dist.raw_name} {dist.version}"
            for rel in record_paths(dist.record_path):
                if rel.lower().endswith((".dll", ".pyd")):
                    path = os.path.normpath(os.path.join(str(dist.site), rel))
                    out.setdefault(os.path.normcase(path), label)
        return out

    return ctx.memo("win.owners", build)


def owner_of(ctx: CheckContext, path: Path | None) -> str | None:
    if path is None:
        return None
    return owners(ctx).get(os.path.normcase(os.path.normpath(str(path))))


def record_paths(record: Path) -> list[str]:
    from conda_torchcheck.loader.windows import read_record

    return [row[0] for row in read_record(record)]


def modules_importing(graph, name: str) -> list[tuple[Module, Dependency]]:
    wanted = name.lower()
    return [(m, d) for m, d in graph.iter_edges() if d.name.lower() == wanted and d.kind != "delay-import"]
