"""The Pythons people really have, one scenario each: an embedded Python (ComfyUI portable), a uv venv, a
uv-managed Python, a Microsoft Store Python and a pyenv version. Each healthy twin is clean; each broken one is
named, with a fix that uses that layout's own python or tool. Layouts as their installers leave them
(tests/envbuilder.py and the sources in conda_torchcheck/inventory/layouts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.inventory import load_environment
from conda_torchcheck.report import check_environment
from tests.checks.tc_helpers import all_commands, healthy, run_check, variant_of
from tests.envbuilder import EnvBuilder, pe_stub


def _system_root(tmp_path: Path) -> Path:
    """A Windows folder whose System32 has the VC++ runtime torch's DLLs import (the machine the env runs on)."""
    root = tmp_path / "Windows"
    (root / "System32").mkdir(parents=True, exist_ok=True)
    for name in ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"):
        (root / "System32" / name).write_bytes(pe_stub())
    return root


def _problems(prefix: Path, **kwargs) -> list[str]:
    env, host = load_environment(prefix, use_live_host=False, **kwargs)
    report = check_environment(env, host)
    return [f.id for f in report.findings if f.severity.value in ("error", "warning")]


# --- embedded Python: ComfyUI_windows_portable\python_embeded ----------------------------------------------


def _comfyui(tmp_path: Path) -> EnvBuilder:
    return EnvBuilder(
        tmp_path / "ComfyUI_windows_portable" / "python_embeded", os="windows", layout="embedded", python="3.12.7"
    )


def test_embedded_python_is_named_and_its_path_file_defines_the_import_path(tmp_path):
    b = _comfyui(tmp_path)
    env, _ = load_environment(b.prefix, use_live_host=False, host_overrides={"PYTHONPATH": str(tmp_path)})
    assert env.layout == "embedded" and env.isolated and env.layout_text == "embedded, python312._pth"
    active = [(s.path, s.kind) for s in env.site_dirs if s.active]
    # the ._pth's order: ../ComfyUI, the stdlib zip (a file: not a folder to read), ".", then site's Lib\site-packages
    assert active == [
        (tmp_path / "ComfyUI_windows_portable" / "ComfyUI", "pth"),
        (b.prefix, "pth"),
        (b.site_packages, "env"),
    ]
    ignored = {s.kind: s.note for s in env.site_dirs if not s.active}
    assert set(ignored) == {"pythonpath"} and "isolated mode" in ignored["pythonpath"]


def test_embedded_healthy_twin_is_clean(tmp_path):
    b = healthy(_comfyui(tmp_path))
    assert _problems(b.prefix, system_root=_system_root(tmp_path)) == []


def test_embedded_torch_from_another_pythons_pip_is_told_as_such(tmp_path):
    b = _comfyui(tmp_path)
    appdata = tmp_path / "AppData" / "Roaming"
    user_site = appdata / "Python" / "Python312" / "site-packages"
    b.pip_torch("2.5.1", site=user_site)  # `pip install torch` with the Python on PATH, which fell back to --user
    b.dist("pip", "24.3.1")  # ComfyUI's build installs pip with get-pip.py
    [f] = run_check(b, "torch_missing", env={"APPDATA": str(appdata)})
    assert variant_of(f) == "other_python"
    assert "installed with another Python's pip" in f.title.render("en")
    assert f.evidence["torch_found_in"] == user_site
    for command in all_commands(f):
        assert command.startswith(f'"{b.prefix / "python.exe"}" -m pip install torch')


def test_embedded_python_cannot_be_shadowed_by_pythonpath_user_site_or_working_directory(tmp_path):
    b = healthy(_comfyui(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    EnvBuilder(elsewhere, os="windows", layout="venv").pip_torch("2.3.0")
    appdata = tmp_path / "AppData" / "Roaming"
    b.pip_torch("2.3.0", site=appdata / "Python" / "Python312" / "site-packages")
    cwd = tmp_path / "work"
    (cwd / "torch").mkdir(parents=True)
    (cwd / "torch" / "__init__.py").write_text("")
    (cwd / "typing.py").write_text("")
    host = {"PYTHONPATH": str(elsewhere / "Lib" / "site-packages"), "APPDATA": str(appdata)}
    assert run_check(b, "shadowing", env=host, cwd=cwd) == []


def test_embedded_without_import_site_never_reads_its_site_packages(tmp_path):
    b = _comfyui(tmp_path)
    b.path_file.write_text("python312.zip\n.\n\n# Uncomment to run site.main() automatically\n#import site\n")
    b.pip_torch("2.5.1")
    [f] = run_check(b, "torch_missing")
    assert variant_of(f) == "site_off"
    [fix] = f.fixes
    assert "import site" in fix.summary.render("en") and str(b.path_file) in fix.summary.render("en")


def test_pointing_at_the_comfyui_folder_finds_its_embedded_python(tmp_path):
    from conda_torchcheck.inventory.locate import resolve_target

    b = _comfyui(tmp_path)
    portable = tmp_path / "ComfyUI_windows_portable"
    assert resolve_target(str(portable), None) == b.prefix
    assert resolve_target(str(portable / "ComfyUI"), None) == b.prefix
    assert resolve_target(str(b.prefix), None) == b.prefix


# --- uv ------------------------------------------------------------------------------------------------------


def _uv_venv(tmp_path: Path) -> EnvBuilder:
    """``uv venv`` 0.5's pyvenv.cfg (its keys and order) on a uv-managed CPython 3.11."""
    b = EnvBuilder(tmp_path / ".venv", layout="venv")
    home = tmp_path / "home" / ".local" / "share" / "uv" / "python" / "cpython-3.11.9-linux-x86_64-gnu" / "bin"
    (b.prefix / "pyvenv.cfg").write_text(
        f"home = {home}\nimplementation = CPython\nuv = 0.5.11\nversion_info = 3.11.9\n"
        "include-system-site-packages = false\nprompt = project\n"
    )
    return b


def test_uv_venv_healthy_twin_is_clean(tmp_path):
    b = healthy(_uv_venv(tmp_path))
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.layout == "venv" and env.manager == "uv" and env.layout_text == "venv, uv"
    assert _problems(b.prefix) == []


def test_uv_venv_fixes_say_uv_pip_with_its_python(tmp_path):
    b = _uv_venv(tmp_path)
    [f] = run_check(b, "torch_missing")
    assert all_commands(f)
    for command in all_commands(f):
        assert command.startswith("uv pip install torch") and command.endswith(f'--python "{b.prefix}/bin/python"')


def _uv_python(home: Path) -> EnvBuilder:
    """A uv-managed python-build-standalone CPython as ``uv python install 3.12`` unpacks it."""
    b = EnvBuilder(
        home / ".local" / "share" / "uv" / "python" / "cpython-3.12.8-linux-x86_64-gnu",
        layout="system",
        python="3.12.8",
    )
    b.write(
        "lib/python3.12/EXTERNALLY-MANAGED", "[externally-managed]\nError=This Python installation is managed by uv\n"
    )
    return b


def test_uv_managed_python_is_named_and_gets_a_venv_made_from_it(tmp_path):
    b = _uv_python(tmp_path / "home")
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.layout == "system" and env.manager == "uv"
    [f] = run_check(b, "torch_missing")
    python = f'"{b.prefix}/bin/python"'
    commands = all_commands(f)
    assert commands[0] == f"uv venv --python {python} .venv"
    assert commands[1].startswith("uv pip install torch") and commands[1].endswith("--python .venv")
    assert "EXTERNALLY-MANAGED" in f.fixes[0].summary.render("en")


def test_uv_managed_python_healthy_twin_is_clean(tmp_path):
    assert _problems(healthy(_uv_python(tmp_path / "home")).prefix) == []


def test_all_envs_finds_uv_and_pyenv_pythons(tmp_path):
    from conda_torchcheck.inventory.locate import python_installs

    home = tmp_path / "home"
    uv = _uv_python(home)
    pyenv = _pyenv(home)
    # uv's minor-version link is the same installation
    (uv.prefix.parent / "cpython-3.12-linux-x86_64-gnu").symlink_to(uv.prefix.name)
    found = python_installs({}, home)
    assert [p for p, _ in found] == [uv.prefix, pyenv.prefix]


# --- pyenv ---------------------------------------------------------------------------------------------------


def _pyenv(home: Path) -> EnvBuilder:
    root = home / ".pyenv"
    (root / "libexec").mkdir(parents=True, exist_ok=True)
    (root / "libexec" / "pyenv").write_text("#!/usr/bin/env bash\n")
    return EnvBuilder(root / "versions" / "3.11.9", layout="system")


def test_pyenv_version_is_named_healthy_twin_clean_and_fixes_use_its_python(tmp_path):
    b = _pyenv(tmp_path / "home")
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.manager == "pyenv" and env.layout_text == "system, pyenv"
    [f] = run_check(b, "torch_missing")
    assert all(c.startswith(f'"{b.prefix}/bin/python" -m pip install torch') for c in all_commands(f))
    assert _problems(healthy(b).prefix) == []


# --- Microsoft Store Python -----------------------------------------------------------------------------------

STORE_FOLDER = "PythonSoftwareFoundation.Python.3.12_3.12.2032.0_x64__qbz5n2kfra8p0"
STORE_FAMILY = "PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0"


def _store(tmp_path: Path) -> EnvBuilder:
    b = EnvBuilder(
        tmp_path / "Program Files" / "WindowsApps" / STORE_FOLDER, os="windows", layout="store", python="3.12.7"
    )
    b.write(
        "AppxManifest.xml",
        '<?xml version="1.0" encoding="utf-8"?>\n<Package xmlns="http://schemas.microsoft.com/appx/manifest/foundation/windows10">\n'
        '  <Identity Name="PythonSoftwareFoundation.Python.3.12" Version="3.12.2032.0" '
        'Publisher="CN=4975D53F-AA7E-49A5-8B49-EA4FDC1BB66B" ProcessorArchitecture="x64" />\n</Package>\n',
    )
    return b


def test_store_python_user_site_is_its_packages_local_cache(tmp_path):
    b = _store(tmp_path)
    local = tmp_path / "AppData" / "Local"
    env, _ = load_environment(b.prefix, use_live_host=False, host_overrides={"LOCALAPPDATA": str(local)})
    assert env.layout == "store" and env.store_family == STORE_FAMILY
    [user] = [s.path for s in env.site_dirs if s.kind == "user"]
    assert user == local / "Packages" / STORE_FAMILY / "LocalCache" / "local-packages" / "Python312" / "site-packages"


def test_store_python_healthy_twin_is_clean_with_torch_in_its_user_site(tmp_path):
    b = _store(tmp_path)
    local = tmp_path / "AppData" / "Local"
    # pip defaults to the user site there: the install folder is read-only
    healthy_site = local / "Packages" / STORE_FAMILY / "LocalCache" / "local-packages" / "Python312" / "site-packages"
    b.pip_torch("2.5.1", site=healthy_site)
    b.dist("torchvision", "0.20.1", requires=["torch==2.5.1"], site=healthy_site)
    env, host = load_environment(
        b.prefix, use_live_host=False, host_overrides={"LOCALAPPDATA": str(local)}, system_root=_system_root(tmp_path)
    )
    report = check_environment(env, host)
    assert report.torch.installed
    assert [f.id for f in report.findings if f.severity.value in ("error", "warning")] == []


@pytest.mark.parametrize("layout", ["store"])
def test_store_python_fixes_use_its_app_execution_alias(tmp_path, layout):
    b = _store(tmp_path)
    [f] = run_check(b, "torch_missing")
    for command in all_commands(f):
        assert command.startswith('"%LOCALAPPDATA%\\Microsoft\\WindowsApps\\python3.12.exe" -m pip install torch')


def test_store_python_install_warns_of_the_long_path_limit_first(tmp_path):
    b = _store(tmp_path)
    local = "C:\\Users\\alexandra\\AppData\\Local"
    [f] = run_check(b, "torch_missing", env={"LOCALAPPDATA": local})
    first = f.fixes[0]
    assert first.needs_admin and first.commands[0].startswith(
        "reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem"
    )
    assert f.evidence["longest_torch_path"] >= 260 and "local-packages" in f.evidence["install_folder"]
    assert all_commands(f)[1].startswith('"%LOCALAPPDATA%\\Microsoft\\WindowsApps\\python3.12.exe" -m pip install')


def test_a_short_install_folder_gets_no_long_path_advice(tmp_path):
    b = _comfyui(tmp_path)
    [f] = run_check(b, "torch_missing")
    assert all(fix.kind != "system" for fix in f.fixes)


# --- Docker / NGC and Jetson: Debian's Python, NVIDIA's own torch builds ------------------------------------------

NGC_TORCH = "2.6.0a0+ecf3bae40a.nv25.02"  # nvcr.io/nvidia/pytorch:25.02-py3 (NVIDIA's PyTorch Release Notes)
JETPACK_TORCH = "2.5.0a0+872d972e41.nv24.08"  # JetPack 6.1's wheel (NVIDIA's "Installing PyTorch for Jetson")


def _debian_python(root: Path, *, python: str, arch: str = "x86_64") -> tuple[EnvBuilder, Path]:
    """/usr of a Debian or Ubuntu image: no site-packages, pip's packages in /usr/local/lib/python3.X/dist-packages
    (Debian Python Policy 2.5), apt's in /usr/lib/python3/dist-packages."""
    b = EnvBuilder(root / "usr", layout="system", python=python, arch=arch)
    b.site_packages.rmdir()
    mm = ".".join(python.split(".")[:2])
    (b.prefix / "lib" / "python3" / "dist-packages").mkdir(parents=True)
    return b, b.prefix / "local" / "lib" / f"python{mm}" / "dist-packages"


@pytest.mark.parametrize(
    ("torch", "vision", "python", "arch"),
    [(NGC_TORCH, "0.21.0a0", "3.12.3", "x86_64"), (JETPACK_TORCH, "0.20.0a0", "3.10.12", "aarch64")],
    ids=["ngc", "jetson"],
)
def test_nvidia_build_in_dist_packages_is_found_and_its_healthy_twin_clean(tmp_path, torch, vision, python, arch):
    b, dist_packages = _debian_python(tmp_path, python=python, arch=arch)
    b.pip_torch(torch, cuda="12.8", site=dist_packages)
    b.dist("torchvision", vision, requires=["torch"], site=dist_packages)
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert [s.path for s in env.site_dirs if s.kind == "env"] == [dist_packages, b.prefix / "lib/python3/dist-packages"]
    assert _problems(b.prefix) == []


@pytest.mark.parametrize(
    ("torch", "python", "want"), [(NGC_TORCH, "3.12.3", "v0.21.0"), (JETPACK_TORCH, "3.10.12", "v0.20.0")]
)
def test_pypi_torchvision_beside_nvidias_torch_is_built_against_it_not_reinstalled(tmp_path, torch, python, want):
    b, dist_packages = _debian_python(tmp_path, python=python)
    b.pip_torch(torch, cuda="12.8", site=dist_packages)
    b.dist("torchvision", "0.22.0", requires=["torch==2.7.0"], site=dist_packages)  # `pip install torchvision`
    py = f'"{b.prefix}/bin/python"'
    [mismatch] = [f for f in run_check(b, "versions") if f.id == "TC104"]
    assert all_commands(mismatch) == [
        f'{py} -m pip install --no-build-isolation --no-deps "git+https://github.com/pytorch/vision.git@{want}"'
    ]
    [lacks] = run_check(b, "requirements")
    assert all_commands(lacks) == [f"{py} -m pip uninstall -y torchvision"]
    assert "NVIDIA's own build" in lacks.fixes[0].summary.render("en")


def test_pyenv_win_version_is_named(tmp_path):
    b = EnvBuilder(tmp_path / ".pyenv" / "pyenv-win" / "versions" / "3.11.9", os="windows", layout="system")
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.layout_text == "system, pyenv-win"
    [f] = run_check(b, "torch_missing")
    assert all(c.startswith(f'"{b.prefix / "python.exe"}" -m pip install torch') for c in all_commands(f))


# --- conda's base env ------------------------------------------------------------------------------------------


def _conda_base(home: Path) -> EnvBuilder:
    base = EnvBuilder(home / "miniforge3", layout="conda")
    (base.prefix / "condabin").mkdir()
    base.conda_record("conda", "25.1.1", "py311h38be061_0")
    return base


def test_conda_base_without_torch_is_clean_and_torch_goes_into_an_env_of_its_own(tmp_path):
    b = _conda_base(tmp_path / "home")
    assert _problems(b.prefix) == []
    [f] = run_check(b, "torch_missing")
    assert all_commands(f)[0].startswith("conda create -n torch -c conda-forge python=3.11")


def test_conda_base_with_torch_is_named_with_a_new_env_as_the_fix(tmp_path):
    b = healthy(_conda_base(tmp_path / "home"))
    [f] = [f for f in run_check(b, "base_env") if f.id == "TC106"]
    assert all_commands(f)[:2] == [
        "conda create -n torch -c conda-forge python=3.11 pytorch torchvision",
        "conda activate torch",
    ]


def test_embedded_python_without_pip_gets_pip_first(tmp_path):
    b = _comfyui(tmp_path)  # python.org's embeddable package as unpacked: no pip
    [f] = run_check(b, "torch_missing")
    py = f'"{b.prefix / "python.exe"}"'
    assert list(f.fixes[0].commands) == [
        "curl -L -o get-pip.py https://bootstrap.pypa.io/get-pip.py",
        f"{py} get-pip.py",
    ]
    assert all_commands(f)[2].startswith(f"{py} -m pip install torch")


def test_all_envs_with_a_comfyui_folder_checks_its_embedded_python(tmp_path, capsys):
    import json

    from conda_torchcheck.cli.main import main

    b = healthy(_comfyui(tmp_path))
    main(["check", "--all-envs", "-p", str(tmp_path / "ComfyUI_windows_portable"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["envs"][0]["prefix"] == str(b.prefix) and doc["envs"][0]["found_in"] == ["-p"]
    assert doc["envs"][0]["report"]["target"]["layout"] == "embedded"


# --- Google Colab -----------------------------------------------------------------------------------------------


def _colab(tmp_path: Path) -> tuple[EnvBuilder, Path]:
    """Colab's runtime: Ubuntu's Python 3.11, its packages (google-colab, torch +cu124) in dist-packages."""
    b, dist_packages = _debian_python(tmp_path, python="3.11.13")
    b.dist("google-colab", "1.0.0", site=dist_packages)
    b.pip_torch("2.6.0+cu124", cuda="12.4", site=dist_packages)
    return b, dist_packages


def test_colab_healthy_twin_is_clean_and_named(tmp_path):
    b, dist_packages = _colab(tmp_path)
    b.dist("torchvision", "0.21.0+cu124", requires=["torch==2.6.0"], site=dist_packages)
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.layout_text == "system, colab"
    assert _problems(b.prefix) == []


def test_colab_fixes_are_notebook_cells(tmp_path):
    b, dist_packages = _colab(tmp_path)
    b.dist("torchvision", "0.22.0", requires=["torch==2.7.0"], site=dist_packages)  # `!pip install -U torchvision`
    [mismatch] = [f for f in run_check(b, "versions") if f.id == "TC104"]
    [command] = all_commands(mismatch)
    assert command.startswith('%pip install torch==2.6.0 "torchvision==0.21.*"')
    assert command.endswith("--index-url https://download.pytorch.org/whl/cu124")


def test_embedded_torch_in_the_site_packages_of_the_python_on_path_is_told_as_such(tmp_path):
    b = _comfyui(tmp_path)
    b.dist("pip", "24.3.1")
    other = tmp_path / "Programs" / "Python" / "Python312"
    python_org = EnvBuilder(other, os="windows", layout="system", python="3.12.7")
    python_org.pip_torch("2.5.1")  # `pip install torch` typed in the ComfyUI folder: python.org's pip ran
    path = f"{other / 'Scripts'};{other};C:\\Windows\\System32"
    [f] = run_check(b, "torch_missing", env={"PATH": path})
    assert variant_of(f) == "other_python"
    assert f.evidence["torch_found_in"] == python_org.site_packages
    assert str(other / "python.exe") in f.explanation.render("en")
    assert all(c.startswith(f'"{b.prefix / "python.exe"}" -m pip install torch') for c in all_commands(f))


def test_store_python_examined_from_wsl_finds_its_users_local_cache_without_localappdata(tmp_path):
    """From WSL (/mnt/c/...) this process has no LOCALAPPDATA: the one user folder of the drive that holds the
    Store package's LocalCache is its user base; with two such users, none is guessed."""
    drive = tmp_path / "mnt" / "c"
    b = EnvBuilder(
        drive / "Program Files" / "WindowsApps" / STORE_FOLDER, os="windows", layout="store", python="3.12.7"
    )
    cache = drive / "Users" / "me" / "AppData" / "Local" / "Packages" / STORE_FAMILY / "LocalCache"
    site = cache / "local-packages" / "Python312" / "site-packages"
    b.pip_torch("2.5.1", site=site)
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert env.layout == "store"
    assert [s.path for s in env.site_dirs if s.kind == "user"] == [site]
    assert env.distributions and env.distributions[0].name == "torch"
    (drive / "Users" / "you" / "AppData" / "Local" / "Packages" / STORE_FAMILY / "LocalCache" / "local-packages").mkdir(
        parents=True
    )
    env, _ = load_environment(b.prefix, use_live_host=False)
    assert [s for s in env.site_dirs if s.kind == "user"] == []


# --- WSL 2: the Windows driver's CUDA bridge in /usr/lib/wsl/lib ------------------------------------------------


def _wsl2_root(tmp_path: Path, *, linux_driver: bool = False) -> Path:
    """The machine's root as WSL 2 leaves it (tests/checks/test_linux_wsl.py's machine: WSL2-Linux-Kernel's release
    string, the driver's libcuda in /usr/lib/wsl/lib), optionally with an apt-installed Linux driver beside it."""
    from tests.checks.test_linux_wsl import WSL2, machine

    root = tmp_path / "machine"
    root.mkdir()
    machine(root, WSL2, linux_driver=linux_driver, owner="libnvidia-compute-560")
    return root


def test_wsl2_cuda_venv_healthy_twin_is_clean_and_its_driver_is_the_windows_one(tmp_path):
    b = EnvBuilder(tmp_path / "home" / "me" / "venv", layout="venv")
    b.pip_torch("2.5.1", cuda="12.4")
    b.dist("torchvision", "0.20.1", requires=["torch==2.5.1"])
    root = _wsl2_root(tmp_path)
    env, host = load_environment(b.prefix, use_live_host=False, system_root=root)
    report = check_environment(env, host)
    ids = [f.id for f in report.findings]
    assert "TC502" not in ids and "TC505" not in ids  # no "no driver": the Windows driver is the driver
    assert [f.id for f in report.findings if f.severity.value in ("error", "warning")] == []


def test_wsl2_with_a_linux_driver_installed_is_named_with_the_apt_packages_to_remove(tmp_path):
    b = EnvBuilder(tmp_path / "home" / "me" / "venv", layout="venv")
    b.pip_torch("2.5.1", cuda="12.4")
    root = _wsl2_root(tmp_path, linux_driver=True)
    env, host = load_environment(b.prefix, use_live_host=False, system_root=root)
    [f] = [f for f in check_environment(env, host).findings if f.id == "TC505"]
    assert variant_of(f) == "linux_driver" and f.severity.value == "warning"
    assert f.fixes[0].commands == ("sudo apt-get remove --purge libnvidia-compute-560", "sudo ldconfig")


def test_wsl2_is_named_in_the_markdown_report(tmp_path):
    from conda_torchcheck.render.markdown import render_markdown

    b = EnvBuilder(tmp_path / "home" / "me" / "venv", layout="venv")
    b.pip_torch("2.5.1", cuda="12.4")
    env, host = load_environment(b.prefix, use_live_host=False, system_root=_wsl2_root(tmp_path))
    assert "| OS | Linux (WSL 2) (linux-64), examined from another machine or OS |" in render_markdown(
        check_environment(env, host)
    )
