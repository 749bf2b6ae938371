"""torch releases as far back as environment files ask for them (0.4 → now), for the envspec rules.

``knowledge/torch_releases.toml`` starts at 1.12; older minors (and the pytorch channel's cudatoolkit per
minor, which that table does not carry for every release) come from ``knowledge/env_files.toml``
``[old_releases]``, each row with its source. One lookup, :func:`release`, serves both so that a file asking
for torch 1.9 is read with the same care as one asking for 2.5 (no "no release satisfies pytorch" note for a
release the channel had).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from conda_torchcheck.knowledge import TorchRelease, known_torch_minors, load, minor_of, torch_release
from conda_torchcheck.knowledge.version import release_key


@functools.cache
def _env_facts() -> dict[str, Any]:
    return load("env_files")


def _old(minor: str) -> dict[str, Any] | None:
    return _env_facts().get("old_releases", {}).get(minor)


@functools.lru_cache(maxsize=256)
def release(version: str | None) -> TorchRelease | None:
    """The release table of torch ``version`` (``2.5.1``, ``1.9``, ``0.4.1``), or None when unknown."""
    found = torch_release(version)
    minor = minor_of(version)
    data = _old(minor) if minor else None
    if found is not None:
        return _merged(found, data) if data else found
    if data is None or minor is None:
        return None
    return TorchRelease.from_row(minor, {**data, "pytorch_cuda": []})


def _merged(found: TorchRelease, data: dict[str, Any]) -> TorchRelease:
    """The knowledge table's row, widened by env_files.toml's: a companion patch or a cudatoolkit build one
    source lists and the other does not (torchvision 0.8.1 for torch 1.7.0 is in vision's README, not on the
    install page; 1.9's cudatoolkit 11.1 builds came with the nvidia channel) is accepted, so that the checks
    only call a combination wrong when no source has it."""
    raw = dict(found.raw)
    for key in ("torchvision_patch", "torchaudio_patch"):
        table = {k: list(v) for k, v in raw.get(key, {}).items()}
        for patch, versions in data.get(key, {}).items():
            table[patch] = list(dict.fromkeys([*table.get(patch, []), *versions]))
        raw[key] = table
    for key in ("cudatoolkit", "cuda_packages"):
        raw[key] = list(dict.fromkeys([*raw.get(key, []), *data.get(key, [])]))
    return TorchRelease.from_row(found.minor, raw, pip_cuda_floor=found.pip_cuda_floor)


def cudatoolkit_builds(version: str | None) -> tuple[str, ...] | None:
    """The cudatoolkit versions the pytorch channel built torch ``version``'s minor for (before 1.13, when
    pytorch-cuda took over), or None when not known."""
    minor = minor_of(version)
    if minor is None:
        return None
    rel = release(minor)
    if rel is None or not rel.cudatoolkit:
        return None
    return rel.cudatoolkit


def cuda_metapackages(version: str | None) -> tuple[str, ...]:
    """The cudaXY selectors (cuda80, cuda90, cuda92, cuda100) the pytorch channel had for ``version``: per
    patch from knowledge.releases where the install page has the release (1.0.0 had them, 1.0.1 had
    cudatoolkit), else per minor from env_files.toml (0.4.0 is not on the page)."""
    if not version:
        return ()
    try:
        from conda_torchcheck.knowledge import releases

        row = releases.pytorch_channel_builds(version)
    except (ImportError, KeyError, OSError):  # pragma: no cover - shipped with the package
        row = None
    if row is not None:
        return tuple(row.get("cuda_metapackages", ()))
    rel = release(version)
    return tuple(rel.raw.get("cuda_packages", ())) if rel is not None else ()


def rocm_tags(version: str | None) -> tuple[str, ...]:
    minor = minor_of(version)
    if minor is None:
        return ()
    return tuple(_env_facts().get("rocm_tags", {}).get(minor, ()))


def known_minors() -> list[str]:
    minors = set(known_torch_minors()) | set(_env_facts().get("old_releases", {}))
    return sorted(minors, key=release_key)


def example_pin(tag: str) -> str | None:
    """An existing ``torch==X+tag`` to show in a fix text: the newest release whose wheels carry ``tag``
    (never an example such as ``2.5.1+rocm5.2`` that was not published)."""
    from conda_torchcheck.envspec.intent import pytorch_channel_versions

    tag = tag.lower()
    for minor in reversed(known_minors()):
        rel = release(minor)
        if rel is None:
            continue
        if tag in rel.pip_cuda or tag in rocm_tags(minor) or tag in rel.pip_rocm or tag == "cpu":
            patches = [v for v in pytorch_channel_versions() if minor_of(v) == minor]
            version = patches[-1] if patches else f"{minor}.0"
            return f"torch=={version}+{tag}"
    return None


_PT_TAG = re.compile(r"^pt(\d)(\d+)(?:cu\d+|cpu|rocm[\d.]+)?$")


def torch_minor_of_extension_tag(tag: str | None) -> str | None:
    """``2.4`` for pyg wheel tags ``pt24cu121`` / ``pt24cpu`` (the torch release they are built for)."""
    if not tag:
        return None
    m = _PT_TAG.match(tag.lower())
    return f"{m.group(1)}.{m.group(2)}" if m else None


# data.pyg.org/whl/torch-2.4.0+cu121.html, data.dgl.ai/wheels/torch-2.2/cu118/repo.html
_FIND_LINKS_PAGE = re.compile(r"/torch-(\d+\.\d+)(?:\.\d+)?(?:(?:\+|%2B|/)(cpu|cu\d+|rocm[\d.]+))?[/.]", re.I)


def torch_of_find_links(url: str | None) -> tuple[str, str | None] | None:
    """(torch minor, variant tag) of a find-links page named for one torch release
    (``https://data.pyg.org/whl/torch-2.4.0+cu121.html`` → ``("2.4", "cu121")``)."""
    if not url:
        return None
    hosts = _env_facts().get("co_constraints", {}).get("find_links_hosts", [])
    if not any(h in url.lower() for h in hosts):
        return None
    m = _FIND_LINKS_PAGE.search(url.strip().rstrip("/"))
    if not m:
        return None
    return m.group(1), (m.group(2) or None)
