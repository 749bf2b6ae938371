"""The classes of wrong findings and fixes found on real environment files (issue 13), one test each.

Each test names the mechanism it pins down; the corpus benchmark (benchmarks/envspec_corpus.py) measures the
same on real files.
"""

from __future__ import annotations

import pytest

from conda_torchcheck.envspec import check_file, check_text, fix_file
from conda_torchcheck.envspec.parse import parse_text


def keys(findings) -> set[str]:
    return {f.title.key.rsplit(".title", 1)[0] for f in findings}


def fix(text: str, **kwargs):
    return fix_file(parse_text(text), **kwargs)


def deps(text: str) -> list[str]:
    return [d.text for d in parse_text(text).deps]


def channels(text: str) -> list[str]:
    return [c.text for c in parse_text(text).channels or ()]


def claimed(f) -> bool:
    return any(x.safe_automatic for x in f.fixes)


def assert_converges(result) -> None:
    """spec check on the fixed file reports nothing the fix claimed to fix, and no new error."""
    fixed_claims = {f.title.key for f in result.findings_before if claimed(f)}
    before_errors = {f.title.key for f in result.findings_before if f.severity.value == "error"}
    for f in result.findings_after:
        assert f.title.key not in fixed_claims, f.title.render()
        assert f.severity.value != "error" or f.title.key in before_errors, f.title.render()


# ---- a rewrite that breaks the file ---------------------------------------------------------------------------
def test_spaces_around_the_operator_are_a_version_and_the_pin_satisfies_it():
    result = fix("channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch >= 1.13\n  - pytorch-cuda=11.7\n")
    assert "pytorch::pytorch=2.0.1" in deps(result.fixed)  # 11.7 was last built for 2.0
    assert not any("=1.13" in d and "2.0.1" in d for d in deps(result.fixed))


def test_a_range_keeps_its_upper_bound_on_a_live_channel():
    result = fix("channels: [conda-forge]\ndependencies:\n  - pytorch >=2.0,<2.6\n  - cuda-version=12\n")
    assert "conda-forge::pytorch >=2.0,<2.6 cuda*" in deps(result.fixed)


# ---- pins that ignore what else constrains torch ---------------------------------------------------------------
def test_pyg_channel_packages_bound_the_frozen_pin():
    result = fix("channels: [pyg, pytorch, nvidia, defaults]\ndependencies:\n  - pytorch\n  - pyg\n  - pytorch-cuda\n")
    assert "pytorch::pytorch=2.4.1" in deps(result.fixed)


def test_a_find_links_page_named_for_one_torch_bounds_the_pin():
    text = (
        "channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch\n  - pytorch-cuda\n  - pip\n  - pip:\n"
        "    - -f https://data.pyg.org/whl/torch-2.3.0+cu121.html\n    - torch-scatter\n"
    )
    assert "pytorch::pytorch=2.3.1" in deps(fix(text).fixed)


def test_a_conflicting_extension_wheel_is_reported_instead_of_pinned():
    text = (
        "channels: [pytorch, defaults]\ndependencies:\n  - pytorch=2.5\n  - pip\n  - pip:\n"
        "    - torch-scatter==2.1.2+pt24cpu\n"
    )
    result = fix(text)
    assert "TC608.extension" in keys(result.findings_before)
    assert "pytorch::pytorch=2.5" in deps(result.fixed)  # not pinned to 2.5.1 "anyway"
    assert any("torch-scatter" in u.render() for u in result.plan.unresolved)
    assert_converges(result)


# ---- release knowledge back to 0.4 -----------------------------------------------------------------------------
@pytest.mark.parametrize("minor", ["1.0", "1.2", "1.5", "1.8", "1.9", "1.10", "1.11"])
def test_old_releases_raise_no_false_no_release_note(minor):
    result = fix(f"channels: [pytorch, defaults]\ndependencies:\n  - pytorch={minor}\n")
    assert not result.plan.unresolved, [u.render() for u in result.plan.unresolved]
    assert any(d.startswith(f"pytorch::pytorch={minor}.") for d in deps(result.fixed))


def test_pytorch_before_0_4_stays_on_the_pytorch_channel():
    result = fix("name: t\nchannels: [pytorch, defaults]\ndependencies:\n  - pytorch<0.4\n")
    assert not result.findings_before
    assert "pytorch::pytorch=0.3.1" in deps(result.fixed)


def test_torch_1_11_with_cudatoolkit_11_1_is_a_cpu_build():
    found = check_text("channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.11.0\n  - cudatoolkit=11.1\n")
    assert "TC605.cudatoolkit_for_torch" in keys(found.findings)


def test_torch_1_9_with_cudatoolkit_11_1_from_nvidia_is_fine():
    found = check_text("channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=1.9.1\n  - cudatoolkit=11.1\n")
    assert "TC605.cudatoolkit_for_torch" not in keys(found.findings)


def test_torchvision_0_13_with_torch_1_11_is_flagged():
    found = check_text("channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.11.0\n  - torchvision=0.13\n")
    assert "TC608" in keys(found.findings)


def test_cuda92_with_torch_1_1_is_flagged():
    found = check_text("channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.1.0\n  - cuda92\n")
    assert "TC605.cuda_package_for_torch" in keys(found.findings)


def test_no_pytorch_cuda_that_1_13_never_had_is_suggested():
    result = fix("channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch=1.13.1\n  - cudatoolkit=11.8\n")
    words = " ".join(x.summary.render() for f in result.findings_before for x in f.fixes)
    assert "11.8" not in words.replace("cudatoolkit=11.8", "") and "11.6, 11.7" in words
    assert not any("pytorch-cuda=11.8" in d or "pytorch-cuda=11.1" in d for d in deps(result.fixed))
    assert_converges(result)


def test_the_example_pin_exists_for_its_tag():
    text = (
        "dependencies:\n  - pip\n  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/rocm5.2\n"
        "    - torch\n"
    )
    words = " ".join(x.summary.render() for f in check_text(text).findings for x in f.fixes)
    assert "torch==1.13.1+rocm5.2" in words and "2.5.1+rocm5.2" not in words


# ---- fixes that converge -----------------------------------------------------------------------------------------
def test_conda_forge_cuda_11_convention_is_not_tc613():
    text = "channels: [conda-forge, nodefaults]\ndependencies:\n  - pytorch=2.1=cuda*\n  - cudatoolkit=11.8\n"
    assert "TC613.conda_forge" not in keys(check_text(text + "  - cuda-version=11.8\n").findings)


def test_cudatoolkit_beside_cuda_12_on_conda_forge_is_removed_by_the_fix():
    text = "channels: [conda-forge, nodefaults]\ndependencies:\n  - pytorch\n  - pytorch-cuda=12.1\n  - cudatoolkit\n"
    result = fix(text)
    assert "TC613.conda_forge" in keys(result.findings_before)
    assert not any(d.startswith("cudatoolkit") for d in deps(result.fixed))
    assert_converges(result)


def test_redundant_cudatoolkit_beside_pytorch_cuda_is_reported_at_once_and_removed():
    text = "channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch=2.1\n  - pytorch-cuda=12.1\n"
    text += "  - cudatoolkit\n"
    result = fix(text)
    assert "TC613.redundant" in keys(result.findings_before)
    assert not any(d.startswith("cudatoolkit") for d in deps(result.fixed))
    assert_converges(result)


def test_unpinned_cudatoolkit_with_1_13_becomes_the_newest_pytorch_cuda():
    text = "channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch=1.13.1\n  - cudatoolkit\n"
    result = fix(text)
    assert "pytorch::pytorch-cuda=11.7" in deps(result.fixed)
    assert_converges(result)


def test_added_cuda_version_is_not_flagged_afterwards():
    result = fix("channels: [conda-forge]\ndependencies:\n  - pytorch\n  - cudatoolkit=11.8\n")
    assert "TC613.conda_forge" not in keys(result.findings_after)
    assert_converges(result)


def test_exact_nightly_pin_is_a_pin_and_stays_on_its_channel():
    text = "channels: [pytorch-nightly, nvidia]\ndependencies:\n  - pytorch=2.6.0.dev20241112\n  - pytorch-cuda=12.4\n"
    result = fix(text)
    assert not {"TC611", "TC611.frozen", "TC604.pytorch"} & keys(result.findings_before)
    assert "pytorch-nightly::pytorch=2.6.0.dev20241112" in deps(result.fixed)


# ---- the classic CPU-build file ------------------------------------------------------------------------------------
def test_defaults_before_pytorch_with_cudatoolkit_is_flagged_and_fixed_to_the_pytorch_channel():
    text = "channels:\n  - defaults\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.9\n  - pytorch=1.9\n"
    result = fix(text + "  - cudatoolkit=11.1\n")
    assert "TC602.defaults_cpu" in keys(result.findings_before)
    assert channels(result.fixed)[:2] == ["pytorch", "nvidia"]
    assert "pytorch::pytorch=1.9.1" in deps(result.fixed)
    assert not any(d.startswith("defaults::") for d in deps(result.fixed))
    assert_converges(result)


def test_never_a_defaults_prefix():
    result = fix("channels: [defaults]\ndependencies:\n  - pytorch=2.3\n  - torchvision\n")
    assert not any("defaults::" in d for d in deps(result.fixed))


# ---- no silent policy changes ----------------------------------------------------------------------------------------
def test_defaults_is_offered_never_added():
    text = "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=11.8\n"
    result = fix(text)
    assert "defaults" not in channels(result.fixed)
    tc603 = next(f for f in result.findings_before if f.id == "TC603")
    assert not claimed(tc603) and any("--base-channel defaults" in c for x in tc603.fixes for c in x.commands)
    assert_converges(result)
    chosen = fix(text, base_channel="defaults")
    assert channels(chosen.fixed) == ["pytorch", "nvidia", "defaults", "nodefaults"]
    assert "TC603" not in {f.id for f in chosen.findings_after}


def test_pip_torch_with_a_conda_package_that_needs_pytorch():
    text = "channels: [conda-forge]\ndependencies:\n  - pytorch-lightning\n  - pip\n  - pip:\n    - torch==2.1.0\n"
    assert "TC606.conda_dependency" in keys(check_text(text).findings)


def test_torchvision_from_git_next_to_conda_torch():
    text = (
        "channels: [pytorch, defaults]\ndependencies:\n  - pytorch=0.4.1\n  - pip\n  - pip:\n"
        "    - git+https://github.com/pytorch/vision.git\n"
    )
    assert "TC606.cross" in keys(check_text(text).findings)


def test_unpinned_conda_companions_follow_a_pinned_pytorch():
    text = "channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.10\n  - torchvision\n  - torchaudio\n"
    assert not {"TC611", "TC611.frozen"} & keys(check_text(text).findings)


def test_a_lower_bound_is_not_unpinned():
    text = "channels: [conda-forge, nodefaults]\ndependencies:\n  - pytorch>=1.6\n"
    assert "TC611" not in keys(check_text(text).findings)


def test_cuda80_asks_for_the_pytorch_channel_and_bounds_the_pin():
    text = "channels:\n  - conda-forge\n  - soumith\ndependencies:\n  - pytorch>=0.2.0\n  - torchvision\n  - cuda80\n"
    result = fix(text)
    assert "TC602.pytorch" in keys(result.findings_before)  # soumith is the pytorch channel's old name
    assert "pytorch::pytorch=1.0.0" in deps(result.fixed)  # the newest release cuda80 selects
    assert_converges(result)


def test_cudatoolkit_alone_restricts_a_conda_forge_torch_to_cuda_11():
    text = "channels: [conda-forge]\ndependencies:\n  - conda-forge::pytorch~=2.4.0\n  - cudatoolkit>=9.2\n"
    result = fix(text)
    assert "TC613.conda_forge_cuda11" in keys(result.findings_before)
    assert_converges(result)
    # with cuda-version=11.x it is conda-forge's CUDA 11 convention
    assert "TC613.conda_forge_cuda11" not in keys(check_text(text + "  - cuda-version=11.8\n").findings)
    # a release conda-forge built for CUDA 11 only is fine with cudatoolkit
    old = "channels: [conda-forge]\ndependencies:\n  - pytorch=1.12\n  - cudatoolkit=11.6\n"
    assert "TC613.conda_forge_cuda11" not in keys(check_text(old).findings)


def test_redundant_cudatoolkit_in_a_file_with_defaults_first_and_ranges():
    text = (
        "channels:\n  - defaults\n  - pytorch\n  - nvidia\ndependencies:\n  - cudatoolkit==11.7\n"
        "  - python>=3.8, <= 3.10\n  - pytorch<=2.0.1\n  - pytorch-cuda>=11.7\n  - torchvision<=0.15.2\n"
    )
    result = fix(text)
    assert {"TC602.pytorch", "TC613.redundant"} <= keys(result.findings_before)
    assert not any(d.startswith("cudatoolkit") for d in deps(result.fixed))
    assert_converges(result)


def _frozen_minors() -> list[str]:
    from conda_torchcheck.envspec.intent import pytorch_channel_versions

    return sorted(
        {".".join(v.split(".")[:2]) for v in pytorch_channel_versions()}, key=lambda m: [int(x) for x in m.split(".")]
    )


@pytest.mark.parametrize("minor", _frozen_minors())
def test_every_pin_written_for_the_frozen_channel_existed(minor):
    """Walk every minor the pytorch channel had: the release and the companions the fix writes are real."""
    from conda_torchcheck.envspec.intent import pytorch_channel_versions
    from conda_torchcheck.knowledge import releases

    text = f"channels: [pytorch, defaults]\ndependencies:\n  - pytorch={minor}\n  - torchvision\n  - torchaudio\n"
    written = {d.split("::")[-1].split("=")[0]: d.split("=", 1)[1] for d in deps(fix(text).fixed) if "=" in d}
    torch = written.get("pytorch")
    assert torch in pytorch_channel_versions(), written
    page = releases.companions(torch)
    for name in ("torchvision", "torchaudio"):
        if name in written and any(len(v.split(".")) >= 3 for v in page.get(name, ())):
            assert written[name] in page[name], (torch, name, written[name], page[name])


def test_unprefixed_companions_of_a_nightly_torch_come_from_the_release_channel():
    text = (
        "channels:\n  - pytorch\n  - pytorch-nightly\n  - defaults\ndependencies:\n"
        "  - pytorch-nightly::pytorch>=2.1.1\n  - torchaudio\n  - torchvision\n"
    )
    result = fix(text)
    found = [f for f in result.findings_before if f.title.key.startswith("TC612.family")]
    assert len(found) == 1  # one finding for the family
    assert {"pytorch-nightly::torchaudio", "pytorch-nightly::torchvision"} <= set(deps(result.fixed))
    assert "TC605.deprecated_channel" in keys(result.findings_before)
    assert_converges(result)


def test_pypi_given_back_as_an_extra_index_is_not_hidden_but_races_the_torch_index():
    text = (
        "dependencies:\n  - pip\n  - pip:\n    - --index-url https://download.pytorch.org/whl/rocm6.4\n"
        "    - --extra-index-url https://pypi.org/simple\n    - numpy\n    - torch>=1.6\n"
    )
    found = keys(check_text(text).findings)
    assert "TC607.hides_pypi" not in found and "TC607.unpinned_extra" in found


def test_a_range_no_release_of_which_was_built_for_the_index():
    text = (
        "channels: [conda-forge, nodefaults]\ndependencies:\n  - pip\n  - pip:\n"
        "    - --extra-index-url https://download.pytorch.org/whl/cu121\n    - torch>=2.7.0\n"
    )
    assert "TC607.not_offered" in keys(check_text(text).findings)


def test_conda_and_pip_family_twice_is_one_finding():
    text = (
        "channels: [conda-forge]\ndependencies:\n  - pytorch\n  - torchvision\n  - torchaudio\n  - pip:\n"
        "      - torch\n      - torchvision\n      - torchaudio\n"
    )
    assert [f.id for f in check_text(text).findings].count("TC606") == 1


def test_nightly_companions_pair_by_minor():
    text = (
        "dependencies:\n  - pip\n  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/nightly/cu121\n"
        "    - torch==2.1.0.dev20230607+cu121\n    - torchvision==0.16.0.dev20230607+cu121\n"
    )
    assert "TC608" not in keys(check_text(text).findings)


def test_cpu_and_cuda_at_once_names_the_lines():
    text = "channels: [pytorch]\ndependencies:\n  - pytorch=1.9.1=py3.8_cuda11.1_cudnn8_0\n  - pytorch-mutex=1.0=cpu\n"
    f = next(f for f in check_text(text).findings if f.id == "TC609")
    assert {e["line"] for e in f.evidence["cpu"]} == {4} and 3 in {e["line"] for e in f.evidence["cuda"]}


def test_a_right_channel_order_is_kept():
    # pytorch::pytorch makes the order irrelevant for torch: the other packages keep their channels
    text = "channels:\n  - conda-forge\n  - bioconda\n  - pytorch\ndependencies:\n  - pytorch::pytorch=1.12.*\n"
    result = fix(text + "  - cudatoolkit==11.3.*\n")
    assert channels(result.fixed) == ["conda-forge", "bioconda", "pytorch", "nodefaults"]
    assert not any(c.action == "reordered" for c in result.plan.changes)


@pytest.mark.parametrize(
    "text",
    [
        "channels:\n  - defaults\n  - pytorch\ndependencies:\n  - pytorch=1.9\n  - cudatoolkit=11.1\n",
        "channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.11.0\n  - cudatoolkit=11.1\n",
        "channels: [pytorch, defaults]\ndependencies:\n  - pytorch=1.1.0\n  - cuda92\n",
        "channels: [pyg, pytorch, defaults]\ndependencies:\n  - pytorch=2.5\n  - pyg\n",
        "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.1\n  - pytorch-cuda=12.1\n  - cudatoolkit\n",
        "channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch=1.13.1\n  - cudatoolkit=11.8\n",
        "channels: [conda-forge]\ndependencies:\n  - conda-forge::pytorch~=2.4.0\n  - cudatoolkit>=9.2\n",
        "channels: [conda-forge]\ndependencies:\n  - pytorch-lightning\n  - pip\n  - pip:\n    - torch==2.1.0\n",
        "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=11.8\n",
        "channels: [pytorch, pytorch-nightly]\ndependencies:\n  - pytorch-nightly::pytorch>=2.1.1\n  - torchaudio\n",
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_new_text_renders_its_parameters(text, lang):
    import re

    result = check_text(text)
    assert result.findings or result.notes
    out = result.render_text(lang=lang, verbose=1)
    out += "".join(x.summary.render(lang) for f in [*result.findings, *result.notes] for x in f.fixes)
    assert not re.findall(r"\{[a-z_]+\}", out)


def test_pytorch_comes_from_the_first_listed_channel_that_has_the_pinned_release():
    # blind-h h021: conda-forge first has no pytorch 2.1.1 (its recipe went 2.1.0 -> 2.1.2), so the pytorch channel
    # after it supplies the build, and conda-forge's mkl >= 2024.1 breaks it (TC615)
    from conda_torchcheck.envspec.intent import analyse
    from conda_torchcheck.envspec.parse import parse_text

    text = (
        "name: t\nchannels:\n  - conda-forge\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.10\n"
        "  - pytorch=2.1.1\n  - torchvision=0.16.1\n  - pytorch-cuda=11.8\n"
    )
    intent = analyse(parse_text(text, "environment.yml"))
    assert (intent.torch_channel, intent.torch_supplier) == ("conda-forge", "pytorch")
    assert "TC615" in {f.id for f in fix(text).findings_before}
    # a release conda-forge has stays conda-forge's
    intent = analyse(parse_text(text.replace("2.1.1", "2.1.2").replace("0.16.1", "0.16.2"), "environment.yml"))
    assert intent.torch_supplier == "conda-forge"


def test_a_conda_cudatoolkit_beside_a_pip_torch_of_another_cuda():
    # blind-h h026: torch==1.7.1 from PyPI is the CUDA 10.2 build; the conda cudatoolkit 11.0 is never loaded
    text = (
        "name: t\nchannels:\n  - defaults\ndependencies:\n  - cudatoolkit=11.0\n  - pip\n  - pip:\n    - torch==1.7.1\n"
    )
    [f] = [f for f in fix(text).findings_before if f.id == "TC613"]
    assert f.title.key == "TC613.pip.title" and f.evidence["torch_cuda"] == "10.2"
    assert f.evidence["decided_by"] == "pypi"
    # the wheel's own CUDA named by its tag, and the same CUDA as the toolkit: nothing to say
    same = text.replace("cudatoolkit=11.0", "cudatoolkit=11.0").replace("torch==1.7.1", "torch==1.7.1+cu110")
    assert "TC613" not in {f.id for f in fix(same).findings_before}


def test_a_file_with_an_empty_item_is_still_fixed_around_it():
    text = "name: t\nchannels:\n  - pytorch\ndependencies:\n  - # later\n  - pytorch\n"
    result = fix(text)
    assert "  - # later\n" in result.fixed and "pytorch::pytorch=" in result.fixed


def _ids(text: str) -> set[str]:
    return {f.title.key.rsplit(".title", 1)[0] for f in fix(text).findings_before}


def test_conda_forge_listed_before_defaults_supplies_the_release_it_has():
    # blind-g g024: conda-forge first has pytorch 1.13.1, so defaults-before-pytorch does not decide the build
    text = (
        "name: t\nchannels:\n  - conda-forge\n  - defaults\n  - nvidia\n  - pytorch\ndependencies:\n"
        "  - pytorch=1.13.1\n  - cudatoolkit=11.7.0\n"
    )
    assert not {"TC602.defaults_cpu", "TC613.pytorch"} & _ids(text)
    assert "TC602.defaults_cpu" in _ids(text.replace("  - conda-forge\n", ""))


def test_an_exact_pytorch_channel_build_decides_the_channel_and_the_cuda_it_was_built_for():
    # blind-h h017 / blind-g g017: an export's build strings name a build that existed
    text = (
        "name: t\nchannels:\n  - defaults\n  - pytorch\ndependencies:\n  - python=3.6\n"
        "  - pytorch==0.4.0=py36_cuda90_cudnn7he774522_1\n  - cudatoolkit=9.0\n"
    )
    assert "TC602.defaults_cpu" not in _ids(text)
    old = (
        "name: t\nchannels:\n  - pytorch\ndependencies:\n  - python=3.6\n"
        "  - pytorch=1.3.0=py3.6_cuda10.0.130_cudnn7.6.3_0\n  - cudatoolkit=10.0.130=0\n"
    )
    assert "TC605.cudatoolkit_for_torch" not in _ids(old)
    # 1.3 had CUDA 9.2, 10.0 and 10.1 builds (knowledge/env_files.toml); 10.2 came with 1.5
    unbuilt = old.replace("=py3.6_cuda10.0.130_cudnn7.6.3_0", "").replace("cudatoolkit=10.0.130=0", "cudatoolkit=10.2")
    assert "TC605.cudatoolkit_for_torch" not in _ids(old.replace("=py3.6_cuda10.0.130_cudnn7.6.3_0", ""))
    assert "TC605.cudatoolkit_for_torch" in _ids(unbuilt)


def test_conda_forge_builds_of_one_solve_pair_by_minor():
    # blind-h h050: an export's conda-forge torchvision 0.13.0 build beside pytorch 1.12.1 (the solver's pair)
    text = (
        "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch=1.12.1=cuda112py310he33e0d6_201\n"
        "  - torchvision=0.13.0=cuda112py310h453157a_0\n"
    )
    assert "TC608" not in _ids(text)
    assert "TC608" in _ids(text.replace("0.13.0=cuda112py310h453157a_0", "0.12.0=cuda112py310h453157a_0"))


def test_cudatoolkit_that_another_cuda_build_needs_is_not_a_spare_copy():
    # blind-h h036: faiss-gpu's CUDA 11.3 build runs on cudatoolkit 11.3 beside pytorch-cuda 11.7
    text = (
        "name: t\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n"
        "  - pytorch=1.13.1=py3.8_cuda11.7_cudnn8.5.0_0\n  - pytorch-cuda=11.7\n  - cudatoolkit=11.3.1\n"
        "  - faiss-gpu=1.7.3=py3.8_h28a55e0_0_cuda11.3\n"
    )
    assert not any(k.startswith("TC613") for k in _ids(text))
    assert "TC613.redundant" in _ids(text.replace("  - faiss-gpu=1.7.3=py3.8_h28a55e0_0_cuda11.3\n", ""))


def test_conda_cpu_selectors_do_not_conflict_with_a_pip_only_torch():
    # blind-h h020: cpuonly left in an export whose torch is pip's +cu117: it selects nothing
    text = (
        "name: t\nchannels:\n  - defaults\ndependencies:\n  - cpuonly=2.0\n  - pip\n  - pip:\n"
        "    - --extra-index-url https://download.pytorch.org/whl/cu117\n    - torch==2.0.1+cu117\n"
    )
    assert "TC609" not in _ids(text)
    conda = "name: t\nchannels:\n  - pytorch\ndependencies:\n  - pytorch=2.0.1\n  - cpuonly\n  - pytorch-cuda=11.7\n"
    assert "TC609" in _ids(conda)


_PIP_ONLY = "name: t\nchannels: [conda-forge]\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n"
_TORCH_WHEEL = "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-cp310-linux_x86_64.whl"


def test_a_wheel_url_is_read_as_the_exact_release_it_names():
    from conda_torchcheck.envspec.intent import analyse
    from conda_torchcheck.envspec.parse import parse_text

    intent = analyse(parse_text(_PIP_ONLY + f"    - {_TORCH_WHEEL}\n", "environment.yml"))
    assert intent.torch_version == "2.1.0" and intent.pip["torch"].line.local_tag == "cu118"
    # torchvision 0.15.2 is 2.0.1's: TC608 sees the URL's torch
    assert "TC608" in _ids(_PIP_ONLY + f"    - {_TORCH_WHEEL}\n    - torchvision==0.15.2\n")


def test_a_companion_of_another_cuda_beside_pip_torch():
    wheel_cu121 = "https://download.pytorch.org/whl/cu121/torchvision-0.16.0%2Bcu121-cp310-cp310-linux_x86_64.whl"
    assert "TC608.cuda" in _ids(_PIP_ONLY + f"    - {_TORCH_WHEEL}\n    - {wheel_cu121}\n")
    pins = "    - -f https://download.pytorch.org/whl/torch_stable.html\n    - torch==2.1.0+cu118\n"
    assert "TC608.cuda" in _ids(_PIP_ONLY + pins + "    - torchvision==0.16.0+cu121\n")
    assert "TC608.cuda" not in _ids(_PIP_ONLY + pins + "    - torchvision==0.16.0+cu118\n")


def test_a_wheel_for_another_python_than_the_files():
    assert "TC610.wheel" in _ids(_PIP_ONLY.replace("3.10", "3.11") + f"    - {_TORCH_WHEEL}\n")
    assert "TC610.wheel" not in _ids(_PIP_ONLY + f"    - {_TORCH_WHEEL}\n")


def test_the_os_a_file_is_for_decides_which_channel_has_the_release():
    # conda-forge uploads win-64 pytorch from 2.5.1 on: a Windows file's pytorch=1.12.1 comes from the pytorch
    # channel listed after conda-forge, a Linux one's from conda-forge
    from conda_torchcheck.envspec.intent import analyse
    from conda_torchcheck.envspec.parse import parse_text
    from conda_torchcheck.envspec.platform import file_oses

    text = "name: t\nchannels:\n  - conda-forge\n  - pytorch\ndependencies:\n  - vc\n  - pytorch=1.12.1\n"
    windows = parse_text(text, "environment.yml")
    assert file_oses(windows) == {"win"}
    assert (analyse(windows).torch_supplier, analyse(windows).era) == ("pytorch", "pytorch")
    linux = parse_text(text.replace("  - vc\n", "  - libgcc-ng\n"), "environment.yml")
    assert file_oses(linux) == {"linux"} and analyse(linux).torch_supplier == "conda-forge"
    # an export's OS-only packages outweigh a name or a prefix path from another machine
    export = parse_text(text + "prefix: /home/me/envs/t\n", "env_mac.yml")
    assert file_oses(export) == {"win"}
    assert file_oses(parse_text("name: t\ndependencies:\n  - numpy\n", "environment-osx.yml")) == {"osx"}


def test_pypis_own_files_decide_which_python_a_pip_torch_installs_on():
    # torch 1.13.1 on PyPI: a cp311 wheel for Linux x86_64 only (knowledge/pypi_wheels.toml)
    text = "name: t\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - torch==1.13.1\n"
    assert not any(k.startswith("TC610") for k in _ids(text))
    assert "TC610.pypi" in _ids(text.replace("  - pip\n", "  - vc\n  - pip\n"))
    assert "TC610.pypi" in _ids(text.replace("3.11", "3.12"))


def test_a_pip_pin_that_pypis_torch_wheel_refuses():
    base = "name: t\nchannels: [conda-forge]\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n    - torch==2.1.0\n"
    assert "TC621" in _ids(base + "    - triton==2.3.0\n")
    assert "TC621" in _ids(base.replace("2.1.0", "2.4.0") + "    - nvidia-cudnn-cu12==8.9.2.26\n")
    assert "TC621" not in _ids(base + "    - triton==2.1.0\n")
    # Windows: the markers leave triton out
    assert "TC621" not in _ids(base.replace("  - pip\n", "  - vc\n  - pip\n") + "    - triton==2.3.0\n")


def test_a_page_of_links_given_as_an_index():
    # blind-i i018: PyG's wheel page as --extra-index-url; pip reads it as a simple index and finds nothing
    text = (
        "name: t\nchannels: [conda-forge]\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n"
        "    - --extra-index-url https://data.pyg.org/whl/torch-1.13.0+cpu.html\n    - torch==1.13.0\n"
        "    - torch-scatter==2.1.1+pt113cpu\n"
    )
    assert "TC607.page_as_index" in _ids(text)
    assert "TC607.page_as_index" not in _ids(text.replace("--extra-index-url https", "-f https"))


def test_conda_companions_bring_a_conda_pytorch_that_pips_torch_replaces():
    # blind-i i001: torchvision=0.15.2=py38_cpu depends on conda's pytorch; pip's torch==2.0.0 goes over it
    text = (
        "name: t\nchannels:\n  - pytorch\ndependencies:\n  - python=3.8\n  - torchvision=0.15.2=py38_cpu\n"
        "  - pip\n  - pip:\n    - torch==2.0.0\n"
    )
    assert "TC606.conda_dependency" in _ids(text)


def test_the_torch_that_ends_up_installed_is_pips_when_conda_names_only_companions():
    # blind-i i001: torchvision 0.15.2 (torch 2.0.1's) in conda, torch==2.0.0 from pip: the pair is checked with pip's
    text = (
        "name: t\nchannels:\n  - pytorch\ndependencies:\n  - python=3.8\n  - torchvision=0.15.2=py38_cpu\n"
        "  - pip\n  - pip:\n    - torch==2.0.0\n"
    )
    assert "TC608" in _ids(text)


def test_conda_forges_metapackage_alone_is_the_unpinned_torch():
    # blind-j j022: `pytorch-gpu` with no version and no pytorch entry
    text = "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch-gpu\n  - torchvision\n"
    assert "TC611" in _ids(text)
    assert "TC611" not in _ids(text.replace("pytorch-gpu", "pytorch-gpu=2.5.1"))


def test_windows_only_pip_packages_say_the_file_is_for_windows():
    from conda_torchcheck.envspec.parse import parse_text
    from conda_torchcheck.envspec.platform import file_oses

    text = "name: t\ndependencies:\n  - python=3.7\n  - pip\n  - pip:\n    - pycaw\n"
    assert file_oses(parse_text(text, "environment.yml")) == {"win"}


def test_a_channel_order_finding_names_the_channels_key_line():
    text = "name: t\nchannels:\n  - conda-forge\n  - pytorch\ndependencies:\n  - pytorch\n  - pytorch-cuda=11.8\n"
    [f] = [f for f in fix(text).findings_before if f.title.key == "TC602.pytorch.title"]
    assert f.evidence["channels"][0] == {"line": 2, "key": "channels"}


def test_a_selector_left_by_an_export_installs_no_conda_torch_beside_pips():
    # blind-d d010: pytorch-mutex=1.0=cpu and cudatoolkit=11.8 are leftovers; torch is pip's 2.4.0+cu121
    text = (
        "name: t\nchannels:\n  - pytorch\n  - defaults\ndependencies:\n  - cudatoolkit=11.8.0=h6a678d5_0\n"
        "  - pytorch-mutex=1.0=cpu\n  - pip\n  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/cu121\n"
        "    - torch==2.4.0+cu121\n"
    )
    result = check_text(text)
    assert "TC613.pytorch" not in keys(result.findings)
    # a spare CUDA copy nothing in torch loads: a note, not a finding
    assert "TC613.pip" in keys(result.notes) and "TC613.pip" not in keys(result.findings)
    assert result.torch["source"] == "pip" and result.torch["version"] == "2.4.0+cu121"


def test_every_conda_companion_that_brings_a_conda_pytorch_is_named():
    # blind-d d028: torchaudio and torchvision both pull pytorch 1.8.1 under pip's torch 2.4.1
    text = (
        "name: t\nchannels:\n  - pytorch\ndependencies:\n  - cudatoolkit=10.1.243=h6bb024c_0\n"
        "  - torchaudio=0.8.1=py38\n  - torchvision=0.9.1=py38_cu101\n  - pip\n  - pip:\n    - torch==2.4.1\n"
    )
    [f] = [f for f in fix(text).findings_before if f.title.key == "TC606.conda_dependency.title"]
    assert [e["line"] for e in f.evidence["conda"]] == [6, 7]
    # cudatoolkit is the selector of the pytorch 1.8.1 the companions bring, not a stray copy beside pip's 2.4.1
    assert "TC613.pytorch" not in _ids(text)


def test_a_companion_pairs_with_the_torch_its_own_release_requires():
    # blind-d d033: torchvision 0.8.1 requires torch==1.7.0 (the install page names 0.8.0 for 1.7.0)
    from conda_torchcheck.envspec.intent import companion_ok, declared_pair

    assert declared_pair("torchvision", "0.8.1", "1.7.0") is True
    assert declared_pair("torchvision", "0.8.1", "1.7.1") is False
    assert companion_ok("torchvision", "1.7.0", "0.8.1") is True
    text = (
        "name: t\nchannels:\n  - https://mirror.tuna.tsinghua.edu.cn/anaconda/pkgs/main\n"
        "  - https://mirror.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch\ndependencies:\n  - python=3.7\n"
        "  - pytorch=1.7.0=py3.7_cuda11.0.221_cudnn8.0.3_0\n  - torchvision=0.8.1=py37_cu110\n"
    )
    result = fix(text)
    assert not any("frozen pytorch channel satisfies" in r.render("en") for r in result.plan.unresolved)
    # the build string only the pytorch channel has decides who supplies it, though pkgs/main is listed first
    assert check_text(text).torch["source"] == "pytorch"


def test_an_empty_item_in_the_pip_list_is_reported_and_the_rest_checked():
    # blind-d d040: `- # av==14.4.0` in the pip list; conda joins the list into a requirements file (TypeError)
    text = (
        "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n"
        "    - accelerate==1.7.0\n    - # av==14.4.0\n    - torch==2.7.1+cu126\n"
    )
    ids = keys(check_text(text).findings)
    assert {"TC618.empty_pip_item", "TC607.missing"} <= ids
    result = fix(text)
    # a rewritten pip list keeps the comment, on its own line without the dash: the null item is gone, nothing lost
    assert "    # av==14.4.0\n" in result.fixed and "download.pytorch.org/whl/cu126" in result.fixed


def test_the_pytorch_channels_pytorch_cpu_package_unpinned_beside_pips_torchvision():
    # blind-k k009: pytorch-cpu (the channel's 0.4-1.1 CPU package) with no version, torchvision from pip
    text = (
        "name: t\nchannels:\n- pytorch\n- defaults\ndependencies:\n- python=3.5\n- pytorch-cpu\n- pip\n"
        "- pip:\n  - torchvision\n"
    )
    ids = _ids(text)
    assert {"TC611", "TC606.cross"} <= ids
    assert check_text(text).torch["version"] is None  # what the channel resolves pytorch to says nothing of it
    # torchvision 0.2.x is pure Python: no torch ABI, no exact torch pin (blind-f f032)
    assert "TC606.cross" not in _ids(text.replace("  - torchvision\n", "  - torchvision==0.2.1\n"))


def test_conda_forge_had_no_package_named_pytorch_before_1_6():
    # blind-k k002: conda-forge's 1.0.x builds were `pytorch-cpu`; pytorch=1.0.1 comes from the pytorch channel
    text = (
        "name: t\nchannels:\n  - conda-forge\n  - pytorch\ndependencies:\n  - python=3.6.*\n  - pytorch=1.0.1\n"
        "  - torchvision=0.2.2\n  - cudatoolkit=10.0\n"
    )
    assert check_text(text).torch["source"] == "pytorch"
    assert "TC614.cuda_not_forced" not in _ids(text)


def test_a_later_pip_list_replaces_the_earlier_one():
    # blind-k k022: conda keeps only the last `- pip:` mapping (dict.update)
    text = (
        "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.10\n  - pip:\n    - requests\n"
        "  - numpy\n  - pip:\n    - torch==2.7.1+cu126\n"
    )
    result = check_text(text)
    assert {"TC618.dropped_pip_list", "TC607.missing"} <= keys(result.findings)


def test_pips_companion_pairs_with_pips_torch_that_goes_over_condas():
    # blind-l l022: conda pytorch=2.5.1, pip torch==2.9.0 + torchvision==0.24.0 (2.9.0's): one conflict, no pairing
    text = (
        "name: t\nchannels:\n  - defaults\ndependencies:\n  - python=3.11\n  - pytorch=2.5.1\n  - pip\n  - pip:\n"
        "    - torch==2.9.0\n    - torchvision==0.24.0\n"
    )
    ids = _ids(text)
    assert "TC606.conflict" in ids and "TC608" not in ids and "TC606.cross" not in ids
    assert "TC608" in _ids(text.replace("torchvision==0.24.0", "torchvision==0.23.0"))


def test_the_files_python_caps_conda_forges_releases_for_the_cuda_11_question():
    # blind-l l014: python=3.7 allows no conda-forge release with CUDA 12 builds; the CUDA entry's line is named
    text = (
        "name: t\nchannels:\n  - conda-forge\n  - pytorch\ndependencies:\n  - python=3.7\n  - cudatoolkit=10\n"
        "  - pytorch>=0.4.1\n  - torchvision\n"
    )
    result = fix(text)
    assert "TC613.conda_forge_cuda11" not in _ids(text)
    [f] = [f for f in result.findings_before if f.title.key == "TC614.cuda_not_forced.title"]
    assert f.evidence["cuda_entry"]["line"] == 7


def test_a_single_equals_in_the_pip_list_stops_pip_reading_it():
    # blind-l l013: auraloss=0.4.0 in the pip list; pip's parser wants ==
    text = "name: t\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n    - auraloss=0.4.0\n    - torch==2.5.1\n"
    [f] = [f for f in check_text(text).findings if f.title.key == "TC618.pip_single_equals.title"]
    assert [e["line"] for e in f.evidence["entries"]] == [6]
    assert "TC618.pip_single_equals" not in keys(check_text(text.replace("auraloss=", "auraloss==")).findings)


def test_packages_of_one_os_in_a_file_for_another():
    # blind-l l025 / e031: a Linux export's _libgcc_mutex in environment_windows.yml
    text = (
        "name: t\nchannels:\n  - defaults\ndependencies:\n  - _libgcc_mutex=0.1=main\n  - python=3.8\n"
        "  - pytorch=1.13.1\n"
    )
    ids = {f.title.key.rsplit(".title", 1)[0] for f in check_file(parse_text(text, "environment_windows.yml")).findings}
    assert "TC605.other_os_package" in ids
    assert "TC605.other_os_package" not in {
        f.title.key.rsplit(".title", 1)[0] for f in check_file(parse_text(text, "environment_linux.yml")).findings
    }
    # two OSes' packages at once (blind-f f044: tapi, macOS only, in a Linux CUDA file's export with _libgcc_mutex)
    both = text + "  - tapi=1100.0.11\n"
    assert "TC605.other_os_package" in keys(check_file(parse_text(both, "environment.yml")).findings)


def test_cuda_libraries_pinned_to_nvidias_builds_come_from_nvidia_whatever_the_order():
    text = (
        "name: t\nchannels:\n  - conda-forge\n  - nvidia\n  - pytorch\ndependencies:\n"
        "  - pytorch::pytorch=2.2.2=py3.10_cuda12.1_cudnn8_0\n  - pytorch-cuda=12.1\n"
        "  - cuda-cudart=12.1.105=0\n  - libcublas=12.1.0.26=0\n"
    )
    assert "TC602.nvidia" not in _ids(text)
    # one of them a conda-forge build (hashed): the mix did happen (blind-m m015's libcurand)
    assert "TC602.nvidia" in _ids(text + "  - libcurand=10.4.2.51=hd7d98ca_0\n")
