"""TC601–TC614: one positive and at least one negative case per finding id (and per variant)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.envspec import check_text


def found(text: str) -> dict[str, object]:
    """finding key (``TC602.pytorch`` or ``TC611``) → the finding."""
    out = {}
    result = check_text(text)
    for f in [*result.findings, *result.notes]:
        out[f.title.key.rsplit(".title", 1)[0]] = f
    return out


def env(channels: list[str] | None, deps: list[str], pip: list[str] | None = None) -> str:
    lines = ["name: t"]
    if channels is not None:
        lines.append("channels:")
        lines += [f"  - {c}" for c in channels]
    lines.append("dependencies:")
    lines += [f"  - {d}" for d in deps]
    if pip is not None:
        lines.append("  - pip:")
        lines += [f"    - {p}" for p in pip]
    return "\n".join(lines) + "\n"


CF = ["conda-forge", "nodefaults"]
PT = ["pytorch", "nvidia", "defaults"]


def test_no_torch_no_findings():
    assert found(env(None, ["python=3.12", "numpy"])) == {}


# TC601 --------------------------------------------------------------------------------------------------------
def test_tc601_channels_missing():
    f = found(env(None, ["python=3.11", "pytorch=2.5.1"]))["TC601"]
    assert f.severity.value == "warning"
    assert f.evidence["entries"][0]["line"] == 4


def test_tc601_not_when_prefixed_or_listed():
    assert "TC601" not in found(env(None, ["conda-forge::pytorch=2.5.1"]))
    assert "TC601" not in found(env(CF, ["pytorch=2.5.1"]))


# TC602 --------------------------------------------------------------------------------------------------------
def test_tc602_base_channel_before_pytorch():
    f = found(env(["conda-forge", "pytorch", "nvidia"], ["pytorch=2.1.0", "pytorch-cuda=12.1"]))
    assert f["TC602.pytorch"].severity.value == "error"
    assert "conda-forge" in f["TC602.pytorch"].title.render()
    # one root cause, one finding: TC602.pytorch's reorder puts nvidia before conda-forge too (blind-u u023)
    assert "TC602.nvidia" not in f
    f = found(env(["pytorch", "conda-forge", "nvidia"], ["pytorch=2.1.0", "pytorch-cuda=12.1"]))
    assert f["TC602.nvidia"].severity.value == "warning"


def test_tc602_not_in_the_official_order():
    f = found(env(["pytorch", "nvidia", "conda-forge"], ["pytorch=2.1.0", "pytorch-cuda=12.1"]))
    assert "TC602.pytorch" not in f and "TC602.nvidia" not in f


def test_tc602_not_when_prefixed():
    f = found(env(["conda-forge", "pytorch", "nvidia"], ["pytorch::pytorch=2.1.0", "pytorch::pytorch-cuda=12.1"]))
    assert "TC602.pytorch" not in f


def test_tc602_says_nothing_where_no_conda_torch_is_solved():
    # blind-p p007: pip's torch==2.8.0 beside leftover pytorch-cuda/pytorch-mutex, conda-forge before pytorch and
    # nvidia: the order decides no torch (and pytorch-cuda's CUDA copy is a spare one)
    text = env(
        ["conda-forge", "defaults", "nvidia", "pytorch"], ["python=3.11", "pytorch-cuda=12.4", "pip"], ["torch==2.8.0"]
    )
    assert not any(k.startswith("TC602") for k in found(text))
    conda = env(["conda-forge", "nvidia", "pytorch"], ["python=3.11", "pytorch=2.5.1", "pytorch-cuda=12.4"])
    assert "TC602.pytorch" in found(conda)


# TC603 --------------------------------------------------------------------------------------------------------
def test_tc603_missing_nodefaults():
    assert "TC603.missing" in found(env(["conda-forge"], ["pytorch=2.5.1=cuda*"]))


def test_tc603_mixed_base_channels():
    f = found(env(["conda-forge", "defaults"], ["pytorch=2.5.1"]))
    assert "TC603.mixed" in f and "TC603.missing" not in f


def test_tc603_not_with_nodefaults_or_defaults_listed():
    assert not {"TC603.missing", "TC603.mixed"} & set(found(env(CF, ["pytorch=2.5.1"])))
    assert not {"TC603.missing", "TC603.mixed"} & set(found(env(PT, ["pytorch=2.5.1", "pytorch-cuda=12.4"])))


# TC604 --------------------------------------------------------------------------------------------------------
def test_tc604_selector_without_pytorch_channel():
    f = found(env(["conda-forge"], ["pytorch=2.5", "pytorch-cuda=12.1"]))
    assert f["TC604.pytorch"].severity.value == "error"
    assert "TC604.nvidia" not in f  # the first one already explains it


def test_tc604_pytorch_cuda_without_nvidia():
    f = found(env(["pytorch", "defaults"], ["pytorch=2.1.0", "pytorch-cuda=12.1"]))
    assert "TC604.nvidia" in f and "TC604.pytorch" not in f


def test_tc604_not_with_both_channels():
    f = found(env(PT, ["pytorch=2.1.0", "pytorch-cuda=12.1"]))
    assert not {"TC604.nvidia", "TC604.pytorch"} & set(f)


# TC605 --------------------------------------------------------------------------------------------------------
def test_tc605_frozen_channel():
    f = found(env(["pytorch", "nvidia"], ["pytorch=2.6", "pytorch-cuda=12.4"]))["TC605.frozen"]
    assert "2.5.1" in f.title.render()
    assert f.evidence["entry"]["line"] == 6
    # Anaconda's defaults builds newer pytorch: with flexible priority it supplies it
    assert "TC605.frozen_fallback" in found(env(PT, ["pytorch=2.6", "pytorch-cuda=12.4"]))


def test_tc605_frozen_with_a_fallback_channel():
    f = found(env(["pytorch", "nvidia", "conda-forge"], ["pytorch=2.7", "pytorch-cuda=12.6"]))
    assert "TC605.frozen_fallback" in f and "TC605.frozen" not in f
    assert "conda-forge" in f["TC605.frozen_fallback"].title.render()


def test_tc605_not_for_versions_the_channel_had():
    assert "TC605.frozen" not in found(env(PT, ["pytorch>=2.0", "pytorch-cuda=12.1"]))
    assert "TC605.frozen" not in found(env(CF, ["pytorch=2.6"]))


def test_tc605_pytorch_cuda_never_published():
    assert "TC605.pytorch_cuda_version" in found(env(PT, ["pytorch=2.5.1", "pytorch-cuda=12.6"]))


def test_tc605_pytorch_cuda_not_for_this_torch():
    f = found(env(PT, ["pytorch=2.3.1", "pytorch-cuda=12.4"]))
    assert "TC605.pytorch_cuda_for_torch" in f
    assert "TC605.pytorch_cuda_for_torch" not in found(env(PT, ["pytorch=2.4.1", "pytorch-cuda=12.4"]))


def test_tc605_pip_name_in_conda_list():
    assert "TC605.pip_name" in found(env(CF, ["python=3.11", "torch"]))
    assert "TC605.pip_name" not in found(env(CF, ["python=3.11", "pip"], ["torch"]))


def test_tc605_deprecated_channel():
    assert "TC605.deprecated_channel" in found(env(["pytorch-nightly", "nvidia"], ["pytorch", "pytorch-cuda=12.4"]))
    assert "TC605.deprecated_channel" not in found(env(PT, ["pytorch", "pytorch-cuda=12.4"]))


# TC606 --------------------------------------------------------------------------------------------------------
def test_tc606_conflict_and_redundant():
    conflict = found(env(PT, ["pytorch=2.1.0", "pytorch-cuda=12.1", "pip"], ["torch==2.1.0+cu121"]))
    assert conflict["TC606.conflict"].severity.value == "error"
    unpinned = found(env(PT, ["pytorch=2.1.0", "pytorch-cuda=12.1", "pip"], ["torch"]))
    assert "TC606.conflict" in unpinned  # pip install -U upgrades it over conda's
    redundant = found(env(PT, ["pytorch=2.1.0", "pytorch-cuda=12.1", "pip"], ["torch==2.1.0"]))
    assert redundant["TC606.redundant"].severity.value == "warning"


def test_tc606_cross_manager_companion():
    f = found(env(PT, ["pytorch=2.1.0", "pytorch-cuda=12.1", "pip"], ["torchvision==0.16.0"]))
    assert "TC606.cross" in f


def test_tc606_not_for_pip_only_or_conda_only():
    assert not any(k.startswith("TC606") for k in found(env(CF, ["python", "pip"], ["torch==2.5.1", "torchvision"])))
    assert not any(k.startswith("TC606") for k in found(env(PT, ["pytorch=2.1.0", "torchvision=0.16.0"])))


def test_tc606_conda_dependency_reads_the_torch_dependents_table():
    # conda-forge's sentence-transformers run-requires pytorch (knowledge/torch_dependents.toml, its feedstock's
    # recipe): the solve installs a conda pytorch, which pip's torch then goes over; the hand list lacked it
    f = found(env(CF, ["python=3.11", "sentence-transformers", "pip"], ["torch==2.5.1"]))["TC606.conda_dependency"]
    assert f.severity.value == "error" and f.evidence["conda"][0]["entry"] == "sentence-transformers"
    # a conda package whose recipe does not require pytorch (conda-forge's transformers): nothing installs one
    assert "TC606.conda_dependency" not in found(env(CF, ["python=3.11", "transformers", "pip"], ["torch==2.5.1"]))


def test_tc606_leaves_the_choice_when_cpu_and_cuda_are_both_asked_for():
    # blind-p p036: conda's pytorch-cpu build and pip's torch==1.9.0+cu111: spec fix leaves the choice, so the finding
    # does not offer it as an automatic fix (it would not converge)
    text = (Path(__file__).parents[1] / "data" / "envfiles" / "blind-p" / "p036.yml").read_text(encoding="utf-8")
    keys = found(text)
    fix = keys["TC606.conflict"].fixes[0]
    assert not fix.commands and "spec fix does not choose" in str(fix.to_dict()["summary"])


def test_tc613_redundant_cudatoolkit_beside_no_torch_entry_is_not_offered_to_spec_fix():
    # blind-r r024: pytorch-cuda=12.4 and cudatoolkit, torch only through sentence-transformers (pip): spec fix has no
    # torch to judge the selector against and leaves cudatoolkit, so the finding must not offer it (no convergence)
    text = (Path(__file__).parents[1] / "data" / "envfiles" / "blind-r" / "r024.yml").read_text(encoding="utf-8")
    fix = found(text)["TC613.redundant"].fixes[0]
    assert not fix.commands
    named = env(PT, ["pytorch=2.5.1", "pytorch-cuda=12.4", "cudatoolkit"])
    assert found(named)["TC613.redundant"].fixes[0].commands


# TC607 --------------------------------------------------------------------------------------------------------
def test_tc607_missing_index():
    f = found(env(CF, ["python", "pip"], ["torch==2.3.0+cu121"]))["TC607.missing"]
    assert f.severity.value == "error"
    assert "whl/cu121" in f.fixes[0].summary.render()


def test_tc607_mismatched_index():
    f = found(env(CF, ["python", "pip"], ["--index-url https://download.pytorch.org/whl/cu118", "torch==2.3.0+cu121"]))
    assert "TC607.mismatch" in f


def test_tc607_variant_not_offered():
    f = found(env(CF, ["python", "pip"], ["--index-url https://download.pytorch.org/whl/cu124", "torch==2.3.0"]))
    assert "TC607.not_offered" in f


def test_tc607_index_url_hides_pypi():
    f = found(
        env(CF, ["python", "pip"], ["--index-url https://download.pytorch.org/whl/cu121", "torch==2.3.0", "wandb"])
    )
    assert f["TC607.hides_pypi"].severity.value == "warning"
    assert "wandb" in f["TC607.hides_pypi"].explanation.render()


def test_tc607_unpinned_with_extra_index():
    f = found(
        env(CF, ["python", "pip"], ["--extra-index-url https://download.pytorch.org/whl/cu121", "torch", "wandb"])
    )
    assert "TC607.unpinned_extra" in f


def test_tc607_quiet_for_correct_files():
    ok = [
        ["--index-url https://download.pytorch.org/whl/cu121", "torch==2.3.0+cu121", "torchvision==0.18.0+cu121"],
        ["--extra-index-url https://download.pytorch.org/whl/cu121", "torch==2.3.0", "wandb"],
        ["-f https://download.pytorch.org/whl/torch_stable.html", "torch==1.8.1+cu111"],
        ["torch==2.5.1"],
        ["torch @ https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-cp310-linux_x86_64.whl"],
    ]
    for pip in ok:
        assert not any(k.startswith("TC607") for k in found(env(CF, ["python=3.10", "pip"], pip))), pip


# TC608 --------------------------------------------------------------------------------------------------------
def test_tc608_triple_mismatch():
    f = found(env(CF, ["pytorch=2.5.1", "torchvision=0.19.1"]))["TC608"]
    assert "0.20.1" in f.title.render()
    pip = found(env(CF, ["python", "pip"], ["torch==2.3.0", "torchaudio==2.2.0"]))
    assert "TC608" in pip


def test_tc608_pairs_and_stable_abi_torchaudio():
    assert "TC608" not in found(env(CF, ["pytorch=2.5.1", "torchvision=0.20", "torchaudio=2.5.1"]))
    assert "TC608" not in found(env(CF, ["pytorch=2.12.0", "torchaudio=2.11.0"]))
    assert "TC608" not in found(env(CF, ["pytorch=2.0.0", "torchvision=0.15.1"]))


def test_tc608_companions_of_two_releases_without_a_torch():
    # blind-z z025: the torch line commented out; torchvision 0.15.2 requires torch 2.0.1, torchaudio 0.8.0 torch 1.8.0
    f = found(env(CF, ["python=3.8", "pip"], ["torchaudio==0.8.0", "torchvision==0.15.2+cu117"]))["TC608.companions"]
    assert f.severity.value == "error" and f.evidence["pairs_with"] == ["2.0.1", "1.8.0"]
    assert "no torch fits both" in f.title.render()
    # one release's pair, an unpinned one, or a release the tables do not know: nothing to say
    assert "TC608.companions" not in found(env(CF, ["python=3.8", "pip"], ["torchaudio==2.0.2", "torchvision==0.15.2"]))
    assert "TC608.companions" not in found(env(CF, ["python=3.8", "pip"], ["torchaudio", "torchvision==0.15.2"]))
    assert "TC608.companions" not in found(env(CF, ["torchaudio=0.8.0", "torchvision=99.1"]))


def test_tc608_nightlies_of_one_date_are_one_set():
    # blind-q q004: the nightly index builds the family together each day; torchaudio's version file lagged a minor
    nightly = ["--index-url https://download.pytorch.org/whl/nightly/cu128", "torch==2.9.0.dev20250824+cu128"]
    assert "TC608" not in found(env(CF, ["python=3.12", "pip"], [*nightly, "torchaudio==2.8.0.dev20250824+cu128"]))
    assert "TC608" in found(env(CF, ["python=3.12", "pip"], [*nightly, "torchaudio==2.7.0.dev20250101+cu128"]))


# TC609 --------------------------------------------------------------------------------------------------------
def test_tc609_cpu_and_cuda():
    f = found(env(PT, ["pytorch=2.1.0", "cpuonly", "pytorch-cuda=12.1"]))["TC609"]
    assert "cpuonly" in f.title.render() and "pytorch-cuda" in f.title.render()


def test_tc609_not_for_one_variant():
    assert "TC609" not in found(env(PT, ["pytorch=2.1.0", "cpuonly"]))


# TC610 --------------------------------------------------------------------------------------------------------
def test_tc610_python_too_new():
    f = found(env(CF, ["python=3.13", "pytorch=2.4.1"]))["TC610"]
    assert "3.8" in f.title.render() and "3.12" in f.title.render()


def test_tc610_frozen_channel_python():
    f = found(env(PT, ["python=3.12", "pytorch", "pytorch-cuda=11.7"]))
    assert "TC610.frozen" in f


def test_tc610_not_inside_range():
    assert "TC610" not in found(env(CF, ["python=3.12", "pytorch=2.4.1"]))
    assert "TC610" not in found(env(CF, ["python>=3.9", "pytorch=2.4.1"]))


# TC611 --------------------------------------------------------------------------------------------------------
def test_tc611_unpinned():
    assert "TC611" in found(env(CF, ["pytorch", "torchvision"]))
    frozen = found(env(PT, ["python=3.11", "pytorch", "pytorch-cuda=11.8"]))["TC611.frozen"]
    assert "2.5.1" in frozen.title.render()


def test_tc611_not_when_pinned():
    assert not {"TC611", "TC611.frozen"} & set(found(env(CF, ["pytorch=2.5.1=cuda*", "torchvision=0.20"])))


# TC612 --------------------------------------------------------------------------------------------------------
def test_tc612_family_from_two_builders():
    f = found(env(CF, ["conda-forge::pytorch=2.1.0", "pytorch::torchvision=0.16.0"]))
    assert f["TC612.family"].severity.value == "error"


def test_tc612_nvidia_before_conda_forge():
    assert "TC612.nvidia" in found(env(["nvidia", "conda-forge"], ["pytorch=2.5.1=cuda*", "cuda-version=12.6"]))


def test_tc612_nvidia_after_conda_forge_only_fills_gaps():
    # with conda-forge first, nvidia supplies only what conda-forge lacks (rapids' cuda-nvtx 11.8): intended
    assert "TC612.nvidia" not in found(env(["conda-forge", "nvidia"], ["pytorch=2.5.1=cuda*", "cuda-version=12.6"]))


def test_tc612_does_not_contradict_tc602_when_the_file_needs_pytorch_cuda():
    f = found(env(["conda-forge", "pytorch", "nvidia"], ["pytorch=2.1", "pytorch-cuda=12.1"]))
    assert "TC602.pytorch" in f and "TC612.nvidia" not in f


def test_tc612_not_for_one_builder():
    f = found(env(PT, ["pytorch::pytorch=2.1.0", "pytorch::torchvision=0.16.0", "pytorch-cuda=12.1"]))
    assert not {"TC612.family", "TC612.nvidia"} & set(f)


# TC613 --------------------------------------------------------------------------------------------------------
def test_tc613_cudatoolkit_on_pytorch_channel_after_1_13():
    assert "TC613.pytorch" in found(env(PT, ["pytorch=2.0.1", "cudatoolkit=11.7"]))


def test_tc613_cudatoolkit_12_on_conda_forge():
    f = found(env(CF, ["pytorch=2.5.1", "cudatoolkit=12.1"]))
    assert f["TC613.conda_forge"].severity.value == "error"


def test_tc613_not_for_old_torch():
    assert not {"TC613.pytorch", "TC613.conda_forge"} & set(found(env(PT, ["pytorch=1.12.1", "cudatoolkit=11.3"])))


# TC614 --------------------------------------------------------------------------------------------------------
def test_tc614_cuda_wanted_but_not_forced():
    f = found(env(CF, ["pytorch=2.5.1", "cuda-version=12.6"]))
    assert f["TC614.cuda_not_forced"].severity.value == "warning"


def test_tc614_silent_without_any_variant_signal():
    # conda-forge then picks the build from the machine's __cuda by design: a choice, not a defect
    assert not {"TC614.implicit", "TC614.cuda_not_forced"} & set(found(env(CF, ["pytorch=2.5.1"])))


@pytest.mark.parametrize("deps", [["pytorch=2.5.1=cuda*", "cuda-version=12.6"], ["pytorch=2.5.1", "pytorch-gpu"]])
def test_tc614_not_when_forced(deps):
    assert not {"TC614.implicit", "TC614.cuda_not_forced"} & set(found(env(CF, deps)))


def test_findings_are_ordered_errors_first_and_translated():
    from conda_torchcheck.messages import set_language

    result = check_text(env(["conda-forge"], ["pytorch=2.5", "pytorch-cuda=12.1"]))
    ranks = [f.severity.rank for f in result.findings]
    assert ranks == sorted(ranks)
    set_language("zh_CN")
    assert "频道" in result.findings[0].title.render()


# issue 13, held-out files: the mechanisms behind e084–e095 --------------------------------------------------
def test_tc608_one_finding_for_the_family_with_both_lines_and_no_automatic_fix():
    text = env(["pytorch", "defaults"], ["pytorch=2.0.0", "torchaudio=0.12.1", "torchvision=0.13.1"])
    tc608 = [f for f in check_text(text).findings if f.id == "TC608"]
    assert len(tc608) == 1
    lines = {c["line"] for c in tc608[0].evidence["companions"]}
    assert lines == {7, 8}  # torchaudio and torchvision, the entries that are wrong
    assert tc608[0].evidence["pairs_with"] == "1.12.1"
    assert not any(x.safe_automatic for x in tc608[0].fixes)
    # the conda companion named is the one the pytorch channel's conda command installs
    assert "torchvision 0.15.0" in tc608[0].title.render() and "torchaudio 2.0.0" in tc608[0].title.render()
    assert "torchvision 0.15.0" in tc608[0].title.render("zh_CN")


@pytest.mark.parametrize("torch", ["pytorch=1.9.1=py3.9_cuda11.1_cudnn8.0.5_0", "pytorch=1.1.0", "pytorch=2.5.1"])
def test_tc608_pure_python_torchvision_is_not_paired(torch):
    # torchvision < 0.3 has no compiled operators (pytorch/vision v0.3.0 introduced them)
    assert "TC608" not in found(env(["pytorch", "defaults"], [torch, "torchvision=0.2.2=py_3"]))


def test_tc608_compiled_torchvision_is_still_paired():
    assert "TC608" in found(env(["pytorch", "defaults"], ["pytorch=1.9.1", "torchvision=0.3.0"]))
    assert "TC608" not in found(env(["pytorch", "defaults"], ["pytorch=1.1.0", "torchvision=0.3.0"]))


def test_tc612_hashed_companion_build_beside_a_pytorch_channel_torch():
    deps = ["pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0", "torchvision=0.19.1=cpu_py310h83e0c9b_0"]
    f = found(env(["pytorch", "nvidia", "conda-forge"], deps))
    assert "TC612.build" in f and not any(x.safe_automatic for x in f["TC612.build"].fixes)
    ok = ["pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0", "torchvision=0.19.1=py310_cu124"]
    assert "TC612.build" not in found(env(["pytorch", "nvidia", "conda-forge"], ok))


def test_tc604_nvidia_not_needed_when_the_cuda_libraries_are_pinned_to_base_builds():
    base = [
        "pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0",
        "pytorch-cuda=12.4=hc786d27_7",
        "cuda-cudart=12.4.127=h99ab3db_0",
        "cuda-runtime=12.4.1=hb982923_0",
        "libcublas=12.4.5.8=h99ab3db_1",
    ]
    assert "TC604.nvidia" not in found(env(["pytorch", "conda-forge"], base))
    # no base channel listed, unpinned libraries, or nvidia's own builds: nvidia is still needed
    assert "TC604.nvidia" in found(env(["pytorch"], base))
    assert "TC604.nvidia" in found(env(["pytorch", "conda-forge"], [*base[:2], "cuda-runtime"]))
    assert "TC604.nvidia" in found(env(["pytorch", "conda-forge"], [*base[:2], "cuda-runtime=12.4.1=0"]))


def test_tc607_missing_index_for_a_tag_the_torch_never_had_is_not_claimed():
    f = found(env(CF, ["python=3.11", "pip"], ["torch==2.4.1", "torchaudio==0.13.0+cu117"]))
    assert not any(x.safe_automatic for x in f["TC607.missing"].fixes)
    g = found(env(CF, ["python=3.11", "pip"], ["torch==2.4.1+cu121", "torchaudio==2.4.1+cu121"]))
    assert any(x.safe_automatic for x in g["TC607.missing"].fixes)


def test_pytorch_lts_channel_is_the_pytorch_builder():
    # previous-versions.md v1.8.2 LTS: `conda install pytorch ... cudatoolkit=11.1 -c pytorch-lts -c nvidia`
    deps = ["python=3.9", "pytorch=1.8.2", "torchvision=0.9.2", "torchaudio=0.8.2", "cudatoolkit=11.1"]
    assert found(env(["pytorch-lts", "nvidia", "conda-forge", "nodefaults"], deps)) == {}
    assert "TC608" in found(env(["pytorch-lts", "nvidia"], ["pytorch=1.8.2", "torchvision=0.10.0"]))


# TC615 --------------------------------------------------------------------------------------------------------
PT_CF = ["pytorch", "nvidia", "conda-forge", "nodefaults"]


def test_tc615_pytorch_channel_torch_with_mkl_left_open():
    f = found(env(PT_CF, ["pytorch=2.1.0", "pytorch-cuda=11.8"]))["TC615"]
    assert f.severity.value == "warning"
    assert f.evidence["torch"]["line"] == 8 and f.evidence["mkl"] is None
    assert "TC615" in found(env(PT_CF, ["pytorch=2.2.1", "pytorch-cuda=12.1", "mkl>=2023"]))


def test_tc615_not_when_mkl_is_capped_or_the_build_is_not_the_pytorch_channels():
    assert "TC615" not in found(env(PT_CF, ["pytorch=2.1.0", "pytorch-cuda=11.8", "mkl=2024.0"]))
    assert "TC615" not in found(env(PT_CF, ["pytorch=2.1.0", "pytorch-cuda=11.8", "mkl<2024.1"]))
    assert "TC615" not in found(env(PT_CF, ["pytorch=2.5.1", "pytorch-cuda=12.4"]))  # its builds cap mkl
    assert "TC615" not in found(env(PT_CF, ["pytorch=1.7.1", "cudatoolkit=11.0"]))  # not reported that far back
    assert "TC615" not in found(env(CF, ["pytorch=2.1.0"]))  # conda-forge's torch
    assert "TC615" not in found(env(["pytorch", "nvidia", "defaults"], ["pytorch=2.1.0", "pytorch-cuda=11.8"]))
    assert "TC615" not in found(env(PT_CF, ["pytorch=2.1.0", "pytorch-cuda=11.8", "vc14_runtime"]))  # Windows
    assert "TC615" not in found("# for Windows\n" + env(PT_CF, ["pytorch=2.1.0", "pytorch-cuda=11.8"]))


# TC616 --------------------------------------------------------------------------------------------------------
def test_tc616_typo_default_and_no_missing_note_beside_it():
    f = found(env(["pytorch", "default"], ["python=3.7.9", "pytorch=1.7.1"]))
    assert f["TC616.typo"].evidence["channel"] == {"line": 4, "channel": "default"}
    assert "defaults" in f["TC616.typo"].title.render()
    assert "TC603.missing" not in f


def test_tc616_single_colon_prefix():
    f = found(env(PT_CF, ["pytorch:pytorch=2.4.*", "pyg:pytorch-scatter", "pytorch::torchvision"]))
    tc616 = f["TC616.single_colon"]
    assert [e["line"] for e in tc616.evidence["entries"]] == [8, 9]
    assert "pytorch::pytorch=2.4.*" in tc616.fixes[0].summary.render()


def test_tc616_not_for_valid_channels_and_prefixes():
    f = found(env(["pytorch", "defaults", "https://conda.anaconda.org/pyg"], ["pytorch::pytorch=2.1.0"]))
    assert not {"TC616.typo", "TC616.single_colon"} & set(f)


# TC604 nvidia_build / TC607 unpinned_extra beside an exact torch (issue 23) -----------------------------------------
def test_tc604_a_pinned_pytorch_channel_cuda_build_needs_nvidia():
    f = found(env(["pytorch", "defaults"], ["pytorch=2.1.2=py3.11_cuda11.8_cudnn8.7.0_0"]))["TC604.nvidia_build"]
    assert f.evidence["entry"]["line"] == 6 and not any(x.safe_automatic for x in f.fixes)
    assert "TC604.nvidia_build" not in found(env(PT, ["pytorch=2.1.2=py3.11_cuda11.8_cudnn8.7.0_0"]))
    assert "TC604.nvidia_build" not in found(env(["pytorch", "defaults"], ["pytorch=2.1.2=py3.11_cpu_0"]))
    # before 1.13 the CUDA build took cudatoolkit, not pytorch-cuda
    assert "TC604.nvidia_build" not in found(
        env(["pytorch", "defaults"], ["pytorch=1.12.1=py3.9_cuda11.3_cudnn8.3.2_0"])
    )


def test_tc607_unpinned_torchvision_follows_an_exact_pip_torch():
    pip = ["torch==2.4.0", "--extra-index-url https://download.pytorch.org/whl/cu124", "torchvision"]
    assert "TC607.unpinned_extra" not in found(env(["defaults"], ["python=3.11", "pip"], pip))
    pip = ["torch>=2.4", "--extra-index-url https://download.pytorch.org/whl/cu124", "torchvision"]
    assert "TC607.unpinned_extra" in found(env(["defaults"], ["python=3.11", "pip"], pip))


def test_tc607_pyg_extensions_without_their_wheel_page():
    pip = ["torch==1.11.0", "torch-scatter==2.0.9", "torch-sparse==0.6.14"]
    f = found(env(["conda-forge", "nodefaults"], ["python=3.9", "pip"], pip))["TC607.extension_page"]
    assert f.severity.value == "error"
    assert [e["line"] for e in f.evidence["entries"]] == [10, 11]
    with_page = [*pip, "-f https://data.pyg.org/whl/torch-1.11.0+cu113.html"]
    assert "TC607.extension_page" not in found(env(["conda-forge", "nodefaults"], ["python=3.9", "pip"], with_page))


# TC617 --------------------------------------------------------------------------------------------------------
def test_tc617_a_gpu_file_whose_pytorch_channel_torch_gets_the_cpu_build():
    text = env(["pytorch", "conda-forge", "nodefaults"], ["python=3.10", "pytorch::pytorch==2.0.0", "cudnn"])
    f = found(text)["TC617.pytorch_channel"]
    assert f.severity.value == "error" and f.evidence["gpu_signal"] == "cudnn"
    named = "name: detector-gpu\n" + env(["pytorch", "conda-forge"], ["pytorch::pytorch==2.0.0"]).split("\n", 1)[1]
    assert "TC617.pytorch_channel" in found(named)


def test_tc617_not_when_the_file_selects_or_does_not_want_cuda():
    base = ["pytorch", "conda-forge", "nodefaults"]
    assert "TC617.pytorch_channel" not in found(env(base, ["pytorch==2.0.0"]))  # nothing says GPU
    assert "TC617.pytorch_channel" not in found(env(base, ["pytorch==2.0.0", "pytorch-cuda=11.8", "cudnn"]))
    assert "TC617.pytorch_channel" not in found(env(base, ["pytorch==2.0.0", "cpuonly", "cudnn"]))
    assert "TC617.pytorch_channel" not in found(env([*base, "nvidia"], ["pytorch==2.0.0", "cudnn"]))
    assert "TC617.pytorch_channel" not in found(env(base, ["pytorch==1.12.1", "cudnn"]))  # cudatoolkit era
    # a CUDA 12 pytorch-cuda beside Anaconda's defaults (CUDA 12 libraries) could still solve a CUDA build
    assert "TC617.pytorch_channel" not in found(env(["pytorch", "defaults"], ["pytorch==2.5.1", "cudnn"]))
    assert "TC617.pytorch_channel" not in found(env(["pytorch", "conda-forge"], ["pytorch==2.5.1", "cudnn"]))


def test_tc617_pypi_torch_in_a_windows_gpu_file_is_the_cpu_build():
    deps = ["python=3.10", "vc14_runtime", "cudnn", "pip"]
    f = found(env(["conda-forge", "nodefaults"], deps, ["torch==2.3.0"]))["TC617.pypi_windows"]
    assert f.evidence["entry"]["line"] == 11
    indexed = ["--extra-index-url https://download.pytorch.org/whl/cu121", "torch==2.3.0"]
    assert "TC617.pypi_windows" not in found(env(["conda-forge", "nodefaults"], deps, indexed))
    linux = ["python=3.10", "cudnn", "pip"]  # PyPI's Linux torch is the CUDA build
    assert "TC617.pypi_windows" not in found(env(["conda-forge", "nodefaults"], linux, ["torch==2.3.0"]))
    cpu = ["python=3.10", "vc14_runtime", "pip"]  # nothing says GPU
    assert "TC617.pypi_windows" not in found(env(["conda-forge", "nodefaults"], cpu, ["torch==2.3.0"]))
