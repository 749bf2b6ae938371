"""Envs for the benchmarks that hold a real torch wheel's files, linked from the tests' real-data cache (run the
realdata tests once to fill it): the binaries are the real ones, the env around them is the tests' builder."""

from __future__ import annotations

from tests import realdata
from tests.envbuilder import EnvBuilder


def link_cached_torch(b: EnvBuilder, key: str) -> bool:
    """Link the cached extraction ``key`` (``torch-2.13.0-linux-cpu``) into ``b`` as its torch package and
    dist-info; False when the cache does not hold it."""
    cached = sorted((realdata.CACHE / "extracted").glob(key + "-*"))
    cached = [c for c in cached if (c / ".complete").exists() and (c / "torch").is_dir()]
    if not cached:
        return False
    src = cached[-1]
    pkg = b.torch_package(key.split("-")[1])
    for path in (src / "torch").rglob("*"):
        if path.is_file():
            target = pkg / path.relative_to(src / "torch")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to(path)
    for info in src.glob("torch-*.dist-info"):
        link = b.site_packages / info.name
        if not link.exists():
            link.symlink_to(info, target_is_directory=True)
    return True
