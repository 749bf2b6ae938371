"""spec fix: decisions per file shape, pinning from an installed env, layouts, and the atomic write."""

from __future__ import annotations

import os
import stat

import pytest

from conda_torchcheck.envspec import fix_file, fix_path
from conda_torchcheck.envspec.parse import SpecFileError, parse_text
from conda_torchcheck.envspec.rewrite import installed_from_environment, plan_fix
from conda_torchcheck.envspec.textedit import EditError
from conda_torchcheck.inventory import load_environment


def fixed(text: str, **kwargs) -> str:
    return fix_file(parse_text(text, "environment.yml"), **kwargs).fixed


def deps_of(text: str) -> list[str]:
    return [d.text for d in parse_text(text).deps]


def test_frozen_channel_file_stays_and_is_pinned():
    out = fixed("channels: [pytorch, nvidia, defaults]\ndependencies: [python=3.11, pytorch, pytorch-cuda=12.1]\n")
    assert deps_of(out) == ["python=3.11", "pytorch::pytorch=2.5.1", "pytorch::pytorch-cuda=12.1"]


def test_unpinned_pytorch_cuda_is_pinned_to_what_the_solver_picks():
    out = fixed("channels: [pytorch, nvidia, defaults]\ndependencies: [pytorch=2.4, pytorch-cuda]\n")
    assert deps_of(out) == ["pytorch::pytorch=2.4.1", "pytorch::pytorch-cuda=12.4"]


def test_newer_than_frozen_moves_to_conda_forge_with_reasons():
    text = "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.7\n  - pytorch-cuda=12.6\n"
    result = fix_file(parse_text(text))
    assert deps_of(result.fixed) == ["conda-forge::pytorch=2.7.*=cuda*", "cuda-version=12"]
    assert [c.text for c in parse_text(result.fixed).channels] == ["conda-forge", "nodefaults"]
    reasons = " ".join(c.reason() for c in result.plan.changes)
    assert "frozen pytorch channel" in reasons and "nvidia" in reasons


def test_cpu_and_cuda_at_once_is_not_guessed():
    text = "channels: [pytorch, nvidia, defaults]\ndependencies: [pytorch=2.1.0, cpuonly, pytorch-cuda=12.1]\n"
    result = fix_file(parse_text(text))
    assert "TC609" in {f.id for f in result.findings_after}


def test_cpuonly_on_conda_forge_becomes_a_cpu_build():
    out = fixed("channels: [conda-forge]\ndependencies: [python=3.12, pytorch=2.6, cpuonly]\n")
    assert deps_of(out) == ["python=3.12", "conda-forge::pytorch=2.6.*=cpu*"]


def test_cudatoolkit_12_on_conda_forge_becomes_cuda_version():
    out = fixed("channels: [conda-forge, nodefaults]\ndependencies: [pytorch=2.5.1, cudatoolkit=12.1]\n")
    assert deps_of(out) == ["conda-forge::pytorch=2.5.1=cuda*", "cuda-version=12"]


def test_conda_forge_cuda_version_makes_the_variant_explicit():
    out = fixed("channels: [conda-forge, nodefaults]\ndependencies: [pytorch=2.5.1, cuda-version=12.6]\n")
    assert deps_of(out) == ["conda-forge::pytorch=2.5.1=cuda*", "cuda-version=12.6"]


def test_misnamed_torch_becomes_pytorch():
    out = fixed("channels: [conda-forge, nodefaults]\ndependencies: [python=3.12, torch=2.5.1]\n")
    assert deps_of(out) == ["python=3.12", "conda-forge::pytorch=2.5.1"]


def test_conflicting_companion_pin_is_reported_not_rewritten():
    # issue 13 (co-constraints): both pins are explicit, so the fix says so instead of choosing one; a rewrite
    # to 0.20.1 would not be the same or a narrower constraint than torchvision=0.19
    result = fix_file(
        parse_text("channels: [conda-forge, nodefaults]\ndependencies: [pytorch=2.5.1=cuda*, torchvision=0.19]\n")
    )
    assert deps_of(result.fixed)[1] == "torchvision=0.19"
    assert any("torchvision=0.19" in t.render() for t in result.plan.unresolved)
    tc608 = [f for f in result.findings_after if f.id == "TC608"]
    assert tc608 and not any(x.safe_automatic for x in tc608[0].fixes)
    assert "0.20.1" in tc608[0].fixes[0].summary.render()


def test_unpinned_companion_follows_the_conda_command_of_the_release():
    # pytorch.org's 2.0.0 conda command installs torchvision 0.15.0 / torchaudio 2.0.0 (its pip one 0.15.1 / 2.0.1)
    out = fixed("channels: [pytorch, defaults]\ndependencies: [pytorch=2.0.0, torchvision, torchaudio]\n")
    assert deps_of(out)[1:] == ["pytorch::torchvision=0.15.0", "pytorch::torchaudio=2.0.0"]


def test_pure_python_torchvision_is_not_paired():
    # torchvision 0.2.x has no compiled operators (vision v0.3.0 introduced them): no TC608, no rewrite
    text = (
        "channels: [pytorch, defaults]\n"
        "dependencies: [pytorch=1.9.1=py3.9_cuda11.1_cudnn8.0.5_0, torchvision=0.2.2=py_3]\n"
    )
    result = fix_file(parse_text(text))
    assert "TC608" not in {f.id for f in result.findings_before}
    assert "pytorch::torchvision=0.2.2=py_3" in deps_of(result.fixed)


def test_companion_with_another_builders_build_is_not_prefixed():
    text = (
        "channels: [pytorch, nvidia, conda-forge]\n"
        "dependencies: [pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0, torchvision=0.19.1=cpu_py310h83e0c9b_0]\n"
    )
    result = fix_file(parse_text(text))
    assert "TC612" in {f.id for f in result.findings_before}
    assert "torchvision=0.19.1=cpu_py310h83e0c9b_0" in deps_of(result.fixed)


def test_unknown_channels_are_left_for_p():
    result = fix_file(parse_text("dependencies:\n  - pytorch=2.5.1\n"))
    assert not result.changed
    assert any("-p" in t.render() for t in result.plan.unresolved)


def test_pip_index_is_inserted_first_and_mirror_host_kept():
    text = (
        "channels: [conda-forge, nodefaults]\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
        "    - --extra-index-url https://mirrors.aliyun.com/pytorch-wheels/cu118\n    - torch==2.3.0+cu121\n"
        "    - requests\n"
    )
    out = parse_text(fixed(text))
    assert out.pip[0].text == "--extra-index-url https://mirrors.aliyun.com/pytorch-wheels/cu121"


def test_pypi_mirror_index_keeps_torch_index_extra():
    text = (
        "channels: [conda-forge, nodefaults]\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
        "    - -i https://pypi.tuna.tsinghua.edu.cn/simple\n    - torch==2.3.0+cu121\n"
    )
    out = parse_text(fixed(text))
    assert out.pip[0].text == "--extra-index-url https://download.pytorch.org/whl/cu121"


# ---- layouts -------------------------------------------------------------------------------------------------
def test_missing_channels_key_is_created_before_dependencies():
    text = "name: x\n# deps\ndependencies:\n    - python=3.11\n    - pytorch\n    - pytorch-cuda=12.1\n"
    out = fixed(text, base_channel="defaults")
    assert out.startswith("name: x\n# deps\nchannels:\n    - pytorch\n    - nvidia\n    - defaults\n    - nodefaults\n")
    # defaults is a change of source and licence: never added unless asked for
    assert fixed(text).startswith("name: x\n# deps\nchannels:\n    - pytorch\n    - nvidia\ndependencies:")


def test_indentless_lists_keep_their_style():
    text = "channels:\n- pytorch\n- nvidia\ndependencies:\n- pytorch=2.1.0\n- pytorch-cuda=11.8\n"
    out = fixed(text, base_channel="defaults")
    assert "\n- nodefaults\n" in out and "\n- pytorch::pytorch=2.1.0\n" in out


def test_quoted_scalars_keep_their_quotes():
    text = (
        "channels:\n  - 'pytorch'\n  - \"nvidia\"\n  - defaults\n"
        "dependencies:\n  - 'pytorch=2.1.0'\n  - \"pytorch-cuda=11.8\"\n"
    )
    out = fixed(text)
    assert "  - 'pytorch::pytorch=2.1.0'\n" in out and '  - "pytorch::pytorch-cuda=11.8"\n' in out


def test_no_final_newline_is_kept():
    text = "channels:\n  - conda-forge\ndependencies:\n  - pytorch=2.5.1=cuda*"
    out = fixed(text)
    assert not out.endswith("\n")
    assert out.endswith("  - conda-forge::pytorch=2.5.1=cuda*")


def test_removed_entry_leaves_its_comment():
    text = "channels:\n  - conda-forge\n  - nvidia  # for cuDNN\ndependencies:\n  - pytorch=2.5.1=cuda*\n"
    out = fixed(text)
    assert "nvidia" not in out.split("dependencies")[0].replace("# for cuDNN", "")
    assert "  # for cuDNN\n" in out


def test_flow_list_with_comment_inside_is_refused():
    text = "channels: [pytorch,  # main\n  nvidia]\ndependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=11.8\n"
    with pytest.raises(EditError):
        fixed(text, base_channel="defaults")


def test_aliases_are_refused():
    text = "x: &t pytorch=2.1.0\nchannels: [pytorch, nvidia, defaults]\ndependencies:\n  - *t\n  - pytorch-cuda=11.8\n"
    with pytest.raises(EditError):
        fixed(text)


def test_unchanged_file_gives_no_plan_changes():
    text = "channels: [conda-forge, nodefaults]\ndependencies: [conda-forge::pytorch=2.5.1=cuda*, cuda-version=12.6]\n"
    assert plan_fix(parse_text(text)).changes == []


# ---- -p PREFIX -----------------------------------------------------------------------------------------------
@pytest.fixture
def cf_env(make_env):
    b = make_env(name="cfenv", python="3.11.9")
    b.conda_pytorch("2.5.1", "cuda126_generic_py311_h1234567_303", cuda="12.6")
    b.conda_python_package("torchvision", "0.20.1", "cuda126_py311_habcdef_1")
    b.conda_record("cuda-version", "12.6", "h7480c83_3", noarch=True)
    b.conda_record("numpy", "2.1.3", "py311h0000000_0")
    b.conda_record("pip", "24.3.1", "pyh8b19718_0", noarch=True)
    b.dist("transformers", "4.48.0")
    return b


def _installed(builder):
    env, _ = load_environment(builder.prefix, use_live_host=False)
    return installed_from_environment(env)


def test_pin_from_installed_env(cf_env):
    text = (
        "channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch\n  - torchvision\n  - numpy\n"
        "  - pip\n  - pip:\n    - transformers\n"
    )
    out = parse_text(fixed(text, installed=_installed(cf_env)))
    assert [d.text for d in out.deps] == [
        "python=3.11.9",
        "conda-forge::pytorch=2.5.1=cuda*",
        "cuda-version=12.6",
        "conda-forge::torchvision=0.20.1",
        "numpy=2.1.3",
        "pip=24.3.1",
    ]
    assert [p.text for p in out.pip] == ["transformers==4.48.0"]


def test_lock_pins_builds(cf_env):
    text = "channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch\n"
    out = deps_of(fixed(text, installed=_installed(cf_env), lock=True))
    assert out[0] == "python=3.11.9=h0000000_0_cpython"
    assert out[1] == "conda-forge::pytorch=2.5.1=cuda126_generic_py311_h1234567_303"


def test_installed_env_decides_the_channel(cf_env):
    # the file says pytorch channel, the working env has conda-forge's build: the env is the truth
    text = "channels: [pytorch, nvidia, defaults]\ndependencies:\n  - pytorch\n  - pytorch-cuda=12.4\n"
    out = fixed(text, installed=_installed(cf_env))
    assert "conda-forge::pytorch=2.5.1=cuda*" in out
    assert "pytorch-cuda" not in out.split("dependencies")[1]


def test_not_installed_entries_are_reported(cf_env):
    result = fix_file(
        parse_text("channels: [conda-forge]\ndependencies: [pytorch, scipy]\n"), installed=_installed(cf_env)
    )
    assert any("scipy" in t.render() for t in result.plan.unresolved)


def test_pip_torch_env_pins_local_tag_and_index(make_env):
    b = make_env(name="pipenv", python="3.10.14")
    b.conda_record("pip", "24.0", "pyhd8ed1ab_0", noarch=True)
    b.pip_torch("2.3.1+cu121", cuda="12.1")
    text = "channels: [conda-forge, nodefaults]\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n    - torch\n"
    out = parse_text(fixed(text, installed=_installed(b)))
    assert [p.text for p in out.pip] == ["--index-url https://download.pytorch.org/whl/cu121", "torch==2.3.1+cu121"]


# ---- writing -------------------------------------------------------------------------------------------------
SEED = (
    "channels:\n  - pytorch\n  - nvidia\n  - defaults\n"
    "dependencies:\n  - python=3.11\n  - pytorch\n  - pytorch-cuda=11.8\n"
)


def test_default_writes_nothing(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_text(SEED)
    result = fix_path(f)
    assert result.changed and not result.written
    assert f.read_text() == SEED
    assert not (tmp_path / "environment.yml.bak").exists()


def test_write_is_atomic_and_keeps_a_backup(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_bytes(b"\xef\xbb\xbf" + SEED.replace("\n", "\r\n").encode())
    os.chmod(f, 0o640)
    result = fix_path(f, write=True)
    assert result.written
    assert (tmp_path / "environment.yml.bak").read_bytes() == b"\xef\xbb\xbf" + SEED.replace("\n", "\r\n").encode()
    data = f.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"pytorch::pytorch=2.5.1\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["environment.yml", "environment.yml.bak"]
    assert not fix_path(f, write=True).changed


def test_write_follows_a_symlink(tmp_path):
    real = tmp_path / "real.yml"
    real.write_text(SEED)
    link = tmp_path / "environment.yml"
    link.symlink_to(real)
    fix_path(link, write=True)
    assert link.is_symlink()
    assert "pytorch::pytorch" in real.read_text()


def test_bad_file_is_left_untouched(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_bytes(b"dependencies:\n\t- pytorch\n")
    with pytest.raises(SpecFileError):
        fix_path(f, write=True)
    assert f.read_bytes() == b"dependencies:\n\t- pytorch\n"
    assert not (tmp_path / "environment.yml.bak").exists()


def test_utf16_round_trips(tmp_path):
    f = tmp_path / "environment.yml"
    f.write_bytes(b"\xff\xfe" + SEED.encode("utf-16-le"))
    fix_path(f, write=True)
    data = f.read_bytes()
    assert data.startswith(b"\xff\xfe")
    assert "pytorch::pytorch=2.5.1" in data[2:].decode("utf-16-le")


def test_companion_tag_the_torch_never_had_adds_no_index():
    # torchaudio==0.13.0+cu117 beside torch==2.4.1: the cu117 index has no torch 2.4.1 (a new error after the fix)
    text = (
        "channels: [conda-forge, nodefaults]\ndependencies:\n  - pip\n  - pip:\n"
        "    - torch==2.4.1\n    - torchaudio==0.13.0+cu117\n"
    )
    result = fix_file(parse_text(text))
    assert "download.pytorch.org" not in result.fixed
    assert "torchaudio==0.13.0+cu117" in result.fixed
    assert not {f.id for f in result.findings_after} - {f.id for f in result.findings_before}


def test_pinned_base_cuda_libraries_get_no_nvidia_channel():
    text = (
        "channels: [pytorch, conda-forge]\ndependencies:\n  - pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0\n"
        "  - pytorch-cuda=12.4=hc786d27_7\n  - cuda-cudart=12.4.127=h99ab3db_0\n  - cuda-runtime=12.4.1=hb982923_0\n"
    )
    result = fix_file(parse_text(text))
    assert "nvidia" not in [c.text for c in parse_text(result.fixed).channels]


def test_torch_pinned_to_a_hashed_build_is_not_moved_to_the_pytorch_channel():
    # Anaconda's `cpu_py39h…` build exists on defaults only: pytorch:: in front of it would be unsolvable
    text = "channels: [pytorch, defaults]\ndependencies: [pytorch=1.10.2=cpu_py39hfa7516b_0]\n"
    result = fix_file(parse_text(text))
    assert deps_of(result.fixed) == ["pytorch=1.10.2=cpu_py39hfa7516b_0"]
    assert "TC612" not in {f.id for f in result.findings_before}


def test_several_wheel_variants_get_no_index_and_no_new_error():
    text = (
        "channels: [conda-forge, nodefaults]\ndependencies:\n  - pip\n  - pip:\n"
        "    - torch==2.4.1+cu121\n    - torchvision==0.19.1+cu118\n"
    )
    result = fix_file(parse_text(text))
    assert "download.pytorch.org" not in result.fixed
    assert {f.id for f in result.findings_after} <= {f.id for f in result.findings_before}
    tc607 = [f for f in result.findings_before if f.id == "TC607"]
    assert tc607 and not any(x.safe_automatic for x in tc607[0].fixes)


@pytest.mark.parametrize(
    "text",
    [
        # a CUDA build string and cpuonly at once (TC609): the build stays, or the next fix would change the file
        "channels: [conda-forge]\ndependencies:\n  - pytorch=1.9.1=py3.9_cuda11.1_cudnn8.0.5_0\n  - cpuonly\n",
        # cpuonly with Anaconda's defaults only: TC604 is the user's edit there, not claimed by spec fix
        "channels: [defaults]\ndependencies:\n  - pytorch=1.10.2\n  - cpuonly\n",
        # `torch=` with defaults before pytorch and cudatoolkit: read as the CPU-build file from the start
        "channels: [defaults, pytorch]\ndependencies:\n  - torch=2.3\n  - torchaudio\n  - cudatoolkit=11.1\n",
        # two wheel variants: no index chosen
        (
            "channels: [conda-forge, nodefaults]\ndependencies:\n  - pip\n  - pip:\n    - torch==2.4.1+cu121\n"
            "    - torchvision==0.19.1+cu118\n"
        ),
    ],
)
def test_fix_converges_and_is_idempotent(text):
    result = fix_file(parse_text(text))
    again = fix_file(parse_text(result.fixed))
    assert again.fixed == result.fixed

    def claims(f):
        return any(x.safe_automatic and "spec fix" in " ".join(x.commands) for x in f.fixes)

    claimed = {f.title.key for f in result.findings_before if claims(f)}
    errors = {f.title.key for f in result.findings_before if f.severity.value == "error"}
    for f in result.findings_after:
        assert f.title.key not in claimed
        assert f.severity.value != "error" or f.title.key in errors


@pytest.mark.parametrize(
    "pip",
    [
        # the index points at cu121, the pins ask for cu117 and cu121: a choice, not a claimed fix
        ["--index-url https://download.pytorch.org/whl/cu118", "torch==2.1.0+cu121", "torchvision==0.14.1+cu117"],
        # a pip duplicate of the conda torch is removed: its tag no longer decides the index
        ["-f https://data.pyg.org/whl/torch-2.1.0+cu121.html", "torch==2.1.0+cu121", "torchvision==0.14.1+cu117"],
    ],
)
def test_pip_index_fixes_converge(pip):
    conda = "  - pytorch=2.1.0\n" if pip[0].startswith("-f") else ""
    text = "dependencies:\n  - python=3.10\n" + conda + "  - pip\n  - pip:\n" + "".join(f"    - {p}\n" for p in pip)
    result = fix_file(parse_text(text))
    again = fix_file(parse_text(result.fixed))
    assert again.fixed == result.fixed
    claimed = {
        f.title.key
        for f in result.findings_before
        if any(x.safe_automatic and "spec fix" in " ".join(x.commands) for x in f.fixes)
    }
    assert not claimed & {f.title.key for f in result.findings_after}


@pytest.mark.parametrize(
    "text",
    [
        # python 3.12 rules out torch 2.0.0: pinning torchaudio to the conda command's 2.0.0 keeps that reading
        "channels: [pytorch, defaults]\ndependencies:\n  - python=3.12\n  - pytorch=2.0.0\n  - torchaudio\n",
        # cudatoolkit on the nightly channel: not converted there, so not claimed
        "channels: [pytorch-nightly, nvidia]\ndependencies:\n  - pytorch=2.5.1\n  - cudatoolkit\n",
    ],
)
def test_fix_keeps_the_same_findings(text):
    result = fix_file(parse_text(text))
    claimed = {
        f.title.key
        for f in result.findings_before
        if any(x.safe_automatic and "spec fix" in " ".join(x.commands) for x in f.fixes)
    }
    errors = {f.title.key for f in result.findings_before if f.severity.value == "error"}
    after = {f.title.key for f in result.findings_after}
    assert not claimed & after
    assert {f.title.key for f in result.findings_after if f.severity.value == "error"} <= errors
