"""TC610: Python outside what that torch supports."""

from __future__ import annotations

import re
from collections.abc import Iterator

from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import release_python_ok
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _wheel_python(ctx: RuleContext) -> Iterator[Finding]:
    """A torch-family wheel URL built for another CPython than the file's `python` pin: pip refuses it ("is not
    a supported wheel on this platform")."""
    i = ctx.intent
    minors = i.python_minors
    if not minors:
        return
    for name in ("torch", "torchvision", "torchaudio"):
        item = i.pip.get(name)
        wheel = item.line.wheel if item is not None else None
        m = re.fullmatch(r"cp(\d)(\d+)", wheel.python) if wheel is not None else None
        if item is None or wheel is None or m is None or wheel.abi == "abi3":
            continue
        built_for = f"{m.group(1)}.{m.group(2)}"
        if built_for in minors:
            continue
        yield finding(
            "TC610",
            Severity.ERROR,
            variant="wheel",
            evidence=ev(ctx, python=at(i.python), wheel=at(item), built_for=built_for),
            fixes=[Fix("file", msg("TC610.wheel.fix", built_for=built_for, python=", ".join(minors)))],
            entry=wheel.name + "-" + wheel.version,
            built_for=built_for,
            python=i.python.spec.version if i.python is not None and i.python.spec else "?",
        )


def _pypi_platforms(ctx: RuleContext) -> list[str | None]:
    from conda_torchcheck.knowledge import pypi

    return [p for os_ in sorted(ctx.intent.oses) for p in pypi.os_platforms(os_)] or [None]


def _pypi_verdict(ctx: RuleContext) -> bool | None:
    """For PyPI's own torch (an exact pin, no torch index): is there a wheel for some Python the file allows on the
    OS it is for? None when the torch is not PyPI's or its release is not in the records."""
    from conda_torchcheck.knowledge import pypi

    i = ctx.intent
    version = i.pypi_torch
    if version is None:
        return None
    verdicts = [
        pypi.has_wheel("torch", version, minor, plat)
        for minor in i.python_minors or ()
        for plat in _pypi_platforms(ctx)
    ]
    if not verdicts or any(v is None for v in verdicts):
        return None
    return any(verdicts)


def _pypi_wheels(ctx: RuleContext) -> Iterator[Finding]:
    """No wheel of PyPI's torch release for any Python the file allows on the OS it is for, by PyPI's records of
    that release's files."""
    from conda_torchcheck.knowledge import pypi

    i = ctx.intent
    torch = i.pip["torch"]
    version = i.pypi_torch or ""
    oses = i.oses
    platforms = _pypi_platforms(ctx)
    row = pypi.release("torch", version)
    have = sorted({t for p in platforms for t in (row.wheels.get(p, ()) if row and p else row.pythons if row else ())})
    yield finding(
        "TC610",
        Severity.ERROR,
        variant="pypi",
        evidence=ev(ctx, python=at(i.python), torch=at(torch), pypi_wheels=", ".join(have) or "-"),
        fixes=[Fix("file", msg("TC610.pypi.fix", torch=version, wheels=", ".join(have) or "-"))],
        torch=version,
        python=i.python.spec.version if i.python is not None and i.python.spec else "?",
        where=", ".join({"win": "Windows", "osx": "macOS", "linux": "Linux"}[o] for o in sorted(oses)) or "any OS",
    )


def python_range(ctx: RuleContext) -> Iterator[Finding]:
    i = ctx.intent
    if i.python is None or not i.python_minors:
        return
    yield from _wheel_python(ctx)
    res = i.resolution
    if res is not None and res.version is None and res.without_python is not None:
        yield finding(
            "TC610",
            Severity.ERROR,
            variant="frozen",
            evidence=ev(ctx, python=at(i.python), newest_match=res.without_python),
            fixes=[Fix("file", msg("TC610.frozen.fix", version=res.without_python or "?"))],
            python=i.python.spec.version if i.python.spec else i.python.text,
            version=res.without_python or "?",
        )
        return
    torch_version = i.torch_version
    release = torch_release(torch_version) if torch_version else None
    if release is None:
        return
    by_files = _pypi_verdict(ctx)
    if by_files is not None:
        # PyPI's own torch: the release's files decide (torch 1.13.1 has a cp311 wheel for Linux x86_64 only,
        # outside the 3.7-3.10 its release notes give)
        if by_files is False:
            yield from _pypi_wheels(ctx)
        return
    if release_python_ok(release, i.python_minors):
        return
    torch_dep = i.deps.get("pytorch") or i.misnamed_torch or i.pip.get("torch")
    yield finding(
        "TC610",
        Severity.ERROR,
        evidence=ev(
            ctx, python=at(i.python), torch=at(torch_dep) if torch_dep else None, supported=list(release.python)
        ),
        fixes=[Fix("file", msg("TC610.fix", low=release.python[0], high=release.python[1]))],
        python=i.python.spec.version if i.python.spec else i.python.text,
        torch=torch_version,
        low=release.python[0],
        high=release.python[1],
    )


RULE = Rule.declared(__name__, python_range)
