"""Rewrite an environment file into a reproducible spec (``spec fix``).

The rewrite is computed as a *plan* — the channel list, the dependency list and the pip list the fixed file
will hold, each entry tied to the original item it comes from — plus a list of changes, each with its reason.
:mod:`textedit` then applies the plan to the original text in place. What "fixed" means for each shape of
file is documented in docs/envspec.md; in short:

- the torch family is written ``channel::name`` for the channel that will really supply it;
- files on the frozen pytorch channel stay there when what they ask for exists there (pinned to the release
  the channel resolves them to today, which cannot change any more); files asking for a torch the channel
  never had move to conda-forge (``pytorch=<ver>=cuda*`` + ``cuda-version``), which is the only conda
  channel with those releases;
- the channel list becomes explicit: the right order and ``nodefaults``;
- the pip section gets the download.pytorch.org index of its variant as its first line;
- ``-p PREFIX`` pins everything the file lists to what is installed there (``--lock``: build strings too).

Nothing is dropped silently: an entry that disappears is reported as removed or replaced, with why.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import (
    CONDA_TORCH,
    Intent,
    analyse,
    build_builder,
    builder_of,
    companion_for,
    companion_ok,
    cuda_libraries_from_base,
    facts,
    gpu_intent,
    on_pytorch_channel,
    published_pytorch_cuda,
    pytorch_channel_versions,
    resolve_pytorch_channel,
)
from conda_torchcheck.envspec.matchspec import (
    CondaSpec,
    PipLine,
    TorchIndex,
    channel_name,
    index_url_for,
    minor_of_spec,
    parse_conda_spec,
    parse_pip_line,
    torch_index,
)
from conda_torchcheck.envspec.parse import CondaDep, EnvFile, PipItem
from conda_torchcheck.envspec.rules import defaults_first, pytorch_cuda_for_cudatoolkit, tags_offered
from conda_torchcheck.messages import Text, msg

PIP_MARK = "\0pip"  # stands for the {pip: [...]} item in the dependency plan


@dataclass(frozen=True)
class Change:
    section: str  # channels, dependencies, pip
    action: str  # added, removed, replaced, pinned, reordered
    old: str | None
    new: str | None
    reasons: tuple[Text, ...]
    line: int | None = None

    def reason(self, lang: str | None = None) -> str:
        from conda_torchcheck.messages import translate

        return translate("envspec.cli.reason_separator", lang).join(r.render(lang) for r in self.reasons)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "section": self.section,
            "action": self.action,
            "old": self.old,
            "new": self.new,
            "reason": self.reason(lang),
            "line": self.line,
        }


@dataclass
class Entry:
    text: str
    origin: int | None  # index of the original item, None when new


@dataclass
class Plan:
    file: EnvFile
    channels: list[Entry] | None  # None: leave the channel list as it is
    create_channels: bool  # the file has no channel list: write one
    deps: list[Entry]
    pip: list[Entry] | None
    changes: list[Change] = field(default_factory=list)
    unresolved: list[Text] = field(default_factory=list)
    target: str | None = None  # the channel torch ends up on
    result: EnvFile | None = None  # the fixed file, parsed (set when the plan was applied)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


# ------------------------------------------------------------------------------------------------------------
# the installed env (spec fix -p)


@dataclass(frozen=True)
class InstalledPackage:
    name: str
    version: str
    build: str = ""
    channel: str = ""  # the channel name (conda) or "pypi"


@dataclass(frozen=True)
class Installed:
    """What ``-p PREFIX`` contributes: conda records and pip-installed distributions, by name."""

    prefix: str
    conda: dict[str, InstalledPackage]
    pip: dict[str, InstalledPackage]

    def conda_pkg(self, name: str) -> InstalledPackage | None:
        return self.conda.get(name)


def installed_from_environment(env: Any) -> Installed:
    """Build :class:`Installed` from the inventory's Environment (conda records + pip-owned dist-info)."""
    from conda_torchcheck.inventory.torch import conda_owner

    conda = {
        r.name: InstalledPackage(
            r.name, r.version, r.build, channel_name(r.channel_url or r.channel) if r.channel else ""
        )
        for r in env.conda_records
    }
    pip: dict[str, InstalledPackage] = {}
    for d in env.distributions:
        if d.site_kind != "env" or d.name in pip:
            continue
        if conda_owner(env, d) is not None or (d.installer or "").lower() == "conda":
            continue
        pip[d.name] = InstalledPackage(d.name, d.version, "", "pypi")
    return Installed(str(env.prefix), conda, pip)


# ------------------------------------------------------------------------------------------------------------
# helpers


def _reason(key: str, **params: Any) -> Text:
    return msg(f"envspec.reason.{key}", **params)


def _spelled(file: EnvFile, name: str) -> str:
    """The way the file writes channel ``name`` (a mirror URL stays a mirror URL), else the name itself."""
    for c in file.channels or ():
        if c.name == name:
            return c.text
    return name


def _prefix_text(file: EnvFile, channel: str) -> str:
    """The ``chan::`` prefix for ``channel``: the file's own spelling when it is a plain name or a URL."""
    spelled = _spelled(file, channel)
    return spelled.rstrip("/") if ("://" in spelled or spelled == channel) else channel


def _base_channels(names: list[str]) -> list[str]:
    bases = {"conda-forge", *facts()["defaults"]["names"]}
    return [n for n in names if n in bases]


# ------------------------------------------------------------------------------------------------------------
# the plan


@dataclass
class _State:
    file: EnvFile
    intent: Intent
    installed: Installed | None
    lock: bool
    target: str | None
    changes: list[Change] = field(default_factory=list)
    #: --base-channel: the base channel to add where the file lists none (never chosen silently)
    base_channel: str | None = None
    unresolved: list[Text] = field(default_factory=list)
    torch_exact: str | None = None
    torch_minor: str | None = None
    #: why the last dependency handed to _rewrite_dep was removed
    last_removal: tuple[Text, ...] = ()

    def change(
        self,
        section: str,
        action: str,
        old: str | None,
        new: str | None,
        reason: Text | tuple[Text, ...],
        line: int | None,
    ) -> None:
        reasons = reason if isinstance(reason, tuple) else (reason,)
        self.changes.append(Change(section, action, old, new, reasons, line))


def _decide_target(st: _State) -> str | None:
    """The channel the torch family will be written for (see docs/envspec.md, "What fixed means")."""
    i = st.intent
    inst = st.installed
    if inst is not None:
        rec = inst.conda_pkg("pytorch")
        if rec is not None and rec.channel:
            builder = builder_of(rec.channel)
            return builder if builder in ("pytorch", "conda-forge") else rec.channel
    if not i.has_conda_torch and i.misnamed_torch is None:
        return None
    torch = i.deps.get("pytorch") or i.misnamed_torch
    if i.torch_channel in ("pytorch-nightly", "pytorch-test", "pytorch-lts"):
        # dated dev builds, the 1.8.2 LTS builds: only that channel has them (TC605: nightly/test are deprecated)
        return i.torch_channel
    if torch is not None and torch.spec is not None and "dev" in (torch.spec.exact or "") and i.era == "pytorch":
        return None  # a dated nightly outside the nightly channel: no channel here has it; left to the user
    # a torch the frozen channel never had can only come from conda-forge
    frozen_ok = on_pytorch_channel(torch)
    if i.era == "pytorch":
        return "pytorch" if frozen_ok else "conda-forge"
    if defaults_first(i) is not None and frozen_ok:
        return "pytorch"  # the classic defaults-before-pytorch file: it meant the pytorch channel's CUDA build
    if (i.selectors or i.cuda_packages) and ("pytorch" in st.file.channel_names or i.era == "unknown"):
        # pytorch-cuda / cpuonly ask for the pytorch channel's build; honoured where that channel is listed
        # (or nothing else is), else they are read as the variant and written in the file's channel form
        return "pytorch" if frozen_ok else "conda-forge"
    if i.era == "conda-forge":
        return "conda-forge"
    if i.era == "defaults":
        return i.torch_channel
    if i.era == "other":
        return i.torch_channel
    return None


def plan_fix(
    file: EnvFile, *, installed: Installed | None = None, lock: bool = False, base_channel: str | None = None
) -> Plan:
    intent = analyse(file)
    st = _State(file, intent, installed, lock, None, base_channel=base_channel)
    if not intent.has_torch and not (installed and ("pytorch" in installed.conda or "torch" in installed.pip)):
        plan = Plan(file, None, False, [Entry(d, i) for i, d in _dep_texts(file)], _pip_entries(file))
        plan.unresolved.append(_reason("no_torch"))
        return plan
    st.target = _decide_target(st)
    if intent.variant == "conflict":
        st.unresolved.append(_reason("variant_conflict"))
    _resolve_torch_version(st)
    deps = _plan_deps(st)
    pip = _plan_pip(st, deps)
    if pip is not None and not any(e.text != PIP_MARK for e in pip) and file.pip:
        # every pip line went away: drop the empty {pip: []} item as well
        deps = [e for e in deps if e.text != PIP_MARK]
        st.change("dependencies", "removed", "pip:", None, _reason("pip_section_empty"), _pip_line(file))
        pip = None
    deps = _ensure_pip_dep(st, deps, pip)
    channels, create = _plan_channels(st, deps)
    plan = Plan(file, channels, create, deps, pip, st.changes, st.unresolved, st.target)
    return plan


def _dep_texts(file: EnvFile) -> list[tuple[int, str]]:
    """Every item of ``dependencies`` in order: strings as written, the pip mapping as PIP_MARK, other
    mappings as an opaque marker (never touched)."""
    out: dict[int, str] = {d.index: d.text for d in file.deps}
    if file.pip_index is not None:
        out[file.pip_index] = PIP_MARK
    for index in file.other_dep_items:
        out[index] = f"\0other{index}"
    return sorted(out.items())


def _pip_entries(file: EnvFile) -> list[Entry] | None:
    if file.pip is None:
        return None
    return [Entry(p.text, p.index) for p in file.pip]


def _pip_line(file: EnvFile) -> int | None:
    if file.pip_index is None or file.root is None:
        return None
    for key, value in file.root.value:
        if str(key.value) == "dependencies":
            return value.value[file.pip_index].start_mark.line + 1
    return None


def _resolve_torch_version(st: _State) -> None:
    i = st.intent
    torch = i.deps.get("pytorch") or i.misnamed_torch
    rec = st.installed.conda_pkg("pytorch") if st.installed else None
    if rec is not None:
        st.torch_exact = rec.version
    elif torch is not None and torch.spec is not None:
        if st.target == "pytorch":
            res = i.resolution or resolve_pytorch_channel(i.deps, i.python_minors, torch_dep=torch, bounds=i.bounds)
            st.torch_exact = res.version or torch.spec.exact
            if res.version is None and res.blocked_by:
                st.unresolved.append(_reason("frozen_unresolved", blocked=", ".join(res.blocked_by)))
        else:
            st.torch_exact = torch.spec.exact
        st.torch_minor = torch.spec.minor
    elif st.target == "pytorch" and any(n in i.deps for n in ("torchvision", "torchaudio")):
        # no pytorch entry, but the companions the file names on the frozen channel (torchvision beside
        # pytorch-cuda) bring the release it resolves to: they are pinned to its companions (TC611.frozen)
        res = i.resolution or resolve_pytorch_channel(i.deps, i.python_minors, torch_dep=None, bounds=i.bounds)
        st.torch_exact = res.version
    elif st.installed and "torch" in st.installed.pip:
        st.torch_exact = st.installed.pip["torch"].version.split("+", 1)[0]
    elif "torch" in i.pip:
        exact = i.pip["torch"].line.exact
        st.torch_exact = exact.split("+", 1)[0] if exact else None
    if st.torch_exact and not st.torch_minor:
        st.torch_minor = ".".join(st.torch_exact.split(".")[:2])


def _wanted_variant(st: _State) -> str | None:
    i = st.intent
    if st.installed is not None:
        rec = st.installed.conda_pkg("pytorch")
        if rec is not None and rec.build:
            b = rec.build.lower()
            if "cuda" in b or b.startswith("gpu"):
                return "cuda"
            if "cpu" in b:
                return "cpu"
    if i.variant is None and not i.cuda_packages and gpu_intent(i.file) is not None:
        return "cuda"  # no entry says which build, the file's name or a CUDA library it installs does (TC614)
    return i.variant if i.variant in ("cuda", "cpu") else None


def _pin(spec: CondaSpec, version: str | None, build: str | None = None) -> CondaSpec:
    if version is None:
        return spec
    # a build string turns `=2.5.1` into exactly 2.5.1 for conda; without one `=2.5.1` is the 2.5.1 series
    return spec.pinned(version, build if build is not None else spec.build)


def _cuda_version_text(st: _State) -> str | None:
    """What ``cuda-version`` should say for a conda-forge CUDA torch: installed exactly, else the CUDA major
    the file asked for (conda-forge builds each release for its own choice of CUDA minors)."""
    if st.installed is not None:
        rec = st.installed.conda_pkg("cuda-version")
        if rec is not None:
            return rec.version
    cuda = st.intent.cuda
    if not cuda:
        return None
    return cuda.split(".")[0]


def _cuda_version_entry(st: _State, version: str) -> str:
    rec = st.installed.conda_pkg("cuda-version") if st.installed is not None else None
    if st.lock and rec is not None and rec.build and rec.version == version:
        return f"cuda-version={version}={rec.build}"
    return f"cuda-version={version}"


def _plan_deps(st: _State) -> list[Entry]:
    file, inst = st.file, st.installed
    target = st.target
    variant = _wanted_variant(st)
    out: list[Entry] = []
    names_present = {d.name for d in file.deps}
    deps_by_index = {d.index: d for d in file.deps}
    pytorch_entry_at: int | None = None
    for index, text in _dep_texts(file):
        if text == PIP_MARK or text.startswith("\0other"):
            out.append(Entry(text, index))
            continue
        dep = deps_by_index[index]
        spec = dep.spec
        if spec is None:
            out.append(Entry(text, index))
            continue
        new = _rewrite_dep(st, dep, spec, variant, names_present)
        if new is None:
            st.change("dependencies", "removed", dep.text, None, st.last_removal, dep.where.line)
            continue
        new_text, reasons, action = new
        if new_text != dep.text:
            st.change("dependencies", action, dep.text, new_text, reasons, dep.where.line)
        out.append(Entry(new_text, index))
        if spec.name in ("pytorch", "torch"):
            pytorch_entry_at = len(out) - 1
    # additions
    additions: list[tuple[str, Text]] = []
    if target == "conda-forge" and variant == "cuda" and "cuda-version" not in names_present:
        if not any(e.text.split("::")[-1].startswith("cuda-version") for e in out):
            cv = _cuda_version_text(st)
            if cv:
                additions.append((_cuda_version_entry(st, cv), _reason("add_cuda_version", cuda=cv)))
    if inst is not None and target == "pytorch":
        for name in ("pytorch-cuda", "cpuonly"):
            rec = inst.conda_pkg(name)
            if rec is not None and name not in names_present:
                spec = CondaSpec(raw=name, name=name, channel=_prefix_text(file, "pytorch"))
                spec = _pin(spec, rec.version, rec.build if st.lock else None)
                additions.append((spec.render(), _reason("add_installed_selector", name=name, prefix=inst.prefix)))
    if additions:
        at = pytorch_entry_at + 1 if pytorch_entry_at is not None else len([e for e in out if e.text != PIP_MARK])
        for offset, (text, reason) in enumerate(additions):
            out.insert(at + offset, Entry(text, None))
            st.change("dependencies", "added", None, text, reason, None)
    return out


def _rewrite_dep(st: _State, dep: CondaDep, spec: CondaSpec, variant: str | None, names_present: set[str]):
    """(new text, reasons, action) for one dependency, or None to remove it (reasons in st.last_removal)."""
    file, inst, target = st.file, st.installed, st.target
    name = spec.name
    reasons: list[Text] = []
    action = "replaced"
    new = spec
    rec = inst.conda_pkg("pytorch" if name == "torch" else name) if inst is not None else None

    def remove(reason: Text) -> None:
        st.last_removal = (reason,)

    if name == "torch":
        new = new.with_(name="pytorch")
        reasons.append(_reason("pip_name"))
        name = "pytorch"

    if (
        name in ("pytorch", "torchvision", "torchaudio", "libtorch")
        and target == "pytorch"
        and rec is None
        and spec.channel is None
        and build_builder(spec.build) == "base"
    ):
        # `torchvision=0.15.2=cpu_py310h83e0c9b_0` is conda-forge's or Anaconda's build: `pytorch::` in front of
        # it names a package that does not exist (a valid file would become invalid); which build to use instead
        # is the user's call (TC612 build)
        st.unresolved.append(_reason("other_builder_build", entry=dep.text))
        return dep.text, (), action
    if name in (*CONDA_TORCH, "libtorch"):
        prefix = _family_prefix(file, target)
        moving = st.intent.era == "pytorch" and target == "conda-forge"
        if moving and name == "pytorch":
            reasons.append(
                _reason("moved_frozen", version=spec.version or "?", last=facts()["pytorch_channel"]["versions"][-1])
            )
        if prefix is not None and spec.channel != prefix:
            if moving:
                if name != "pytorch":
                    reasons.append(_reason("moved_with_torch"))
            elif spec.channel is not None and builder_of(spec.channel_name) != builder_of(channel_name(prefix)):
                reasons.append(_reason("family_channel", channel=target))
            else:
                reasons.append(_reason("channel_prefix", channel=target))
            new = new.with_(channel=prefix)
        # versions
        if rec is not None:
            if new.exact != rec.version or (st.lock and new.build != rec.build):
                new = _pin(new, rec.version, rec.build if st.lock else new.build)
                reasons.append(_reason("pin_installed", prefix=inst.prefix if inst else "", version=rec.version))
                action = "pinned"
        elif name == "pytorch":
            if st.torch_exact and new.exact != st.torch_exact and target == "pytorch":
                new = _pin(new, st.torch_exact)
                reasons.append(_reason("pin_frozen", version=st.torch_exact))
                action = "pinned"
        elif name in ("torchvision", "torchaudio"):
            torch_ref = st.torch_exact or st.torch_minor
            if torch_ref and torch_release(torch_ref) is not None:
                have = spec.exact or spec.minor
                minor, exact = companion_for(name, torch_ref, conda=target == "pytorch")
                want = exact if st.torch_exact else minor
                ok = companion_ok(name, torch_ref, have) if have else None
                if want and have is None and spec.version is None:
                    new = _pin(new, want)
                    reasons.append(_reason("pin_companion", package=name, version=want, torch=torch_ref))
                    action = "pinned"
                elif ok is False:
                    # an explicit pin built for another torch: rewriting it would not keep the file's constraint
                    # and the wrong one of the two pins is not known (TC608 offers both ways); a channel prefix
                    # alone would only write the conflict down as the fix: the entry stays as written
                    st.unresolved.append(_reason("companion_conflict", entry=dep.text, torch=torch_ref))
                    return dep.text, (), action
        # the variant in the form of the channel: conda-forge selects it with the build string
        if name == "pytorch" and target == "conda-forge" and not (rec is not None and st.lock):
            build = new.build or ""
            table = facts()["conda_forge"]
            wanted = {"cuda": table["cuda_build"], "cpu": table["cpu_build"]}.get(variant or "")
            if wanted and (not _build_matches_variant(build, variant) or _pytorch_channel_build(build)):
                new = new.with_(build=wanted, version=new.exact or new.version or "*")
                reasons.append(_reason("variant_build", build=wanted, variant=variant))
            elif build and _pytorch_channel_build(build) and st.intent.variant != "conflict":
                # (with CPU and CUDA both asked for, the build is one of the two signals TC609 shows: kept, or
                # the next fix would see only the other one and change the file again)
                new = new.with_(build=None)
                reasons.append(_reason("drop_channel_build", build=build))
        elif (
            target != "pytorch"
            and new.build
            and _pytorch_channel_build(new.build)
            and not (rec and st.lock)
            and st.intent.variant != "conflict"
        ):
            reasons.append(_reason("drop_channel_build", build=new.build))
            new = new.with_(build=None)
    elif name in ("pytorch-cuda", "cpuonly", "pytorch-mutex"):
        if target == "pytorch":
            prefix = _prefix_text(file, "pytorch")
            if spec.channel != prefix:
                new = new.with_(channel=prefix)
                reasons.append(_reason("channel_prefix", channel="pytorch"))
            if name == "pytorch-cuda":
                if (
                    rec is not None
                    and new.exact != rec.version
                    and (new.minor or "") != ".".join(rec.version.split(".")[:2])
                ):
                    new = _pin(new, ".".join(rec.version.split(".")[:2]))
                    reasons.append(_reason("pin_installed", prefix=inst.prefix if inst else "", version=rec.version))
                    action = "pinned"
                elif new.version is None and st.torch_exact:
                    release = torch_release(st.torch_exact)
                    if release is not None and release.pytorch_cuda:
                        new = _pin(new, release.pytorch_cuda[-1])
                        reasons.append(_reason("pin_pytorch_cuda", cuda=release.pytorch_cuda[-1], torch=st.torch_exact))
                        action = "pinned"
        elif target == "conda-forge" and st.intent.variant == "conflict":
            pass  # CPU and CUDA both asked for (TC609): which one to keep is the user's call
        elif target == "conda-forge":
            if name == "pytorch-cuda":
                cv = _cuda_version_text(st)
                if "cuda-version" in names_present or not cv:
                    remove(_reason("selector_dropped", name=dep.text, variant="cuda"))
                    return None
                names_present.add("cuda-version")
                return _cuda_version_entry(st, cv), (_reason("pytorch_cuda_to_cuda_version", cuda=cv),), "replaced"
            remove(_reason("selector_dropped", name=dep.text, variant="cpu" if name == "cpuonly" else variant or "?"))
            return None
    elif name == "cudatoolkit":
        version = spec.exact or spec.minor
        major = int(version.split(".")[0]) if version and version.split(".")[0].isdigit() else None
        torch_ref = st.torch_exact or st.torch_minor
        from_minor = facts()["pytorch_channel"]["pytorch_cuda_from"]
        release = torch_release(torch_ref) if torch_ref else None
        modern = release is not None and _ge(release.minor, from_minor)
        if target == "pytorch" and modern and rec is None:
            if "pytorch-cuda" in names_present:
                # pytorch-cuda selects CUDA from 1.13; cudatoolkit beside it is a second copy (TC613 redundant)
                remove(_reason("cudatoolkit_redundant", torch=torch_ref))
                return None
            cuda = pytorch_cuda_for_cudatoolkit(spec, torch_ref)
            if cuda is not None:
                names_present.add("pytorch-cuda")
                text = CondaSpec(
                    raw="", name="pytorch-cuda", channel=_prefix_text(file, "pytorch"), version=cuda, bare_is_fuzzy=True
                ).render()
                return text, (_reason("cudatoolkit_to_pytorch_cuda", cuda=cuda),), "replaced"
        if target == "conda-forge" and rec is None:
            last = facts()["conda_forge"]["cudatoolkit_last_major"]
            cuda_major = _cuda_major_of(st)
            if major is not None and major > last:
                if "cuda-version" in names_present or (cuda_major is not None and cuda_major > last):
                    remove(_reason("cudatoolkit_dropped", cuda=version))
                    return None
                names_present.add("cuda-version")
                return f"cuda-version={major}", (_reason("cudatoolkit_to_cuda_version", cuda=version),), "replaced"
            if cuda_major is not None and cuda_major > last:
                # CUDA 12+ builds use the split cuda-* packages; cudatoolkit (CUDA <= 11) is not theirs
                remove(_reason("cudatoolkit_dropped", cuda=version or "*"))
                return None
        if rec is not None and new.version != rec.version:
            new = _pin(new, rec.version, rec.build if st.lock else None)
            reasons.append(_reason("pin_installed", prefix=inst.prefix if inst else "", version=rec.version))
            action = "pinned"
    elif name in ("pytorch-cpu", "pytorch-gpu"):
        if target == "conda-forge":
            prefix = _prefix_text(file, "conda-forge")
            if spec.channel != prefix:
                new = new.with_(channel=prefix)
                reasons.append(_reason("channel_prefix", channel="conda-forge"))
        if rec is not None and new.version != rec.version:
            new = _pin(new, rec.version, rec.build if st.lock else None)
            reasons.append(_reason("pin_installed", prefix=inst.prefix if inst else "", version=rec.version))
            action = "pinned"
    else:
        if rec is not None and (new.version != rec.version or (st.lock and new.build != rec.build)):
            if not (new.exact == rec.version and not st.lock):
                new = _pin(new, rec.version, rec.build if st.lock else None)
                reasons.append(_reason("pin_installed", prefix=inst.prefix if inst else "", version=rec.version))
                action = "pinned"
        elif inst is not None and rec is None and name not in ("pip",):
            st.unresolved.append(_reason("not_installed", entry=dep.text, prefix=inst.prefix))
    if not reasons:
        return dep.text, (), action
    unchecked = _unverified_pin(st, new)
    if unchecked is not None:
        # a rewrite names what would be installed: one whose release or pairing the tables cannot confirm is not
        # written (a fix that writes a version that does not exist, or that cannot be checked, would lie)
        st.unresolved.append(_reason(f"unverified_pin_{unchecked}", entry=dep.text, torch=st.torch_exact or "?"))
        return dep.text, (), action
    text = new.render_checked()
    if text is None:
        # a form this reader does not model (md5=, build_number=, parentheses ...) or one that would not read
        # back as the same constraint: kept as written, with a note
        st.unresolved.append(_reason("not_rewritten", entry=dep.text))
        return dep.text, (), action
    return text, tuple(reasons), action


def _unverified_pin(st: _State, spec: CondaSpec) -> str | None:
    """Why the tables cannot confirm the pin ``spec`` would write (a release they do not have, a pytorch-cuda that
    release was never built for, a version the pytorch channel never had), or None when they confirm it."""
    if spec.name == "pytorch" and spec.exact:
        on_channel = spec.exact in pytorch_channel_versions()
        if spec.channel_name == "pytorch" and not on_channel:
            return "not_on_channel"
        if not on_channel and torch_release(spec.exact) is None:
            return "no_release"
    if spec.channel_name == "pytorch" and spec.build and "*" in spec.build:
        examples = facts()["builders"]["pytorch_channel_builds"].get(spec.name)
        if examples is not None and not any(fnmatch.fnmatchcase(b, spec.build.lower()) for b in examples):
            return "build_not_on_channel"
    if spec.name == "pytorch-cuda" and (spec.minor or spec.exact) and st.torch_exact:
        rel = torch_release(st.torch_exact)
        cuda = ".".join((spec.exact or spec.minor or "").split(".")[:2])
        if rel is None:
            return "no_release"
        if cuda not in rel.pytorch_cuda:
            return "not_built_for_torch"
    return None


def _cuda_major_of(st: _State) -> int | None:
    """The CUDA major of the file's cuda-version or pytorch-cuda (what cuda-version becomes on conda-forge)."""
    for name in ("cuda-version", "pytorch-cuda"):
        dep = st.intent.deps.get(name)
        if dep is not None and dep.spec is not None and dep.spec.version:
            head = (dep.spec.exact or dep.spec.minor or dep.spec.version).strip("=*<>~! ").split(".")[0]
            if head.isdigit():
                return int(head)
    return None


def _family_prefix(file: EnvFile, target: str | None) -> str | None:
    """The ``chan::`` the torch family gets on ``target``: the file's spelling of that channel. Never
    ``defaults::``: Anaconda's channel is a choice of source and licence the file makes by listing it, and a
    prefix would make it permanent even where the order was the mistake (TC602 defaults_cpu)."""
    if target is None or target in facts()["defaults"]["names"]:
        return None
    return _prefix_text(file, target)


def _build_matches_variant(build: str, variant: str | None) -> bool:
    b = build.lower()
    if variant == "cuda":
        return b.startswith("cuda") or b.startswith("*cuda")
    if variant == "cpu":
        return b.startswith("cpu") or b.startswith("*cpu")
    return True


def _pytorch_channel_build(build: str) -> bool:
    """``py3.11_cuda12.4_cudnn9_0`` / ``py3.9_cpu_0``: a pytorch-channel build string."""
    import re

    return re.match(r"py[23](?:\.\d+|\d+)_(?:cuda|cu\d|cpu|rocm)", build.lower()) is not None


def _ge(a: str, b: str) -> bool:
    from conda_torchcheck.envspec.matchspec import version_key

    ka, kb = version_key(a), version_key(b)
    return bool(ka and kb and ka >= kb)


def _ensure_pip_dep(st: _State, deps: list[Entry], pip: list[Entry] | None) -> list[Entry]:
    if pip is None or not any(e.text == PIP_MARK for e in deps):
        return deps
    for e in deps:
        if e.text == PIP_MARK or e.text.startswith("\0"):
            continue
        try:
            if parse_conda_spec(e.text).name == "pip":
                return deps
        except ValueError:
            continue
    text = "pip"
    if st.installed is not None and st.installed.conda_pkg("pip") is not None:
        rec = st.installed.conda_pkg("pip")
        assert rec is not None
        text = f"pip={rec.version}" + (f"={rec.build}" if st.lock and rec.build else "")
    at = next(k for k, e in enumerate(deps) if e.text == PIP_MARK)
    deps.insert(at, Entry(text, None))
    st.change("dependencies", "added", None, text, _reason("add_pip"), None)
    return deps


# ------------------------------------------------------------------------------------------------------------
# channels


def _order_decides_wrongly(st: _State, names: list[str], wants_cuda: bool) -> bool:
    """Would the file's channel order take pytorch (TC602 pytorch/defaults_cpu) or pytorch-cuda's CUDA 12
    libraries (TC602 nvidia) from another channel? Only then is the list reordered."""
    torch = st.intent.deps.get("pytorch")
    unprefixed = torch is None or torch.spec is None or torch.spec.channel is None
    bases = {"conda-forge", *facts()["defaults"]["names"]}
    first_base = next((k for k, n in enumerate(names) if n in bases), None)
    if unprefixed and first_base is not None and first_base < names.index("pytorch"):
        return True
    nvidia_late = "nvidia" in names and "conda-forge" in names and names.index("conda-forge") < names.index("nvidia")
    if wants_cuda and nvidia_late:
        pc = st.intent.deps.get("pytorch-cuda")
        head = (pc.spec.exact or pc.spec.minor or "") if pc is not None and pc.spec is not None else ""
        return not head.startswith("11.")  # conda-forge has no CUDA 11 split packages: harmless there
    return False


def _referenced_channels(deps: list[Entry]) -> set[str]:
    found = set()
    for e in deps:
        if e.text.startswith("\0") or "::" not in e.text:
            continue
        try:
            spec = parse_conda_spec(e.text)
        except ValueError:
            continue
        if spec.channel_name:
            found.add(spec.channel_name)
    return found


def _plan_channels(st: _State, deps: list[Entry]) -> tuple[list[Entry] | None, bool]:
    file, target = st.file, st.target
    original = list(file.channels or ())
    names = [c.name for c in original]
    referenced = _referenced_channels(deps)
    wanted: list[tuple[str, int | None]] = []  # (text, origin)
    removed: list[tuple[str, int, Text]] = []
    # pytorch-cuda's CUDA libraries come from nvidia, unless the file pins them to a listed base channel's builds
    wants_cuda = any(_conda_name(e.text) == "pytorch-cuda" for e in deps) and not cuda_libraries_from_base(file)

    def origin_of(name: str) -> int | None:
        return names.index(name) if name in names else None

    def add(name: str) -> None:
        if any(channel_name(t) == name for t, _ in wanted):
            return
        o = origin_of(name)
        wanted.append((original[o].text if o is not None else name, o))

    if target is None and not original:
        if st.intent.has_conda_torch:
            st.unresolved.append(_reason("channels_unknown"))
        return None, False
    if target == "pytorch" and "pytorch" in names and not _order_decides_wrongly(st, names, wants_cuda):
        # the order is already right (or the prefixes make it irrelevant): keep it, only add what is missing
        for k, c in enumerate(original):
            if c.name == "nodefaults":
                continue
            if c.name in facts()["pytorch_channel"]["deprecated"] and c.name not in referenced:
                removed.append((c.text, k, _reason("channel_deprecated", channel=c.text)))
                continue
            wanted.append((c.text, k))
            if c.name == "pytorch" and wants_cuda and "nvidia" not in names:
                wanted.append(("nvidia", None))
        if not _base_channels([channel_name(t) for t, _ in wanted]) and st.base_channel:
            wanted.append((st.base_channel, None))
    elif target == "pytorch":
        add("pytorch")
        if wants_cuda or "nvidia" in names:
            add("nvidia")
        for k, c in enumerate(original):
            if c.name in ("pytorch", "nvidia", "nodefaults"):
                continue
            if c.name in facts()["pytorch_channel"]["deprecated"] and c.name not in referenced:
                removed.append((c.text, k, _reason("channel_deprecated", channel=c.text)))
                continue
            wanted.append((c.text, k))
        if not _base_channels([channel_name(t) for t, _ in wanted]) and st.base_channel:
            # only when asked (--base-channel): adding Anaconda's defaults changes the source and the licence
            # terms of every other package, and Miniforge users have no defaults at all (TC603 offers both)
            wanted.append((st.base_channel, None))
    elif target == "conda-forge":
        add("conda-forge")
        drop = {"pytorch", "pytorch-nightly", "pytorch-test", "pytorch-lts", "nvidia", *facts()["defaults"]["names"]}
        for k, c in enumerate(original):
            if c.name in ("conda-forge", "nodefaults"):
                continue
            if c.name in drop and c.name not in referenced:
                key = "channel_nvidia_dropped" if c.name == "nvidia" else "channel_dropped_for_conda_forge"
                removed.append((c.text, k, _reason(key, channel=c.text)))
                continue
            wanted.append((c.text, k))
    else:
        for k, c in enumerate(original):
            if c.name != "nodefaults":
                wanted.append((c.text, k))
        if target is None and st.intent.era in ("unknown",) and st.intent.has_conda_torch:
            st.unresolved.append(_reason("channels_unknown"))
    # nodefaults: only when the list holds a base channel (else python itself could go unsolvable)
    has_nodefaults = "nodefaults" in names
    if _base_channels([channel_name(t) for t, _ in wanted]):
        o = origin_of("nodefaults")
        if o is not None:
            # keep it where the user put it relative to the surviving entries
            wanted.append((original[o].text, o))
        else:
            wanted.append(("nodefaults", None))
    elif has_nodefaults:
        o = origin_of("nodefaults")
        wanted.append((original[o].text, o))  # type: ignore[index]
    entries = [Entry(t, o) for t, o in wanted]
    same = [e.text for e in entries] == [c.text for c in original] and all(e.origin == k for k, e in enumerate(entries))
    if same and original:
        return None, False
    # report
    for text, k, reason in removed:
        st.change("channels", "removed", text, None, reason, original[k].where.line)
    for e in entries:
        if e.origin is None:
            if e.text == "nodefaults":
                reason = _reason("add_nodefaults")
            elif channel_name(e.text) == "defaults":
                reason = _reason("add_base_channel", channel=e.text)
            elif channel_name(e.text) == "nvidia":
                reason = _reason("add_nvidia")
            elif channel_name(e.text) == "conda-forge":
                reason = _reason("add_conda_forge")
            else:
                reason = _reason("add_pytorch_channel")
            st.change("channels", "added", None, e.text, reason, None)
    kept = [e.origin for e in entries if e.origin is not None]
    if kept != sorted(kept):
        st.change(
            "channels",
            "reordered",
            ", ".join(c.text for c in original),
            ", ".join(e.text for e in entries),
            _reason("reorder", first=entries[0].text),
            original[0].where.line if original else None,
        )
    return entries, not original and file.channels is None


# ------------------------------------------------------------------------------------------------------------
# pip


def _carried(name: str) -> bool:
    pip = facts()["pip"]
    return name in pip["index_carries"] or name.startswith(tuple(pip["index_carries_prefixes"]))


def _render_pip(line: PipLine, version: str) -> str:
    name = line.raw.strip().split("[")[0].split("=")[0].split("<")[0].split(">")[0].split("!")[0].split("~")[0]
    name = name.split(";")[0].split("@")[0].strip()
    out = f"{name}{line.extras}=={version}"
    if line.marker:
        out += f"; {line.marker}"
    return out


def _conda_name(text: str) -> str | None:
    if text.startswith("\0"):
        return None
    try:
        return parse_conda_spec(text).name
    except ValueError:
        return None


def _move_companions_to_conda(st: _State, deps: list[Entry], out: list[Entry]) -> None:
    """pip torchvision/torchaudio next to a conda torch are built against another torch (TC606 cross): take
    them from torch's channel instead, paired with it."""
    file, inst = st.file, st.installed
    assert file.pip is not None
    if st.target is None or not any(_conda_name(e.text) == "pytorch" for e in deps):
        return
    prefix = _family_prefix(file, st.target)
    torch_ref = st.torch_exact or st.torch_minor
    for e in list(out):
        if e.origin is None:
            continue
        item = file.pip_item(e.origin)
        line = item.line
        if line.kind != "requirement" or line.name not in ("torchvision", "torchaudio") or line.url or line.marker:
            continue
        if inst is not None and line.name in inst.pip:
            continue  # the env really has it from pip: spec fix -p describes the env, TC606 tells the user
        want = None
        if torch_ref and torch_release(torch_ref) is not None:
            minor, exact = companion_for(line.name, torch_ref, conda=st.target == "pytorch")
            want = exact if st.torch_exact else minor
        spec = CondaSpec(raw="", name=line.name, channel=prefix, version=want, bare_is_fuzzy=True)
        text = spec.render()
        out.remove(e)
        at = max(k for k, d in enumerate(deps) if _conda_name(d.text) in CONDA_TORCH) + 1
        deps.insert(at, Entry(text, None))
        reason = _reason("companion_to_conda", package=line.name, channel=st.target)
        st.change("pip", "removed", item.text, None, reason, item.where.line)
        st.change("dependencies", "added", None, text, reason, None)


def _demote_index(st: _State, e: Entry, item: PipItem, idx: TorchIndex, non_family: list[PipItem]) -> None:
    """``--index-url`` → ``--extra-index-url``: other pip packages in the list must still come from PyPI."""
    new = f"--extra-index-url {idx.url}"
    st.change(
        "pip",
        "replaced",
        e.text,
        new,
        _reason("index_hides_pypi", packages=", ".join(p.text for p in non_family[:3])),
        item.where.line,
    )
    e.text = new


def _plan_pip(st: _State, deps: list[Entry]) -> list[Entry] | None:
    file, inst = st.file, st.installed
    if file.pip is None:
        return None
    conda_family = set()
    for e in deps:
        if e.text.startswith("\0"):
            continue
        try:
            conda_family.add(parse_conda_spec(e.text).name)
        except ValueError:
            continue
    pip_for_conda = {"torch": "pytorch", "torchvision": "torchvision", "torchaudio": "torchaudio"}
    out: list[Entry] = []
    torch_tag = None
    for item in file.pip:
        line = item.line
        if line.kind == "requirement" and line.name in pip_for_conda and pip_for_conda[line.name] in conda_family:
            conda_text = next(e.text for e in deps if _conda_name(e.text) == pip_for_conda[line.name])
            conda_version = parse_conda_spec(conda_text).exact
            same = bool(conda_version and line.exact and line.exact == conda_version)
            st.change(
                "pip",
                "removed",
                item.text,
                None,
                _reason("pip_duplicate_same" if same else "pip_duplicate_conflict", pip=item.text, conda=conda_text),
                item.where.line,
            )
            continue
        out.append(Entry(item.text, item.index))
    _move_companions_to_conda(st, deps, out)
    # pins from the installed env, companions, and the variant tag
    reqs = {}
    for e in out:
        if e.origin is None:
            continue
        line = file.pip_item(e.origin).line
        if line.kind == "requirement" and line.name:
            reqs[line.name] = e
    if inst is not None:
        for name, e in reqs.items():
            pkg = inst.pip.get(name)
            line = file.pip_item(e.origin).line  # type: ignore[arg-type]
            if pkg is None:
                if line.url is None:
                    st.unresolved.append(_reason("not_installed", entry=e.text, prefix=inst.prefix))
                continue
            if line.url is None and line.exact != pkg.version:
                new = _render_pip(line, pkg.version)
                st.change(
                    "pip",
                    "pinned",
                    e.text,
                    new,
                    _reason("pin_installed", prefix=inst.prefix, version=pkg.version),
                    file.pip_item(e.origin).where.line,
                )  # type: ignore[index]
                e.text = new
        torch_pkg = inst.pip.get("torch")
        if torch_pkg is not None and "+" in torch_pkg.version:
            torch_tag = torch_pkg.version.split("+", 1)[1].lower()
    else:
        torch_entry = reqs.get("torch")
        torch_line = file.pip_item(torch_entry.origin).line if torch_entry is not None else None  # type: ignore[index]
        torch_exact = torch_line.exact.split("+", 1)[0] if torch_line is not None and torch_line.exact else None
        for name in ("torchvision", "torchaudio"):
            e = reqs.get(name)
            if e is None or torch_exact is None or torch_release(torch_exact) is None:
                continue
            line = file.pip_item(e.origin).line  # type: ignore[arg-type]
            if line.url:
                continue
            have = line.exact.split("+", 1)[0] if line.exact else None
            if have is None:
                spec = line.version_spec
                have = minor_of_spec(spec.lstrip("=")) if spec.startswith("==") else None
            ok = companion_ok(name, torch_exact, have) if have else None
            if have is None and line.specifier:
                continue  # a range: leave it to pip
            if ok is False:
                # both explicit pins: which one is wrong is the user's choice (TC608), neither is rewritten
                st.unresolved.append(_reason("companion_conflict", entry=e.text, torch=torch_exact))
                continue
            if have is None:
                _, want = companion_for(name, torch_exact)
                if want:
                    new = _render_pip(line, want)
                    st.change(
                        "pip",
                        "pinned",
                        e.text,
                        new,
                        _reason("pin_companion", package=name, version=want, torch=torch_exact),
                        file.pip_item(e.origin).where.line,
                    )  # type: ignore[index]
                    e.text = new
        # the torch the pip companions pair with after the fix: the pip torch kept, else the conda one (a pip
        # duplicate of it is removed above; reading it from the original list would differ on the next fix)
        conda_torch = next((parse_conda_spec(e.text) for e in deps if _conda_name(e.text) == "pytorch"), None)
        anchor = torch_exact if torch_entry is not None else (conda_torch.exact if conda_torch else None)
        offered = tags_offered(anchor) if anchor else None
        kept_tags = {
            item.line.local_tag
            for item in file.pip
            if item.line.kind == "requirement"
            and item.line.name in ("torch", "torchvision", "torchaudio")
            and item.line.local_tag
            and any(x.origin == item.index for x in out)
        }
        # +cu121 and +cu118 in one list: either index leaves the other a mismatch; the variant is the user's
        several = len(kept_tags) > 1
        if several:
            st.unresolved.append(_reason("index_tags_several", tags=", ".join(sorted(f"+{t}" for t in kept_tags))))
        for item in file.pip if not several else ():
            if item.line.kind == "requirement" and item.line.name in ("torch", "torchvision", "torchaudio"):
                if item.line.local_tag and any(x.origin == item.index for x in out):
                    if offered is not None and item.line.local_tag not in offered:
                        # a +cu117 companion beside torch 2.4.1: its index has no such torch (TC607 not_offered
                        # after the fix); the pair has to be chosen first (TC608)
                        st.unresolved.append(
                            _reason("index_tag_conflict", entry=item.text, tag=item.line.local_tag, torch=torch_exact)
                        )
                        continue
                    torch_tag = item.line.local_tag
                    break
    existing = [
        (e, file.pip_item(e.origin), torch_index(file.pip_item(e.origin).line.value))
        for e in out
        if e.origin is not None
        and file.pip_item(e.origin).line.kind == "option"
        and file.pip_item(e.origin).line.option in ("--index-url", "--extra-index-url", "--find-links")
    ]
    existing = [(e, item, idx) for e, item, idx in existing if idx is not None]
    if torch_tag is None:
        for _, _, idx in existing:
            if idx.tag:
                torch_tag = idx.tag
                break
    has_torch_req = any(
        file.pip_item(e.origin).line.kind == "requirement"
        and file.pip_item(e.origin).line.name in ("torch", "torchvision", "torchaudio")
        for e in out
        if e.origin is not None
    )
    if not has_torch_req:
        return out
    non_family = [
        file.pip_item(e.origin)
        for e in out
        if e.origin is not None
        and (
            file.pip_item(e.origin).line.kind == "other"
            or (
                file.pip_item(e.origin).line.kind == "requirement"
                and not _carried(file.pip_item(e.origin).line.name or "")
            )
        )
    ]
    # a PyPI mirror given with -i/--index-url stays the main index: the torch index can only be an extra one
    other_main = [
        e
        for e in out
        if e.origin is not None
        and file.pip_item(e.origin).line.kind == "option"
        and file.pip_item(e.origin).line.option == "--index-url"
        and torch_index(file.pip_item(e.origin).line.value) is None
    ]
    # PyPI given back as an extra index (`--extra-index-url https://pypi.org/simple`): the torch index may stay main
    pypi_extra = any(
        file.pip_item(e.origin).line.kind == "option"
        and file.pip_item(e.origin).line.option == "--extra-index-url"
        and torch_index(file.pip_item(e.origin).line.value) is None
        for e in out
        if e.origin is not None
    )
    main_ok = (not non_family or pypi_extra) and not other_main
    if torch_tag and any(idx.tag is None for _, _, idx in existing):
        return out  # torch_stable.html find-links: serves every variant
    if torch_tag:
        like = existing[0][2] if existing else None
        url = index_url_for(torch_tag, like)
        option = "--index-url" if main_ok else "--extra-index-url"
        right = [x for x in existing if x[2].tag == torch_tag]
        wrong = [x for x in existing if x[2].tag != torch_tag]
        if right:
            e, item, idx = right[0]
            if item.line.option == "--index-url" and not main_ok:
                _demote_index(st, e, item, idx, non_family)
        elif wrong:
            e, item, idx = wrong[0]
            opt = item.line.option if (item.line.option != "--index-url" or main_ok) else "--extra-index-url"
            if opt == "--find-links":
                opt = option
            new = f"{opt} {url}"
            st.change(
                "pip",
                "replaced",
                e.text,
                new,
                _reason("index_wrong_variant", tag=torch_tag, old=idx.tag or "?"),
                item.where.line,
            )
            e.text = new
        else:
            new = f"{option} {url}"
            out.insert(0, Entry(new, None))
            st.change("pip", "added", None, new, _reason("index_added", tag=torch_tag), None)
    else:
        for e, item, idx in existing:
            if item.line.option == "--index-url" and not main_ok:
                _demote_index(st, e, item, idx, non_family)
    if any(x[2].tag and x[2].tag.startswith("cu") for x in existing) or (torch_tag or "").startswith("cu"):
        loose = [
            file.pip_item(e.origin)
            for e in out
            if e.origin is not None
            and file.pip_item(e.origin).line.kind == "requirement"
            and file.pip_item(e.origin).line.name in ("torch",)
            and not parse_pip_line(e.text).exact
            and not file.pip_item(e.origin).line.url
        ]
        if loose and not main_ok:
            st.unresolved.append(_reason("pip_unpinned_extra", entry=loose[0].text))
    return out


def existing_torch_index(file: EnvFile) -> bool:
    """Does the pip list already name a download.pytorch.org index (or find-links page)?"""
    return any(
        p.line.kind == "option"
        and p.line.option in ("--index-url", "--extra-index-url", "--find-links")
        and torch_index(p.line.value) is not None
        for p in file.pip or ()
    )


def fix_text(
    file: EnvFile, *, installed: Installed | None = None, lock: bool = False, base_channel: str | None = None
) -> tuple[str, Plan]:
    """The fixed text of ``file`` and the plan that produced it."""
    from conda_torchcheck.envspec.textedit import apply_plan

    plan = plan_fix(file, installed=installed, lock=lock, base_channel=base_channel)
    if not plan.changed:
        return file.text, plan
    return apply_plan(plan), plan


# exported for tests
__all__ = [
    "Change",
    "Entry",
    "Installed",
    "InstalledPackage",
    "Plan",
    "fix_text",
    "installed_from_environment",
    "plan_fix",
    "published_pytorch_cuda",
]
