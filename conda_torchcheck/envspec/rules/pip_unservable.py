"""TC622: a pip requirement that no index the file names can serve. conda runs the pip list as one
``pip install -r`` file [CONDA], so one requirement pip cannot find stops the whole pip step ("No matching
distribution found") and the env is left without everything after it, torch often among it.

Lines pip cannot act on whatever the indexes: a github.com URL over git:// (off since 2022-03-15) and a
requirement packaging's PEP 508 parser refuses (pip 24.1 and later stop at "Invalid requirement"). And two ways pip
cannot find one, from what the file itself says about its indexes (PyPI, unless it names others):

- a local version (``dgl==1.1.0+cu113``): PyPI refuses uploads with a local version label (PEP 440), so only the
  project's own index or page of links has it;
- a name PyPI's project list does not have (``detectron2``, ``tinycudann``, ``en-core-web-sm``: projects installed
  from a git URL or their own wheel pages, frozen by name): said as "not in the list of <month>", a warning, with
  the command that decides (``pip index versions``), since the list is of one day.

Left alone: a file that names another index, a page of links or a nested requirements file (any of them may carry
the project), requirements by URL or path, and what TC607 speaks for (the torch family's local versions, PyG's
compiled extensions). The PyTorch index and its pages serve PyTorch's own projects beside PyPI's (xformers,
fbgemm-gpu, torchao ...): with them named, a local version is left alone, and a name PyPI lacks is still reported
unless it is one of PyTorch's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from conda_torchcheck.envspec.intent import facts
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev, pip_sources_known, torch_index_carries
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

#: the projects download.pytorch.org publishes beside PyPI's (torch*, pytorch-*, triton, fbgemm-gpu, executorch,
#: nvidia-* runtimes): names only a PyTorch index or page could serve that PyPI does not
_PYTORCH_PROJECT = re.compile(r"^(?:torch|pytorch|triton|fbgemm|executorch|nvidia-)", re.IGNORECASE)

#: git:// on github.com, alone or as pip's VCS scheme (`git+git://github.com/deepmind/dm_control.git`)
_GIT_PROTOCOL = re.compile(r"(?:git\+)?git://(?:www\.)?github\.com/\S*", re.IGNORECASE)


def _single_equals(spec: str) -> bool:
    """`auraloss=0.4.0`: TC618 says what conda and pip make of it."""
    return spec.startswith("=") and not spec.startswith("==")


def _https(url: str) -> str:
    return re.sub(r"^(?:git\+)?git://", "git+https://", url, flags=re.IGNORECASE)


def _tc607s(name: str) -> bool:
    """The projects TC607 speaks for: the torch index's own (their +cuXXX versions) and PyG's compiled extensions."""
    return torch_index_carries(name) or name in facts()["co_constraints"]["pip_torch_extensions"]


def _unreadable(ctx: RuleContext) -> Iterator[Finding]:
    """Lines pip cannot act on whatever its indexes: a requirement current pip does not parse, and a github.com
    URL over git://, which GitHub stopped serving on 2022-03-15 [GH-GIT]."""
    for item in ctx.file.pip or ():
        line = item.line
        git = _GIT_PROTOCOL.search(item.text)
        if git is not None:
            url = git.group(0)
            yield finding(
                "TC622",
                Severity.ERROR,
                variant="git_protocol",
                evidence=ev(ctx, entry=at(item)),
                fixes=[Fix("file", msg("TC622.git_protocol.fix", url=url, https=_https(url)))],
                entry=item.text,
            )
        elif line.kind == "requirement" and not line.pep508 and not _single_equals(line.version_spec):
            reason = _pep508_error(item.text)
            yield finding(
                "TC622",
                Severity.ERROR,
                variant="invalid_requirement",
                evidence=ev(ctx, entry=at(item), reason=reason),
                fixes=[Fix("file", msg("TC622.invalid_requirement.fix"))],
                entry=item.text,
                reason=reason,
            )


def _pep508_error(text: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(text.split(" #", 1)[0].strip())
    except InvalidRequirement as exc:
        return str(exc).splitlines()[0]
    return ""


def pip_unservable(ctx: RuleContext) -> Iterator[Finding]:
    from conda_torchcheck.knowledge.pypi_names import name_list

    yield from _unreadable(ctx)
    pip = ctx.file.pip or ()
    pypi_only = pip_sources_known(pip)
    # the PyTorch index and its pages of links serve PyTorch's own projects beside PyPI's: a name PyPI lacks that is
    # not one of them (`SORT`, conda's `libgcc-ng`) is no more found with them named (blind-t t018)
    if not pypi_only and not pip_sources_known(pip, torch_index=True, torch_pages=True):
        return
    names = None
    unlisted: list[tuple[Any, str]] = []
    for item in ctx.file.pip_requirements():
        line = item.line
        name = line.name
        if not name or line.url or not line.pep508:
            continue
        exact = line.exact
        tag = exact.split("+", 1)[1] if exact and "+" in exact else None
        if tag is not None and _tc607s(name):
            continue
        if tag is not None:
            if not pypi_only:
                continue
            yield finding(
                "TC622",
                Severity.ERROR,
                variant="local_version",
                evidence=ev(ctx, entry=at(item)),
                fixes=[Fix("file", msg("TC622.local_version.fix", package=name, version_tag=tag))],
                entry=item.text,
                package=name,
                version=exact,
                version_tag=tag,
            )
            continue
        if names is None:
            names = name_list()
            if names is None:
                return
        if not names.may_serve(name) and (pypi_only or not _PYTORCH_PROJECT.match(name)):
            unlisted.append((item, name))
    if unlisted and names is not None:
        yield _not_listed(ctx, unlisted, names)


def _not_listed(ctx: RuleContext, unlisted: list[tuple[Any, str]], names: Any) -> Finding:
    """One finding for every name of the pip list that PyPI's list lacks: one cause (requirements frozen from
    somewhere other than PyPI, often conda's own package names under pip:), one change to the file."""
    shown = [name for _item, name in unlisted]
    package = ", ".join(shown[:6]) + (" …" if len(shown) > 6 else "")
    entry = ", ".join(item.text for item, _name in unlisted[:3]) + (" …" if len(unlisted) > 3 else "")
    entries = [at(item) for item, _name in unlisted]
    decide = f"pip index versions {shown[0]}"
    return finding(
        "TC622",
        Severity.WARNING,
        variant="not_listed",
        evidence=ev(
            ctx,
            **({"entry": entries[0]} if len(entries) == 1 else {"entries": entries}),
            pypi_list=f"{names.source}, {names.listed}",
            decide=decide,
        ),
        fixes=[Fix("file", msg("TC622.not_listed.fix", package=package, decide=decide))],
        entry=entry,
        package=package,
        listed=names.listed,
        decide=decide,
    )


RULE = Rule.declared(__name__, pip_unservable)
