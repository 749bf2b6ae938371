"""Issue 23, item 1 and 3: a fix writes only what exists and ends what it claims to; channel hygiene is one note.

The cases are the shapes of blind set f's files (f011, f044, f050), cut down to the lines that decide them.
"""

from __future__ import annotations

from conda_torchcheck.envspec import check_text, fix_file
from conda_torchcheck.envspec.parse import parse_text


def keys(findings) -> set[str]:
    return {f.title.key.rsplit(".title", 1)[0] for f in findings}


def fix(text: str):
    return fix_file(parse_text(text))


def claimed(f) -> bool:
    return any(x.safe_automatic for x in f.fixes)


def assert_converges(result) -> None:
    fixed_claims = {f.title.key for f in result.findings_before if claimed(f)}
    before_errors = {f.title.key for f in result.findings_before if f.severity.value == "error"}
    for f in result.findings_after:
        assert f.title.key not in fixed_claims, f.title.render()
        assert f.severity.value != "error" or f.title.key in before_errors, f.title.render()


# f050: `conda env export` of an env that mixed Anaconda's CPU torch with pytorch-channel companions
EXPORT_MIXED = """channels:
  - pytorch
  - conda-forge
  - defaults
dependencies:
  - python=3.10.0=h12debd9_5
  - pytorch=2.3.1=cpu_py310h4f03144_0
  - pytorch-cuda=12.4=hc786d27_7
  - pytorch-mutex=1.0=cpu
  - torchaudio=2.3.1=py310_cpu
  - torchvision=0.18.1=py310_cpu
"""


def test_a_pytorch_cuda_the_torch_never_had_is_not_written_with_a_prefix():
    result = fix(EXPORT_MIXED)
    written = {c.new for c in result.plan.changes if c.new}
    assert not any(w.endswith("pytorch-cuda=12.4=hc786d27_7") and w != "pytorch-cuda=12.4=hc786d27_7" for w in written)
    notes = [r.key for r in result.plan.unresolved]
    assert "envspec.reason.unverified_pin_not_built_for_torch" in notes
    assert_converges(result)


def test_a_hashed_torch_beside_pytorch_channel_companion_builds_is_two_builders():
    f = {k: v for k, v in ((f.title.key.rsplit(".title", 1)[0], f) for f in check_text(EXPORT_MIXED).findings)}
    tc612 = f["TC612.pytorch_build"]
    assert tc612.severity.value == "error"
    assert {o["line"] for o in tc612.evidence["others"]} == {10, 11}
    assert not any(x.safe_automatic for x in tc612.fixes)


def test_pure_python_torchvision_beside_an_old_torch_is_not_two_builders():
    # f011: torchvision 0.2.0 (no compiled code) with a hashed build next to the pytorch channel's 0.3.1
    text = """channels:
  - pytorch
  - defaults
dependencies:
  - python=3.5.5=h5001a0f_2
  - pytorch=0.3.1=py35_cuda0.0_cudnn0.0_2
  - torchvision=0.2.0=py35hca7d7b7_1
"""
    assert not {k for k in keys(check_text(text).findings) if k.startswith("TC612")}
    result = fix(text)
    assert_converges(result)


def test_the_mixed_channels_fix_is_claimed_only_where_it_ends_the_mix():
    # f044: the file keeps the pytorch channel (pytorch-cuda), so defaults stays and the mix with it
    text = """channels:
  - conda-forge
  - pytorch
  - nvidia
  - defaults
dependencies:
  - python=3.10.14
  - pytorch=2.1.2
  - pytorch-cuda=11.8
"""
    tc603 = next(f for f in check_text(text).notes if f.id == "TC603")
    assert not claimed(tc603)
    assert_converges(fix(text))


def test_channel_hygiene_is_one_info_note_listed_after_every_torch_problem():
    text = """name: t

channels:
  - conda-forge
  - defaults
dependencies:
  - pytorch
"""
    result = check_text(text)
    hygiene = result.notes
    assert [f.id for f in hygiene] == ["TC603"] and hygiene[0].severity.value == "info"
    # a note, apart from the findings: never among them, printed after every one of them
    assert result.findings and "TC603" not in {f.id for f in result.findings}
    out = result.render_text()
    assert out.index("TC603") > max(out.index(f.id) for f in result.findings)
    assert [f["id"] for f in result.to_dict()["notes"]] == ["TC603"]
    # the note is about the list as a whole: its evidence starts at the `channels:` key
    assert [c["line"] for c in hygiene[0].evidence["channels"]] == [3, 4, 5]


def test_a_conda_forge_build_glob_is_not_moved_to_the_pytorch_channel():
    # `cuda*` is conda-forge's build form; the pytorch channel's builds are py3.10_cuda12.1_..., py310_cu121:
    # `pytorch::pytorch=2.1.0=cuda*` would name nothing (a file that solved through conda-forge no longer would)
    text = """channels:
  - pytorch
  - nvidia
  - conda-forge
dependencies:
  - pytorch=2.1.0=cuda*
  - torchvision=*=cuda*
  - pytorch-cuda=12.1
"""
    result = fix(text)
    written = {c.new for c in result.plan.changes if c.new}
    assert not any(w.startswith("pytorch::pytorch=") or w.startswith("pytorch::torchvision") for w in written)
    assert "envspec.reason.unverified_pin_build_not_on_channel" in [r.key for r in result.plan.unresolved]
    # a glob the channel's builds do match is moved
    ok = fix(text.replace("pytorch=2.1.0=cuda*", "pytorch=2.1.0=*cuda*"))
    assert "pytorch::pytorch=2.1.0=*cuda*" in {c.new for c in ok.plan.changes if c.new}
