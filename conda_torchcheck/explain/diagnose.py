"""From recognised errors to causes: rank them, rule out what the env cannot have, confirm with the checks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from conda_torchcheck.explain.patterns import Cause, CauseRef, PatternTable, table
from conda_torchcheck.explain.recognise import Match, PasteClues
from conda_torchcheck.findings import Finding, Severity
from conda_torchcheck.knowledge import parse_version
from conda_torchcheck.messages import Absent, Text, msg

if TYPE_CHECKING:
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.inventory.model import Environment
    from conda_torchcheck.inventory.torch import TorchInfo

# statuses of a cause
POSSIBLE = "possible"  # no env was checked
CONFIRMED = "confirmed"  # a finding on the env proves it
RULED_OUT = "ruled-out"  # the env cannot have it (wrong OS, torch version, source ...)
NOT_FOUND = "not-found"  # the checks that would show it found nothing
UNVERIFIABLE = "unverifiable"  # files cannot show it (a running process decides)

#: finding prefixes never used to confirm a cause (the import test itself feeds explain)
NEVER_CONFIRMING = ("TC7",)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class RankedCause:
    cause: Cause
    rank: int
    status: str = POSSIBLE
    #: the error names something this cause is specifically about (the DLL, the symbol ...)
    specific: bool = False
    confirmed_by: tuple[Finding, ...] = ()
    #: a confirming finding names what the error names (the same DLL, library, symbol or version)
    exact: bool = False
    ruled_out: Text | None = None
    commands: tuple[str, ...] = ()
    #: the paste itself makes this cause unlikely (a conda-only cause for a python.org path, a torch-2.3.0 cause
    #: when the paste shows torch 2.5.1): why; such causes are ranked after the others, never stated as fact
    doubt: Text | None = None

    @property
    def id(self) -> str:
        return self.cause.id

    @property
    def title(self) -> Text:
        return msg(f"explain.cause.{self.cause.id}.title", **self._params)

    @property
    def tell(self) -> Text:
        return msg(f"explain.cause.{self.cause.id}.tell", **self._params)

    @property
    def fix(self) -> Text:
        return msg(f"explain.cause.{self.cause.id}.fix", **self._params)

    # the parameters of the match, set by diagnose() (kept out of equality)
    _params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "id": self.cause.id,
            "rank": self.rank,
            "status": self.status,
            "specific": self.specific,
            "title": self.title.render(lang),
            "how_to_tell": self.tell.render(lang),
            "fix": self.fix.render(lang),
            "commands": list(self.commands),
            "confirmed_by": [f.id for f in self.confirmed_by],
            "exact": self.exact,
            "ruled_out_because": self.ruled_out.render(lang) if self.ruled_out else None,
            "doubt": self.doubt.render(lang) if self.doubt else None,
            "checked_by": list(self.cause.confirm),
            "sources": list(self.cause.sources),
        }


@dataclass(frozen=True)
class Diagnosis:
    match: Match
    causes: tuple[RankedCause, ...]
    #: notes about the relation between the error and the checked env (other OS, other prefix ...)
    notes: tuple[Text, ...] = ()
    env_checked: bool = False

    @property
    def params(self) -> dict[str, str]:
        return pattern_params(self.match)

    @property
    def title(self) -> Text:
        return msg(f"explain.pattern.{self.match.pattern_id}.title", **self.params)

    @property
    def explanation(self) -> Text:
        return msg(f"explain.pattern.{self.match.pattern_id}.explanation", **self.params)

    @property
    def root_cause(self) -> RankedCause | None:
        """The most likely confirmed cause; one whose evidence names the same DLL/library/symbol comes first."""
        confirmed = [c for c in self.causes if c.status == CONFIRMED]
        return next((c for c in confirmed if c.exact), confirmed[0] if confirmed else None)

    @property
    def verdict(self) -> Text:
        root = self.root_cause
        if root is not None:
            return msg("explain.verdict.root_cause", cause=root.title, finding=root.confirmed_by[0].id)
        if self.env_checked:
            return msg("explain.verdict.not_reproduced")
        return msg("explain.verdict.ranked")

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        root = self.root_cause
        return {
            **self.match.to_dict(),
            "title": self.title.render(lang),
            "explanation": self.explanation.render(lang),
            "verdict": self.verdict.render(lang),
            "root_cause": root.id if root else None,
            "causes": [c.to_dict(lang) for c in self.causes],
            "notes": [n.render(lang) for n in self.notes],
        }


def pattern_params(match: Match) -> dict[str, str]:
    """The match's fields with a readable stand-in for each field a message may use but the text did not name."""
    params = {k: Absent("explain.unnamed") for k in _MESSAGE_FIELDS}
    params.update(match.fields)
    params["supported_python"] = supported_python(match.fields.get("requirement", ""))
    return params  # type: ignore[return-value]


def supported_python(requirement: str) -> str:
    """A Python the release tables say has wheels of the torch a requirement pins (its newest; torch==2.1.0:
    3.11), or of the newest release the tables know when it pins none."""
    from conda_torchcheck.knowledge import torch_release, torch_releases

    pinned = _PINNED_TORCH.match(requirement)
    release = torch_release(pinned.group(1)) if pinned else None
    return (release or torch_releases()[-1]).python[1]


# every field a pattern can extract (the message templates may use any of them)
_MESSAGE_FIELDS = (
    "dll",
    "dll_path",
    "module",
    "package",
    "reason",
    "runtime",
    "other",
    "library",
    "library_path",
    "symbol",
    "symbol_version",
    "version",
    "required_by",
    "found",
    "found_cuda",
    "sm",
    "supported",
    "op",
    "requirement",
    "leftover",
    "site_path",
    "needed_gcc",
    "library_role",
    "dll_role",
    "loader_package",
    "library_cuda",
    "provider",
    "provider_cuda",
    "have",
    "need",
    "code",
    "built_for",
    "have_torch",
    "needed_macos",
    "required_by_role",
    "torch_init",
    "newest",
    "attribute",
    "module_path",
    "built_api",
    "numpy_api",
    "numpy",
    "requirement_version",
    "incompatible",
    "required_path",
    "bare",
    "dependency",
    "array_api",
    "platform_tag",
    "poetry",
    "base_available",
    "versions",
    "tested_python",
    "python",
    "wheel",
    "wheel_python",
    "wheel_platform",
    "subdir",
    "missing_path",
    "long_path_hint",
    "length",
    "cudatoolkit_from",
    "needs",
    "range",
)


# --- ranking -----------------------------------------------------------------------------------------------


def _entry_state(ref: CauseRef, fields: dict[str, str]) -> str:
    """``applies`` (every condition's field is named and matches), ``contradicted`` (a named field does not
    match) or ``unknown`` (a condition's field is not named in the text)."""
    for key, regex in ref.unless.items():
        value = fields.get(key)
        if value is not None and regex.search(value):
            return "contradicted"
    state = "applies"
    for key, regex in ref.when.items():
        value = fields.get(key)
        if value is None:
            state = "unknown"
        elif regex.search(value):
            continue
        # an elided path ("D:\...\torch\lib\shm.dll") that does not match says nothing about the part left out;
        # one whose visible part matches does
        elif key.endswith("_path") and ("..." in value or "…" in value):
            state = "unknown"
        else:
            return "contradicted"
    return state


def rank_causes(
    match: Match,
    seen_patterns: Iterable[str] = (),
    tbl: PatternTable | None = None,
    clues: PasteClues | None = None,
) -> list[RankedCause]:
    """The pattern's causes in order.

    Entries are read in table order. A conditional entry (``when``) counts only when the text names every field
    it tests and they match; when the text names a field that does not match, the cause is contradicted and
    later entries for it are skipped too (fbgemm.dll's libomp140 cause is not offered for shm.dll). Unconditional
    entries always count. A cause whose ``hints`` pattern or clue was also seen in the text moves to the front.
    A cause whose premise the paste's clues contradict (``paste_doubt``) moves behind all others.
    """
    tbl = tbl or table()
    clues = clues or PasteClues()
    pattern = tbl.pattern(match.pattern_id)
    if pattern.platform != "any" and clues.facts.get("os") not in (None, pattern.platform):
        # the error's own OS outweighs a clue elsewhere in the paste (an article that mentions macOS in passing)
        clues = replace(clues, facts={**clues.facts, "os": pattern.platform})
    seen = set(seen_patterns) | clues.ids
    # `when`/`unless` may test what the paste states besides the error: paste_torch, paste_os ...
    fields = {**{f"paste_{k}": v for k, v in clues.facts.items()}, **match.fields}
    fields.update(_release_facts(fields))
    contradicted: set[str] = set()
    hinted: list[tuple[str, bool]] = []
    ordered: list[tuple[str, bool]] = []
    for ref in pattern.causes:
        if ref.cause in contradicted or any(cid == ref.cause for cid, _ in hinted + ordered):
            continue
        if ref.hint_only and not set(ref.hints) & seen:
            continue
        if ref.when or ref.unless:
            state = _entry_state(ref, fields)
            if state == "contradicted":
                if not ref.soft:
                    contradicted.add(ref.cause)
                continue
            if state == "unknown":
                continue
        item = (ref.cause, bool(ref.when))
        (hinted if set(ref.hints) & seen else ordered).append(item)
    items = [(cid, specific or cid in {h for h, _ in hinted}) for cid, specific in hinted + ordered]
    doubts = {cid: paste_doubt(tbl.causes[cid], clues) for cid, _ in items}
    items = [i for i in items if doubts[i[0]] is None] + [i for i in items if doubts[i[0]] is not None]
    return [
        RankedCause(cause=tbl.causes[cid], rank=i, specific=specific, doubt=doubts[cid])
        for i, (cid, specific) in enumerate(items, 1)
    ]


_PINNED_TORCH = re.compile(r"^torch\s*(?:==?=?|\(\s*)\s*(\d+\.\d+)(?:\.\d+)?")
#: an exact pin, a local variant (+cpu, +cu118) included: each variant of a release is built for the same Pythons as
#: its PyPI wheels (download.pytorch.org's cpXY tags per release), so PyPI's records answer for it too
_EXACT_TORCH = re.compile(r"^torch\s*(?:==?=?|\(\s*)\s*(\d+\.\d+\.\d+)(?:\+[A-Za-z0-9.]+)?(?![\w.+])")


_LOCAL_PIN = re.compile(r"^torch\s*==?=?\s*(\d+\.\d+(?:\.\d+)?)\+(?:cu\d+|rocm[\d.]+)")


_WHEEL_PYTHON = re.compile(r"^cp(\d)(\d+)$")


def _release_facts(fields: dict[str, str]) -> dict[str, str]:
    """What the release tables and pip's own list say about the torch a requirement pins:
    ``python_supported`` = yes / no (torch 1.9.1 has no wheels for Python 3.10; knowledge/torch_releases);
    ``base_available`` = yes when a ``+cuXXX`` pin's plain version is in pip's ``from versions`` list (the
    interpreter has that release, only not as a CUDA build: a platform without CUDA builds, i.e. a Mac);
    ``wheel_python_matches`` = yes / no: a wheel file's cpXY tag is the Python the paste states."""
    out: dict[str, str] = {}
    wheel_python = _WHEEL_PYTHON.match(fields.get("wheel_python", ""))
    if wheel_python and fields.get("paste_python"):
        # the wheel's cpXY tag against the Python the paste states: a wheel for another Python, or (the same
        # Python) the platform or the interpreter's bitness is what the wheel does not fit
        stated = fields["paste_python"].split(".")[:2]
        out["wheel_python_matches"] = "yes" if stated == [wheel_python.group(1), wheel_python.group(2)] else "no"
    wheel_platform = fields.get("wheel_platform", "").lower()
    paste_os = fields.get("paste_os")
    if wheel_platform and paste_os in ("linux", "windows", "darwin") and wheel_platform != "any":
        # the wheel's platform tag against the OS the paste is from: a linux_x86_64 URL on a Mac
        wheel_os = (
            "windows" if wheel_platform.startswith("win") else "darwin" if "macosx" in wheel_platform else "linux"
        )
        out["wheel_os_matches"] = "yes" if wheel_os == paste_os else "no"
    local = _LOCAL_PIN.match(fields.get("requirement", ""))
    if (
        local
        and fields.get("versions")
        and re.search(rf"(?<![\d.]){re.escape(local.group(1))}(?![\d.])", fields["versions"])
    ):
        out["base_available"] = "yes"
    pinned = _PINNED_TORCH.match(fields.get("requirement", ""))
    python = fields.get("paste_python")
    if not pinned or not python:
        return out
    from conda_torchcheck.knowledge import pypi, torch_release

    minor = ".".join(python.split(".")[:2])
    # PyPI's records of the release's files first (torch 1.13.1 has a cp311 wheel for Linux x86_64 only, outside the
    # 3.7-3.10 of its notes): for the paste's OS, else only what holds on every platform
    # the paste's OS, else the main platform of each (what must hold everywhere when the paste does not say)
    platforms = pypi.os_platforms(fields.get("paste_os", "")) or ("win_amd64", "macosx_arm64", "manylinux_x86_64")
    exact = _EXACT_TORCH.match(fields.get("requirement", ""))
    verdicts = [pypi.has_wheel("torch", exact.group(1), minor, p) for p in platforms] if exact else [None]
    if None not in verdicts:
        if all(verdicts) or (any(verdicts) and fields.get("paste_os")):
            out["python_supported"] = "yes"
            return out
        if not any(verdicts):
            out["python_supported"] = "no"
            return out
        return out  # some platforms only, and the paste does not say which OS: undecided
    release = torch_release(pinned.group(1))
    have = parse_version(minor)
    if release is None or have is None or not release.python:
        return out
    low, high = (parse_version(v) for v in release.python)
    out["python_supported"] = "yes" if low <= have <= high else "no"
    return out


def paste_doubt(cause: Cause, clues: PasteClues) -> Text | None:
    """Why the paste itself contradicts ``cause``'s premise, or None.

    The cause's ``contradicted_by`` clues (unless a ``supported_by`` clue is there too), then its ``applies``
    against the facts the paste states (OS, how torch was installed, torch/Python version, CPU/CUDA build).
    """
    if set(cause.contradicted_by) & clues.ids and not set(cause.supported_by) & clues.ids:
        clue = next(c for c in cause.contradicted_by if c in clues.ids)
        return msg("explain.doubt.clue", clue=msg(f"explain.clue.{clue}"))
    facts, a = clues.facts, cause.applies
    if a.os and facts.get("os") and facts["os"] not in a.os:
        return msg("explain.doubt.os", expected=", ".join(os_name(o) for o in a.os), actual=os_name(facts["os"]))
    if a.source and facts.get("source") and facts["source"] not in a.source:
        return msg("explain.doubt.source", expected=", ".join(a.source), actual=facts["source"])
    if a.variant and facts.get("variant") and facts["variant"] not in a.variant:
        return msg("explain.doubt.variant", expected=", ".join(a.variant), actual=facts["variant"])
    if a.torch and _spec_holds(a.torch, facts.get("torch")) is False:
        return msg("explain.doubt.torch", spec=a.torch, actual=facts["torch"])
    if a.python and _spec_holds(a.python, facts.get("python")) is False:
        return msg("explain.doubt.python", spec=a.python, actual=facts["python"])
    return None


# --- env facts -----------------------------------------------------------------------------------------------


def _spec_holds(spec: str, version: str | None) -> bool | None:
    v = parse_version(version.split("+", 1)[0] if version else None)
    if v is None:
        return None
    try:
        return SpecifierSet(spec).contains(v, prereleases=True)
    except InvalidSpecifier:
        return None


def ruled_out_reason(cause: Cause, env: Environment, torch: TorchInfo | None) -> Text | None:
    """Why ``cause`` cannot be what happened in ``env``, or None when it can."""
    a = cause.applies
    if a.os and env.os not in a.os:
        return msg("explain.ruled_out.os", expected=", ".join(os_name(o) for o in a.os), actual=os_name(env.os))
    if torch is None or not torch.installed:
        return None
    if a.source and torch.source not in a.source:
        return msg("explain.ruled_out.source", expected=", ".join(a.source), actual=torch.source)
    if a.variant and torch.variant not in ("unknown", *a.variant):
        return msg("explain.ruled_out.variant", expected=", ".join(a.variant), actual=torch.variant)
    if a.torch and _spec_holds(a.torch, torch.version) is False:
        return msg("explain.ruled_out.torch", spec=a.torch, actual=torch.version or "?")
    if a.cuda and torch.cuda_version and _spec_holds(a.cuda, torch.cuda_version) is False:
        return msg("explain.ruled_out.cuda", spec=a.cuda, actual=torch.cuda_version)
    if a.python and _spec_holds(a.python, env.python.version) is False:
        return msg("explain.ruled_out.python", spec=a.python, actual=env.python.version or "?")
    return None


def _commands(cause: Cause, fields: dict[str, str], prefix: str | None) -> tuple[str, ...]:
    values = {**fields, "prefix": prefix or "<prefix>"}
    out = []
    for template in cause.commands:
        if all(name in values for name in _PLACEHOLDER.findall(template)):
            out.append(_PLACEHOLDER.sub(lambda m: values[m.group(1)], template))
    return tuple(out)


# --- confirmation ------------------------------------------------------------------------------------------


def _matches_prefix(finding_id: str, prefixes: Sequence[str]) -> bool:
    return any(finding_id.upper().startswith(p.upper()) for p in prefixes)


def _confirm_entry_matches(f: Finding, entry: str) -> tuple[bool, bool]:
    """(matches, precise): ``TC301`` / ``TC3`` match finding ids; ``TC301.libomp140`` matches that catalog variant
    only, and is precise enough that ``mentions`` are not needed."""
    if "." in entry:
        return f.title.key.upper().startswith(entry.upper() + "."), True
    return f.id.upper().startswith(entry.upper()), False


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def finding_text(f: Finding) -> str:
    """Everything a finding says, in English, lower-case: what ``mentions`` are searched in (paths unescaped)."""
    parts = [f.id, f.title.render("en"), f.explanation.render("en")]
    parts.extend(_strings(f.to_dict("en")["evidence"]))
    parts.extend(fix.summary.render("en") + " " + " ".join(fix.commands) for fix in f.fixes)
    return "\n".join(parts).lower()


def confirming_findings(cause: Cause, fields: dict[str, str], findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Findings (errors and warnings) that show ``cause`` on the env: an id or catalog variant listed in
    ``confirm``; for id/prefix entries the finding must also mention one of ``mentions`` when the cause has any."""
    if not cause.confirm:
        return ()
    mentions = []
    for m in cause.mentions:
        names = _PLACEHOLDER.findall(m)
        if all(n in fields for n in names):
            mentions.append(_PLACEHOLDER.sub(lambda g: fields[g.group(1)], m).lower())
    out = []
    for f in findings:
        if (f.severity is Severity.INFO and not cause.confirm_info) or _matches_prefix(f.id, NEVER_CONFIRMING):
            continue
        hits = [_confirm_entry_matches(f, entry) for entry in cause.confirm]
        if not any(matched for matched, _ in hits):
            continue
        precise = any(matched and exact for matched, exact in hits)
        if cause.mentions and not precise:
            if not mentions or not any(m in finding_text(f) for m in mentions):
                continue
        out.append(f)
    return tuple(out)


def _torch_installed(ctx: CheckContext) -> Finding | None:
    from conda_torchcheck.checks.base_env import torch_here_not_there

    return torch_here_not_there(ctx)


#: env facts a cause's ``confirm_env`` names: each builds the finding that shows it on the env, or None
ENV_FACTS = {"torch-installed": _torch_installed}


#: fields that identify *this* error: a confirming finding that names them describes exactly this failure
IDENTIFYING_FIELDS = ("dll", "library", "symbol", "version")


def names_the_error(findings: Sequence[Finding], fields: dict[str, str]) -> bool:
    wanted = [fields[k].lower() for k in IDENTIFYING_FIELDS if fields.get(k)]
    return bool(wanted) and any(all(w in finding_text(f) for w in wanted) for f in findings)


# --- the whole diagnosis -------------------------------------------------------------------------------------

_WIN_SITE = re.compile(r"^(?P<prefix>.*?)[\\/]+Lib[\\/]+site-packages(?:[\\/]|$)", re.IGNORECASE)
_POSIX_SITE = re.compile(r"^(?P<prefix>/.*?)/lib(?:64)?/python\d\.\d+t?/site-packages(?:/|$)")
_POSIX_BINLIB = re.compile(r"^(?P<prefix>/.*?)/bin/\.\./lib/")


def prefix_named_by(match: Match) -> str | None:
    """The env prefix a path in the error points into (…\\Lib\\site-packages, …/lib/python3.X/site-packages)."""
    for key, value in match.fields.items():
        if not key.endswith("_path"):
            continue
        for regex in (_WIN_SITE, _POSIX_SITE, _POSIX_BINLIB):
            m = regex.match(value.replace("\\\\", "\\"))
            if m and m.group("prefix"):
                return m.group("prefix")
    return None


def same_place(a: str, b: str) -> bool:
    """Case- and separator-insensitive path equality; ``/mnt/c/x`` (WSL) equals ``C:\\x``."""

    def norm(p: str) -> str:
        p = p.replace("\\\\", "\\").replace("\\", "/").rstrip("/").lower()
        m = re.match(r"^/mnt/([a-z])(/|$)", p)
        if m:
            p = f"{m.group(1)}:/" + p[m.end() :]
        return p.rstrip("/")

    return norm(a) == norm(b)


OS_NAMES = {"windows": "Windows", "linux": "Linux", "darwin": "macOS"}


def os_name(os_: str) -> str:
    return OS_NAMES.get(os_, os_)


def _other_os(tbl: PatternTable, match: Match, env: Environment) -> Text | None:
    """The env cannot have produced an error of another OS: every cause is ruled out, with this reason."""
    platform = tbl.pattern(match.pattern_id).platform
    if platform in ("windows", "linux") and env.os != platform:
        return msg("explain.ruled_out.os", expected=os_name(platform), actual=os_name(env.os))
    return None


def diagnose(
    matches: Sequence[Match],
    ctx: CheckContext | None = None,
    *,
    findings: Sequence[Finding] | None = None,
    tbl: PatternTable | None = None,
    clues: PasteClues | None = None,
) -> tuple[list[Diagnosis], list[Finding], list[str]]:
    """Rank the causes of every match; with ``ctx``, run the checks that can confirm them.

    Returns (diagnoses, the findings of the checks that ran, the finding prefixes requested).
    ``findings`` skips running the checks (they were run already, e.g. by ``check --import-test``).
    """
    tbl = tbl or table()
    if ctx is None:
        return without_env(matches, tbl, clues), [], []
    seen = [m.pattern_id for m in matches]
    ranked = [rank_causes(m, seen, tbl, clues) for m in matches]

    env, torch = ctx.env, ctx.torch
    wanted: list[str] = []
    for match, causes in zip(matches, ranked):
        if _other_os(tbl, match, env):
            continue
        for rc in causes:
            if ruled_out_reason(rc.cause, env, torch) is None:
                for entry in rc.cause.confirm:
                    prefix = entry.split(".", 1)[0]  # TC301.libomp140 is produced by the checks of TC301
                    if prefix not in wanted:
                        wanted.append(prefix)
    if findings is None:
        from conda_torchcheck.checks import run_checks

        findings = run_checks(ctx, only=wanted, skip=list(NEVER_CONFIRMING)) if wanted else []
    diagnoses = []
    env_findings: dict[str, Finding | None] = {}
    for match, causes in zip(matches, ranked):
        pattern = tbl.pattern(match.pattern_id)
        other_os = _other_os(tbl, match, env)
        out = []
        for rc in causes:
            params = pattern_params(match)
            commands = _commands(rc.cause, match.fields, str(env.prefix))
            reason = other_os or ruled_out_reason(rc.cause, env, torch)
            if reason is not None:
                status, confirmed = RULED_OUT, ()
            elif not rc.cause.checkable:
                status, confirmed = UNVERIFIABLE, ()
            else:
                confirmed = confirming_findings(rc.cause, match.fields, findings)
                fact = rc.cause.confirm_env
                if fact is not None and not confirmed:
                    if fact not in env_findings:
                        env_findings[fact] = ENV_FACTS[fact](ctx)
                    confirmed = (env_findings[fact],) if env_findings[fact] is not None else ()
                status = CONFIRMED if confirmed else NOT_FOUND
            out.append(
                RankedCause(
                    cause=rc.cause,
                    rank=rc.rank,
                    status=status,
                    specific=rc.specific,
                    confirmed_by=confirmed,
                    exact=names_the_error(confirmed, match.fields),
                    ruled_out=reason,
                    commands=commands,
                    doubt=rc.doubt,
                    _params=params,
                )
            )
        notes = match_notes(match)
        if other_os is not None:
            notes.append(msg("explain.note.other_os", error_os=os_name(pattern.platform), env_os=os_name(env.os)))
        named = prefix_named_by(match)
        if named and not same_place(named, str(env.prefix)):
            notes.append(msg("explain.note.other_prefix", named=named, checked=str(env.prefix)))
        if not torch.installed and match.pattern_id not in ("no-matching-distribution", "invalid-distribution"):
            notes.append(msg("explain.note.no_torch", prefix=str(env.prefix)))
        diagnoses.append(Diagnosis(match, tuple(out), tuple(notes), env_checked=True))
    extra = [f for f in env_findings.values() if f is not None]
    return diagnoses, [*findings, *extra], wanted


def match_notes(match: Match) -> list[Text]:
    """What the error's own text adds, env or not: the provider a symbol's version tag names."""
    fields = match.fields
    if "provider" in fields and "symbol_version" in fields:
        key = "explain.note.provider_cuda" if "provider_cuda" in fields else "explain.note.provider"
        return [msg(key, **pattern_params(match))]
    return []


def without_env(
    matches: Sequence[Match], tbl: PatternTable | None = None, clues: PasteClues | None = None
) -> list[Diagnosis]:
    tbl = tbl or table()
    seen = [m.pattern_id for m in matches]
    out = []
    for m in matches:
        params = pattern_params(m)
        causes = tuple(
            RankedCause(
                cause=rc.cause,
                rank=rc.rank,
                specific=rc.specific,
                commands=_commands(rc.cause, m.fields, None),
                doubt=rc.doubt,
                _params=params,
            )
            for rc in rank_causes(m, seen, tbl, clues)
        )
        out.append(Diagnosis(m, causes, tuple(match_notes(m))))
    return out
