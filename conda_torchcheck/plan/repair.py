"""Carrying out a plan: record how to undo it, run its steps, check again, and undo it when the env is not better.

What runs: pip and conda steps (the env's own pip, conda's executable), file moves. What is only printed:
steps that need administrator rights, steps done by hand, and shell variables (the tool cannot change the
user's shell or ~/.bashrc; the re-check uses the variables as the step leaves them, so it shows whether the
step will do). Undo: conda's revision of the env before (``conda install --revision N``); for pip, the exact
version, wheel (direct_url.json) and index of every distribution a step touches, reinstalled ``--no-deps``, and
what a step added uninstalled.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conda_torchcheck.messages import translate
from conda_torchcheck.plan.actions import Action, normalize, parse
from conda_torchcheck.plan.model import Plan, Step

COMMAND_TIMEOUT = 1800.0


@dataclass
class StepRun:
    """``status``: applied, printed (needs a person: admin rights, the shell), failed, skipped (after a failure)."""

    step: Step
    status: str
    output: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.step.finding,
            "status": self.status,
            "output": self.output[-2000:],
            "seconds": round(self.seconds, 3),
        }


@dataclass
class Undo:
    """How to put the env back as it was before the plan ran."""

    #: pip: name -> {"version", "wheel", "index"} before; None for a distribution the plan adds
    pip: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    conda_revision: int | None = None
    variables: dict[str, str | None] = field(default_factory=dict)
    moved: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pip": self.pip,
            "conda_revision": self.conda_revision,
            "variables": self.variables,
            "moved": [list(m) for m in self.moved],
        }


def undo_record(report: Any, plan: Plan, variables: Mapping[str, str]) -> Undo:
    """Before anything runs: the exact state of everything a step may touch."""
    env = report.env
    undo = Undo(conda_revision=conda_revision(env.prefix))
    index = _torch_index_args(report)
    for step in plan.steps:
        names = {c.name for c in step.verification.changes}
        for command in step.commands:
            a = parse(command)
            names |= {t[1] for t in a.targets if t[0] == "package" and a.manager == "pip"}
            for t in a.targets:
                if t[0] == "variable" and t[1] not in undo.variables:
                    undo.variables[t[1]] = variables.get(t[1])
        for name in names:
            if name in undo.pip:
                continue
            dist = env.dist(name)
            if dist is None:
                undo.pip[name] = None
                continue
            wheel = str((dist.direct_url or {}).get("url") or "") or None
            undo.pip[name] = {"version": dist.version, "wheel": wheel, "index": index}
    return undo


def conda_revision(prefix: Path) -> int | None:
    """The env's current revision by conda-meta/history (``==> date <==`` blocks count from 0)."""
    try:
        text = (Path(prefix) / "conda-meta" / "history").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return max(0, len(re.findall(r"^==> .* <==\s*$", text, re.MULTILINE)) - 1)


def _torch_index_args(report: Any) -> list[str]:
    dist = report.torch.dist
    if dist is None:
        return []
    from urllib.parse import unquote, urlparse

    url = str((dist.direct_url or {}).get("url") or "")
    if url.startswith("file://"):
        return ["--find-links", os.path.dirname(unquote(urlparse(url).path))]
    tag = dist.local_version
    return ["--extra-index-url", f"https://download.pytorch.org/whl/{tag}"] if tag else []


def apply_plan(
    plan: Plan, report: Any, variables: dict[str, str], undo: Undo, lang: str | None = None
) -> list[StepRun]:
    """Run the steps in order; the first failure stops the rest (they are ``skipped``)."""
    runs: list[StepRun] = []
    failed = False
    for step in plan.steps:
        if failed:
            runs.append(StepRun(step, "skipped"))
            continue
        run = _run_step(step, report, variables, undo, lang)
        runs.append(run)
        failed = run.status == "failed"
    return runs


def _run_step(step: Step, report: Any, variables: dict[str, str], undo: Undo, lang: str | None) -> StepRun:
    if step.needs_admin or step.verification.status == "manual" or not step.commands:
        return StepRun(step, "printed")
    start = time.perf_counter()
    output: list[str] = []
    printed = False
    for command in step.commands:
        a = parse(command)
        if a.manager == "shell" or (a.manager == "conda" and a.verb == "set"):
            _set_variables(a, variables)
            printed = True  # the user's shell still needs it: the re-check shows what it will do
            output.append(translate("plan.for_your_shell", lang, command=command))
            continue
        if a.manager == "file" and a.verb in ("mv", "move") and len(a.args) >= 2:
            try:
                os.replace(a.args[0], a.args[1])
                undo.moved.append((a.args[0], a.args[1]))
            except OSError as exc:
                return StepRun(step, "failed", f"{command}: {exc}", time.perf_counter() - start)
            continue
        if a.manager in ("pip", "uv", "conda"):
            ok, text = run_command(command, a, report)
            output.append(text)
            if not ok:
                return StepRun(step, "failed", "\n".join(output), time.perf_counter() - start)
            continue
        return StepRun(step, "printed", command, time.perf_counter() - start)
    return StepRun(step, "printed" if printed else "applied", "\n".join(output), time.perf_counter() - start)


def _set_variables(a: Action, variables: dict[str, str]) -> None:
    if a.verb == "unset":
        for _kind, name in a.targets:
            variables[name] = ""
        return
    for word in a.args:
        if "=" in word and not word.startswith("-"):
            name, value = word.split("=", 1)
            variables[name] = value


def run_command(command: str, a: Action, report: Any) -> tuple[bool, str]:
    """Run one pip or conda command as written (no shell); (succeeded, its last output)."""
    words = shlex.split(command)
    if a.manager == "conda":
        if a.verb in ("install", "remove", "update") and "-y" not in words and "--yes" not in words:
            words.insert(2, "-y")
        from conda_torchcheck.plan.resolvers import running_in_conda

        if running_in_conda():  # running inside conda: its own command, in this process
            return _conda_in_process(words[1:])
        exe = os.environ.get("CONDA_EXE")
        if not exe or not os.path.isfile(exe):
            return False, "conda is not available here (CONDA_EXE unset): run this step yourself"
        words[0] = exe
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({"PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    try:
        proc = subprocess.run(
            words, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    tail = (proc.stdout + proc.stderr).strip()[-2000:]
    return proc.returncode == 0, tail


def _conda_in_process(args: list[str]) -> tuple[bool, str]:
    import contextlib
    import io

    from conda.cli.main import main_subshell

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main_subshell(*args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # conda's errors: the step failed, the plan rolls back
        return False, f"{type(exc).__name__}: {exc}"
    return not code, (out.getvalue() + err.getvalue()).strip()[-2000:]


def rollback(undo: Undo, report: Any, variables: dict[str, str]) -> list[str]:
    """Put back what the plan changed; the commands run (or the reason one failed)."""
    from conda_torchcheck.checks import commands as cmd

    done: list[str] = []
    for src, dst in reversed(undo.moved):
        try:
            os.replace(dst, src)
            done.append(f"moved back {dst} -> {src}")
        except OSError as exc:
            done.append(f"could not move back {dst}: {exc}")
    for name, value in undo.variables.items():
        if value is None:
            variables.pop(name, None)
        else:
            variables[name] = value
    env = report.env
    added = [n for n, before in undo.pip.items() if before is None and _installed_now(env.prefix, n)]
    if added:
        command = cmd.pip(env, "uninstall -y " + " ".join(added))
        ok, text = run_command(command, parse(command), report)
        done.append(command if ok else f"{command}: {text}")
    back = {n: b for n, b in undo.pip.items() if b is not None}
    if back:
        specs, extra = [], []
        for name, before in back.items():
            wheel = str(before.get("wheel") or "")
            if wheel.startswith("file://") and os.path.isfile(_file_path(wheel)):
                specs.append(_file_path(wheel))
            else:
                specs.append(f"{name}=={before['version']}")
            for word in before.get("index") or []:
                extra.append(word)
        args = ["install", "--no-deps", "--force-reinstall", *specs, *_dedupe_pairs(extra)]
        command = cmd.pip(env, " ".join(shlex.quote(w) for w in args))
        ok, text = run_command(command, parse(command), report)
        done.append(command if ok else f"{command}: {text}")
    if undo.conda_revision is not None and conda_revision(env.prefix) != undo.conda_revision:
        command = f'conda install -p "{env.prefix}" --revision {undo.conda_revision}'
        ok, text = run_command(command, parse(command), report)
        done.append(command if ok else f"{command}: {text}")
    return done


def _file_path(url: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(url).path)


def _dedupe_pairs(words: list[str]) -> list[str]:
    out: list[str] = []
    pairs: set[tuple[str, str]] = set()
    i = 0
    while i < len(words):
        if words[i].startswith("--") and i + 1 < len(words) and not words[i + 1].startswith("--"):
            pair = (words[i], words[i + 1])
            if pair not in pairs:
                pairs.add(pair)
                out += list(pair)
            i += 2
        else:
            if words[i] not in out:
                out.append(words[i])
            i += 1
    return out


def _installed_now(prefix: Path, name: str) -> bool:
    wanted = normalize(name)
    for site in list(Path(prefix).glob("lib/python3*/site-packages")) + [Path(prefix) / "Lib" / "site-packages"]:
        if not site.is_dir():
            continue
        for entry in site.glob("*.dist-info"):
            if normalize(entry.name[: -len(".dist-info")].rsplit("-", 1)[0]) == wanted:
                return True
    return False


@dataclass
class Outcome:
    plan: Plan
    runs: list[StepRun]
    undo: Undo
    before: Any
    after: Any
    better: bool
    rolled_back: list[str] | None
    variables: dict[str, str]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [r.to_dict() for r in self.runs],
            "undo": self.undo.to_dict(),
            "better": self.better,
            "rolled_back": self.rolled_back,
            "variables": self.variables,
            "before": self.before.counts,
            "after": self.after.counts if self.after is not None else None,
            "seconds": round(self.seconds, 3),
        }


def is_better(before: Any, after: Any) -> bool:
    """Fewer errors, no error that was not there before, and (when it ran) an import test that passes."""
    old = {f.id for f in before.findings if f.severity.value == "error"}
    new = {f.id for f in after.findings if f.severity.value == "error"}
    if new - old:
        return False
    test = after.import_test
    if test is not None and test.get("outcome", "ok") != "ok":
        return False
    score = (after.counts["errors"], after.counts["warnings"])
    return score < (before.counts["errors"], before.counts["warnings"]) or (not new and not after.counts["warnings"])


def repair(
    report: Any,
    plan: Plan,
    recheck: Callable[[Mapping[str, str]], Any],
    variables: Mapping[str, str] | None = None,
    lang: str | None = None,
) -> Outcome:
    """Apply ``plan`` to the env of ``report``, check again with ``recheck(variables)``; roll back when the env is
    not better (or a step failed)."""
    start = time.perf_counter()
    current = dict(variables or {})
    undo = undo_record(report, plan, current)
    runs = apply_plan(plan, report, current, undo, lang)
    after = recheck(current)
    failed = any(r.status == "failed" for r in runs)
    better = not failed and is_better(report, after)
    rolled_back = None
    if not better:
        rolled_back = rollback(undo, report, current)
        after = recheck(current)
    return Outcome(plan, runs, undo, report, after, better, rolled_back, current, time.perf_counter() - start)
