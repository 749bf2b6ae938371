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

from packaging.version import Version

from conda_torchcheck.inventory.names import SUBDIRS, normalize
from conda_torchcheck.knowledge.version import parse_version, release_key

# --------------------------------------------------------------------------------------------------------
# channels


#: channels that are another channel under an old name: ``soumith`` was the pytorch channel before 2017
#: (pytorch.org's 0.1/0.2 install commands used `-c soumith`)
_ALIASES = {"soumith": "pytorch"}


def channel_name(text: str) -> str:
    """The channel a ``channels:`` entry or a ``chan::`` prefix stands for: ``conda-forge``, ``pytorch``,
    ``nvidia``, ``defaults``, ``nodefaults``... Mirrors (TUNA, USTC, Aliyun) and labels
    (``nvidia/label/cuda-11.8.0``) count as the channel they mirror; anything else is returned as written."""
    # self-contained (the spec check must not pay for importing the inventory package)
    raw = text.strip().rstrip("/")
    lowered = raw.lower()
    if lowered in _ALIASES:
        return _ALIASES[lowered]
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


_WELL_KNOWN = ("conda-forge", "pytorch", "pytorch-nightly", "pytorch-test", "pytorch-lts", "nvidia", "anaconda")


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
    return parse_version(text.strip())


def _release(v: Version) -> tuple[int, ...]:
    rel = list(v.release)
    while len(rel) > 1 and rel[-1] == 0:
        rel.pop()
    return tuple(rel)


def _prefix_match(prefix: str, candidate: Version) -> bool | None:
    parts = [p for p in prefix.split(".") if p not in ("", "*")]
    if parts and not all(p.isdigit() for p in parts) and re.fullmatch(_VERSION_RE, ".".join(parts)):
        # a dated nightly (2.6.0.dev20241112*): component-wise, as conda compares it
        want = version_key(".".join(parts))
        if want is None:
            return None
        return (_release(candidate), candidate.pre, candidate.dev) == (_release(want), want.pre, want.dev)
    if not parts or not all(p.isdigit() for p in parts):
        return None
    want = release_key(".".join(parts))
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
    if want is None or (value and not re.fullmatch(_VERSION_RE, value)):
        return None
    same = _release(candidate) == _release(want) and (candidate.pre, candidate.dev) == (want.pre, want.dev)
    if op == "==":
        return same
    if op == "!=":
        return not same
    if op == "~=":
        upper = want.release[:-1]
        return candidate >= want and _prefix_match(".".join(map(str, upper)), candidate) is True
    return {">=": candidate >= want, "<=": candidate <= want, ">": candidate > want, "<": candidate < want}[op]


def version_allows(spec: str | None, version: str, *, bare_is_fuzzy: bool = False) -> bool | None:
    """Does the conda version constraint ``spec`` accept ``version``? None when this reader cannot tell.

    ``spec`` is conda's sanitised form (:attr:`CondaSpec.version`): a bare ``2.5`` means exactly 2.5 (= 2.5.0),
    ``2.5*`` the 2.5 series. ``bare_is_fuzzy`` reads a bare ``2.5`` as ``2.5*`` (for hand-written minors)."""
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


_VERSION_RE = r"\d+(?:\.\d+)*(?:\.?(?:a|b|rc|dev|post|alpha|beta|pre)\d*)*"


def exact_version(spec: str | None, *, bare_is_fuzzy: bool = False) -> str | None:
    """``2.5.1`` for ``2.5.1``, ``==2.5.1``, ``2.5.1*`` (the ``=2.5.1`` form: three or more parts, or a
    pre/dev release such as a nightly ``2.6.0.dev20241112*``); None for ranges and minors (``2.5*``)."""
    if not spec:
        return None
    s = spec.strip()
    if any(ch in s for ch in "|,<>!~"):
        return None
    explicit = s.startswith("==")
    s = s.lstrip("=")
    fuzzy = s.endswith("*")
    base = s[:-2] if s.endswith(".*") else s.rstrip("*")
    if not re.fullmatch(_VERSION_RE, base):
        return None
    detailed = len(re.match(r"\d+(?:\.\d+)*", base).group(0).split(".")) >= 3 or re.search(r"[a-z]", base)  # type: ignore[union-attr]
    if fuzzy or (bare_is_fuzzy and not explicit):
        return base if detailed else None
    return base


def minor_of_spec(spec: str | None) -> str | None:
    """The single ``major.minor`` a constraint confines the version to (``2.5``, ``=2.5.1``, ``2.5.*``,
    ``>=2.5,<2.6``), or None when it allows several minors or none is stated."""
    if not spec:
        return None
    s = spec.strip()
    if "|" in s:
        return None
    m = re.fullmatch(r"(?:==?)?\s*(\d+)\.(\d+)(?:\.[\d*]+)*(?:\.\*|\*)?(?:\.?[a-z]+\d*)*\*?", s)
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

_NAME_RE = re.compile(r"[A-Za-z0-9_*][A-Za-z0-9_.*\-]*")
#
# A port of conda's own string grammar (conda/models/match_spec.py, ``_parse_spec_str`` in conda 26.7): the
# same steps in the same order, so that ``pytorch >= 1.13`` is the version ``>=1.13`` (not a version ``>=``
# with a build ``1.13``), ``pytorch=2.5`` is ``2.5*`` while ``pytorch 2.5`` and ``pytorch=2.5=cuda*`` are
# exactly 2.5 (= 2.5.0), and brackets override what stands outside them. ``version`` holds conda's sanitised
# version string (what ``MatchSpec(...).get_raw_value("version")`` returns); tests compare it with real conda.

# the regular expressions are conda's (conda/models/match_spec.py)
_BRACKETS_RE = re.compile(r".*(?:(\[.*\]))")
_BRACKETS_KV_RE = re.compile(r"""([a-zA-Z0-9_-]+?)=(["\']?)([^\'"]*?)(\2)(?:[,\ ]|$)""")
_PARENS_RE = re.compile(r".*(?:(\(.*\)))")
_NAME_VERSION_RE = re.compile(r"([^\ =<>!~]+)?([><!=~\ ].+)?")
_VERSION_BUILD_RE = re.compile(r"((?:.+?)[^><!,|]?)(?:(?<![=!|,<>~])(?:[\ =])([^-=,|<>~]+?))?$")
_VERSION_CHARS_RE = re.compile(r"[A-Za-z0-9_.*+!=<>~,|]+")
#: bracket keys this reader understands; any other one (md5, build_number, url ...) makes the spec opaque
_BRACKET_KEYS = ("version", "build", "channel", "subdir")


def _parse_version_plus_build(text: str) -> tuple[str, str | None]:
    m = _VERSION_BUILD_RE.search(text)
    if m:
        version, build = m.groups()
        build = build and build.strip()
    else:
        version, build = text, None
    return version.replace(" ", ""), build or None


def _sanitize_version(version: str, build: str | None) -> str:
    """conda's ``_sanitize_version_str``: ``=1.2`` → ``1.2*`` (no build), ``==1.2`` → ``1.2``."""
    if version in ("==", "=") or not version.startswith("="):
        return version
    bare = version.lstrip("=")
    if version.startswith("==") and build is None:
        return bare
    if not any(ch in bare for ch in "=,|"):
        if build is None and not bare.endswith("*"):
            return bare + "*"
        return bare
    return version


def _simple_version(version: str) -> bool:
    """No operator, no ``,``/``|``: a plain version, ``2.5*`` or ``2.5.*``."""
    return re.fullmatch(r"[A-Za-z0-9_.+!]+(?:\.?\*)?", version) is not None


def _fuzzy_base(version: str) -> str | None:
    """``2.5`` for ``2.5*`` / ``2.5.*``; None when the version is not a plain prefix match."""
    if not _simple_version(version) or not version.endswith("*") or version == "*":
        return None
    return version[:-2] if version.endswith(".*") else version[:-1]


def _same_version(a: str | None, b: str | None) -> bool:
    """Equal as conda constraints: ``2.5*`` and ``2.5.*`` are one constraint, ``*`` is none."""

    def norm(v: str | None) -> str | None:
        if v in (None, "*"):
            return None
        base = _fuzzy_base(v)
        return f"{base}*" if base is not None else v

    return norm(a) == norm(b)


@dataclass(frozen=True)
class CondaSpec:
    """One conda dependency string, split the way conda's MatchSpec splits it."""

    raw: str
    name: str  # lower-case
    channel: str | None = None  # as written before ``::`` (``conda-forge``, ``pytorch/linux-64``, a URL)
    version: str | None = None  # conda's sanitised version string: ``2.5*``, ``2.5.1``, ``>=1.13,<2``
    build: str | None = None
    #: kept for callers that build specs by hand: a bare ``2.5`` given here means ``2.5*``
    bare_is_fuzzy: bool = False
    #: parts this reader does not model (md5, build_number ... in brackets, a parenthesis section): the spec
    #: is read for its name/version but never rewritten
    opaque: bool = False

    @property
    def channel_name(self) -> str | None:
        if self.channel is None:
            return None
        head = self.channel
        if "://" not in head and "/" in head:
            head = head.split("/")[0]
        return channel_name(head)

    @property
    def subdir(self) -> str | None:
        if self.channel is None:
            return None
        last = self.channel.rstrip("/").split("/")[-1]
        return last if last in SUBDIRS else None

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

    def pinned(self, version: str, build: str | None = None) -> CondaSpec:
        """This spec pinned to ``version`` (``2.5.1`` → the ``=2.5.1`` form, i.e. ``2.5.1*``; exactly
        ``2.5.1`` when a build string is given, as conda reads ``=2.5.1=build``)."""
        return replace(self, version=version if build else f"{version}*", build=build, bare_is_fuzzy=False)

    def _version(self) -> str | None:
        v = self.version
        if v is not None and self.bare_is_fuzzy and _simple_version(v) and not v.endswith("*"):
            return f"{v}*"
        return v

    def same_constraint(self, other: CondaSpec) -> bool:
        return (
            self.name == other.name
            and (self.channel or None) == (other.channel or None)
            and _same_version(self._version(), other._version())
            and (self.build or None) == (other.build or None)
        )

    def render(self) -> str:
        """The spec written the way env files write it (``chan::name=2.5``, ``name>=1.13,<2``,
        ``name=2.6.*=cuda*``, ``name >=2.4,<2.6 cuda*``); conda reads it back to this very constraint."""
        head = f"{self.channel}::{self.name}" if self.channel else self.name
        version, build = self._version(), self.build
        if version in (None, "*") and build is None:
            return head
        if version in (None, "*"):
            return f"{head}=*={build}"
        assert version is not None
        base = _fuzzy_base(version)
        if base is not None:
            return f"{head}={base}.*={build}" if build else f"{head}={base}"
        if _simple_version(version):  # exact
            return f"{head}={version}={build}" if build else f"{head}=={version}"
        if build:
            return f"{head} {version} {build}"
        return f"{head}{version}" if version[0] in "<>=!~" else f"{head} {version}"

    def render_checked(self) -> str | None:
        """:meth:`render`, or None when the text would not read back as this constraint (then the caller
        keeps the original text)."""
        if self.opaque:
            return None
        text = self.render()
        try:
            again = parse_conda_spec(text)
        except SpecSyntaxError:
            return None
        return text if again.same_constraint(self) else None


class SpecSyntaxError(ValueError):
    """The string is not a conda match spec this reader understands."""


def parse_conda_spec(text: str) -> CondaSpec:
    """Split ``text`` the way conda's MatchSpec does (see the module comment); SpecSyntaxError where conda
    would refuse it or where it holds a form this reader does not model (a package file or URL)."""
    raw = text
    s = text
    if "#" in s:
        s = s[: s.index("#")]
    s = s.split(" if ", 1)[0].strip()
    if not s or s.endswith("@"):
        raise SpecSyntaxError(text)
    if s.endswith((".tar.bz2", ".conda")) or re.match(r"^[a-z][a-z0-9+.-]*://", s) and "::" not in s:
        raise SpecSyntaxError(text)  # a package file or URL, not a match spec
    opaque = False
    brackets: dict[str, str] = {}
    m = _BRACKETS_RE.match(s)
    if m:
        inner = m.group(1)
        s = s.replace(inner, "")
        for kv in _BRACKETS_KV_RE.finditer(inner[1:-1]):
            key, _, value, _ = kv.groups()
            if not key or not value:
                raise SpecSyntaxError(text)
            if key == "version":
                value = _sanitize_version(value.replace(" ", ""), kv.groupdict().get("build"))
            brackets[key] = value
        if set(brackets) - set(_BRACKET_KEYS) or "name" in brackets:
            opaque = True
    m = _PARENS_RE.match(s)
    if m:
        s = s.replace(m.group(1), "")
        opaque = True
    parts = s.rsplit(":", 2)
    channel: str | None
    if len(parts) == 3:
        channel, _, s = parts
        channel = channel.strip() or None
    elif len(parts) == 2:
        _, s = parts
        channel = None
    else:
        channel = None
    if "channel" in brackets:
        channel = brackets.pop("channel")
    if "subdir" in brackets:
        sub = brackets.pop("subdir")
        channel = f"{channel or '*'}/{sub}" if sub else channel
    m = _NAME_VERSION_RE.match(s.strip())
    name = m.group(1) if m else None
    if not name or not _NAME_RE.fullmatch(name):
        raise SpecSyntaxError(text)
    rest = (m.group(2) or "").strip() if m else ""
    version = build = None
    if rest:
        if "[" in rest:
            raise SpecSyntaxError(text)
        version, build = _parse_version_plus_build(rest)
        version = _sanitize_version(version, build)
        if version in ("", "=", "==", "<", ">", "<=", ">=", "!=", "~=") or not _VERSION_CHARS_RE.fullmatch(version):
            raise SpecSyntaxError(text)
        if version.endswith((",", "|", "<", ">", "=")):
            raise SpecSyntaxError(text)
        if any("=" in part.lstrip("<>=!~") for part in re.split(r"[,|]", version)):
            raise SpecSyntaxError(text)  # conda: "Invalid version '1.13=*': invalid character(s)"
        if build is not None and " " in build:
            opaque = True
    if "version" in brackets:
        version = brackets.pop("version")
    if "build" in brackets:
        build = brackets.pop("build")
    return CondaSpec(raw=raw, name=name.lower(), channel=channel, version=version, build=build, opaque=opaque)


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
    #: packaging's PEP 508 parser (what pip reads requirements with) takes the line; False for a line read by the
    #: looser fallback (``flask-sqlalchemy==3.1.1s``, ``opencv-python>=4.5.*``), which current pip refuses
    pep508: bool = True

    @property
    def exact(self) -> str | None:
        m = re.fullmatch(r"===?\s*([^,;\s]+)", self.specifier.strip())
        if m and not m.group(1).endswith("*"):
            return m.group(1)
        wheel = self.wheel
        if wheel is not None and not self.specifier:
            return wheel.version  # a wheel file is one exact version (`torch-2.1.0+cu118-cp310-...whl`)
        return None

    @property
    def wheel(self) -> WheelName | None:
        """The wheel file a direct URL names (PEP 427 file name), or None."""
        return wheel_name(self.url) if self.url else None

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


@dataclass(frozen=True)
class WheelName:
    """The fields of a wheel's file name (PEP 427): ``torch-2.1.0+cu118-cp310-cp310-linux_x86_64.whl``."""

    name: str
    version: str
    python: str
    abi: str
    platform: str


_WHEEL_FILE = re.compile(
    r"(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[0-9][^-]*)(?:-\d[^-]*)?-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$"
)


def wheel_name(url: str) -> WheelName | None:
    """The wheel a URL (or a path) points to, from its last path segment; %2B is the URL form of ``+``."""
    from urllib.parse import unquote

    tail = unquote(url.split("#", 1)[0].split("?", 1)[0].rstrip("/")).rsplit("/", 1)[-1]
    m = _WHEEL_FILE.match(tail)
    if m is None:
        return None
    return WheelName(m.group("name"), m.group("version"), m.group("python"), m.group("abi"), m.group("platform"))


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
    # per-requirement options (`--hash=...`, `--config-settings ...`, and the `-f URL` people put there, which
    # pip does not take on a requirement line) are not part of the PEP 508 requirement
    opt = re.search(r"\s-{1,2}[A-Za-z]", s)
    if opt is not None:
        s = s[: opt.start()].strip()
    wheel = wheel_name(s) if "://" in s else None
    if wheel is not None:
        # a bare wheel URL is a requirement for that wheel: pip installs exactly that file
        return PipLine(raw=raw, kind="requirement", name=normalize(wheel.name), url=s.split(";", 1)[0].strip())
    m = _REQ_RE.match(s)
    if not m or "/" in m.group("name") or s.startswith((".", "/")):
        return PipLine(raw=raw, kind="other")
    parsed = _pep508(s)
    if parsed is not None:
        return replace(parsed, raw=raw)
    return PipLine(
        raw=raw,
        kind="requirement",
        name=normalize(m.group("name")),
        specifier=(m.group("spec") or "").strip().replace(" ", ""),
        url=m.group("url"),
        marker=(m.group("marker") or "").strip() or None,
        extras=m.group("extras") or "",
        pep508=False,
    )


def _pep508(text: str) -> PipLine | None:
    """``text`` read by packaging's PEP 508 parser (what pip uses): name, extras, specifier, URL, marker."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    spec = ",".join(sorted(str(sp) for sp in req.specifier)) if len(req.specifier) > 1 else str(req.specifier)
    return PipLine(
        raw=text,
        kind="requirement",
        name=normalize(req.name),
        specifier=spec,
        url=req.url,
        marker=str(req.marker) if req.marker is not None else None,
        extras=("[" + ",".join(sorted(req.extras)) + "]") if req.extras else "",
    )


# --------------------------------------------------------------------------------------------------------
# torch wheel indexes

TORCH_INDEX_HOST = "download.pytorch.org"
_TAG_RE = re.compile(r"^(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)$", re.I)
_ALL_VARIANTS = re.compile(r"download\.pytorch\.org/whl(?:/nightly)?(?:/(?:torch|torchvision|torchaudio))?$")


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
    if official and _ALL_VARIANTS.search(lowered):
        # the index's root (/whl, /whl/nightly) and its per-project pages (/whl/torch/, read with -f as a page of
        # links) list every variant's wheels
        return TorchIndex(u, None, nightly="/nightly" in lowered, official=True)
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
