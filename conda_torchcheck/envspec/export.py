"""A reproducible environment.yml from an installed env (``conda export --format torchcheck``).

Two doors lead here: conda's ``Environment`` model (what ``conda export`` hands to an exporter plugin) and the
inventory's ``Environment`` (``-p PREFIX`` without conda). Both are reduced to :class:`ExportInput`, and one
writer turns that into text that ``spec fix`` would leave unchanged:

- the torch family as ``channel::name=version`` (plus the variant in the channel's form: ``pytorch-cuda`` /
  ``cpuonly`` on the pytorch channel, ``=cuda*`` and ``cuda-version`` on conda-forge);
- every other listed package pinned to its installed version (build strings when conda asked for them);
- channels in the order that reproduces the env, ending with ``nodefaults``;
- the pip section with the download.pytorch.org index of a pip torch's variant as its first line.

With ``conda export --from-history`` only what the user asked for is listed (pinned); without it, every
package, as conda's own exporter does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conda_torchcheck.envspec.intent import CONDA_TORCH, facts
from conda_torchcheck.envspec.matchspec import channel_name, index_url_for

#: packages that select or pin the torch variant: listed whenever installed, even with --from-history
VARIANT_PACKAGES = ("pytorch-cuda", "cpuonly", "cuda-version", "pytorch-gpu", "pytorch-cpu")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    build: str = ""
    channel: str = ""  # canonical channel name ("conda-forge", "pytorch", "defaults", a URL)


@dataclass
class ExportInput:
    name: str | None
    platform: str
    packages: list[Package]
    #: names the user asked for (history); None = list every package
    requested: list[str] | None = None
    #: requested specs carried build strings (conda export without --no-builds)
    with_builds: bool = False
    channels: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------------------
# from conda's Environment model (duck-typed, so tests need no conda)


def _channel_of(record: Any) -> str:
    channel = getattr(record, "channel", None)
    if channel is None:
        return ""
    for attr in ("canonical_name", "name"):
        value = getattr(channel, attr, None)
        if isinstance(value, str) and value:
            return channel_name(value) if value not in ("<unknown>", "@") else ""
    return channel_name(str(channel)) if str(channel) else ""


def _spec_name(spec: Any) -> str | None:
    if isinstance(spec, str):
        from conda_torchcheck.envspec.matchspec import SpecSyntaxError, parse_conda_spec

        try:
            return parse_conda_spec(spec).name
        except SpecSyntaxError:
            return None
    name = getattr(spec, "name", None)
    return str(name).lower() if name else None


def _spec_has_build(spec: Any) -> bool:
    if isinstance(spec, str):
        return spec.count("=") >= 2 and "==" not in spec.split("=", 1)[0]
    getter = getattr(spec, "get", None)
    if callable(getter):
        try:
            return bool(getter("build"))
        except Exception:
            return False
    return False


def input_from_conda(env: Any) -> ExportInput:
    """Read conda's ``conda.models.environment.Environment`` (or any object shaped like it)."""
    packages = [
        Package(str(r.name), str(r.version), str(getattr(r, "build", "") or ""), _channel_of(r))
        for r in getattr(env, "explicit_packages", None) or ()
    ]
    installed = {p.name for p in packages}
    requested_specs = list(getattr(env, "requested_packages", None) or ())
    names = [n for n in (_spec_name(s) for s in requested_specs) if n]
    with_builds = bool(requested_specs) and all(_spec_has_build(s) for s in requested_specs)
    # conda lists every installed package as "requested" unless --from-history was given
    requested = None if not names or set(names) >= installed else names
    config = getattr(env, "config", None)
    channels = [str(c) for c in (getattr(config, "channels", None) or ())]
    external = getattr(env, "external_packages", None) or {}
    pip = [str(x) for x in external.get("pip", [])] if isinstance(external, dict) else []
    return ExportInput(
        name=getattr(env, "name", None),
        platform=str(getattr(env, "platform", "") or ""),
        packages=packages,
        requested=requested,
        with_builds=with_builds,
        channels=channels,
        pip=pip,
        variables=dict(getattr(env, "variables", None) or {}),
    )


def input_from_inventory(env: Any, *, from_history: bool = True) -> ExportInput:
    """Read the inventory's Environment (conda-meta records and pip-installed dist-info)."""
    from conda_torchcheck.envspec.rewrite import installed_from_environment

    installed = installed_from_environment(env)
    packages = [Package(p.name, p.version, p.build, p.channel) for p in installed.conda.values()]
    requested = None
    if from_history:
        found: list[str] = []
        for rec in env.conda_records:
            for spec in rec.requested_specs:
                name = _spec_name(spec)
                if name and name not in found:
                    found.append(name)
        requested = found or None
    pip = [f"{p.name}=={p.version}" for p in installed.pip.values()]
    return ExportInput(name=env.name, platform=env.platform, packages=packages, requested=requested, pip=pip)


# ------------------------------------------------------------------------------------------------------------
# the writer


def _quote(value: str) -> str:
    from conda_torchcheck.envspec.textedit import render_scalar

    return render_scalar(value)


def _channel_order(inp: ExportInput, listed: list[Package]) -> list[str]:
    used: list[str] = []
    torch = next((p for p in listed if p.name == "pytorch"), None)
    if torch is not None and torch.channel:
        used.append(torch.channel)
        if torch.channel == "pytorch" and any(p.name == "pytorch-cuda" for p in listed):
            used.append("nvidia")
    present = {p.channel for p in inp.packages if p.channel and p.channel != "pypi"}
    for c in [channel_name(c) for c in inp.channels] + sorted(present):
        if c and c not in used and c in present | {"nvidia"} and c != "nodefaults":
            used.append(c)
    bases = {"conda-forge", *facts()["defaults"]["names"]}
    if used and any(c in bases for c in used):
        used.append("nodefaults")
    return used


def _dependency_text(p: Package, *, prefix: bool, build: bool, variant_build: str | None) -> str:
    head = f"{p.channel}::{p.name}" if prefix and p.channel else p.name
    if build and p.build:
        return f"{head}={p.version}={p.build}"
    if variant_build:
        return f"{head}={p.version}={variant_build}"
    return f"{head}={p.version}"


def _variant_build(p: Package) -> str | None:
    """``cuda*`` / ``cpu*`` for a conda-forge pytorch, so the export installs the same variant anywhere."""
    if p.name != "pytorch" or p.channel != "conda-forge":
        return None
    b = p.build.lower()
    if b.startswith("cuda") or "_cuda" in b:
        return facts()["conda_forge"]["cuda_build"]
    if b.startswith("cpu") or "_cpu" in b:
        return facts()["conda_forge"]["cpu_build"]
    return None


def _pip_lines(pip: Iterable[str]) -> list[str]:
    from conda_torchcheck.envspec.matchspec import parse_pip_line

    lines = list(pip)
    tag = None
    for line in lines:
        parsed = parse_pip_line(line)
        if parsed.name in ("torch", "torchvision", "torchaudio") and parsed.local_tag:
            tag = parsed.local_tag
            break
    if tag is None:
        return lines
    carried = facts()["pip"]
    only_torch = all(
        (parse_pip_line(x).name or "") in carried["index_carries"]
        or (parse_pip_line(x).name or "").startswith(tuple(carried["index_carries_prefixes"]))
        for x in lines
    )
    option = "--index-url" if only_torch else "--extra-index-url"
    return [f"{option} {index_url_for(tag)}", *lines]


def render(inp: ExportInput, *, header: bool = True) -> str:
    from conda_torchcheck import __version__
    from conda_torchcheck.messages import translate

    by_name = {p.name: p for p in inp.packages}
    if inp.requested is None:
        names = sorted(by_name)
    else:
        names = [n for n in inp.requested if n in by_name]
        for extra in VARIANT_PACKAGES:
            if extra in by_name and extra not in names:
                names.append(extra)
        if inp.pip and "pip" in by_name and "pip" not in names:
            names.append("pip")
    listed = [by_name[n] for n in names]
    # the torch family right after python, in a stable order
    order = {n: k for k, n in enumerate(("python", *CONDA_TORCH, *VARIANT_PACKAGES))}
    listed.sort(key=lambda p: (order.get(p.name, len(order)), names.index(p.name) if inp.requested else p.name))
    out: list[str] = []
    if header:
        out.append("# " + translate("envspec.cli.export_header", version=__version__, platform=inp.platform or "?"))
    if inp.name:
        out.append(f"name: {_quote(inp.name)}")
    channels = _channel_order(inp, listed)
    if channels:
        out.append("channels:")
        out.extend(f"  - {_quote(c)}" for c in channels)
    out.append("dependencies:")
    family = {*CONDA_TORCH, "libtorch", "pytorch-cuda", "cpuonly", "pytorch-mutex", "pytorch-gpu", "pytorch-cpu"}
    for p in listed:
        text = _dependency_text(
            p,
            prefix=p.name in family,
            build=inp.with_builds,
            variant_build=None if inp.with_builds else _variant_build(p),
        )
        out.append(f"  - {_quote(text)}")
    pip = _pip_lines(inp.pip)
    if pip:
        if "pip" not in by_name:
            out.append("  - pip")
        out.append("  - pip:")
        out.extend(f"      - {_quote(x)}" for x in pip)
    if inp.variables:
        out.append("variables:")
        out.extend(f"  {_quote(k)}: {json.dumps(str(v), ensure_ascii=False)}" for k, v in inp.variables.items())
    text = "\n".join(out) + "\n"
    return _with_problems(text) if header else text


def _with_problems(text: str) -> str:
    """An export describes the env as it is; when that env is itself inconsistent (pip torch over conda's,
    a mismatched triple), say so at the top instead of hiding it."""
    from conda_torchcheck.envspec.parse import parse_text
    from conda_torchcheck.envspec.rules import check_file
    from conda_torchcheck.findings import Severity
    from conda_torchcheck.messages import translate

    findings = [f for f in check_file(parse_text(text, "export")) if f.severity is Severity.ERROR]
    if not findings:
        return text
    lines = text.splitlines(keepends=True)
    notes = [
        "# " + translate("envspec.cli.export_problem", id=f.id, title=f.title.render()).replace("\n", " ") + "\n"
        for f in findings
    ]
    return "".join(lines[:1] + notes + lines[1:])


def export_environment(env: Any) -> str:
    """The exporter callable: conda's Environment → the text of a reproducible environment.yml."""
    return render(input_from_conda(env))
