"""The match-spec reader against conda's own MatchSpec: same split, same constraint, rewrites never broader.

Skipped where conda is not importable (the reader itself needs no conda); in the project's .venv a real conda
26.7 is installed, so these run there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.envspec import fix_file
from conda_torchcheck.envspec.matchspec import SpecSyntaxError, parse_conda_spec
from conda_torchcheck.envspec.parse import decode, parse_text
from tests.conda_skip import CONDA_SKIP_REASON

match_spec = pytest.importorskip("conda.models.match_spec", reason=CONDA_SKIP_REASON)
MatchSpec = match_spec.MatchSpec


SPECS = [
    "pytorch",
    "pytorch=1.13",
    "pytorch 1.13",
    "pytorch==1.13",
    "pytorch >= 1.13",
    "pytorch>=1.13",
    "pytorch >=1.8 , <=1.10",
    "pytorch>=1.13,<2=cuda*",
    "pytorch >=1.13, <2 cuda*",
    "pytorch=1.13=py_0",
    "pytorch=1.13.*=cuda*",
    "pytorch 1.13 cuda*",
    "pytorch==2.5.1=py3.11_cuda12.4*",
    "pytorch=2.6.0.dev20241112",
    "pytorch==2.*",
    "pytorch=2.5|2.4",
    "pytorch 2.5.*",
    "pytorch=*=cuda*",
    "pytorch~=2.5.0",
    "pytorch!=2.5",
    "pytorch<2.5.0a0",
    "pytorch>1.0 py*",
    "pytorch =2.5",
    "pytorch= 2.5",
    "pytorch-nightly::pytorch",
    "conda-forge/linux-64::pytorch=2",
    "https://conda.anaconda.org/pytorch::pytorch=2.1",
    "pytorch[version='>=2.4', build='cuda*']",
    'pytorch[version=">=2.4",build=cuda*]',
    "pytorch[channel=pytorch]",
    "pytorch=2.5.1 # a comment",
    "pytorch::pytorch-cuda=11.8",
    "cudatoolkit=11.3",
    "python>=3.8,<3.11",
    "pytorch-mutex=1.0=cuda",
]


def _norm(value) -> str | None:
    """conda writes the fuzzy ``2.5*`` as ``2.5.*``: one constraint."""
    if value is None:
        return None
    text = str(value)
    return text[:-2] + "*" if text.endswith(".*") else text


@pytest.mark.parametrize("text", SPECS)
def test_split_is_condas(text):
    ours, theirs = parse_conda_spec(text), MatchSpec(text)
    assert ours.name == theirs.name
    assert _norm(ours.version) == _norm(theirs.get_raw_value("version"))
    assert ours.build == (str(theirs.get_raw_value("build")) if theirs.get_raw_value("build") else None)
    if theirs.get_raw_value("channel") is not None:
        assert ours.channel_name == theirs.get_raw_value("channel").name


@pytest.mark.parametrize("text", SPECS)
def test_render_reads_back_as_the_same_constraint_in_conda(text):
    spec = parse_conda_spec(text)
    rendered = spec.render_checked()
    assert rendered is not None
    again, theirs = MatchSpec(rendered), MatchSpec(text)
    assert again.name == theirs.name
    assert _norm(again.get_raw_value("version")) == _norm(theirs.get_raw_value("version"))
    assert str(again.get_raw_value("build")) == str(theirs.get_raw_value("build"))


def test_spaces_around_an_operator_are_the_version_not_a_build():
    spec = parse_conda_spec("pytorch >= 1.13")
    assert (spec.version, spec.build) == (">=1.13", None)
    assert spec.allows("2.5.1") is True and spec.allows("1.12.1") is False


def test_equals_with_a_build_is_exact():
    # conda: `=2.5=cuda*` is exactly 2.5 (= 2.5.0), `=2.5.*=cuda*` the series
    assert MatchSpec("pytorch=2.5=cuda*").version.match("2.5.1") is False
    assert parse_conda_spec("pytorch=2.5=cuda*").allows("2.5.1") is False
    assert parse_conda_spec("pytorch=2.5.*=cuda*").allows("2.5.1") is True
    assert parse_conda_spec("pytorch=2.5").pinned("2.5.1", "cuda*").render() == "pytorch=2.5.1=cuda*"
    assert parse_conda_spec("pytorch=2.5").with_(build="cuda*").render() == "pytorch=2.5.*=cuda*"


@pytest.mark.parametrize("text", ["pytorch=1.13=*=cuda*", "pytorch >=1.13,<2=*=cuda*", "pytorch >=", "pytorch=="])
def test_what_conda_refuses_is_refused(text):
    with pytest.raises(Exception):  # noqa: B017 - conda raises InvalidMatchSpec / InvalidVersionSpec
        MatchSpec(text)
    with pytest.raises(SpecSyntaxError):
        parse_conda_spec(text)


def test_a_spec_this_reader_does_not_model_is_not_rewritten():
    assert parse_conda_spec("pytorch[md5=0123abcd]").render_checked() is None
    with pytest.raises(SpecSyntaxError):
        parse_conda_spec("pytorch >=")


_VERSIONS = sorted(
    {f"{a}.{b}.{c}" for a in (0, 1, 2) for b in range(16) for c in (0, 1, 2)}
    | {f"{a}.{b}" for a in (9, 10, 11, 12) for b in range(10)}
)


def _narrower_or_same(old: str, new: str) -> bool:
    o, n = MatchSpec(old), MatchSpec(new)
    if o.version is None:
        return True
    return n.version is not None and all(o.version.match(v) for v in _VERSIONS if n.version.match(v))


FILES = [
    *sorted((Path(__file__).parent / "golden").glob("*.in.yml")),
    *sorted((Path(__file__).parents[1] / "data" / "envfiles").glob("*.yml")),
]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_rewritten_spec_parses_in_conda_to_the_same_or_a_narrower_constraint(path):
    text, encoding, bom = decode(path.read_bytes(), path.name)
    result = fix_file(parse_text(text, path.name, encoding=encoding, bom=bom))
    for change in result.plan.changes:
        if change.section != "dependencies" or not change.new:
            continue
        new = MatchSpec(change.new)  # raises on a spec conda cannot read
        if change.old and MatchSpec(change.old).name == new.name:
            assert _narrower_or_same(change.old, change.new), (change.old, change.new)


@pytest.mark.parametrize(
    "old",
    [
        "pytorch >= 1.13",
        "pytorch>=1.13,<2",
        "pytorch >=2.0,<2.6",
        "pytorch=2.6",
        "pytorch 2.5.1",
        "pytorch=2.6.0.dev20241112",
        "pytorch<0.4",
    ],
)
@pytest.mark.parametrize("channels", ["[pytorch, nvidia, defaults]", "[conda-forge]", "[pytorch-nightly]"])
def test_rewrites_of_version_forms_stay_within_the_original(old, channels):
    text = f"channels: {channels}\ndependencies:\n  - {old}\n  - pytorch-cuda=12.1\n"
    result = fix_file(parse_text(text))
    for change in result.plan.changes:
        if change.old == old and change.new:
            assert _narrower_or_same(old, change.new), change.new
