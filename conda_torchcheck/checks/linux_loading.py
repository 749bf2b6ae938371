"""TC401/TC402/TC406/TC903: what ld.so would fail on (or silently substitute) when ``import torch`` runs.

All facts come from the simulated import (``loader.linux``): which file each DT_NEEDED resolves to and why,
every place searched for a miss, and the version needs checked against the copy that actually wins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from conda_torchcheck.binaries.elf import ElfFile, read_elf
from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks import linux_common as common
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.knowledge.linux import gcc_for_symbol_version
from conda_torchcheck.loader import linux
from conda_torchcheck.loader.graph import Dependency
from conda_torchcheck.messages import msg

GLIBC_SONAMES = ("libc.so.", "libm.so.", "libpthread.so.", "libdl.so.", "librt.so.", "ld-linux", "ld64.so.")


def run(ctx: CheckContext) -> Iterator[Finding]:
    load = linux.torch_load(ctx)
    if load is None:
        return
    first = _first_fatal_error(load)
    yield from _missing(ctx, load, first)
    yield from _versions(ctx, load, first)
    yield from _substituted(ctx, load)
    yield from _unreadable(ctx, load)
    yield from _extension_missing(ctx)


def _extension_missing(ctx: CheckContext) -> Iterator[Finding]:
    """TC401 (extension): another package's extension module, imported after torch, needs a library that is
    not there (a libcudart.so of the CUDA it was built for, a torch library of another release)."""
    loaded = common.extension_load(ctx)
    if loaded is None:
        return
    load, imports, _misses = loaded
    by_label = {i.label: i for i in imports}
    for step in load.steps:
        ext = by_label.get(step.label)
        if ext is None or not step.misses:
            continue
        _requirer, dep = step.misses[0]
        library = os.path.basename(dep.name)
        message = _miss_message(dep.name, step)
        searched = common.describe_searched(dep.searched)
        yield finding(
            "TC401",
            Severity.ERROR,
            variant="extension",
            package=ext.package,
            extension=ext.path.name,
            extension_path=str(ext.path),
            library=library,
            searched="; ".join(searched) or "-",
            message=message,
            evidence={
                "package": ext.package,
                "extension": str(ext.path),
                "library": dep.name,
                "needed_by": [str(r.path) if r is not None else str(ext.path) for r, _d in step.misses[:1]],
                "missing": common.dedupe(d.name for _r, d in step.misses),
                "searched": searched,
                "loader_message": message,
                "load_step": step.label,
            },
            fixes=[common.extension_fix(ctx, ext.package)],
        )


def _first_fatal_error(load: linux.LinuxLoad) -> str | None:
    for step in load.steps:
        if step.fatal and step.error:
            return step.error
    return load.first_error


# --- TC401 ------------------------------------------------------------------------------------------------


def _missing(ctx: CheckContext, load: linux.LinuxLoad, first: str | None) -> Iterator[Finding]:
    seen: dict[str, list[tuple[linux.LinuxLoad, object, Dependency, linux.LoadStep]]] = {}
    for step in load.steps:
        for requirer, dep in step.misses:
            seen.setdefault(dep.name, []).append((load, requirer, dep, step))
    for name, hits in seen.items():
        _load, requirer, dep, step = hits[0]
        requirers = common.dedupe(str(r.path) if r is not None else "python" for _l, r, _d, _s in hits)
        foreign = bool(dep.searched) and dep.searched[-1].step == "unknown-system"
        message = _miss_message(name, step)
        searched = common.describe_searched(dep.searched)
        needed_by = requirers[0]
        chain = (
            common.chain(load.graph, requirer.path, name)
            if requirer is not None
            else [str(p) for p in load.graph.roots] + [name]
        )
        library = os.path.basename(name)
        fatal = any(s.fatal for _l, _r, _d, s in hits)
        severity = Severity.WARNING if (foreign or not fatal) else Severity.ERROR
        evidence = {
            "library": name,
            "needed_by": requirers,
            "chain": chain,
            "searched": searched,
            "loader_message": message,
            "reported_first": first == message or (first is not None and first.startswith(name + ":")),
            "load_step": step.label,
        }
        if not fatal:
            evidence["note"] = "torch ignores this failure (proactive CUDA preloading)"
        elsewhere = _in_other_site_dirs(ctx, library)
        fixes = _missing_fixes(ctx, library)
        if elsewhere:
            evidence["in_another_site_packages"] = [str(p) for p in elsewhere]
            fixes.insert(0, _split_fix(ctx, library, elsewhere[0]))
        yield finding(
            "TC401",
            severity,
            variant="foreign" if foreign else None,
            library=library,
            needed_by=needed_by,
            searched="; ".join(searched) or "-",
            message=message,
            evidence=evidence,
            fixes=fixes,
        )


def _in_other_site_dirs(ctx: CheckContext, library: str) -> list[Path]:
    """Copies of ``library`` in an NVIDIA wheel's folder of another site-packages of this env than torch's (pip
    put torch into platlib, lib64/..., and the pure-Python-tagged nvidia-* wheels into purelib, lib/...)."""
    torch_dir = ctx.torch.package_dir
    if torch_dir is None:
        return []
    torch_site = os.path.normpath(torch_dir.parent)
    out: list[Path] = []
    for site in ctx.env.site_dirs:
        if not site.active or os.path.normpath(site.path) == torch_site:
            continue
        out.extend(sorted((site.path / "nvidia").glob(f"*/lib/{library}")))
    return out


def _split_fix(ctx: CheckContext, library: str, found: Path) -> Fix:
    folder = str(found.parent)
    assert ctx.torch.package_dir is not None
    return Fix(
        "env",
        msg(
            "TC401.fix.site_split",
            library=library,
            found=str(found),
            torch_site=str(ctx.torch.package_dir.parent),
        ),
        commands=(f'export LD_LIBRARY_PATH="{folder}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"',),
    )


def _miss_message(name: str, step: linux.LoadStep) -> str:
    if step.error and (step.error.startswith(name) or step.error.startswith("ModuleNotFoundError")):
        return step.error
    return f"{name}: cannot open shared object file: No such file or directory"


def _missing_fixes(ctx: CheckContext, library: str) -> list[Fix]:
    env = ctx.env
    fixes: list[Fix] = []
    if common.ships_with_torch(ctx, library) or library == "libtorch_global_deps.so" or library.startswith("_C."):
        fixes.append(common.reinstall_torch_fix(ctx, msg("TC401.fix.reinstall_torch")))
    req = common.nvidia_requirement_for(ctx, library)
    if req is not None:
        fixes.append(
            common.pip_install_fix(
                ctx,
                str(req).split(";")[0].strip(),
                msg("TC401.fix.nvidia_wheel", library=library, requirement=str(req).split(";")[0].strip()),
            )
        )
    package = common.conda_package_for(library)
    if package and common.is_conda_env(ctx) and req is None:
        fixes.append(
            Fix("conda", msg("TC401.fix.conda_package", library=library), commands=(cmd.conda_install(env, [package]),))
        )
    apt = common.apt_package_for(library)
    if apt and not fixes:
        fixes.append(
            Fix(
                "system",
                msg("TC401.fix.system_package", library=library),
                commands=(f"sudo apt-get install {apt}",),
                needs_admin=True,
            )
        )
    if not fixes:
        fixes.append(Fix("system", msg("TC401.fix.find_provider", library=library)))
    return fixes


# --- TC402 ------------------------------------------------------------------------------------------------


def _versions(ctx: CheckContext, load: linux.LinuxLoad, first: str | None) -> Iterator[Finding]:
    grouped: dict[tuple[str, str], list[tuple[linux.LoadedObject, str, linux.LoadedObject, linux.LoadStep]]] = {}
    for step in load.steps:
        for obj, file, version, target in step.version_failures:
            grouped.setdefault((str(target.path), version), []).append((obj, file, target, step))
    for (target_path, version), hits in grouped.items():
        obj, file, target, step = hits[0]
        assert target.elf is not None
        family = _family(version)
        highest = _highest(target.elf, family) or "-"
        dep = next((d for d in obj.module.dependencies if d.name == file), None)
        how = common.describe_resolution(
            load.graph, dep.resolution.found_by if dep and dep.resolution else None, target.path
        )
        message = f"{target_path}: version `{version}' not found (required by {obj.path})"
        alternatives = _alternatives(ctx, load, obj, file, version, target)
        required_by = common.dedupe(str(o.path) for o, _f, _t, _s in hits)
        fatal = any(s.fatal for _o, _f, _t, s in hits)
        extra = {}
        env_copy = _env_copy(ctx, file, version, target, alternatives)
        if env_copy:
            extra["env_copy"] = env_copy
        yield finding(
            "TC402",
            Severity.ERROR if fatal else Severity.WARNING,
            version=version,
            library=file,
            path=target_path,
            required_by=required_by[0],
            how=how,
            family=family,
            highest=highest,
            message=message,
            evidence={
                "version": version,
                "library": file,
                "required_by": required_by,
                "loaded_copy": target_path,
                "found_by": how,
                "loaded_copy_newest": highest,
                "chain": common.chain(load.graph, obj.path, target_path),
                "copies_that_provide_it": [f"{p} ({where})" for p, where in alternatives],
                "loader_message": message,
                "reported_first": first == message,
                **extra,
            },
            fixes=_version_fixes(ctx, load, file, version, target, alternatives, highest),
        )


def _family(version: str) -> str:
    head = version.rstrip("0123456789.")
    return head.rstrip("_") if head else version


def _version_key(version: str) -> tuple:
    tail = version[len(_family(version)) :].lstrip("_")
    v = parse_version(tail)
    return (v,) if v is not None else (tail,)


def _highest(elf: ElfFile, family: str) -> str | None:
    same = [v for v in elf.version_defs if _family(v) == family]
    if not same:
        return None
    try:
        return max(same, key=_version_key)
    except TypeError:
        return same[-1]


def _alternatives(
    ctx: CheckContext,
    load: linux.LinuxLoad,
    obj: linux.LoadedObject,
    file: str,
    version: str,
    target: linux.LoadedObject,
) -> list[tuple[str, str]]:
    """Other copies of ``file`` on this machine that do define ``version``, and where they are."""
    places: list[tuple[str, str]] = []
    env_lib = ctx.env.prefix / "lib"
    places.append((str(env_lib / file), "env lib"))
    for d in load.search.ld_library_path:
        places.append((os.path.join(d, file), "LD_LIBRARY_PATH"))
    for entry in (obj.elf.runpath if obj.elf else ()) or ():
        places.append((os.path.join(load.ldso.expand(entry, obj), file), "DT_RUNPATH"))
    if load.search.cache is not None:
        cached = load.search.cache.lookup(file)
        if cached:
            places.append((cached, "ld.so.cache"))
    if load.search.system_known:
        for d in load.search.layout.default_dirs:
            places.append((os.path.join(d, file), "system"))
    out: list[tuple[str, str]] = []
    seen = {os.path.realpath(target.path)}
    for path, where in places:
        real = os.path.realpath(path)
        if real in seen or not os.path.isfile(path):
            continue
        seen.add(real)
        info = read_elf(path)
        if isinstance(info, ElfFile) and info.defines_version(version):
            out.append((path, where))
    return out


def _version_fixes(
    ctx: CheckContext,
    load: linux.LinuxLoad,
    file: str,
    version: str,
    target: linux.LoadedObject,
    alternatives: list[tuple[str, str]],
    highest: str,
) -> list[Fix]:
    env = ctx.env
    fixes: list[Fix] = []
    place = common.original_place(load.graph, target.path)
    step = place.step if place else ""
    directory = place.directory if place else None
    better = ", ".join(p for p, _w in alternatives) or "-"
    if step == linux.STEP_LD_LIBRARY_PATH and alternatives:
        fixes.append(
            _remove_llp_fix(
                ctx, directory or "", msg("TC402.fix.remove_llp", directory=directory, version=version, better=better)
            )
        )
    if file.startswith(GLIBC_SONAMES):
        fixes.append(Fix("system", msg("TC402.fix.glibc", version=version, highest=highest)))
        return fixes
    if file.startswith("libstdc++.so") and _family(version) in ("GLIBCXX", "CXXABI"):
        gcc = gcc_for_symbol_version(version)
        in_env = _inside(target.path, env.prefix)
        env_copy = [p for p, where in alternatives if where == "env lib"]
        if common.is_conda_env(ctx) and in_env:
            spec = f"libstdcxx>={_short(gcc)}" if gcc else "libstdcxx"
            fixes.append(
                Fix(
                    "conda",
                    msg("TC402.fix.libstdcxx", gcc=gcc or "?", version=version),
                    commands=(cmd.conda_install(env, [spec]),),
                )
            )
        elif common.is_conda_env(ctx) and env_copy:
            preload = os.path.join(cmd.prefix_text(env), "lib", file)
            fixes.append(
                Fix(
                    "env",
                    msg("TC402.fix.preload_env_copy", version=version, better=env_copy[0]),
                    commands=(
                        cmd.conda_install(env, ["pytorch"]),
                        cmd.conda_env_var(env, f'LD_PRELOAD="{preload}"'),
                    ),
                )
            )
        elif common.is_conda_env(ctx):
            spec = f"libstdcxx>={_short(gcc)}" if gcc else "libstdcxx"
            preload = os.path.join(cmd.prefix_text(env), "lib", file)
            fixes.append(
                Fix(
                    "conda",
                    msg("TC402.fix.libstdcxx", gcc=gcc or "?", version=version),
                    commands=(cmd.conda_install(env, [spec]), cmd.conda_env_var(env, f'LD_PRELOAD="{preload}"')),
                )
            )
        else:
            owner = dpkg_owner(target.path, ctx.host.system_root)
            if owner is None or owner:
                apt = owner or common.apt_package_for(file)
                fixes.append(
                    Fix(
                        "system",
                        msg("TC402.fix.upgrade_library", path=str(target.path), version=version),
                        commands=(f"sudo apt-get install --only-upgrade {apt}",) if apt else (),
                        needs_admin=True,
                    )
                )
            elif step == "ld_library_path":
                if not any(f.kind == "env" for f in fixes):  # apt does not own it: only the search path helps
                    fixes.append(
                        _remove_llp_fix(
                            ctx, directory or "", msg("TC402.fix.unowned_copy", path=str(target.path), version=version)
                        )
                    )
            else:
                fixes.append(Fix("file", msg("TC402.fix.unowned_copy", path=str(target.path), version=version)))
        return fixes
    if common.ships_with_torch(ctx, file) and not _inside(target.path, ctx.torch.package_dir):
        fixes.append(common.reinstall_torch_fix(ctx, msg("TC402.fix.reinstall_torch", library=file)))
    req = common.nvidia_requirement_for(ctx, file)
    if req is not None:
        text = str(req).split(";")[0].strip()
        fixes.append(common.pip_install_fix(ctx, text, msg("TC401.fix.nvidia_wheel", library=file, requirement=text)))
    if not fixes:
        package = common.conda_package_for(file)
        commands = (cmd.conda_install(env, [package]),) if package and common.is_conda_env(ctx) else ()
        fixes.append(
            Fix(
                "conda" if commands else "system",
                msg("TC402.fix.upgrade_library", path=str(target.path), version=version),
                commands=commands,
            )
        )
    return fixes


def dpkg_owner(path: os.PathLike | str, system_root: os.PathLike | str | None = None) -> str | None:
    """The Debian package that owns ``path`` by dpkg's file lists (``/var/lib/dpkg/info/*.list``): its name;
    ``""`` when dpkg is there and no package lists the file; None when this system has no dpkg database.

    The lists name files as installed (``/usr/lib/...``), so the merged-/usr spellings of the path count too.
    """
    root = str(system_root or "/")
    info = os.path.join(root, "var", "lib", "dpkg", "info")
    if not os.path.isdir(info):
        return None
    text = str(path)
    real = os.path.realpath(text)
    wanted = set()
    for p in (text, real):
        if root != "/" and p.startswith(root.rstrip("/") + "/"):
            p = p[len(root.rstrip("/")) :]
        wanted.add(p)
        wanted.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
    try:
        names = sorted(n for n in os.listdir(info) if n.endswith(".list"))
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(info, name), encoding="utf-8", errors="replace") as handle:
                if any(line.rstrip("\n") in wanted for line in handle):
                    return name[: -len(".list")].split(":", 1)[0]
        except OSError:
            continue
    return ""


def _remove_llp_fix(ctx: CheckContext, directory: str, summary) -> Fix:
    value = ctx.host.get("LD_LIBRARY_PATH") or ""
    kept = [p for p in value.split(":") if p and os.path.normpath(p) != os.path.normpath(directory)]
    command = f'export LD_LIBRARY_PATH="{":".join(kept)}"' if kept else "unset LD_LIBRARY_PATH"
    return Fix("env", summary, commands=(command,))


def _short(gcc: str | None) -> str:
    if not gcc:
        return ""
    parts = gcc.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 and parts[2] == "0" else gcc


def _env_copy(
    ctx: CheckContext, file: str, version: str, target: linux.LoadedObject, alternatives: list[tuple[str, str]]
) -> str | None:
    """Whose copy failed: the env's own (it is too old), or another one while the env's copy provides the version
    (the env's copy lost the search: LD_LIBRARY_PATH, or a pip torch that does not search the env's lib/)."""
    prefix = ctx.env.prefix
    if _inside(target.path, prefix):
        return f"the env's own {file} is the copy that loads, and it is too old"
    providing = [p for p, _where in alternatives if _inside(Path(p), prefix)]
    if providing:
        return f"the env's {file} provides {version} ({providing[0]}) but lost the search to {target.path}"
    return None


def _inside(path: Path, folder: Path | None) -> bool:
    if folder is None:
        return False
    try:
        Path(path).relative_to(folder)
        return True
    except ValueError:
        return False


# --- TC406 ------------------------------------------------------------------------------------------------


def _substituted(ctx: CheckContext, load: linux.LinuxLoad) -> Iterator[Finding]:
    lib_dir = ctx.torch.lib_dir
    if lib_dir is None:
        return
    reported: set[str] = set()
    failed_versions = {(str(t.path), v) for s in load.steps for _o, _f, v, t in s.version_failures}
    for module, dep in load.graph.iter_edges():
        name = dep.name
        if name in reported or dep.resolution is None or dep.resolution.path is None:
            continue
        if _inside(dep.resolution.path, lib_dir) or fs.exists(lib_dir / name):
            continue
        if name not in common.torch_record_libs(ctx):  # torch's RECORD is read only for a library loaded elsewhere
            continue
        target = load.ldso.object_at(dep.resolution.path)
        if target is None or target.elf is None:
            continue
        needs = sorted({n.version for o in load.ldso.every_object if o.elf is not None for n in o.elf.needs_from(name)})
        if any((str(target.path), v) in failed_versions for v in needs):
            continue  # TC402 reports it
        reported.add(name)
        how = common.describe_place(dep.resolution.found_by)
        yield finding(
            "TC406",
            Severity.INFO,
            library=name,
            path=str(dep.resolution.path),
            expected=str(lib_dir / name),
            how=how,
            versions=", ".join(needs) or "-",
            evidence={
                "library": name,
                "expected": str(lib_dir / name),
                "loaded_copy": str(dep.resolution.path),
                "found_by": how,
                "needed_by": str(module.path),
                "versions_needed": needs,
                "versions_defined": list(target.elf.version_defs),
            },
            fixes=[common.reinstall_torch_fix(ctx, msg("TC406.fix"))],
        )


# --- TC903 ------------------------------------------------------------------------------------------------


def _unreadable(ctx: CheckContext, load: linux.LinuxLoad) -> Iterator[Finding]:
    for module in load.graph.modules.values():
        if not module.unreadable or module.path.name == "python" and not fs.exists(module.path):
            continue
        if load.ldso.main is not None and module.path == load.ldso.main.path:
            continue  # the interpreter: the inventory reports it
        yield finding(
            "TC903",
            Severity.ERROR,
            path=str(module.path),
            format="ELF",
            detail=module.unreadable,
            evidence={
                "file": module.path,
                "problem": module.unreadable,
                "chain": [str(p) for p in load.graph.chain_to(module.path)],
            },
            fixes=[common.reinstall_torch_fix(ctx, msg("TC401.fix.reinstall_torch"))]
            if _inside(module.path, ctx.torch.package_dir)
            else [],
        )


CHECK = Check.declared(__name__, run)
