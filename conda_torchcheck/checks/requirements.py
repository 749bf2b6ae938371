"""TC209: Python dependencies torch (or torchvision/torchaudio) declares that are missing or too old.

pip's ``--no-deps``, an interrupted install or a later ``pip uninstall`` leave torch without what its
METADATA requires. One of them (typing-extensions) is imported by ``import torch`` itself; the others break
features later (torch.compile needs sympy, jinja2 and filelock). Requirements are evaluated with the target
interpreter's markers, not this process's.
"""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks import commands as cmd
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.checks.facts import manager_of
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.inventory import fs
from conda_torchcheck.inventory.model import Distribution, Environment
from conda_torchcheck.inventory.names import normalize
from conda_torchcheck.knowledge.python_env import import_time_requirements, skipped_requirements
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.messages import msg

FAMILY = ("torch", "torchvision", "torchaudio")


def marker_environment(env: Environment) -> dict[str, str]:
    """PEP 508 marker values of the target interpreter (read from the inventory, not from this process)."""
    mm = env.python.major_minor or (3, 0)
    windows = env.os == "windows"
    machine = {
        ("windows", "x86_64"): "AMD64",
        ("windows", "x86"): "x86",
        ("windows", "arm64"): "ARM64",
        ("linux", "aarch64"): "aarch64",
        ("darwin", "arm64"): "arm64",
    }.get((env.os, env.python.arch or ""), env.python.arch or "")
    return {
        "python_version": f"{mm[0]}.{mm[1]}",
        "python_full_version": env.python.version or f"{mm[0]}.{mm[1]}.0",
        "sys_platform": {"windows": "win32", "linux": "linux", "darwin": "darwin"}[env.os],
        "platform_system": {"windows": "Windows", "linux": "Linux", "darwin": "Darwin"}[env.os],
        "platform_machine": machine,
        "os_name": "nt" if windows else "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


# name [extras] specifier ; marker  (also the old ``name (>=1.0)`` form)
_REQUIREMENT = LazyPattern(
    r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$"
)
_EXTRA = LazyPattern(r"\bextra\s*==")


def _applies(marker: str | None, env: Environment) -> bool:
    """Evaluate a PEP 508 marker for the target interpreter (parsed only when a requirement looks unmet)."""
    if not marker or not marker.strip():
        return True
    from packaging.markers import InvalidMarker, Marker

    try:
        return bool(Marker(marker).evaluate(marker_environment(env)))
    except (InvalidMarker, Exception):  # an unknown marker variable: do not guess
        return False


def unmet(env: Environment, dist: Distribution) -> list[tuple[str, str, str | None]]:
    """(requirement text, name, installed version or None) for each requirement the env does not satisfy.

    A healthy env needs no marker parsing: a requirement is only looked at closely when its distribution is
    missing or its version is outside the specifier (packaging's marker parser costs ~30 ms to import).
    """
    skip, skip_names = skipped_requirements()
    out = []
    for text in dist.requires:
        m = _REQUIREMENT.match(text)
        if m is None:
            continue
        name, spec_text, marker = normalize(m.group(1)), m.group(2).strip(), m.group(3)
        if name.startswith(skip) or name in skip_names or (marker and _EXTRA.search(marker)):
            continue  # another check's, or an optional extra
        installed = env.dist(name)
        if installed is not None:
            if not spec_text or _contains(spec_text, installed.version):
                continue
        if not _applies(marker, env):
            continue
        requirement = f"{m.group(1)}{spec_text}"
        out.append((requirement, name, installed.version if installed is not None else None))
    return out


#: the specifier most requirements are written with (``typing-extensions>=4.10.0``)
_AT_LEAST = LazyPattern(r">=(\d+(?:\.\d+)*)")


def _contains(spec_text: str, version: str) -> bool:
    """``SpecifierSet(spec_text).contains(version, prereleases=True)``, an invalid specifier counting as met.

    ``>=N.N`` of a version without a local label is answered here as packaging answers it (its fast path is the
    same comparison of the two parsed versions): importing packaging.specifiers compiles its specifier grammar,
    a few ms of every run whose torch lists such requirements."""
    at_least = _AT_LEAST.fullmatch(spec_text)
    if at_least is not None:
        from conda_torchcheck.knowledge.version import pep440

        have, floor = pep440(version), pep440(at_least.group(1))
        if have is not None and floor is not None and have.local is None:
            return have >= floor
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec_text).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True


def module_on_path(env: Environment, module: str) -> bool:
    """A top-level module or package importable from the env's active import path (metadata or not)."""
    for site in env.site_dirs:
        if site.active and (fs.exists(site.path / f"{module}.py") or fs.exists(site.path / module / "__init__.py")):
            return True
    return False


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    import_time = import_time_requirements("torch")
    markers = marker_environment(env)
    for family_name in FAMILY:
        dist = env.dist(family_name)
        if dist is None or not dist.requires:
            continue
        problems = unmet(env, dist)
        if not problems:
            continue
        fatal = family_name == "torch" and any(
            name in import_time and (have is not None or not module_on_path(env, import_time[name]))
            for _, name, have in problems
        )
        missing = [req for req, _, have in problems if have is None]
        old = [f"{req} (installed: {have})" for req, _, have in problems if have is not None]
        specs = " ".join(cmd.spec(req) for req, _, _ in problems)
        torch_dist = env.dist("torch")
        wants_other_torch = any(name == "torch" and have is not None for _, name, have in problems)
        if wants_other_torch and torch_dist is not None and cmd.nvidia_build(torch_dist.version):
            # installing what it declares would replace NVIDIA's own torch with PyPI's: build it for this torch
            fix = Fix(
                "pip",
                msg("TC209.fix.nvidia_build", package=dist.raw_name, torch=torch_dist.version),
                commands=(cmd.pip(env, f"uninstall -y {dist.raw_name}", dist=dist),),
            )
        elif manager_of(env, dist) == "conda":
            fix = Fix(
                "conda",
                msg("TC209.fix.conda", package=dist.raw_name),
                commands=(cmd.conda_install(env, [req for req, _, _ in problems]),),
            )
        else:
            fix = Fix(
                "pip",
                msg("TC209.fix.pip", package=dist.raw_name),
                commands=(cmd.pip(env, f"install {specs}", dist=dist),),
            )
        yield finding(
            "TC209",
            Severity.ERROR if fatal else Severity.WARNING,
            variant="import" if fatal else "later",
            package=f"{dist.raw_name} {dist.version}",
            requirements=", ".join(req for req, _, _ in problems),
            evidence={
                "package": f"{dist.raw_name} {dist.version} ({dist.metadata_dir})",
                **({"missing": missing} if missing else {}),
                **({"too old": old} if old else {}),
                "evaluated for": f"{markers['sys_platform']}, Python {markers['python_version']}",
            },
            fixes=[fix],
        )


CHECK = Check.declared(__name__, run)
