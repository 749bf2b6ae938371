"""The OS an environment file is for, from what the file itself says (knowledge/env_files.toml [file_platform]):
the rules ask it once, the same way (which conda subdirs publish a release, PyPI's Windows wheels, mkl on Linux)."""

from __future__ import annotations

import functools
import re

from conda_torchcheck.envspec.parse import EnvFile

OSES = ("win", "osx", "linux")


@functools.cache
def _table() -> dict:
    from conda_torchcheck.envspec.intent import facts

    return facts()["file_platform"]


def file_oses(file: EnvFile) -> frozenset[str]:
    """The OSes the file names, by any of its signs; empty when it names none (then the rules do not assume)."""
    table = _table()
    names = {d.name for d in file.deps}
    prefix = _prefix(file)
    # what a solve produced (an export's OS-only packages, a wheel's platform tag) or a lock file lists outweighs
    # what a name, a header comment or a prefix path suggests (an export whose prefix: is another machine's path)
    strong: set[str] = set()
    weak: set[str] = set(named_oses(file))
    pytorch_builds = [d.spec.build for d in file.deps if d.name == "pytorch" and d.spec is not None and d.spec.build]
    for os_ in OSES:
        if names & set(table["packages"][os_]):
            strong.add(os_)
        if names & set(table.get("weak_packages", {}).get(os_, ())):
            weak.add(os_)
        build_re = table.get("pytorch_build", {}).get(os_)
        if build_re and any(re.search(build_re, b) for b in pytorch_builds):
            strong.add(os_)
        if prefix and re.search(table["prefix"][os_], prefix):
            weak.add(os_)
    for subdir in _lock_platforms(file):
        strong.update(os_ for os_ in OSES if subdir in table["subdir"][os_])
    pip_names = {(item.line.name or "").lower() for item in file.pip or ()}
    for os_, listed in table.get("pip_packages", {}).items():
        if pip_names & set(listed):
            strong.add(os_)
    for item in file.pip or ():
        wheel = item.line.wheel
        if wheel is not None:
            strong.update(os_ for os_ in OSES if re.search(table["wheel"][os_], wheel.platform))
    return frozenset(strong or weak)


def os_only_packages(file: EnvFile) -> dict[str, list]:
    """{OS: the file's conda entries that only that OS's subdirs publish} ([file_platform] packages)."""
    table = _table()
    out: dict[str, list] = {}
    for dep in file.deps:
        for os_ in OSES:
            if dep.name in table["packages"][os_]:
                out.setdefault(os_, []).append(dep)
    return out


def named_oses(file: EnvFile) -> frozenset[str]:
    """The OSes the file's name, env name, header comment or folder (docker/) says it is for (weak signs)."""
    table = _table()
    path = file.path.replace("\\", "/").lower()
    stems = (path.rsplit("/", 1)[-1], (file.name or "").lower())
    header = [ln for ln in file.text.splitlines()[: table["header_lines"]] if ln.lstrip().startswith("#")]
    return frozenset(
        os_
        for os_ in OSES
        if any(re.search(table["name"][os_], stem) for stem in stems)
        or any(re.search(table["header"][os_], line, re.IGNORECASE) for line in header)
        or ((rx := table.get("folder", {}).get(os_)) is not None and re.search(rx, path))
    )


def subdirs(oses: frozenset[str]) -> tuple[str, ...]:
    table = _table()
    return tuple(s for os_ in OSES if os_ in oses for s in table["subdir"][os_])


def _prefix(file: EnvFile) -> str | None:
    root = file.root
    if root is None or type(root).__name__ != "MappingNode":
        return None
    for key, value in root.value:
        if str(getattr(key, "value", "")) == "prefix" and type(value).__name__ == "ScalarNode":
            return str(value.value)
    return None


def _lock_platforms(file: EnvFile) -> list[str]:
    root = file.root
    if root is None or type(root).__name__ != "MappingNode":
        return []
    for key, value in root.value:
        if str(getattr(key, "value", "")) == "platforms" and type(value).__name__ == "SequenceNode":
            return [str(v.value) for v in value.value if type(v).__name__ == "ScalarNode"]
    return []
