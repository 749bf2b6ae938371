"""One fix plan per report: the root causes' fixes in order, each taken once, none that undoes another, every pip
and conda step checked by the package manager's own resolver before it is offered.

For each error and warning (root causes, worst first), the first of its fixes that (1) does not repeat a step
already planned (then that step also fixes it), (2) does not touch what an earlier step touches in another way,
and (3) is not rejected by a resolver, becomes a step. A pip step that would change torch's version or variant
without that being its finding's purpose is rejected; the safer step is tried in its place: the companions alone,
``--no-deps``, from torch's own index.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from conda_torchcheck.findings import Finding, Fix, Severity
from conda_torchcheck.messages import translate
from conda_torchcheck.plan.actions import Action, normalize, option_values, parse
from conda_torchcheck.plan.model import Change, Dropped, Plan, Step, Verification
from conda_torchcheck.plan.resolvers import CondaResolver, PipResolver, index_args

#: findings whose fixes are there to change torch's version or variant (install torch, another build of it);
#: every other fix must leave torch as it is
TORCH_CHANGE_IS_THE_FIX = frozenset(
    {"TC100", "TC102", "TC103", "TC108", "TC111", "TC201", "TC202", "TC203", "TC501", "TC503", "TC504"}
)
#: torch's companions: a safer step installs these alone, --no-deps
COMPANIONS = frozenset({"torchvision", "torchaudio", "torchtext", "torchdata"})
TORCH_FAMILY = frozenset({"torch", "triton", *COMPANIONS})
PIP_INDEX = "https://download.pytorch.org/whl/{tag}"
_INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "--find-links", "-f")


@dataclass(frozen=True)
class PlanOptions:
    #: ask pip and conda (False: every pip and conda step says "not verified")
    verify: bool = True
    #: pip's resolver is the env's own pip, i.e. the env's code: run it only where the user asked for that
    #: (`check --verify-plan`, `repair`); otherwise pip steps say "not verified" and how to have them checked
    run_env_python: bool = True
    #: pip steps use only these wheel folders (``--no-index --find-links``) instead of any index
    find_links: tuple[str, ...] = ()
    lang: str | None = None


def build_plan(report: Any, options: PlanOptions | None = None) -> Plan:
    options = options or PlanOptions()
    env = report.env
    torch_version = report.torch.version if report.torch.installed else None
    installed = {d.name: d.version for d in env.distributions}
    if torch_version:
        installed["torch"] = torch_version
    python = _python(env)
    lang = options.lang
    if options.verify:
        if options.run_env_python:
            pip = PipResolver(python, installed, live=report.host.live, target_os=env.os, lang=lang)
        else:
            pip = PipResolver(None, installed, live=False, target_os=env.os, lang=lang)
            pip.problem = translate("plan.needs_verify_plan", lang)
        conda = CondaResolver(env.prefix, live=report.host.live, lang=lang)
    else:
        pip = PipResolver(None, installed, live=False, target_os=env.os, lang=lang)
        conda = CondaResolver(env.prefix, live=False, lang=lang)
        pip.problem = conda.problem = translate("plan.no_resolver", lang)
    planner = _Planner(report, options, pip, conda, installed)
    for f in report.findings:
        if f.severity is Severity.INFO:
            continue
        planner.add(f)
    return planner.plan


def _python(env: Any) -> Path | None:
    from conda_torchcheck.checks import commands as cmd

    if env.python.executable is not None:
        return Path(env.python.executable)
    return Path(cmd.python_path(env))


class _Planner:
    def __init__(self, report: Any, options: PlanOptions, pip: PipResolver, conda: CondaResolver, installed) -> None:
        self.report = report
        self.options = options
        self.pip = pip
        self.conda = conda
        self.installed = {normalize(k): v for k, v in installed.items()}
        self.plan = Plan()
        self.actions: list[list[Action]] = []

    def add(self, f: Finding) -> None:
        for fix in f.fixes:
            commands = tuple(self._with_index(c) for c in fix.commands)
            same = next((i for i, s in enumerate(self.plan.steps) if commands and s.commands == commands), None)
            if same is not None:
                step = self.plan.steps[same]
                if f.id != step.finding and f.id not in step.also_fixes:
                    self.plan.steps[same] = replace(step, also_fixes=(*step.also_fixes, f.id))
                return
            actions = [parse(c) for c in commands]
            clash = self._clash(actions)
            if clash:
                self.plan.dropped.append(Dropped(f.id, commands, clash))
                continue
            verification = self._verify(actions, f.id)
            if verification.status == "rejected":
                self.plan.dropped.append(Dropped(f.id, commands, verification.reason or self._t("plan.rejected")))
                safer = self._safer(actions, f, fix)
                if safer is not None:
                    self._take(safer, [parse(c) for c in safer.commands])
                    return
                continue
            self._take(self._step(f, fix, commands, actions, verification), actions)
            return

    def _t(self, key: str, **params: Any) -> str:
        return translate(key, self.options.lang, **params)

    def _take(self, step: Step, actions: list[Action]) -> None:
        self.plan.steps.append(step)
        self.actions.append(actions)

    # --- steps that repeat or undo each other -----------------------------------------------------------

    def _clash(self, actions: list[Action]) -> str | None:
        for n, earlier in enumerate(self.actions, 1):
            for a in actions:
                for target in a.targets:
                    for b in earlier:
                        if target in b.targets and (a.manager, a.effect(target)) != (b.manager, b.effect(target)):
                            return self._t("plan.contradicts", step=n, target=target[1], effect=b.effect(target))
                mine = a.torch_channel()
                theirs = next((c for b in earlier if (c := b.torch_channel())), None)
                if mine and theirs and mine != theirs:
                    return self._t("plan.contradicts_torch_channel", step=n, channel=theirs)
        return None

    # --- asking the resolvers -------------------------------------------------------------------------------

    def _verify(self, actions: list[Action], finding_id: str) -> Verification:
        results: list[Verification] = []
        for a in actions:
            if a.manager == "pip" and a.verb == "install":
                v = self.pip.install(list(a.args))
            elif a.manager == "uv":
                v = Verification("not verified", "uv", self._t("plan.uv_not_asked"))
            elif a.manager == "conda" and a.verb in ("install", "update"):
                channels = option_values(list(a.args), "-c", "--channel")
                v = self.conda.install(list(a.specs), channels)
            elif a.manager in ("pip", "conda") and a.verb in ("uninstall", "remove"):
                names = [t[1] for t in a.targets]
                v = Verification("exact", None, None, tuple(Change(n, self.installed.get(n), None) for n in names))
            elif a.manager in ("shell", "file") or (a.manager == "conda" and a.verb == "set"):
                v = Verification("exact")
            else:
                v = Verification("manual")
            if v.status == "verified" and finding_id not in TORCH_CHANGE_IS_THE_FIX and v.torch_change:
                c = v.torch_change
                v = replace(
                    v, status="rejected", reason=self._t("plan.changes_torch", before=c.before or "-", after=c.after)
                )
            clash = self._variant_clash(v)
            if v.status in ("verified", "not verified") and clash:
                v = replace(v, status="rejected", reason=clash)
            results.append(v)
        return _combined(results)

    def _variant_clash(self, v: Verification) -> str | None:
        """A companion the step installs built for another variant than torch (cpu, cuXXX): PyPI's Linux
        torchvision is a CUDA build, which a +cpu torch cannot load (``operator torchvision::nms does not
        exist``)."""
        torch = next((c.after for c in v.changes if c.name == "torch" and c.after), self.installed.get("torch"))
        if not torch:
            return None
        tag = torch.split("+", 1)[1] if "+" in torch else None
        for c in v.changes:
            if c.name not in COMPANIONS or not c.after or c.before == c.after:
                continue
            theirs = c.after.split("+", 1)[1] if "+" in c.after else None
            if tag and theirs and tag != theirs:
                return self._t("plan.other_variant", name=c.name, version=c.after, theirs=theirs, torch=torch, tag=tag)
            if tag == "cpu" and theirs is None and c.name == "torchvision" and self.report.env.os == "linux":
                return self._t("plan.pypi_cuda_build", name=c.name, version=c.after, torch=torch)
        return None

    def _safer(self, actions: list[Action], f: Finding, fix: Fix) -> Step | None:
        """The companions of a rejected pip step alone, --no-deps, from torch's index; None when there are none
        or the resolver rejects that too."""
        for a in actions:
            if a.manager != "pip" or a.verb != "install":
                continue
            torch = self.installed.get("torch")
            companions = [p for p in (companion_pin(_name(s), torch) for s in a.specs) if p]
            if not companions:
                continue
            args = ["install", "--no-deps", *companions, *index_args(a.args)]
            if not index_args(a.args):
                args += self._torch_index()
            command = self._pip_command(args)
            verification = self._verify([parse(command)], f.id)
            if verification.status == "rejected":
                self.plan.dropped.append(Dropped(f.id, (command,), verification.reason or self._t("plan.rejected")))
                return None
            summary = fix.summary.render(self.options.lang)
            summary += " " + self._t("plan.only_companions", companions=", ".join(companions), torch=torch)
            return self._step(f, fix, (command,), [parse(command)], verification, summary)
        return None

    # --- the commands as offered ------------------------------------------------------------------------------

    def _pip_command(self, args: list[str]) -> str:
        from conda_torchcheck.checks import commands as cmd

        return cmd.pip(self.report.env, " ".join(shlex.quote(a) for a in args), dist=self.report.torch.dist)

    def _torch_index(self) -> list[str]:
        """Where the env's pip torch came from: a local wheel folder (direct_url.json), or the PyTorch index of
        its local version tag (``+cpu`` -> download.pytorch.org/whl/cpu); none for a PyPI torch (pip's own
        configuration applies)."""
        if self.options.find_links:
            return []
        dist = self.report.torch.dist
        if dist is None:
            return []
        url = str((dist.direct_url or {}).get("url") or "")
        if url.startswith("file://"):
            folder = os.path.dirname(unquote(urlparse(url).path))
            if os.path.isdir(folder):
                return ["--find-links", folder]
        tag = dist.local_version
        return ["--extra-index-url", PIP_INDEX.format(tag=tag)] if tag else []

    def _with_index(self, command: str) -> str:
        a = parse(command)
        if a.manager != "pip" or a.verb != "install":
            return command
        if self.options.find_links:
            words = shlex.split(command)
            start = words.index("install") + 1
            kept = words[:start]
            skip = False
            for word in words[start:]:
                if skip:
                    skip = False
                    continue
                if word in _INDEX_OPTIONS:
                    skip = True
                    continue
                if word == "--no-index" or word.startswith(tuple(o + "=" for o in _INDEX_OPTIONS)):
                    continue
                kept.append(word)
            kept.append("--no-index")
            for folder in self.options.find_links:
                kept += ["--find-links", folder]
            return shlex.join(kept)
        if index_args(a.args) or not any(t[1] in TORCH_FAMILY for t in a.targets):
            return command
        extra = self._torch_index()
        return command + "".join(f" {shlex.quote(w)}" for w in extra) if extra else command

    def _step(
        self,
        f: Finding,
        fix: Fix,
        commands: tuple[str, ...],
        actions: list[Action],
        verification: Verification,
        summary: str | None = None,
    ) -> Step:
        if not commands:
            verification = Verification("manual")
        return Step(
            finding=f.id,
            kind=fix.kind,
            summary=summary or fix.summary.render(self.options.lang),
            commands=commands,
            changes=_changes(actions, verification, fix, self.installed.get("torch"), self.options.lang),
            needs_admin=fix.needs_admin,
            verification=verification,
        )


def contradictions(plan: Plan) -> int:
    """Pairs of steps in ``plan`` that do different things to one package, variable or file (0 by construction:
    the planner drops such a step; the tests and benchmarks/repair.py count them on what it offers)."""
    seen: dict[tuple[str, str], str] = {}
    count = 0
    for step in plan.steps:
        for command in step.commands:
            a = parse(command)
            for target in a.targets:
                effect = f"{a.manager} {a.effect(target)}"
                if target in seen and seen[target] != effect:
                    count += 1
                seen.setdefault(target, effect)
    return count


def unintended_torch_changes(plan: Plan) -> list[Step]:
    """Steps offered that a resolver says would change torch although that is not their finding's purpose."""
    return [s for s in plan.steps if s.finding not in TORCH_CHANGE_IS_THE_FIX and s.verification.torch_change]


def companion_pin(name: str | None, torch_version: str | None) -> str | None:
    """``torchvision==0.28.*`` for torch 2.13: the companion release built for this torch (None: unknown)."""
    if name not in COMPANIONS or not torch_version:
        return None
    from conda_torchcheck.checks.versions import expected_torchvision
    from conda_torchcheck.knowledge import torch_release

    if name == "torchvision":
        wanted = expected_torchvision(torch_version)[0]
    else:
        release = torch_release(torch_version)
        wanted = release.torchaudio_for(torch_version) if release and name == "torchaudio" else ()
    if not wanted or not wanted[0]:
        return None
    return f"{name}=={wanted[0]}.*" if wanted[0].count(".") == 1 else f"{name}=={wanted[0]}"


def _name(spec: str) -> str | None:
    a = parse(f"python -m pip install {shlex.quote(spec)}")
    return a.targets[0][1] if a.targets else None


def _combined(results: Sequence[Verification]) -> Verification:
    if not results:
        return Verification("manual")
    for status in ("rejected", "not verified"):
        hit = next((v for v in results if v.status == status), None)
        if hit is not None:
            return replace(hit, changes=tuple(c for v in results for c in v.changes))
    asked = [v for v in results if v.status == "verified"]
    status = "verified" if asked else "exact" if all(v.status == "exact" for v in results) else "manual"
    by = ", ".join(dict.fromkeys(v.by for v in asked if v.by)) or None
    return Verification(status, by, None, tuple(c for v in results for c in v.changes))


def _changes(
    actions: list[Action], verification: Verification, fix: Fix, torch: str | None, lang: str | None = None
) -> str:
    parts: list[str] = []
    moved = [c for c in verification.changes if c.before != c.after]
    if moved:
        parts.append(translate("plan.packages", lang, changes=", ".join(c.text() for c in moved)))
    elif verification.changes:
        parts.append(translate("plan.packages", lang, changes=", ".join(c.text() for c in verification.changes)))
    elif verification.status == "verified":
        parts.append(translate("plan.packages_none", lang))
    for a in actions:
        if a.manager in ("shell",) or (a.manager == "conda" and a.verb == "set"):
            key = "plan.variables_env" if a.manager == "conda" else "plan.variables_shell"
            parts.append(translate(key, lang, names=", ".join(t[1] for t in a.targets)))
        elif a.manager == "file":
            parts.append(f"{a.verb} {' '.join(a.args)}")
        elif a.manager in ("pip", "conda", "uv") and not verification.changes:
            parts.append(f"{a.manager}: {a.verb} {' '.join(a.specs)}".rstrip())
    if verification.status == "verified" and torch and not verification.torch_change:
        parts.append(translate("plan.torch_stays", lang, torch=torch))
    if not parts:
        parts.append(translate("plan.by_hand_admin" if fix.needs_admin else "plan.by_hand", lang))
    return "; ".join(parts)
