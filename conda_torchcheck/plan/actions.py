"""What one fix command does, read from its words: which package manager, which verb, which packages, variables
or files it touches. The plan compares these to find steps that repeat or undo each other."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from conda_torchcheck.checks.commands import CONDA_VALUED_OPTIONS, operands

#: pip options whose value is the next word (never a requirement)
_PIP_VALUED = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
     "--python", "-t", "--target", "--prefix", "--root", "--platform", "--python-version", "--abi",
     "--implementation", "--report", "--progress-bar", "--trusted-host", "--timeout", "--retries", "-e"}
)  # fmt: skip
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: conda's names for what pip calls torch (one package, two managers)
_SAME_PACKAGE = {"pytorch": "torch", "pytorch-cpu": "torch", "pytorch-gpu": "torch"}


def normalize(name: str) -> str:
    name = re.sub(r"[-_.]+", "-", name).lower()
    return _SAME_PACKAGE.get(name, name)


@dataclass(frozen=True)
class Action:
    """``manager``: pip, uv, conda, shell, file or other; ``verb``: install, uninstall, remove, set, unset, move...;
    ``targets``: (what, name) pairs it changes, such as ("package", "torchvision") or ("variable", "LD_LIBRARY_PATH");
    ``specs``: the requirement or spec words as written (install), ``args``: the words after the verb."""

    manager: str
    verb: str
    targets: tuple[tuple[str, str], ...] = ()
    specs: tuple[str, ...] = ()
    args: tuple[str, ...] = ()

    def effect(self, target: tuple[str, str]) -> str:
        """What this action does to ``target``: the same string for two actions that agree."""
        if target[0] == "package" and self.verb == "install":
            spec = next((s for s in self.specs if _spec_name(s) == target[1]), "")
            return f"install {spec.replace(' ', '')}"
        return f"{self.verb} {' '.join(self.args)}" if target[0] == "variable" else self.verb

    def torch_channel(self) -> str | None:
        """The channel torch comes from once this conda install has run, where the command decides it: the
        channel of a ``pytorch`` spec (``conda-forge::pytorch``, else the first ``-c``); for a command that installs
        only a pytorch-channel selector (pytorch-cuda, cpuonly, pytorch-mutex), ``pytorch``: such a step keeps the
        pytorch-channel torch, and a later step that moves torch to another channel would make it pointless."""
        if self.manager != "conda" or self.verb not in ("install", "create", "update"):
            return None
        names = [_spec_name(s) for s in self.specs]
        if "torch" in names:
            spec = self.specs[names.index("torch")]
            if "::" in spec:
                return spec.split("::", 1)[0].lower()
            channels = option_values(self.args, "-c", "--channel")
            return channels[0].lower() if channels else None
        if any(n in _PYTORCH_CHANNEL_SELECTORS for n in names):
            return "pytorch"
        return None


#: packages only the pytorch channel's torch builds use (conda-forge's pytorch does not depend on them)
_PYTORCH_CHANNEL_SELECTORS = ("pytorch-cuda", "cpuonly", "pytorch-mutex")


def _spec_name(spec: str) -> str | None:
    text = spec.split("::", 1)[-1]
    found = _NAME.match(text)
    return normalize(found.group(0)) if found else None


def parse(command: str) -> Action:
    try:
        words = shlex.split(command)
    except ValueError:
        return Action("other", "")
    if not words:
        return Action("other", "")
    if len(words) >= 3 and words[1:3] == ["-m", "pip"]:
        return _pip("pip", words[3:])
    if words[:2] == ["uv", "pip"]:
        return _pip("uv", words[2:])
    head = words[0].rsplit("/", 1)[-1].lower()
    if head in ("conda", "mamba", "micromamba") and len(words) > 1:
        if words[1:5] == ["env", "config", "vars", "set"]:
            names = [w.split("=", 1)[0] for w in words[5:] if "=" in w and not w.startswith("-")]
            return Action("conda", "set", tuple(("variable", n) for n in names), args=tuple(words[5:]))
        return _conda(words[1], words[2:])
    if head == "export":
        names = [w.split("=", 1)[0] for w in words[1:]]
        return Action("shell", "set", tuple(("variable", n) for n in names), args=tuple(words[1:]))
    if head == "unset":
        return Action("shell", "unset", tuple(("variable", n) for n in words[1:]), args=tuple(words[1:]))
    if head in ("mv", "move", "rm", "del", "rmdir", "rd"):
        paths = [w for w in words[1:] if not w.startswith(("-", "/s", "/q"))]
        return Action("file", head, tuple(("file", p) for p in paths[:1]), args=tuple(paths))
    return Action("other", head, args=tuple(words[1:]))


def _pip(manager: str, words: list[str]) -> Action:
    if not words:
        return Action(manager, "")
    verb, rest = words[0], words[1:]
    specs = operands(rest, _PIP_VALUED)
    names = [n for n in (_spec_name(s) for s in specs) if n]
    return Action(manager, verb, tuple(("package", n) for n in names), tuple(specs), tuple(rest))


def _conda(verb: str, words: list[str]) -> Action:
    specs = operands(words, CONDA_VALUED_OPTIONS)
    names = [n for n in (_spec_name(s) for s in specs) if n]
    return Action("conda", verb, tuple(("package", n) for n in names), tuple(specs), tuple(words))


def option_values(args: tuple[str, ...] | list[str], *names: str) -> list[str]:
    """The values of options ``names`` in ``args`` (``--index-url URL`` and ``--index-url=URL``)."""
    out: list[str] = []
    for i, word in enumerate(args):
        for name in names:
            if word == name and i + 1 < len(args):
                out.append(args[i + 1])
            elif word.startswith(name + "="):
                out.append(word.split("=", 1)[1])
    return out
