"""TC607: pip CUDA torch and the wheel index."""

from __future__ import annotations

from collections.abc import Iterator

from conda_torchcheck.envspec.history import example_pin
from conda_torchcheck.envspec.history import release as torch_release
from conda_torchcheck.envspec.intent import Intent, facts, facts_stable_abi
from conda_torchcheck.envspec.matchspec import torch_index, version_key
from conda_torchcheck.envspec.parse import PipItem
from conda_torchcheck.envspec.rules._common import Rule, RuleContext, at, ev, torch_index_carries
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg


def _page_as_index(ctx: RuleContext) -> Iterator[Finding]:
    """A page of links (`https://data.pyg.org/whl/torch-1.13.0+cpu.html`, torch_stable.html, an OpenMMLab or DGL
    index.html/repo.html) given as --index-url / --extra-index-url: pip reads an index URL as a PEP 503 simple index
    (it asks for `<url>/<project>/`), so nothing on that page is found; a page of links is read with -f."""
    for item in ctx.file.pip or ():
        line = item.line
        if line.kind != "option" or line.option not in ("--index-url", "--extra-index-url") or not line.value:
            continue
        url = line.value.split("#", 1)[0].strip().rstrip("/")
        if not url.lower().endswith((".html", ".htm")):
            continue
        yield finding(
            "TC607",
            Severity.ERROR,
            variant="page_as_index",
            evidence=ev(ctx, entry=at(item)),
            fixes=[Fix("file", msg("TC607.page_as_index.fix", url=url))],
            entry=item.text,
            url=url,
        )


def pip_index(ctx: RuleContext) -> Iterator[Finding]:
    yield from _extensions_without_their_page(ctx)
    yield from _extensions_newer_on_pypi(ctx)
    yield from _page_as_index(ctx)
    i = ctx.intent
    if not i.pip:
        return
    indexes = [(item, index) for item, index in i.indexes]
    find_links_all = any(index.tag is None for _, index in indexes)
    tags = {index.tag for _, index in indexes if index.tag}
    tagged = [item for item in i.pip.values() if item.line.local_tag and not item.line.url]
    if tagged and not indexes:
        tag = tagged[0].line.local_tag
        offered = pip_tags_offered(i)
        # two variants asked for (torch +cu121, torchvision +cu118): one index would leave the other a mismatch
        several = len({item.line.local_tag for item in tagged}) > 1
        conflict = several or (
            offered is not None and bool(tag) and any(t.line.local_tag not in offered for t in tagged)
        )
        yield finding(
            "TC607",
            Severity.ERROR,
            variant="missing",
            evidence=ev(ctx, entries=[at(item) for item in tagged]),
            # a tag the file's torch was never built for (torchaudio==0.13.0+cu117 beside torch==2.4.1): adding its
            # index would only move the error (TC607 not_offered); which release to keep is the user's choice
            fixes=[
                Fix(
                    "file",
                    msg(
                        "TC607.missing.fix_several",
                        tags=", ".join(sorted({f"+{t.line.local_tag}" for t in tagged})),
                    ),
                )
                if several
                else Fix(
                    "file",
                    msg("TC607.missing.fix_conflict", tag=tag, torch=i.torch_version, offered=", ".join(offered or ())),
                )
                if conflict
                else ctx.rewrite_fix("TC607.missing.fix", url=f"https://download.pytorch.org/whl/{tag}")
            ],
            requirement=", ".join(item.text for item in tagged),
            tag=tag,
        )
    for item in i.pip.values():
        tag = item.line.local_tag
        if item.line.url or not indexes:
            continue
        if tag and tags and tag not in tags and not find_links_all:
            first_item, first_index = indexes[0]
            # the rewrite points the index at the pins' tag: only when they agree on one that torch has
            variants = {t.line.local_tag for t in tagged}
            offered = pip_tags_offered(i)
            choice = len(variants) > 1 or (offered is not None and tag not in offered)
            yield finding(
                "TC607",
                Severity.ERROR,
                variant="mismatch",
                evidence=ev(ctx, entry=at(item), index=at(first_item)),
                fixes=[
                    Fix("file", msg("TC607.missing.fix_several", tags=", ".join(sorted(f"+{v}" for v in variants))))
                    if choice
                    else ctx.rewrite_fix("TC607.mismatch.fix", tag=tag)
                ],
                requirement=item.text,
                tag=tag,
                index_tag=first_index.tag,
            )
    torch_version = i.torch_version
    release = torch_release(torch_version) if torch_version else None
    if release is None and "torch" in i.pip:
        yield from _range_not_offered(ctx, indexes)
    if release is not None and "torch" in i.pip:
        for item, index in indexes:
            if (
                index.tag
                and index.tag.startswith("cu")
                and not index.nightly
                and release.offers_pip_cuda(index.tag) is False
            ):
                yield finding(
                    "TC607",
                    Severity.ERROR,
                    variant="not_offered",
                    evidence=ev(ctx, index=at(item), torch=at(i.pip["torch"]), offered=list(release.pip_cuda)),
                    fixes=[Fix("file", msg("TC607.not_offered.fix", offered=", ".join(release.pip_cuda)))],
                    tag=index.tag,
                    torch=torch_version,
                )
    main_index = [(item, index) for item, index in indexes if item.line.option == "--index-url"]
    # `--extra-index-url https://pypi.org/simple` (or any non-torch index) next to it gives PyPI back
    other_extra = [
        item
        for item in ctx.file.pip or ()
        if item.line.kind == "option"
        and item.line.option == "--extra-index-url"
        and torch_index(item.line.value) is None
    ]
    if main_index:
        others = [p for p in ctx.file.pip_requirements() if p.line.name and not torch_index_carries(p.line.name)]
        if others and not other_extra:
            item, _ = main_index[0]
            yield finding(
                "TC607",
                Severity.WARNING,
                variant="hides_pypi",
                evidence=ev(ctx, index=at(item), others=[at(p) for p in others]),
                fixes=[ctx.rewrite_fix("TC607.hides_pypi.fix")],
                packages=", ".join(p.line.name or p.text for p in others[:5]),
            )
    extra = [(item, index) for item, index in indexes if item.line.option == "--extra-index-url" and index.tag]
    if not (extra and not main_index) and main_index and other_extra and main_index[0][1].tag:
        extra = main_index[:1]  # the torch index is the main one, PyPI an extra: the same race for the version
    if extra and (not main_index or other_extra):
        # an exact pin is enough: pip prefers 2.5.1+cu124 over PyPI's 2.5.1 for ==2.5.1 (local versions sort higher)
        loose = [
            item
            for item in i.pip.values()
            if not item.line.url and not item.line.exact and not _follows_pinned_torch(i, item)
        ]
        if loose:
            item, index = extra[0]
            yield finding(
                "TC607",
                Severity.WARNING,
                variant="unpinned_extra",
                evidence=ev(ctx, index=at(item), entries=[at(p) for p in loose]),
                fixes=[Fix("file", msg("TC607.unpinned_extra.fix", tag=index.tag, example=_example(index.tag)))],
                tag=index.tag,
            )


def pip_tags_offered(i: Intent) -> tuple[str, ...] | None:
    """The wheel tags download.pytorch.org has for the torch the file pins exactly (cu118, rocm6.1, cpu ...):
    the conda torch when there is one, else the pip torch; None when torch is not pinned exactly or unknown."""
    item = i.pip.get("torch")
    conda = i.deps.get("pytorch") or i.misnamed_torch
    if conda is not None and conda.spec is not None:
        # pip companions beside a conda torch pair with that one (the fix removes a pip duplicate of it), pinned
        # as written or as the frozen channel resolves it (what the fix writes)
        version = conda.spec.exact or (i.resolution.version if i.resolution is not None else None)
    elif item is not None and item.line.exact:
        version = item.line.exact.split("+", 1)[0]
    else:
        version = None
    return tags_offered(version) if version else None


def tags_offered(version: str) -> tuple[str, ...] | None:
    """The wheel tags download.pytorch.org has for torch ``version`` (exact), None when its release is unknown."""
    from conda_torchcheck.envspec.history import rocm_tags

    release = torch_release(version)
    if release is None or not release.pip_cuda_known:
        return None
    try:
        from conda_torchcheck.knowledge import releases

        tags = set(releases.pip_index_tags(version))
    except (ImportError, KeyError, OSError):  # pragma: no cover - shipped with the package
        tags = set()
    tags |= set(release.pip_cuda) | set(release.pip_rocm) | set(rocm_tags(version)) | {"cpu"}
    return tuple(sorted(tags))


def _range_not_offered(ctx: RuleContext, indexes) -> Iterator[Finding]:
    """A ranged pip torch (``torch>=2.7.0``) with a CUDA index no release in that range was built for
    (2.7 has cu118/cu126/cu128, not cu121): "No matching distribution found"."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from conda_torchcheck.envspec.history import known_minors

    item = ctx.intent.pip["torch"]
    spec = item.line.version_spec
    if not spec or item.line.url:
        return
    try:
        allowed = SpecifierSet(spec)
    except InvalidSpecifier:
        return
    minors = [m for m in known_minors() if allowed.contains(f"{m}.0") or allowed.contains(f"{m}.1")]
    releases = [torch_release(m) for m in minors]
    if not minors or any(r is None or not r.pip_cuda for r in releases):
        return
    for opt, index in indexes:
        tag = index.tag
        if not tag or not tag.startswith("cu") or index.nightly:
            continue
        if any(r.offers_pip_cuda(tag) is not False for r in releases if r is not None):
            continue
        offered = sorted({t for r in releases if r is not None for t in r.pip_cuda})
        yield finding(
            "TC607",
            Severity.ERROR,
            variant="not_offered",
            evidence=ev(ctx, index=at(opt), torch=at(item), offered=offered),
            fixes=[Fix("file", msg("TC607.not_offered.fix", offered=", ".join(offered)))],
            tag=tag,
            torch=item.line.specifier,
        )


def _example(tag: str | None) -> str:
    """A pin that exists for ``tag`` (the newest release whose wheels carry it), for the fix text."""
    return (example_pin(tag) if tag else None) or f"torch==<version>+{tag}"


def _follows_pinned_torch(i: Intent, item: PipItem) -> bool:
    """An unpinned torchvision (or torchaudio before its stable-ABI releases) beside an exact pip torch: each of
    its wheels requires one exact torch, so pip settles on the one built for that torch, and on the index's
    +tag build of it (a local version sorts above PyPI's)."""
    torch = i.pip.get("torch")
    name = item.line.name
    if torch is None or not torch.line.exact or name not in ("torchvision", "torchaudio"):
        return False
    if name == "torchaudio":
        stable_from = facts_stable_abi()
        have, stable = version_key(torch.line.exact.split("+", 1)[0]), version_key(stable_from or "")
        if have is not None and stable is not None and have >= stable:
            return False
    return True


def _extensions_without_their_page(ctx: RuleContext) -> Iterator[Finding]:
    """torch-scatter & co. in the pip list with no find-links page (data.pyg.org) to take their wheels from: PyPI
    has only their sources, whose setup imports torch, which pip's isolated build does not have."""
    table = facts()["co_constraints"]
    extensions = [
        item
        for item in ctx.file.pip_requirements()
        if item.line.name in table["pip_torch_extensions"] and not item.line.url
    ]
    if not extensions:
        return
    hosts = tuple(table["find_links_hosts"])
    for item in ctx.file.pip or ():
        if item.line.kind == "option" and item.line.option in ("--find-links", "--index-url", "--extra-index-url"):
            if any(h in (item.line.value or "") for h in hosts):
                return
    yield finding(
        "TC607",
        Severity.ERROR,
        variant="extension_page",
        evidence=ev(ctx, entries=[at(item) for item in extensions]),
        # the page is named for one torch release and CUDA tag: which one is the user's (or TC608's) to say
        fixes=[Fix("file", msg("TC607.extension_page.fix", torch=ctx.intent.torch_version or "<torch>"))],
        packages=", ".join(item.line.name or item.text for item in extensions),
    )


def _allows(specifier: str, version: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(specifier).contains(version, prereleases=False)
    except InvalidSpecifier:
        return False


def _extensions_newer_on_pypi(ctx: RuleContext) -> Iterator[Finding]:
    """torch-scatter & co. left open beside the find-links page of an old torch (PyG's "binaries of older versions",
    torch 1.4-1.11): pip takes the highest version any source offers, and PyPI's newest release, a source archive
    only, is newer than every wheel on that page, so pip builds it from source (and the build imports torch, which
    pip's isolated build lacks) instead of installing the page's wheel (blind envfile set x)."""
    from conda_torchcheck.envspec.history import torch_of_find_links
    from conda_torchcheck.knowledge import releases

    table = facts()["co_constraints"]
    newest = table.get("pip_torch_extensions_pypi_newest", {})
    old_pages = {".".join(v.split(".")[:2]) for v in releases.pyg_older_torch_versions()}
    pages = [
        (item, page)
        for item in ctx.file.pip or ()
        if item.line.kind == "option" and item.line.option == "--find-links"
        for page in [torch_of_find_links(item.line.value)]
        if page is not None and page[0] in old_pages
    ]
    if not pages:
        return
    open_ended = [
        item
        for item in ctx.file.pip_requirements()
        if item.line.name in newest
        and not item.line.url
        and item.line.pep508
        and _allows(item.line.specifier, newest[item.line.name])
    ]
    if not open_ended:
        return
    page_item, (minor, _tag) = pages[0]
    yield finding(
        "TC607",
        Severity.WARNING,
        variant="extension_sdist_wins",
        evidence=ev(
            ctx,
            entries=[at(item) for item in open_ended],
            page=at(page_item),
            pypi_newest={item.line.name: newest[item.line.name] for item in open_ended},
        ),
        fixes=[Fix("file", msg("TC607.extension_sdist_wins.fix", torch=minor))],
        packages=", ".join(item.line.name or item.text for item in open_ended),
        torch=minor,
    )


RULE = Rule.declared(__name__, pip_index)
