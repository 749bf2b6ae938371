"""TC111: torch built for, or left under, another Python than the env's interpreter."""

from __future__ import annotations

from conda_torchcheck.checks import run_checks
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import load_environment


def tc111(prefix):
    env, host = load_environment(prefix, use_live_host=False)
    return run_checks(CheckContext(env, host), only=["TC111"])


def torch_with_c(builder, c_name: str, version: str = "2.13.0+cpu"):
    builder.pip_torch(version)
    (builder.site_packages / "torch" / c_name).write_bytes(b"\x7fELF")
    (builder.site_packages / "torch" / "_C").mkdir(exist_ok=True)  # the wheel's .pyi stub folder


def test_extension_for_another_python(make_env):
    b = make_env(layout="venv", python="3.12.1")
    torch_with_c(b, "_C.cpython-311-x86_64-linux-gnu.so")
    [f] = tc111(b.prefix)
    assert (f.severity.value, f.title.key) == ("error", "TC111.extension.title")
    assert f.title.params["built_for"] == "3.11" and f.title.params["python"] == "3.12"
    assert f.evidence["this interpreter loads"][0] == ".cpython-312-x86_64-linux-gnu.so"
    # the same variant again, for this Python (torch 2.13 supports 3.12)
    expected = (
        f'"{b.prefix}/bin/python" -m pip install --force-reinstall torch==2.13.0 '
        "--index-url https://download.pytorch.org/whl/cpu"
    )
    assert f.fixes[0].commands == (expected,)


def test_matching_extension_is_silent(make_env):
    b = make_env(layout="venv", python="3.11.9")
    torch_with_c(b, "_C.cpython-311-x86_64-linux-gnu.so")
    assert tc111(b.prefix) == []


def test_abi3_extension_loads_in_any_gil_python(make_env):
    b = make_env(layout="venv", python="3.12.1")
    torch_with_c(b, "_C.abi3.so")
    assert tc111(b.prefix) == []


def test_free_threaded_interpreter_does_not_load_a_gil_wheel(make_env):
    b = make_env(layout="venv", python="3.13.1")
    (b.prefix / "lib" / "python3.13").rename(b.prefix / "lib" / "python3.13t")  # a free-threaded venv
    b.site_packages = b.prefix / "lib" / "python3.13t" / "site-packages"
    torch_with_c(b, "_C.cpython-313-x86_64-linux-gnu.so")
    [f] = tc111(b.prefix)
    assert f.title.params["built_for"] == "3.13" and f.title.params["python"] == "3.13t"
    assert ".abi3.so" not in f.evidence["this interpreter loads"]


def test_torch_left_behind_after_a_python_upgrade(make_env):
    b = make_env(layout="conda", python="3.12.4")
    old_site = b.prefix / "lib" / "python3.11" / "site-packages"
    b.pip_torch("2.5.1", site=old_site)
    [f] = tc111(b.prefix)
    assert f.title.key == "TC111.stranded.title"
    assert f.evidence["torch left in"] == str(old_site / "torch")
