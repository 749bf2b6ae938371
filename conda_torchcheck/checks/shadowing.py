"""TC205: torch in the user site (PEP 370) that this interpreter really reads. TC206: PYTHONPATH or .pth
entries holding torch or another environment's site-packages; in the working directory python starts in (live,
or ``--cwd``), a torch folder or a user file named like a module ``import torch`` imports (org.py, typing.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import PIP_FAMILY, conda_state_vars
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.fs import find_child
from conda_torchcheck.inventory.model import Environment, SiteDir
from conda_torchcheck.knowledge.python_env import torch_import_modules
from conda_torchcheck.messages import msg


def torch_package_in(env: Environment, directory: Path) -> Path | None:
    found = find_child(directory, "torch", case_insensitive=env.is_windows)
    if found is not None and fs.is_dir(found) and fs.exists(found / "__init__.py"):
        return found
    return None


def _family_in(env: Environment, site: SiteDir) -> list[str]:
    out = []
    for name in PIP_FAMILY:
        for dist in env.dists(name):
            if dist.site == site.path:
                out.append(f"{dist.raw_name} {dist.version} ({dist.metadata_dir.name})")
    return out


def _env_has_torch(ctx: CheckContext) -> bool:
    env = ctx.env
    if env.record("pytorch") is not None:
        return True
    for site in env.site_dirs:
        if site.kind == "env" and (
            torch_package_in(env, site.path) or any(d.site == site.path for d in env.dists("torch"))
        ):
            return True
    return False


def _user_site(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    for site in env.site_dirs:
        if site.kind != "user" or not site.active:
            continue
        package = torch_package_in(env, site.path)
        family = _family_in(env, site)
        if package is None and not any(f.startswith("torch ") for f in family):
            continue
        shadows = _env_has_torch(ctx)
        if env.layout == "store" and not shadows:
            # the Microsoft Store package's install folder is read-only: its user site is where pip installs
            continue
        names = sorted({f.split(" ", 1)[0].lower() for f in family} or {"torch"})
        fixes = [Fix("pip", msg("TC205.fix_remove"), commands=(cmd.pip(env, "uninstall -y " + " ".join(names)),))]
        if env.layout in ("conda", "pixi"):
            fixes.append(Fix("env", msg("TC205.fix_isolate"), commands=(cmd.conda_env_var(env, "PYTHONNOUSERSITE=1"),)))
        yield finding(
            "TC205",
            # the user site comes before site-packages on sys.path: its torch is the one imported, another
            # torch build or release than the env's own
            Severity.ERROR if shadows else Severity.WARNING,
            variant="shadow" if shadows else "only",
            site=str(site.path),
            python=env.python.version or "?",
            evidence={
                "user site": site.path,
                "torch package": package,
                "distributions": family or [],
                "env's own torch": "yes" if shadows else "no",
                "PYTHONNOUSERSITE": ctx.host.get("PYTHONNOUSERSITE") or "not set",
            },
            fixes=fixes,
        )


def _is_site_packages_of_other_prefix(env: Environment, path: Path) -> bool:
    if path.name.lower() not in ("site-packages", "dist-packages"):
        return False
    try:
        path.relative_to(env.prefix)
        return False
    except ValueError:
        return True


def _pythonpath_fix(ctx: CheckContext, bad: list[str]) -> Fix:
    env = ctx.env
    sep = ";" if env.is_windows else ":"
    rest = [p for p in ctx.host.path_list("PYTHONPATH", sep) if p not in bad]
    if env.is_windows:
        command = f"set PYTHONPATH={sep.join(rest)}"
    else:
        command = f'export PYTHONPATH="{sep.join(rest)}"' if rest else "unset PYTHONPATH"
    commands = [command]
    if "PYTHONPATH" in conda_state_vars(env):
        commands.append(f"conda env config vars unset {cmd.conda_target(env)} PYTHONPATH")
    return Fix("env", msg("TC206.fix_pythonpath"), commands=tuple(commands))


def _editable_torch(env: Environment, directory: Path) -> bool:
    """torch installed in development mode from ``directory`` (PEP 660 direct_url.json or an .egg-link)."""
    for dist in env.dists("torch"):
        info = dist.direct_url or {}
        dir_info = info.get("dir_info") if isinstance(info, dict) else None
        if isinstance(dir_info, dict) and dir_info.get("editable"):
            return True
    for site in env.site_dirs:
        link = site.path / "torch.egg-link"
        if site.kind == "env" and fs.is_file(link):
            try:
                first = fs.read_text(link, fs.SMALL_LIMIT).splitlines()[:1]
            except OSError:
                continue
            if first and Path(first[0].strip()) == directory:
                return True
    return False


def _looks_like_checkout(directory: Path) -> bool:
    return fs.is_file(directory / "setup.py") and fs.is_dir(directory / "torch" / "csrc")


def _pythonpath(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    for site in env.site_dirs:
        if site.kind not in ("pythonpath", "pth") or not site.active:
            continue
        if site.kind == "pythonpath":
            yield from _pythonpath_modules(ctx, site)
        package = torch_package_in(env, site.path)
        family = _family_in(env, site)
        foreign_site = _is_site_packages_of_other_prefix(env, site.path)
        if package is None and not family and not foreign_site:
            continue
        if site.kind == "pth" and not foreign_site and _editable_torch(env, site.path):
            continue  # `pip install -e` / `setup.py develop` of a torch checkout: the developer's own build
        evidence: dict[str, object] = {"entry": site.path}
        if site.kind == "pth":
            evidence[".pth file"] = site.note
        if package is not None:
            evidence["torch package"] = package
            if _looks_like_checkout(site.path):
                evidence["source checkout"] = "setup.py + torch/csrc"
        if family:
            evidence["distributions"] = family
        holds_torch = package is not None or any(f.startswith("torch ") for f in family)
        if site.kind == "pth":
            variant = "pth"
            pth = cmd.native_path(env, site.note)
            fixes = [Fix("file", msg("TC206.fix_pth", pth=pth), commands=())]
        else:
            # another env's site-packages is that env's packages run by this python, torch or not; "torch" is
            # a folder of its own providing torch (a source checkout, a copied package)
            variant = "foreign_site" if foreign_site else "torch" if holds_torch else "foreign_site"
            fixes = [_pythonpath_fix(ctx, [str(site.path)])]
        # a PYTHONPATH entry comes before site-packages: its torch is the one imported; a .pth folder comes
        # after it, and its torch is imported only where the env has none of its own
        loads = holds_torch and (site.kind == "pythonpath" or not _env_has_torch(ctx))
        yield finding(
            "TC206",
            Severity.ERROR if loads else Severity.WARNING,
            variant=variant,
            entry=str(site.path),
            pth=cmd.native_path(env, site.note) if site.note else "",
            evidence=evidence,
            fixes=fixes,
        )


def _cwd(ctx: CheckContext) -> Iterator[Finding]:
    """The directory python starts in: this process's own (a live check), or the one given with ``--cwd`` (an
    env examined from elsewhere knows no working directory otherwise, so nothing is said then)."""
    cwd = ctx.host.cwd
    if cwd is None or ctx.env.isolated:
        # an embedded Python's ._pth implies isolated mode: neither the script's folder nor the working
        # directory is put on sys.path (CPython Modules/getpath.py: safe_path)
        return
    if any(s.path == cwd for s in ctx.env.site_dirs):
        return
    yield from _cwd_modules(ctx, cwd)
    package = torch_package_in(ctx.env, cwd)
    if package is None or package == ctx.torch.package_dir:
        return
    evidence: dict[str, object] = {"working directory": cwd, "torch package": package}
    if _looks_like_checkout(cwd):
        evidence["source checkout"] = "setup.py + torch/csrc"
    yield finding("TC206", Severity.WARNING, variant="cwd", entry=str(cwd), evidence=evidence)


def _shadowing_modules(directory: Path) -> list[Path]:
    """Files and packages in ``directory`` named like a module that ``import torch`` itself imports."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    names = torch_import_modules()
    shadows = []
    for entry in entries:
        stem = entry.stem if entry.suffix == ".py" and fs.is_file(entry) else None
        if stem is None and fs.is_dir(entry) and fs.is_file(entry / "__init__.py"):
            stem = entry.name
        # a torch.py (a user's script named after what it imports) is imported in place of torch itself; a
        # torch folder is TC206's own variant
        if stem in names or (stem == "torch" and entry.suffix == ".py"):
            shadows.append(entry)
    return shadows


def _module_shadows(variant: str, folder: Path, where: str, fixes: Callable[[str], list[Fix]]) -> Iterator[Finding]:
    """TC206.<variant>: ``folder`` holds files named like modules ``import torch`` imports (``where`` names the
    folder in the evidence; ``fixes`` gets the file names)."""
    shadows = _shadowing_modules(folder)
    if not shadows:
        return
    files = ", ".join(p.name for p in shadows)
    modules = ", ".join(p.stem for p in shadows)
    # on PYTHONPATH (first on sys.path whatever the working directory) a torch.py is what `import torch` gets
    hides_torch = variant == "pythonpath_module" and any(p.name == "torch.py" for p in shadows)
    yield finding(
        "TC206",
        Severity.ERROR if hides_torch else Severity.WARNING,
        variant=variant,
        entry=str(folder),
        files=files,
        modules=modules,
        evidence={where: folder, "files": [str(p) for p in shadows], "modules": modules},
        fixes=fixes(files),
    )


def _pythonpath_modules(ctx: CheckContext, site: SiteDir) -> Iterator[Finding]:
    """A PYTHONPATH folder holding a module named like one ``import torch`` imports: PYTHONPATH comes before the
    standard library on sys.path, so that file wins (z035: PYTHONPATH or a start inside site-packages/torch puts
    torch's own random.py before the standard library's). .pth folders come after it and cannot do that."""
    yield from _module_shadows(
        "pythonpath_module", site.path, "PYTHONPATH entry", lambda _files: [_pythonpath_fix(ctx, [str(site.path)])]
    )


def _cwd_modules(ctx: CheckContext, cwd: Path) -> Iterator[Finding]:
    """User files in the working directory named like a module that ``import torch`` itself imports."""
    yield from _module_shadows(
        "cwd_module", cwd, "working directory", lambda files: [Fix("file", msg("TC206.fix_rename", files=files))]
    )


def run(ctx: CheckContext) -> Iterator[Finding]:
    yield from _user_site(ctx)
    yield from _pythonpath(ctx)
    yield from _cwd(ctx)


CHECK = Check.declared(__name__, run)
