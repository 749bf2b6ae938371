"""conda's package records (solver output, transaction records) turned into the engine's ``CondaRecord``.

Duck-typed on purpose: only attributes are read, so the pure logic runs (and is tested) without conda.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conda_torchcheck.inventory.model import CondaRecord

# Packages whose change can break (or fix) `import torch`: torch itself, its variant selectors, its native
# dependencies (BLAS/OpenMP, CUDA, the C++ and MSVC runtimes) and python (torch is built per python).
TORCH_RELATED_NAMES = frozenset(
    {
        "pytorch",
        "torch",
        "libtorch",
        "torchvision",
        "torchaudio",
        "torchtext",
        "torchdata",
        "pytorch-cuda",
        "pytorch-cpu",
        "pytorch-gpu",
        "pytorch-mutex",
        "cpuonly",
        "mkl",
        "mkl-service",
        "intel-openmp",
        "llvm-openmp",
        "_openmp_mutex",
        "libgomp",
        "vc",
        "vc14_runtime",
        "vs2015_runtime",
        "ucrt",
        "cuda-version",
        "cudatoolkit",
        "cudnn",
        "nccl",
        "magma",
        "triton",
        "libstdcxx",
        "libstdcxx-ng",
        "libgcc",
        "libgcc-ng",
        "python",
    }
)
TORCH_RELATED_PREFIXES = ("cuda-", "libcu", "libnv", "libnccl", "libcudnn", "pytorch", "libtorch", "torch")


def is_torch_related(name: str) -> bool:
    name = name.lower()
    return name in TORCH_RELATED_NAMES or name.startswith(TORCH_RELATED_PREFIXES)


def torch_related(names: Iterable[str]) -> list[str]:
    return sorted({n for n in names if is_torch_related(n)})


def _get(record: Any, name: str, default: Any = None) -> Any:
    try:
        value = getattr(record, name)
    except Exception:  # conda's records raise AttributeError for absent optional fields
        value = None
    if value is None and hasattr(record, "get"):
        try:
            value = record.get(name, default)
        except Exception:
            value = default
    return default if value is None else value


def _channel_strings(record: Any) -> tuple[str, str]:
    """(channel as a name or URL, full channel URL) for canonical_channel()."""
    channel = _get(record, "channel")
    url = str(_get(record, "url", "") or "")
    if channel is None:
        return "", url
    if isinstance(channel, str):
        return channel, url
    # conda.models.channel.Channel: base_url has no token and no subdir
    base_url = getattr(channel, "base_url", None)
    name = getattr(channel, "canonical_name", None) or getattr(channel, "name", None)
    subdir = str(_get(record, "subdir", "") or "")
    full = f"{base_url}/{subdir}" if base_url and subdir else str(base_url or url)
    # conda's own name for the channel honours channel_alias and custom_channels (mirrors such as TUNA's
    # .../anaconda/cloud/pytorch are "pytorch" there); a URL-shaped name means conda has no short name
    if name and "://" not in str(name) and not str(name).startswith(("/", "\\")) and ":" not in str(name):
        return str(name), full
    if base_url:
        return str(base_url), full
    return str(name or ""), url


def record_key(record: Any) -> tuple[str, str, str]:
    return (str(_get(record, "name", "")), str(_get(record, "version", "")), str(_get(record, "build", "")))


def to_conda_record(record: Any, prefix: Path | None = None) -> CondaRecord:
    """A solver/transaction record as the engine's ``CondaRecord`` (no files: nothing is on disk yet)."""
    # imported here: every conda transaction loads this module to record what changed, most touch no torch
    from conda_torchcheck.inventory.model import CondaRecord
    from conda_torchcheck.inventory.names import canonical_channel

    name, version, build = record_key(record)
    channel, channel_url = _channel_strings(record)
    subdir = str(_get(record, "subdir", "") or "")
    fn = str(_get(record, "fn", "") or f"{name}-{version}-{build}.conda")
    try:
        build_number = int(_get(record, "build_number", 0) or 0)
    except (TypeError, ValueError):
        build_number = 0
    depends = tuple(str(d) for d in (_get(record, "depends", ()) or ()))
    requested = _get(record, "requested_specs", ()) or ()
    if isinstance(requested, str):
        requested = (requested,)
    base = prefix if prefix is not None else Path(".")
    return CondaRecord(
        name=name,
        version=version,
        build=build,
        build_number=build_number,
        channel=canonical_channel(channel, channel_url),
        channel_url=channel_url or channel,
        subdir=subdir,
        fn=fn,
        depends=depends,
        requested_specs=tuple(str(r) for r in requested),
        files=(),
        paths=(),
        source=base / "conda-meta" / f"{name}-{version}-{build}.json",
    )


_META_NAME = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.json$")


def names_from_meta_files(filenames: Iterable[str]) -> set[str]:
    """Package names from ``conda-meta/<name>-<version>-<build>.json`` file names."""
    out = set()
    for fn in filenames:
        m = _META_NAME.match(fn)
        if m:
            out.add(m.group("name"))
    return out
