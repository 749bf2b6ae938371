"""Stand-ins for conda's records and channels (attribute-compatible), so hook logic is tested without conda."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FakeChannel:
    base_url: str
    canonical_name: str

    @classmethod
    def named(cls, name: str) -> FakeChannel:
        if name == "defaults":
            return cls("https://repo.anaconda.com/pkgs/main", "defaults")
        return cls(f"https://conda.anaconda.org/{name}", name)


@dataclass(frozen=True)
class FakeRecord:
    """Shaped like conda.models.records.PackageRecord for the attributes the hooks read."""

    name: str
    version: str
    build: str
    channel: FakeChannel
    subdir: str = "linux-64"
    build_number: int = 0
    depends: tuple[str, ...] = ()
    fn: str = ""
    url: str = ""
    extra: dict = field(default_factory=dict)

    def get(self, key, default=None):
        return self.extra.get(key, default)


def rec(name: str, version: str, build: str, channel: str = "conda-forge", subdir: str = "linux-64", **kw):
    return FakeRecord(name, version, build, FakeChannel.named(channel), subdir=subdir, **kw)
