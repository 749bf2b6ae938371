"""Package-name helpers shared by the inventory and the checks."""

from __future__ import annotations

import re

_NORMALIZE = re.compile(r"[-_.]+")

#: (OS, CPU architecture as the binary readers name it) -> conda subdir
PLATFORMS = {
    ("windows", "x86_64"): "win-64",
    ("windows", "x86"): "win-32",
    ("windows", "arm64"): "win-arm64",
    ("linux", "x86_64"): "linux-64",
    ("linux", "aarch64"): "linux-aarch64",
    ("linux", "ppc64"): "linux-ppc64le",
    ("linux", "x86"): "linux-32",
    ("darwin", "x86_64"): "osx-64",
    ("darwin", "arm64"): "osx-arm64",
}


def normalize(name: str) -> str:
    """PEP 503 normalisation: ``Torch_Vision`` → ``torch-vision``."""
    return _NORMALIZE.sub("-", name).lower()


def canonical_channel(channel: str | None, url: str | None = None) -> str:
    """Reduce a record's channel (a URL or a name) to the name people use on the command line."""
    raw = (channel or "").strip() or (url or "").strip()
    if not raw:
        return "unknown"
    raw = raw.rstrip("/")
    lowered = raw.lower()
    if "repo.anaconda.com/pkgs/" in lowered or "repo.continuum.io/pkgs/" in lowered:
        return "defaults"
    if lowered in ("pkgs/main", "pkgs/r", "pkgs/msys2", "defaults", "main"):
        return "defaults"
    if lowered == "<develop>":
        return "<develop>"
    for marker in ("conda.anaconda.org/", "anaconda.org/", "prefix.dev/", "repo.prefix.dev/"):
        idx = lowered.find(marker)
        if idx >= 0:
            rest = raw[idx + len(marker) :].split("/")
            if rest and rest[0] == "t" and len(rest) > 2:  # token URLs: /t/<token>/<channel>
                rest = rest[2:]
            parts = [p for p in rest if p and not _is_subdir(p) and p != "label"]
            return parts[0] if parts else raw
    if "://" in raw:
        # a mirror of a well-known channel (TUNA/USTC/Aliyun ``.../anaconda/cloud/pytorch``, Artifactory
        # ``.../api/conda/conda-forge``) is that channel; any other URL is kept minus the subdir
        parts = raw.split("/")
        if parts and _is_subdir(parts[-1]):
            parts = parts[:-1]
        known = _mirrored_channel(parts)
        return known or "/".join(parts)
    parts = raw.split("/")
    if len(parts) > 1 and _is_subdir(parts[-1]):
        parts = parts[:-1]
    return "/".join(parts)


#: channels recognised by name at the end of a mirror URL
WELL_KNOWN_CHANNELS = ("conda-forge", "pytorch", "pytorch-nightly", "pytorch-test", "nvidia", "anaconda")
_DEFAULTS_TAILS = ("pkgs/main", "pkgs/free", "pkgs/r", "pkgs/msys2", "pkgs/pro")


def _mirrored_channel(parts: list[str]) -> str | None:
    path = [p for p in parts[3:] if p]  # drop "https:", "", host
    if "label" in path:  # .../nvidia/label/cuda-12.1.0
        path = path[: path.index("label")]
    if not path:
        return None
    tail2 = "/".join(path[-2:]).lower()
    if tail2 in _DEFAULTS_TAILS:
        return "defaults"
    last = path[-1].lower()
    if last in WELL_KNOWN_CHANNELS:
        return last
    return None


SUBDIRS = frozenset(
    {
        "noarch",
        "linux-64",
        "linux-aarch64",
        "linux-ppc64le",
        "linux-s390x",
        "linux-32",
        "linux-armv7l",
        "osx-64",
        "osx-arm64",
        "win-64",
        "win-32",
        "win-arm64",
        "emscripten-wasm32",
        "wasi-wasm32",
        "zos-z",
    }
)


def _is_subdir(part: str) -> bool:
    return part in SUBDIRS
