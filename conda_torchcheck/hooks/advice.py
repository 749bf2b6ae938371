"""The post-solve guard's advice: the user's own command, corrected, and checked by conda's solver.

When the guard warns, nothing has happened yet: a fix written for the env as it would be after the transaction
(``conda remove --force cpuonly``, then an install) is not what the user should run. What they should run is the
command they typed, with the conflicting specs changed, so the advice is built from that command
(``context._argparse_args``: the verb, the target, the channels, the specs) by a few edits derived from the
findings:

- drop the specs of one side of a cpu/CUDA mix (TC102: keep the CUDA side, or keep the CPU side);
- unpin the companions built for another torch (TC104), so the solver picks the ones built for this torch;
- apply a finding's own conda fix to the request (``conda remove --force NAMES`` drops those specs; ``conda
  install SPECS`` replaces the specs of the same names, keeping the user's version where the fix names none).

Each corrected request is solved with conda's own solver (``solve_final_state``: the same channels, nothing
downloaded, no hooks run) and the guard's checks run on the result; only a request that solves and leaves no
serious finding is offered. A ``create`` stays a ``create`` (its prefix does not exist yet); ``env create/update``
read their specs from a file, which the advice names instead of a command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conda_torchcheck.checks.commands import CONDA_VALUED_OPTIONS, operands
from conda_torchcheck.findings import Finding

#: conda package names that select a cpu or a CUDA build of the torch family
CPU_SELECTORS = frozenset({"cpuonly", "pytorch-cpu"})
CUDA_SELECTORS = frozenset({"pytorch-cuda", "pytorch-gpu", "cudatoolkit", "cuda-toolkit"})
COMPANIONS = ("torchvision", "torchaudio", "torchtext")
#: at most this many corrected requests are solved per warning (each is a solve)
MAX_CANDIDATES = 4


@dataclass(frozen=True)
class Request:
    """What the user asked conda for, as conda parsed it."""

    verb: str  # create, install, update, env create, env update
    target: tuple[str, ...]  # ("-p", PREFIX) or ("-n", NAME)
    channels: tuple[str, ...]
    override_channels: bool
    specs: tuple[str, ...]
    files: tuple[str, ...] = ()

    def command(self) -> str:
        parts = ["conda", *self.verb.split(), *self.target]
        if self.override_channels:
            parts.append("--override-channels")
        for channel in self.channels:
            parts += ["-c", channel]
        parts += self.specs
        return " ".join(_quote(p) for p in parts)


@dataclass(frozen=True)
class Advice:
    #: the commands to run instead, in order (a preceding ``conda remove`` where the env already holds a
    #: package the request cannot drop)
    commands: tuple[str, ...]
    #: what the edit keeps (cuda, cpu) when there are alternatives
    keeps: str | None = None
    verified: bool = True


_VERBS = {
    "conda.cli.main_create.execute": "create",
    "conda.cli.main_install.execute": "install",
    "conda.cli.main_update.execute": "update",
}


def request_from(args: dict[str, Any] | None) -> Request | None:
    """The request in conda's parsed arguments; None for a command the guard cannot rewrite."""
    if not args:
        return None
    func = str(args.get("func") or "")
    verb = _VERBS.get(func)
    if verb is None:
        if func.endswith("main_env_create.execute") or func.endswith("main_env_update.execute"):
            verb = "env create" if "create" in func else "env update"
        else:
            return None
    files = tuple(str(f) for f in (args.get("file") or ()) if f)
    if isinstance(args.get("file"), str):
        files = (str(args["file"]),)
    if verb in ("create", "install", "update") and files:
        return None  # specs from a file (--file): nothing typed to correct
    if args.get("prefix"):
        target: tuple[str, ...] = ("-p", str(args["prefix"]))
    elif args.get("name"):
        target = ("-n", str(args["name"]))
    else:
        target = ()
    return Request(
        verb=verb,
        target=target,
        channels=tuple(str(c) for c in (args.get("channel") or ())),
        override_channels=bool(args.get("override_channels")),
        specs=tuple(str(s) for s in (args.get("packages") or ())),
        files=files,
    )


def spec_name(spec: str) -> str:
    """The package name of a conda spec: ``pytorch`` for ``pytorch::pytorch=2.5.1=*cuda*`` or ``pytorch>=2``."""
    text = spec.strip().split("::")[-1]
    return re.split(r"[\s=<>!~\[]", text, maxsplit=1)[0].lower()


def spec_build(spec: str) -> str:
    """The build part of ``name=version=build`` (or ``[build=...]``), else ''."""
    m = re.search(r"build\s*=\s*['\"]?([^'\"\],]+)", spec)
    if m:
        return m.group(1)
    parts = spec.split("::")[-1].split("=")
    return parts[2] if len(parts) >= 3 and parts[1] else ""


def _side(spec: str) -> str | None:
    name, build = spec_name(spec), spec_build(spec).lower()
    if name in CPU_SELECTORS or "cpu" in build:
        return "cpu"
    if name in CUDA_SELECTORS or "cuda" in build or "gpu" in build:
        return "cuda"
    return None


def _kept_side(request: Request) -> str | None:
    """cuda or cpu when every spec of the request that selects a side selects that one."""
    sides = {_side(s) for s in request.specs} - {None}
    return sides.pop() if len(sides) == 1 else None


def _unpinned(spec: str) -> str:
    channel = spec.split("::")[0] + "::" if "::" in spec else ""
    return channel + spec_name(spec)


def candidates(request: Request, findings: Sequence[Finding]) -> list[tuple[Request, tuple[str, ...], str | None]]:
    """Corrected requests (each with the commands that must run before it, and what it keeps), minimal edits
    first, duplicates dropped."""
    out: list[tuple[Request, tuple[str, ...], str | None]] = []
    ids = {f.id for f in findings}
    if "TC102" in ids:
        for keep, drop in (("cuda", "cpu"), ("cpu", "cuda")):
            specs = tuple(s for s in request.specs if _side(s) != drop)
            if specs != request.specs and any(_side(s) == keep or spec_name(s) == "pytorch" for s in specs):
                out.append((replace(request, specs=specs), (), keep))
    for f in findings:
        if f.id == "TC104":
            names = [n for n in COMPANIONS if n in f.evidence]
            specs = tuple(_unpinned(s) if spec_name(s) in names else s for s in request.specs)
            if specs != request.specs:
                out.append((replace(request, specs=specs), (), None))
        for fix in f.fixes:
            if fix.kind == "conda" and fix.commands:
                applied = _apply_fix(request, fix.commands)
                if applied is not None:
                    out.append((*applied, _kept_side(applied[0]) if "TC102" in ids else None))
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    unique = []
    for req, before, keep in out:
        key = (req.specs + req.channels, before)
        if key not in seen and req.specs:
            seen.add(key)
            unique.append((req, before, keep))
    return unique[:MAX_CANDIDATES]


def _apply_fix(request: Request, commands: Iterable[str]) -> tuple[Request, tuple[str, ...]] | None:
    """The request with a fix's ``conda remove`` / ``conda install`` steps folded in; None if it has other steps."""
    specs = list(request.specs)
    channels = list(request.channels)
    before: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if words[:2] == ["conda", "remove"]:
            names = [w for w in operands(words[2:], CONDA_VALUED_OPTIONS) if w]
            typed = {spec_name(s) for s in specs}
            specs = [s for s in specs if spec_name(s) not in names]
            left = [n for n in names if n not in typed]
            if left and request.verb != "create":  # already in the env: it has to go first
                # aimed as the user aimed their own command (-p PATH or -n NAME), not as the finding named the env
                force = ["--force"] if "--force" in words else []
                before.append(" ".join(_quote(w) for w in ["conda", "remove", *request.target, *force, *left]))
        elif words[:2] == ["conda", "install"]:
            fix_specs = operands(words[2:], CONDA_VALUED_OPTIONS)
            for channel in _channels(words[2:]):
                if channel not in channels:
                    channels.append(channel)
            for fs in fix_specs:
                name = spec_name(fs)
                typed = next((s for s in specs if spec_name(s) == name), None)
                merged = _merge(typed, fs) if typed else fs
                specs = [merged if spec_name(s) == name else s for s in specs] if typed else [*specs, merged]
        else:
            return None
    verb = request.verb
    if verb == "update" and any(s != spec_name(s) for s in specs):
        verb = "install"  # conda update takes package names only ("Invalid spec for 'conda update'")
    return replace(request, verb=verb, specs=tuple(specs), channels=tuple(channels)), tuple(before)


def _channels(words: list[str]) -> list[str]:
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-c", "--channel")]


def _merge(typed: str, fix: str) -> str:
    """The fix's spec, with the user's version kept where the fix names none (``pytorch=2.5.1`` and
    ``conda-forge::pytorch=*=cuda*`` make ``conda-forge::pytorch=2.5.1=*cuda*``)."""
    fix_parts = fix.split("::")[-1].split("=")
    typed_parts = typed.split("::")[-1].split("=")
    channel = fix.split("::")[0] + "::" if "::" in fix else (typed.split("::")[0] + "::" if "::" in typed else "")
    version = fix_parts[1] if len(fix_parts) > 1 and fix_parts[1] not in ("", "*") else ""
    if not version and len(typed_parts) > 1:
        version = typed_parts[1]
    build = fix_parts[2] if len(fix_parts) > 2 else (typed_parts[2] if len(typed_parts) > 2 else "")
    if build and not build.startswith("*") and build.endswith("*"):
        build = "*" + build
    text = f"{channel}{spec_name(fix)}"
    if version or build:
        text += f"={version or '*'}"
    if build:
        text += f"={build}"
    return text


def _quote(word: str) -> str:
    """Double-quoted when a shell would expand or split it (``*``, ``<``, ``>``, spaces); works in bash and cmd."""
    return f'"{word}"' if re.search(r"[*?<>|!\s;&()$`'\"]", word) else word


Judge = Callable[[Request], bool | None]


def advise(request: Request, findings: Sequence[Finding], judge: Judge) -> list[Advice]:
    """At most two corrected commands that ``judge`` (a solve plus the guard's checks) accepts: True accepted,
    False refused, None could not be asked (then the candidate is shown as not verified only if nothing was)."""
    if request.verb.startswith("env "):
        return []
    accepted: list[Advice] = []
    unverified: list[Advice] = []
    keeps_seen: set[str | None] = set()
    for req, before, keep in candidates(request, findings):
        if keep in keeps_seen and keep is not None:
            continue
        # a request that needs a removal first cannot be solved as one request: not verified
        verdict = judge(req) if not before else None
        advice = Advice((*before, req.command()), keep, verified=bool(verdict))
        if verdict:
            accepted.append(advice)
            keeps_seen.add(keep)
            if keep is None or len(accepted) == 2:
                break
        elif verdict is None:
            unverified.append(advice)
    return accepted[:2] or unverified[:1]


def solver_judge(prefix: str, subdir: str, evaluate: Callable[..., Any]) -> Judge:
    """A judge that solves the request with conda's configured solver and runs the guard's checks on the result."""

    def judge(request: Request) -> bool | None:
        try:
            from conda.base.context import context
            from conda.exceptions import PackagesNotFoundError, ResolvePackageNotFound, UnsatisfiableError
        except Exception:
            return None
        channels = list(request.channels)
        if not request.override_channels:
            channels += [c for c in context.channels if c not in channels]
        try:
            solver_class = context.plugin_manager.get_cached_solver_backend()
            solver = solver_class(
                prefix,
                channels,
                context.subdirs,
                specs_to_add=request.specs,
                command="create" if request.verb == "create" else "install",
            )
            final = solver.solve_final_state()
        except (UnsatisfiableError, ResolvePackageNotFound, PackagesNotFoundError):
            return False
        except Exception as exc:
            if "unsatisf" in type(exc).__name__.lower() or "conflict" in str(exc).lower():
                return False
            return None
        outcome = evaluate(Path(prefix), subdir, (), (), tuple(final))
        return outcome is None or not outcome.serious

    return judge
