"""Root causes: findings that follow from one cause become one finding for the cause, with the others as its
consequences (an old libstdc++ on LD_LIBRARY_PATH is one cause, not six TC402 and a TC404).

The relations are data keyed by finding id (``CONSEQUENCES``): a consequence joins its cause when the two
share a join key computed from their evidence. ``LOADED_FOREIGN_TORCH`` says which findings mean that a
library of another torch build or release loads into the process, which is an error on every OS whatever
severity the check gave it. Kept apart from the checks' own declarations so that a finding-spec registry can
take it in later.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conda_torchcheck.findings import Finding, Severity

#: evidence of one finding -> the keys that tie it to others (empty: ties to nothing)
JoinKeys = Callable[[Mapping[str, Any]], Iterable[str]]


def field(name: str) -> JoinKeys:
    """The evidence value ``name`` (a path or a name) as the join key."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        value = evidence.get(name)
        return (os.path.normpath(str(value)),) if value not in (None, "", []) else ()

    return keys


def present(*names: str) -> JoinKeys:
    """Each of ``names`` that is an evidence key (TC104 keys its evidence by the mismatched package names)."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        return tuple(n for n in names if n in evidence)

    return keys


def package_name(name: str) -> JoinKeys:
    """The package a finding is about, from an evidence value such as ``"torchvision 0.29.0 (/path)"``."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        value = str(evidence.get(name) or "")
        return (value.split(" ", 1)[0].lower(),) if value else ()

    return keys


def torch_record(evidence: Mapping[str, Any]) -> Iterable[str]:
    """``torch`` when the unreadable conda record is one of torch's own (``pytorch-2.5.1-<build>.json``)."""
    from conda_torchcheck.inventory.torch import TORCH_FAMILY_CONDA

    stem = os.path.basename(str(evidence.get("file") or "")).removesuffix(".json")
    parts = stem.rsplit("-", 2)
    return ("torch",) if len(parts) == 3 and parts[0] in TORCH_FAMILY_CONDA else ()


def folder_named(name: str, value: str) -> JoinKeys:
    """``value`` when the evidence path ``name`` is a folder named ``value`` (``.../site-packages/torch``)."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        path = str(evidence.get(name) or "").rstrip("/\\")
        return (value,) if path and os.path.basename(path.replace("\\", "/")) == value else ()

    return keys


def listed(name: str) -> JoinKeys:
    """Each item of the evidence list ``name`` (the finding ids an import test's failure was traced to)."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        value = evidence.get(name)
        return tuple(os.path.normpath(str(v)) for v in value) if isinstance(value, (list, tuple)) else ()

    return keys


def first_folder(name: str) -> JoinKeys:
    """The folder of the first path in the evidence list ``name`` (torch/lib for torch's own libraries)."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        value = evidence.get(name)
        if isinstance(value, (list, tuple)) and value:
            return (os.path.dirname(os.path.normpath(str(value[0]))),)
        return ()

    return keys


def torch_folders(*names: str) -> JoinKeys:
    """The ``torch`` package folders that the evidence paths ``names`` lie in (a value, a list of values, or
    search places as ``"path /x/torch/lib"``): a library of that torch, or a place searched for one."""

    def keys(evidence: Mapping[str, Any]) -> Iterable[str]:
        out: list[str] = []
        for name in names:
            value = evidence.get(name)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                text = str(item or "").split(" (", 1)[0]
                step, _, rest = text.partition(" ")
                # a search place names its step first ("path /x/torch/lib", "runpath /x"): the path follows
                path = rest if rest and "/" not in step and "\\" not in step else text
                parts = os.path.normpath(path).split(os.sep)
                if "torch" in parts[1:]:
                    out.append(os.sep.join(parts[: len(parts) - parts[::-1].index("torch")]))
        return tuple(dict.fromkeys(out))

    return keys


def always(key: str) -> JoinKeys:
    return lambda _evidence: (key,)


#: a relation whose cause is any finding: its join key is the cause's id
ANY = "*"


@dataclass(frozen=True)
class Consequence:
    """``consequence`` follows from ``cause`` (ANY: any finding, keyed by its id) when their join keys meet."""

    cause: str
    consequence: str
    cause_keys: JoinKeys
    consequence_keys: JoinKeys
    why: str


CONSEQUENCES: tuple[Consequence, ...] = (
    Consequence(
        "TC404",
        "TC402",
        field("loaded_copy"),
        field("loaded_copy"),
        "the copy LD_LIBRARY_PATH puts first is the one that lacks the symbol versions",
    ),
    Consequence(
        "TC402",
        "TC402",
        field("loaded_copy"),
        field("loaded_copy"),
        "one loaded copy lacking several symbol versions is one cause",
    ),
    Consequence(
        "TC404",
        "TC401",
        field("loaded_copy"),
        listed("needed_by"),
        "the copy LD_PRELOAD or LD_LIBRARY_PATH puts in the process needs libraries of its own torch",
    ),
    Consequence(
        "TC404",
        "TC403",
        field("loaded_copy"),
        listed("lookup_scope"),
        "the copy LD_LIBRARY_PATH puts first is in the lookup scope that lacks the symbols",
    ),
    Consequence(
        "TC403",
        "TC403",
        first_folder("required_by"),
        first_folder("required_by"),
        "libraries of one folder (torch/lib) that lack each other's symbols are files of different builds",
    ),
    Consequence(
        "TC104",
        "TC401",
        present("torchvision", "torchaudio"),
        field("package"),
        "an extension built for another torch needs that torch's libraries",
    ),
    Consequence(
        "TC104",
        "TC209",
        present("torchvision", "torchaudio"),
        package_name("package"),
        "a companion built for another torch declares that torch as its requirement",
    ),
    Consequence(
        "TC901",
        "TC100",
        torch_record,
        always("torch"),
        "torch's conda record is unreadable, not absent",
    ),
    Consequence(
        "TC901",
        "TC204",
        torch_record,
        folder_named("package", "torch"),
        "torch's files lack metadata because their conda record is unreadable (a pip reinstall would fight conda)",
    ),
    Consequence(
        "TC206",
        "TC401",
        field("torch package"),
        torch_folders("library", "searched"),
        "the torch that PYTHONPATH puts first lacks the libraries of a built torch (a source checkout, a copy)",
    ),
    Consequence(
        "TC206",
        "TC204",
        field("torch package"),
        field("package"),
        "the torch folder on PYTHONPATH has no installer metadata because no installer put it there",
    ),
    Consequence(
        ANY,
        "TC701",
        always(""),
        listed("confirmed_by"),
        "the import test failed the way that finding says it would",
    ),
)


@dataclass(frozen=True)
class ForeignTorchLoad:
    """Finding ``id`` means a torch library from elsewhere loads when ``library`` (an evidence field) names a
    library of torch's own and ``shadowed`` (an evidence field) is torch's own copy."""

    id: str
    library: str
    shadowed: str


#: LD_LIBRARY_PATH, LD_PRELOAD, ld.so.cache and the default folders (Linux), DYLD_* and other folders (macOS),
#: PATH and the other fallbacks (Windows); another torch on sys.path (PYTHONPATH, a .pth, the user site) is an
#: error by its own check (TC205, TC206)
LOADED_FOREIGN_TORCH: tuple[ForeignTorchLoad, ...] = (
    ForeignTorchLoad("TC404", "library", "shadowed_copy"),
    # torch's own copy missing, another found through ld.so.cache, /usr/local/lib or the default folders
    ForeignTorchLoad("TC406", "library", "expected"),
    ForeignTorchLoad("TC456", "library", "torch_copy"),
    ForeignTorchLoad("TC306", "fallback_uses", "safe_search_uses"),
)

_TORCH_LIBRARIES = ("libtorch", "libc10", "libshm", "libcaffe2", "torch_", "c10", "shm.", "libtorch_python")


def is_torch_library(name: str) -> bool:
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base.startswith(_TORCH_LIBRARIES)


def _foreign_torch(f: Finding, torch_dir: str | None) -> bool:
    for rule in LOADED_FOREIGN_TORCH:
        if f.id != rule.id:
            continue
        library = str(f.evidence.get(rule.library) or "")
        shadowed = str(f.evidence.get(rule.shadowed) or "")
        if not is_torch_library(library):
            continue
        if torch_dir is None or _inside(shadowed, torch_dir):
            return True
    return False


def _inside(path: str, folder: str) -> bool:
    # Windows paths examined from Linux too: one separator, one case
    a, b = (os.path.normpath(p.replace("\\", "/")).replace("\\", "/").lower() for p in (path, folder))
    return a.startswith(b.rstrip("/") + "/")


def follow_consequences(findings: Sequence[Finding], torch_dir: str | None = None) -> list[Finding]:
    """One finding per root cause: consequences folded into their cause (as ``consequences``), severity the
    worst of the group, fixes the cause's own (a consequence's fix treats a symptom, and may fight the cause's).

    Linear in the findings times the relations: join keys are indexed, not compared pairwise.
    """
    items = [
        replace(f, severity=Severity.ERROR) if f.severity is not Severity.ERROR and _foreign_torch(f, torch_dir) else f
        for f in findings
    ]
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    #: index of a finding -> the indices it is a consequence of
    caused_by: dict[int, set[int]] = {}
    for rel in CONSEQUENCES:
        causes: dict[str, list[int]] = {}
        for i, f in enumerate(items):
            if rel.cause == ANY and f.id != rel.consequence:
                causes.setdefault(f.id, []).append(i)
            elif f.id == rel.cause:
                for key in rel.cause_keys(f.evidence):
                    causes.setdefault(key, []).append(i)
        if not causes:
            continue
        for j, f in enumerate(items):
            if f.id != rel.consequence:
                continue
            for key in rel.consequence_keys(f.evidence):
                for i in causes.get(key, ()):
                    if i == j:
                        continue
                    caused_by.setdefault(j, set()).add(i)
                    a, b = root(i), root(j)
                    if a != b:
                        parent[b] = a
    groups: dict[int, list[int]] = {}
    for i in range(len(items)):
        groups.setdefault(root(i), []).append(i)
    out: list[Finding] = []
    for members in groups.values():
        if len(members) == 1:
            out.append(items[members[0]])
            continue
        inside = set(members)
        # the cause: a member no other member causes (for peers of one id that cause each other, the first)
        heads = [i for i in members if not (caused_by.get(i, set()) & inside)] or members[:1]
        head = min(heads, key=lambda i: (items[i].severity.rank, i))
        rest = [items[i] for i in members if i != head]
        cause = items[head]
        worst = min((cause, *rest), key=lambda f: f.severity.rank).severity
        out.append(replace(cause, severity=worst, consequences=tuple(rest)))
    out.sort(key=lambda f: (f.severity.rank, f.id))
    return out
