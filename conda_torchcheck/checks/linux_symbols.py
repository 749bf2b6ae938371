"""TC403: undefined symbols that no library in the lookup scope defines (``undefined symbol: X``).

ld.so binds every symbol when Python imports an extension (RTLD_NOW), so one missing definition fails the
import. The lookup scope of an object dlopened by torch is the global scope (the Python executable and its
libraries, LD_PRELOAD, libraries loaded with RTLD_GLOBAL before it) followed by that dlopen's own closure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks import linux_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.loader import linux
from conda_torchcheck.messages import msg

# symbol prefix -> the SONAME prefix of the library that normally defines it
_PROVIDERS = (
    ("nccl", "libnccl.so"),
    ("__nvJitLink", "libnvJitLink.so"),
    ("nvJitLink", "libnvJitLink.so"),
    ("cublasLt", "libcublasLt.so"),
    ("cublas", "libcublas.so"),
    ("cudnn", "libcudnn"),
    ("cusparseLt", "libcusparseLt.so"),
    ("cusparse", "libcusparse.so"),
    ("cufft", "libcufft"),
    ("curand", "libcurand.so"),
    ("cusolver", "libcusolver"),
    ("nvrtc", "libnvrtc"),
    ("cupti", "libcupti.so"),
    ("cuda", "libcudart.so"),
    ("iJIT_", "libmkl"),
    ("mkl_", "libmkl"),
    ("GOMP_", "libgomp"),
    ("omp_", "libgomp"),
)


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = linux.torch_load(ctx)
    if load is None:
        return
    misses = linux.torch_symbol_misses(ctx)
    from conda_torchcheck.checks.mkl_ijit import conflict

    if conflict(ctx) is not None:  # TC105 names this cause (from conda-meta) and shows these symbols as proof
        misses = [m for m in misses if not m.name.startswith("iJIT_")]
    # one finding per requiring library and expected provider: a library from another build misses hundreds
    # of symbols for one reason
    grouped: dict[tuple[str, str], list[linux.SymbolMiss]] = {}
    providers: dict[tuple[str, str], linux.LoadedObject | None] = {}
    for miss in misses:
        provider = _provider(load, miss)
        key = (str(miss.required_by), str(provider.path) if provider is not None else (miss.version_file or ""))
        grouped.setdefault(key, []).append(miss)
        providers[key] = provider
    steps = {s.label: s for s in load.steps}
    for key, hits in grouped.items():
        first = hits[0]
        provider = providers[key]
        step = steps.get(first.step)
        fatal = step.fatal if step is not None else True
        version_text = f"@{first.version} ({first.version_file})" if first.version else ""
        message = f"{first.required_by}: undefined symbol: {first.name}" + (
            f", version {first.version}" if first.version else ""
        )
        yield finding(
            "TC403",
            Severity.ERROR if fatal else Severity.WARNING,
            variant="many" if len(hits) > 1 else None,
            symbol=first.name,
            count=len(hits) - 1,
            version_text=version_text,
            required_by=str(first.required_by),
            scope_count=len(first.scope),
            step=first.step,
            message=message,
            evidence={
                "symbol": first.name,
                "version": first.version,
                "version_from": first.version_file,
                "symbols": [h.name + (f"@{h.version}" if h.version else "") for h in hits],
                "count": len(hits),
                "required_by": [str(first.required_by)],
                "chain": common.chain(load.graph, first.required_by),
                "expected_provider": str(provider.path) if provider is not None else None,
                "provider_found_by": _how(load, provider),
                "lookup_scope": [str(p) for p in first.scope],
                "loader_message": message,
            },
            fixes=_fixes(ctx, load, first, provider),
        )
    yield from _extension_symbols(ctx)


def _extension_symbols(ctx: CheckContext) -> Iterator[Finding]:
    """TC403 (extension): another package's extension module, imported after torch, binds a symbol that no
    library in its lookup scope defines (built for another torch release, C++ ABI or CUDA)."""
    loaded = common.extension_load(ctx)
    if loaded is None:
        return
    load, imports, misses = loaded
    by_label = {i.label: i for i in imports}
    grouped: dict[str, list[linux.SymbolMiss]] = {}
    for miss in misses:
        grouped.setdefault(miss.step, []).append(miss)
    for label, hits in grouped.items():
        ext = by_label[label]
        first = hits[0]
        message = f"{first.required_by}: undefined symbol: {first.name}" + (
            f", version {first.version}" if first.version else ""
        )
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        yield finding(
            "TC403",
            Severity.ERROR,
            variant="extension",
            package=ext.package,
            extension=ext.path.name,
            extension_path=str(ext.path),
            symbol=first.name,
            more=more,
            message=message,
            evidence={
                "package": ext.package,
                "extension": str(ext.path),
                "symbol": first.name,
                "symbols": [h.name + (f"@{h.version}" if h.version else "") for h in hits],
                "count": len(hits),
                "required_by": [str(first.required_by)],
                "lookup_scope": [str(p) for p in first.scope],
                "loader_message": message,
                "load_step": label,
            },
            fixes=[common.extension_fix(ctx, ext.package)],
        )


def _provider(load: linux.LinuxLoad, miss: linux.SymbolMiss) -> linux.LoadedObject | None:
    """The loaded library that ought to define the symbol: the version's file, else by symbol prefix."""
    objects = load.ldso.every_object
    if miss.version_file:
        for obj in objects:
            if miss.version_file in obj.names:
                return obj
    for prefix, soname in _PROVIDERS:
        if miss.name.startswith(prefix):
            for obj in objects:
                if obj.path.name.startswith(soname) or any(n.startswith(soname) for n in obj.names):
                    return obj
    return None


def _how(load: linux.LinuxLoad, provider: linux.LoadedObject | None) -> str | None:
    if provider is None:
        return None
    place = common.original_place(load.graph, provider.path)
    return common.describe_place(place) if place is not None else None


def _fixes(
    ctx: CheckContext, load: linux.LinuxLoad, miss: linux.SymbolMiss, provider: linux.LoadedObject | None
) -> list[Fix]:
    env = ctx.env
    fixes: list[Fix] = []
    if miss.name == "iJIT_NotifyEvent" or miss.name.startswith("iJIT_"):
        commands = [cmd.conda_install(env, ["mkl<2024.1"], channel=None)] if common.is_conda_env(ctx) else []
        commands.append(cmd.conda_install(env, ["pytorch"]) if common.is_conda_env(ctx) else "")
        fixes.append(Fix("conda", msg("TC403.fix.mkl"), commands=tuple(c for c in commands if c)))
        return fixes
    if provider is not None:
        found_by = common.original_place(load.graph, provider.path)
        if found_by is not None and found_by.step == "ld_library_path":
            value = ctx.host.get("LD_LIBRARY_PATH") or ""
            kept = [
                p for p in value.split(":") if p and os.path.normpath(p) != os.path.normpath(found_by.directory or "")
            ]
            command = f'export LD_LIBRARY_PATH="{":".join(kept)}"' if kept else "unset LD_LIBRARY_PATH"
            fixes.append(
                Fix(
                    "env",
                    msg("TC403.fix.remove_llp", path=str(provider.path), directory=found_by.directory),
                    commands=(command,),
                )
            )
        req = common.nvidia_requirement_for(ctx, provider.path.name) or next(
            (common.nvidia_requirement_for(ctx, n) for n in provider.names if common.nvidia_requirement_for(ctx, n)),
            None,
        )
        if req is not None:
            text = str(req).split(";")[0].strip()
            fixes.append(
                common.pip_install_fix(
                    ctx,
                    text,
                    msg("TC403.fix.nvidia_pin", library=provider.path.name, path=str(provider.path), requirement=text),
                )
            )
        if fixes:
            return fixes
    package = ctx.torch.package_dir
    if package is not None and str(miss.required_by).startswith(str(package) + os.sep) and miss.version is None:
        # torch's own library misses an unversioned symbol: its files come from different builds
        fixes.append(common.reinstall_torch_fix(ctx, msg("TC403.fix.reinstall_torch")))
        return fixes
    library = provider.path.name if provider is not None else (miss.version_file or "?")
    fixes.append(
        Fix(
            "system",
            msg(
                "TC403.fix.upgrade_library",
                library=library,
                required_by=miss.required_by.name,
                path=str(provider.path) if provider is not None else "-",
            ),
        )
    )
    return fixes


CHECK = Check.declared(__name__, run)
