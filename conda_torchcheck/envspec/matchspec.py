"""Small, dependency-free readers for the strings an environment.yml holds.

- conda match specs (``pytorch``, ``pytorch=2.5``, ``pytorch==2.5.1=py3.11_cuda12.4*``,
  ``conda-forge::pytorch >=2.4,<2.6 cuda*``, ``pytorch[version='>=2.4', build='cuda*']``);
- conda version constraints, evaluated the way conda's ``VersionSpec`` does for the cases env files use;
- pip requirement lines (``torch==2.3.0+cu121``, ``--extra-index-url URL``, ``-e .``, direct URLs);
- channel names and mirror URLs reduced to the channel they stand for.

conda itself is not imported (the spec check runs without it); where a string is beyond this reader it says so
(``None``) instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from packaging.version import InvalidVersion, Version

from conda_torchcheck.inventory.names import SUBDIRS, normalize

# --------------------------------------------------------------------------------------------------------
# channels


def channel_name(text: str) -> str:
    """The channel a ``channels:`` entry or a ``chan::`` prefix stands for: ``conda-forge``, ``pytorch``,
    ``nvidia``, ``defaults``, ``nodefaults``... Mirrors (TUNA, USTC, Aliyun) and labels
    (``nvidia/label/cuda-11.8.0``) count as the channel they mirror; anything else is returned as written."""
    # self-contained (the spec check must not pay for importing the inventory package)
    raw = text.strip().rstrip("/")
    lowered = raw.lower()
    if lowered in ("nodefaults", "defaults", "main", "pkgs/main", "pkgs/r", "pkgs/msys2", "pkgs/free"):
        return "nodefaults" if lowered == "nodefaults" else "defaults"
    parts = raw.split("/")
    while len(parts) > 1 and parts[-1].lower() in SUBDIRS:
        parts.pop()
    if "://" not in raw:
        name = parts[0] if "label" in parts[1:] else "/".join(parts)
        return name.lower()
    if "repo.anaconda.com/pkgs/" in lowered or "repo.continuum.io/pkgs/" in lowered:
        return "defaults"
    url = "/".join(parts)
    for marker in ("conda.anaconda.org/", "anaconda.org/", "repo.prefix.dev/", "prefix.dev/"):
        idx = url.lower().find(marker)
        if idx >= 0:
            rest = [p for p in url[idx + len(marker) :].split("/") if p]
            if len(rest) > 2 and rest[0] == "t":  # token URLs: /t/<token>/<channel>
                rest = rest[2:]
            if rest:
                return rest[0].lower()
    return _mirror_tail(url) or url


_WELL_KNOWN = ("conda-forge", "pytorch", "pytorch-nightly", "pytorch-test", "nvidia", "anaconda")


def _mirror_tail(url: str) -> str | None:
    """``https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch/`` → ``pytorch``; ``.../pkgs/main`` →
    ``defaults``: mirrors keep the channel's name as the last part of their path."""
    path = [p for p in url.split("/")[3:] if p]
    if "label" in path:
        path = path[: path.index("label")]
    if len(path) >= 2 and path[-2].lower() == "pkgs" and path[-1].lower() in ("main", "free", "r", "msys2", "pro"):
        return "defaults"
    if path and path[-1].lower() in _WELL_KNOWN:
        return path[-1].lower()
    return None


# --------------------------------------------------------------------------------------------------------
# conda versions


def version_key(text: str) -> Version | None:
    """A comparable version for the numeric releases the torch tables use (``2.5.1``, ``11.8``, ``2.0.0.post1``)."""
    text = text.strip()
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        head = re.match(r"\d+(?:\.\d+)*", text)
        if not head:
            return None
        try:
            return Version(head.group(0))
        except InvalidVersion:  # pragma: no cover - the regex only yields valid releases
            return None


def _release(v: Version) -> tuple[int, ...]:
    rel = list(v.release)
    while len(rel) > 1 and rel[-1] == 0:
        rel.pop()
    return tuple(rel)


def _prefix_match(prefix: str, candidate: Version) -> bool | None:
    parts = [p for p in prefix.split(".") if p not in ("", "*")]
    if not parts or not all(p.isdigit() for p in parts):
        return None
    want = tuple(int(p) for p in parts)
    have = candidate.release + (0,) * max(0, len(want) - len(candidate.release))
    return have[: len(want)] == want


_OPS = ("==", "!=", ">=", "<=", "~=", ">", "<", "=")


def _one(constraint: str, candidate: Version, *, bare_is_fuzzy: bool) -> bool | None:
    c = constraint.strip()
    if not c or c == "*":
        return True
    op = ""
    for candidate_op in _OPS:
        if c.startswith(candidate_op):
            op, c = candidate_op, c[len(candidate_op) :].strip()
            break
    fuzzy = c.endswith("*")
    value = c.rstrip("*").rstrip(".")
    if not op:
        op = "=" if (bare_is_fuzzy or fuzzy) else "=="
    if op == "=" or (op == "==" and fuzzy):
        return _prefix_match(value, candidate)
    if op == "!=" and fuzzy:
        result = _prefix_match(value, candidate)
        return None if result is None else not result
    want = version_key(value)
    if want is None or (value and not re.fullmatch(r"\d+(\.\d+)*([a-z]+\d*)?(\.post\d+)?", value)):
        return None
    if op == "==":
        return _release(candidate) == _release(want) and candidate.pre == want.pre
    if op == "!=":
        return not (_release(candidate) == _release(want) and candidate.pre == want.pre)
    if op == "~=":
        upper = want.release[:-1]
        return candidate >= want and _prefix_match(".".join(map(str, upper)), candidate) is True
    return {">=": candidate >= want, "<=": candidate <= want, ">": candidate > want, "<": candidate < want}[op]


def version_allows(spec: str | None, version: str, *, bare_is_fuzzy: bool = True) -> bool | None:
    """Does the conda version constraint ``spec`` accept ``version``? None when this reader cannot tell.

    ``bare_is_fuzzy``: a bare ``2.5`` means ``2.5.*`` (the ``name=2.5`` form) rather than exactly 2.5 (the
    ``name 2.5`` form)."""
    if spec is None or spec.strip() in ("", "*"):
        return True
    candidate = version_key(version)
    if candidate is None:
        return None
    any_unknown = False
    for alternative in spec.split("|"):
        verdicts = [_one(part, candidate, bare_is_fuzzy=bare_is_fuzzy) for part in alternative.split(",")]
        if any(v is False for v in verdicts):
            continue
        if all(v is True for v in verdicts):
            return True
        any_unknown = True
    return None if any_unknown else False


def exact_version(spec: str | None, *, bare_is_fuzzy: bool = True) -> str | None:
    """``2.5.1`` for ``==2.5.1``, ``=2.5.1``, ``2.5.1`` (three or more parts), None for ranges and minors."""
    if not spec:
        return None
    s = spec.strip()
    if any(ch in s for ch in "|,<>!~*"):
        return None
    explicit = s.startswith("==")
    s = s.lstrip("=")
    if not re.fullmatch(r"\d+(\.\d+)+([a-z]+\d*)?(\.post\d+)?", s):
        return None
    if explicit or not bare_is_fuzzy or len(s.split(".")) >= 3:
        return s
    return None


def minor_of_spec(spec: str | None) -> str | None:
    """The single ``major.minor`` a constraint confines the version to (``2.5``, ``=2.5.1``, ``2.5.*``,
    ``>=2.5,<2.6``), or None when it allows several minors or none is stated."""
    if not spec:
        return None
    s = spec.strip()
    if "|" in s:
        return None
    m = re.fullmatch(r"(?:==?)?\s*(\d+)\.(\d+)(?:\.[\d*]+)*(?:\.\*|\*)?(?:[a-z]+\d*)?(?:\.post\d+)?", s)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    lower = re.fullmatch(r">=\s*(\d+)\.(\d+)(?:\.\d+)*\s*,\s*<\s*(\d+)\.(\d+)(?:\.0)*", s)
    if lower:
        lo_major, lo_minor, hi_major, hi_minor = (int(x) for x in lower.groups())
        if (hi_major, hi_minor) == (lo_major, lo_minor + 1):
            return f"{lo_major}.{lo_minor}"
    return None


def is_pinned(spec: str | None) -> bool:
    """A version constraint narrow enough to reproduce an env: an exact version or a single minor."""
    return exact_version(spec) is not None or minor_of_spec(spec) is not None


# --------------------------------------------------------------------------------------------------------
# conda match specs

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_BRACKET_RE = re.compile(r"""(\w+)\s*=\s*(?:'([^']*)'|"([^"]*)"|([^,\]\s]+))""")


@dataclass(frozen=True)
class CondaSpec:
    """One conda dependency string, split into the parts conda's MatchSpec would see."""

    raw: str
    name: str  # lower-case
    channel: str | None = None  # as written before ``::`` (``conda-forge``, ``pytorch/linux-64``, a URL)
    version: str | None = None
    build: str | None = None
    #: ``name 2.5`` means exactly 2.5 where ``name=2.5`` means 2.5.*
    bare_is_fuzzy: bool = True
    #: the bracket part could not be fully understood (kept verbatim on rewrite)
    opaque: bool = False

    @property
    def channel_name(self) -> str | None:
        if self.channel is None:
            return None
        head = self.channel
        if "://" not in head and "/" in head:
            head = head.split("/")[0]
        return channel_name(head)

    def allows(self, version: str) -> bool | None:
        return version_allows(self.version, version, bare_is_fuzzy=self.bare_is_fuzzy)

    @property
    def exact(self) -> str | None:
        return exact_version(self.version, bare_is_fuzzy=self.bare_is_fuzzy)

    @property
    def minor(self) -> str | None:
        return minor_of_spec(self.version)

    def with_(self, **changes: object) -> CondaSpec:
        return replace(self, **changes)  # type: ignore[arg-type]

    def render(self) -> str:
        """The spec written the way people write env files: ``chan::name=ver=build`` where possible."""
        head = f"{self.channel}::{self.name}" if self.channel else self.name
        version, build = self.version, self.build
        if version is None and build is None:
            return head
        simple_version = version is not None and re.fullmatch(r"[A-Za-z0-9_.*+!]+", version) is not None
        if version is not None and not simple_version:
            return f"{head} {version}" + (f" {build}" if build else "")
        v = version if version is not None else "*"
        if not self.bare_is_fuzzy and version is not None and not v.startswith("="):
            v = "=" + v  # keep "exactly" meaning: name==ver
        return f"{head}={v}" + (f"={build}" if build else "")


class SpecSyntaxError(ValueError):
    """The string is not a conda match spec this reader understands."""


def parse_conda_spec(text: str) -> CondaSpec:
    raw = text
    s = text.strip()
    if not s:
        raise SpecSyntaxError("empty")
    if "#" in s:
        s = s.split("#", 1)[0].strip()
    channel = None
    if "::" in s:
        channel, s = s.rsplit("::", 1)
        channel = channel.strip() or None
        s = s.strip()
    bracket: dict[str, str] = {}
    opaque = False
    if "[" in s:
        if not s.endswith("]"):
            raise SpecSyntaxError(text)
        s, inner = s[:-1].split("[", 1)
        for key, single, double, bare in _BRACKET_RE.findall(inner):
            bracket[key.lower()] = single or double or bare
        if set(bracket) - {"version", "build", "channel", "subdir", "build_number"}:
            opaque = True
        s = s.strip()
    m = _NAME_RE.match(s)
    if not m:
        raise SpecSyntaxError(text)
    name = m.group(0)
    rest = s[m.end() :].strip()
    version = build = None
    bare_is_fuzzy = True
    if rest:
        if rest[0] in "=<>!~" and not rest.startswith("=="):
            if rest.startswith("=") and not rest.startswith("=="):
                parts = rest[1:].split("=", 1)
                version = parts[0].strip() or None
                build = parts[1].strip() if len(parts) > 1 else None
            else:
                pieces = rest.split()
                version = pieces[0]
                build = pieces[1] if len(pieces) > 1 else None
        elif rest.startswith("=="):
            body = rest[2:]
            # name==1.2.3=build is accepted by conda as exact version + build
            if "=" in body and not body.startswith("="):
                v, b = body.split("=", 1)
                version, build = "==" + v.strip(), b.strip() or None
            else:
                pieces = body.split()
                version = "==" + pieces[0] if pieces else None
                build = pieces[1] if len(pieces) > 1 else None
        else:
            pieces = rest.split()
            version = pieces[0]
            build = pieces[1] if len(pieces) > 1 else None
            if len(pieces) > 2:
                raise SpecSyntaxError(text)
            bare_is_fuzzy = version.endswith("*")
    if "version" in bracket:
        version = bracket["version"]
        bare_is_fuzzy = False
    if "build" in bracket:
        build = bracket["build"]
    if "channel" in bracket and channel is None:
        channel = bracket["channel"]
    if version is not None and version.startswith("==") and "," not in version and "|" not in version:
        version = version[2:]
        bare_is_fuzzy = version.endswith("*")
    return CondaSpec(
        raw=raw,
        name=name.lower(),
        channel=channel,
        version=version,
        build=build,
        bare_is_fuzzy=bare_is_fuzzy,
        opaque=opaque,
    )


# --------------------------------------------------------------------------------------------------------
# pip lines


@dataclass(frozen=True)
class PipLine:
    """One entry of the ``pip:`` list: a requirement, an option (``--index-url URL``) or something else."""

    raw: str
    kind: str  # "requirement", "option", "other" (-e, -r, paths, VCS URLs)
    name: str | None = None  # PEP 503 normalised
    specifier: str = ""  # ``==2.3.0+cu121``
    url: str | None = None  # direct reference ``name @ URL``
    option: str | None = None  # --index-url / --extra-index-url / --find-links / ...
    value: str | None = None
    marker: str | None = None
    extras: str = ""

    @property
    def exact(self) -> str | None:
        m = re.fullmatch(r"===?\s*([^,;\s]+)", self.specifier.strip())
        if m and not m.group(1).endswith("*"):
            return m.group(1)
        return None

    @property
    def local_tag(self) -> str | None:
        """``cu121`` for ``torch==2.3.0+cu121``; from a direct wheel URL as well."""
        if self.exact and "+" in self.exact:
            tag = self.exact.split("+", 1)[1].lower()
            return tag if _TAG_RE.match(tag) else None
        if self.url:
            m = re.search(r"(?:%2B|\+)(cu\d+|cpu|rocm[\d.]+|xpu)", self.url)
            if m:
                return m.group(1).lower()
        return None

    @property
    def version_spec(self) -> str:
        """The specifier without a local tag (``==2.3.0`` for ``==2.3.0+cu121``)."""
        return re.sub(r"\+[A-Za-z0-9.]+", "", self.specifier)


_OPTION_ALIASES = {
    "-i": "--index-url",
    "--index-url": "--index-url",
    "--extra-index-url": "--extra-index-url",
    "-f": "--find-links",
    "--find-links": "--find-links",
    "--trusted-host": "--trusted-host",
    "--pre": "--pre",
    "--no-index": "--no-index",
    "-r": "--requirement",
    "--requirement": "--requirement",
    "-c": "--constraint",
    "--constraint": "--constraint",
    "-e": "--editable",
    "--editable": "--editable",
}
_REQ_RE = re.compile(
    r"""^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?\s*
        (?:@\s*(?P<url>\S+)|(?P<spec>(?:[<>=!~]=?|===)[^;]*?))?\s*(?:;(?P<marker>.*))?$""",
    re.X,
)


def parse_pip_line(text: str) -> PipLine:
    raw = text
    s = text.strip()
    if " #" in s:
        s = s.split(" #", 1)[0].strip()
    if s.startswith("-"):
        head, _, value = s.partition("=") if s.startswith("--") and "=" in s.split()[0] else s.partition(" ")
        option = _OPTION_ALIASES.get(head.strip())
        value = value.strip() or None
        if option in ("--editable", "--requirement", "--constraint"):
            return PipLine(raw=raw, kind="other", option=option, value=value)
        return PipLine(raw=raw, kind="option", option=option or head.strip(), value=value)
    m = _REQ_RE.match(s)
    if not m or "/" in m.group("name") or s.startswith((".", "/")):
        return PipLine(raw=raw, kind="other")
    return PipLine(
        raw=raw,
        kind="requirement",
        name=normalize(m.group("name")),
        specifier=(m.group("spec") or "").strip().replace(" ", ""),
        url=m.group("url"),
        marker=(m.group("marker") or "").strip() or None,
        extras=m.group("extras") or "",
    )


# --------------------------------------------------------------------------------------------------------
# torch wheel indexes

TORCH_INDEX_HOST = "download.pytorch.org"
_TAG_RE = re.compile(r"^(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)$", re.I)


@dataclass(frozen=True)
class TorchIndex:
    url: str
    tag: str | None  # cu121, cpu, rocm6.2, xpu; None for torch_stable.html (every variant)
    nightly: bool = False
    official: bool = True  # download.pytorch.org (else a mirror such as mirrors.aliyun.com/pytorch-wheels)


def torch_index(url: str | None) -> TorchIndex | None:
    """The torch wheel index a URL names (``https://download.pytorch.org/whl/cu121``, a mirror ending in
    ``/pytorch-wheels/cu121``, the old ``torch_stable.html`` find-links page), or None."""
    if not url:
        return None
    u = url.strip().rstrip("/")
    lowered = u.lower()
    official = TORCH_INDEX_HOST in lowered
    if lowered.endswith("torch_stable.html"):
        return TorchIndex(u, None, official=official) if (official or "pytorch" in lowered) else None
    parts = [p for p in u.split("/") if p]
    if not parts:
        return None
    last = parts[-1]
    if not _TAG_RE.match(last):
        return None
    if not (official or "pytorch" in lowered or "torch" in lowered):
        return None
    return TorchIndex(u, last.lower(), nightly="/nightly/" in lowered, official=official)


def index_url_for(tag: str, like: TorchIndex | None = None) -> str:
    """The index URL of ``tag``; on the same host as ``like`` (a mirror stays a mirror)."""
    if like is not None and like.tag is not None:
        return like.url[: -len(like.tag)] + tag if like.url.lower().endswith(like.tag) else like.url
    return f"https://download.pytorch.org/whl/{tag}"


def cuda_of_tag(tag: str | None) -> str | None:
    """``12.1`` for ``cu121``, ``11.8`` for ``cu118``, ``13.0`` for ``cu130``."""
    if tag and re.fullmatch(r"cu\d{3}", tag):
        return f"{tag[2:4]}.{tag[4]}"
    if tag and re.fullmatch(r"cu\d{2}", tag):
        return f"{tag[2]}.{tag[3]}"
    return None


def tag_of_cuda(cuda: str | None) -> str | None:
    if not cuda:
        return None
    parts = cuda.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return f"cu{parts[0]}{parts[1]}"
