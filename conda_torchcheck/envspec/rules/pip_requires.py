"""TC621: a pip pin that the pinned torch's own wheel refuses. torch's wheels on PyPI pin their dependencies
exactly (torch 2.1.0: triton==2.1.0 and the nvidia-*-cu12 releases of its CUDA, on Linux x86_64), as their METADATA
says (knowledge/pypi_wheels.toml, read from the wheels themselves); a file that pins one of them to another
release asks pip for a set it cannot install ("ResolutionImpossible")."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

#: the environment torch's markers are read in: the Linux x86_64 machine its nvidia-*/triton requirements are for
_LINUX_X86_64 = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64", "os_name": "posix"}


def pip_requires(ctx: RuleContext) -> Iterator[Finding]:
    from packaging.markers import InvalidMarker, Marker
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import canonicalize_name

    from conda_torchcheck.knowledge import pypi
    from conda_torchcheck.knowledge.version import parse_version

    i = ctx.intent
    version = i.pypi_torch
    if version is None:
        return  # PyPI's own torch only: the torch index's +cuXXX wheels carry other requirements
    if i.oses and "linux" not in i.oses:
        return  # the markers leave these requirements out on Windows and macOS
    torch = i.pip["torch"]
    row = pypi.release("torch", version)
    if row is None or not row.requires:
        return
    wanted = {name: (spec, marker) for name, spec, marker in row.requires if name != "torch"}
    for item in ctx.file.pip_requirements():
        name = canonicalize_name(item.line.name or "")
        pinned = item.line.exact
        if name not in wanted or not pinned:
            continue
        spec, marker = wanted[name]
        have = parse_version(pinned)
        if have is None:
            continue
        try:
            if marker and not Marker(marker).evaluate({**_LINUX_X86_64, "python_version": _python(i)}):
                continue
            if SpecifierSet(spec).contains(have, prereleases=True):
                continue
        except (InvalidMarker, InvalidSpecifier):
            continue
        yield finding(
            "TC621",
            Severity.ERROR,
            evidence=ev(ctx, torch=at(torch), entry=at(item), torch_requires=f"{name}{spec}", source=row.requires_from),
            fixes=[Fix("file", msg("TC621.fix", package=name, spec=spec, torch=version))],
            entry=item.text,
            torch=version,
            requires=f"{name}{spec}",
        )


def _python(i) -> str:
    minors = i.python_minors or ()
    return minors[0] if len(minors) == 1 else "3.11"


RULE = Rule.declared(__name__, pip_requires)
