"""What every environment-file rule shares: the context it reads and the evidence shapes it writes."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from conda_torchcheck import registry
from conda_torchcheck.envspec.intent import Intent, build_builder, facts
from conda_torchcheck.envspec.parse import CondaDep, EnvFile, PipItem
from conda_torchcheck.findings import Finding, Fix
from conda_torchcheck.messages import msg


@dataclass(frozen=True)
class RuleContext:
    intent: Intent
    #: how the user runs the tool: ``conda-torchcheck`` or ``conda torchcheck``
    command: str = "conda-torchcheck"

    @property
    def file(self) -> EnvFile:
        return self.intent.file

    def fix_command(self) -> str:
        return f"{self.command} spec fix {shlex.quote(self.file.path)} --write"

    def rewrite_fix(self, key: str, **params: Any) -> Fix:
        return Fix("file", msg(key, **params), (self.fix_command(),), safe_automatic=True)


@dataclass(frozen=True)
class Rule:
    """One rule of ``spec check``: a module of conda_torchcheck.envspec.rules, declared in the registry."""

    name: str
    ids: tuple[str, ...]
    summary: str
    run: Callable[[RuleContext], Iterator[Finding]]
    #: runs on files that name no torch package too (what conda makes of the file itself; torch arriving only as
    #: another package's dependency); the others run only where the file names torch
    whole_file: bool = False

    @classmethod
    def declared(
        cls, module: str, run: Callable[[RuleContext], Iterator[Finding]], *, whole_file: bool = False
    ) -> Rule:
        """The rule of ``module`` (its ``__name__``) as conda_torchcheck.registry declares it, running ``run``."""
        entry = registry.emitter_of_module(module)
        return cls(entry.name, entry.ids, entry.summary, run, whole_file)


def at(dep: CondaDep | PipItem) -> dict[str, Any]:
    return {"line": dep.where.line, "entry": dep.text}


def ev(ctx: RuleContext, **extra: Any) -> dict[str, Any]:
    return {"file": ctx.file.path, **extra}


_CHANNELS_KEY = re.compile(r"^channels\s*:")


def channels_ev(ctx: RuleContext) -> list[dict[str, Any]]:
    """The channel items, led by the ``channels:`` key's own line: a finding about the order or the mix is about the
    list as a whole."""
    items: list[dict[str, Any]] = [{"line": c.where.line, "channel": c.text} for c in ctx.file.channels or ()]
    first = min((c["line"] for c in items), default=None)
    for number, line in enumerate(ctx.file.text.splitlines(), 1):
        if first is not None and number > first:
            break
        if _CHANNELS_KEY.match(line):
            return [{"line": number, "key": "channels"}, *items]
    return items


def defaults_first(i: Intent) -> Any:
    """The classic CPU-build file: Anaconda's defaults listed before the pytorch channel, an unprefixed
    pytorch and the old CUDA selector (cudatoolkit): conda takes pytorch from defaults, which had builds for
    a few CUDA versions only, so a cudatoolkit pin it has no build for gets defaults' CPU pytorch. Returns the
    channel item listed first, or None."""
    names = list(i.file.channel_names)
    torch = i.deps.get("pytorch") or i.misnamed_torch  # `torch=1.9` is read (and fixed) as pytorch
    if "pytorch" not in names or "cudatoolkit" not in i.deps or i.selectors:
        return None
    if torch is None or torch.spec is None or torch.spec.channel is not None:
        return None
    if build_builder(torch.spec.build) == "pytorch":
        return None  # `pytorch==0.4.0=py36_cuda90_cudnn7he774522_1` names a build only the pytorch channel has
    if cudatoolkit_unpublished(i.deps["cudatoolkit"]):
        return None  # no channel has that cudatoolkit (CUDA 12 is cuda-version): the solve fails, no CPU build wins
    defaults = set(facts()["defaults"]["names"])
    first = next((c for c in i.file.channels or () if c.name in defaults), None)
    if first is None or names.index(first.name) > names.index("pytorch"):
        return None
    if i.torch_supplier not in defaults:
        return None  # conda-forge listed before both supplies this pytorch (it has the release): its era, not this
    return first


def cudatoolkit_unpublished(dep: CondaDep) -> bool:
    """A cudatoolkit of a major no channel published: Anaconda's defaults and conda-forge stopped at 11.8 [CFCUDA]."""
    spec = dep.spec
    major = (spec.exact or spec.minor or "").split(".")[0] if spec is not None else ""
    return major.isdigit() and int(major) > facts()["conda_forge"]["cudatoolkit_last_major"]


def wants_pytorch_channel(i: Intent) -> bool:
    """The file's torch is the pytorch channel's: it comes from there, or the file asks for that channel's
    build (pytorch-cuda/cpuonly with the channel listed, or the classic defaults-first cudatoolkit file)."""
    if i.era == "pytorch":
        return True
    names = i.file.channel_names
    return bool((i.selectors or i.cuda_packages) and "pytorch" in names) or defaults_first(i) is not None


def torch_index_carries(name: str) -> bool:
    """Whether download.pytorch.org's wheel index serves the pip project ``name`` (the torch family and the
    dependencies it serves beside them) [WHL]."""
    pip = facts()["pip"]
    return name in pip["index_carries"] or name.startswith(tuple(pip["index_carries_prefixes"]))


_INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "--no-index")


def _pypi(url: str) -> bool:
    """PyPI itself or a mirror of it (pypi.org/simple, mirrors.aliyun.com/pypi/simple, pypi.tuna.tsinghua.edu.cn)."""
    u = url.strip().rstrip("/").lower()
    return u.endswith("pypi.org/simple") or u.endswith("/pypi/simple") or ("pypi" in u and u.endswith("/simple"))


def pip_sources_known(items: tuple[PipItem, ...], *, torch_index: bool = False, torch_pages: bool = False) -> bool:
    """Whether every index the pip list names is PyPI (or a mirror of it), or with ``torch_index`` the PyTorch index
    (and with ``torch_pages`` its pages of links too, torch_stable.html or /whl/torch/): another index, a page of
    links (-f), --no-index or a nested requirements file (-r, -c) may carry anything."""
    from conda_torchcheck.envspec.matchspec import torch_index as torch_index_of

    for item in items:
        line = item.line
        if line.kind == "other" and line.option in ("--requirement", "--constraint"):
            return False
        if line.kind == "requirement" and any(f" {o}" in f" {item.text}" for o in ("-f", "-i", *_INDEX_OPTIONS)):
            return False  # an option on the requirement's own line (pip's reading of it aside)
        if line.kind != "option" or line.option not in _INDEX_OPTIONS:
            continue
        if line.option == "--no-index" or not line.value:
            return False
        if _pypi(line.value):
            continue
        if torch_index and (torch_pages or line.option != "--find-links") and torch_index_of(line.value) is not None:
            continue
        return False
    return True
