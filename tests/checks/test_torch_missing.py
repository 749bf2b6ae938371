"""TC100: torch is not installed; the install command fits the env (conda-forge for conda/pixi, pip with the
right index for a venv), CUDA or CPU by this machine's driver (a fake file-system root), and every version or
index it names exists in the release table."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks.torch_missing import _cuda_tag_for_driver, _latest_release
from conda_torchcheck.knowledge import load
from tests.checks.tc_helpers import all_commands, healthy, run_check, variant_of
from tests.checks.test_cuda_driver import driver

RELEASES = load("torch_releases")["releases"]
NEWEST = max(RELEASES, key=lambda m: tuple(map(int, m.split("."))))


def one(b, **kw):
    [f] = run_check(b, "torch_missing", **kw)
    assert f.id == "TC100" and f.severity.value == "info"
    return f


def test_silent_when_torch_is_installed(make_env):
    assert run_check(healthy(make_env()), "torch_missing") == []


def test_venv_without_driver_gets_cpu_and_the_cuda_choice(make_env, root):
    b = make_env(layout="venv")
    f = one(b, live=True)
    assert variant_of(f) == "missing"
    assert (
        f.evidence["nvidia_driver"].startswith("none found (looked in ")
        and "/proc/driver/nvidia/version" in (f.evidence["nvidia_driver"])
    )
    cpu, choose = all_commands(f)
    assert cpu == f'"{b.prefix}/bin/python" -m pip install torch --index-url https://download.pytorch.org/whl/cpu'
    tags = RELEASES[NEWEST]["pip_cuda"]
    assert choose.endswith(f"--index-url https://download.pytorch.org/whl/{tags[-1]}")
    assert ", ".join(tags) in f.fixes[1].summary.render()


def test_venv_with_a_driver_gets_the_cuda_build_it_runs(make_env, root):
    driver(root, "560.35.03")  # runs CUDA 12.6 fully, CUDA 13 not at all
    b = make_env(layout="venv")
    f = one(b, live=True)
    cuda, cpu = all_commands(f)
    assert cuda.endswith("--index-url https://download.pytorch.org/whl/cu126") and cpu.endswith("/whl/cpu")
    assert f.evidence["nvidia_driver"] == "560.35.03" and f.evidence["cuda_build"] == "cu126"


def test_a_driver_too_old_for_any_cuda_build(make_env, root):
    driver(root, "470.82.01")
    f = one(make_env(layout="venv"), live=True)
    [cpu] = all_commands(f)
    assert cpu.endswith("/whl/cpu") and "470.82.01" in f.fixes[0].summary.render()


def test_driver_not_read_for_an_env_checked_offline(make_env, root):
    driver(root, "560.35.03")
    f = one(make_env(layout="venv"), live=False)
    assert "not read" in f.evidence["nvidia_driver"] and len(f.fixes) == 2


def test_conda_env_gets_conda_forge(make_env, root):
    driver(root, "560.35.03")
    b = make_env(layout="conda")
    f = one(b, live=True)
    [install] = all_commands(f)
    assert install == f'conda install -p "{b.prefix}" -c conda-forge "pytorch=*=cuda*"'
    assert "-c pytorch" not in install


def test_conda_env_driver_unknown_offers_both(make_env, root):
    b = make_env(layout="conda")
    f = one(b, live=False)
    cpu, cuda = all_commands(f)
    assert cpu.endswith('"pytorch=*=cpu*"') and cuda.endswith('"pytorch=*=cuda*"')


def test_conda_base_gets_a_new_env(make_env, root):
    b = make_env(layout="conda")
    (b.prefix / "condabin").mkdir()
    (b.prefix / "envs").mkdir()
    b.conda_record("conda", "25.1.1", "py311h38be061_0")
    f = one(b, live=False)
    assert all_commands(f)[:2] == [
        'conda create -n torch -c conda-forge python=3.11 "pytorch=*=cpu*"',
        "conda activate torch",
    ]


def test_windows_venv(make_env):
    b = make_env(os="windows", layout="venv")
    f = one(b)
    cpu = all_commands(f)[0]
    assert cpu.startswith('"') and "Scripts" in cpu and 'python.exe" -m pip install torch --index-url' in cpu
    assert cpu.endswith("/whl/cpu")  # PyPI's Windows torch is CPU-only too, but the index is explicit


@pytest.mark.parametrize(("arch", "expected"), [("arm64", "install torch"), ("x86_64", 'install "torch==2.2.2"')])
def test_macos_venv(make_env, arch, expected):
    f = one(make_env(os="darwin", layout="venv", arch=arch))
    [command] = all_commands(f)
    assert command.endswith(expected)


def test_old_python_pins_the_newest_release_that_supports_it(make_env, root):
    f = one(make_env(layout="venv", python="3.8.18"), live=False)
    minor = f.evidence["newest_known_torch"]
    assert minor == "2.4" and "torch==2.4.*" in all_commands(f)[0]
    low, high = (tuple(map(int, v.split("."))) for v in RELEASES[minor]["python"])
    assert low <= (3, 8) <= high


def test_python_newer_than_any_known_release(make_env, root):
    [f] = run_check(make_env(layout="venv", python="3.99.0"), "torch_missing", live=False)
    assert f.id == "TC100" and f.severity.value == "warning"  # no torch can be installed: a problem
    assert variant_of(f) == "python_unsupported" and "3.99" in f.title.render()


def test_32bit_python_gets_no_torch(make_env):
    [f] = run_check(make_env(os="windows", layout="venv", arch="x86"), "torch_missing")
    assert f.severity.value == "warning" and variant_of(f) == "python_32bit"
    assert "32-bit (x86) Python 3.11" in f.title.render() and "(from versions: none)" in f.explanation.render()
    assert [x.summary.key for x in f.fixes] == ["TC100.fix_python_64bit"]


def test_every_suggestion_exists_in_the_release_table():
    for minor, row in RELEASES.items():
        tags = [t for t in row.get("pip_cuda", ()) if t.startswith("cu")]
        for drv in ("450.80.02", "525.60.13", "560.35.03", "580.65.06", "999.1"):
            tag = _cuda_tag_for_driver(tags, drv, "linux")
            assert tag is None or tag in tags, (minor, drv, tag)
    for py in [(3, 8), (3, 9), (3, 10), (3, 13)]:
        minor, row, supported = _latest_release(py)
        assert minor in RELEASES and supported
