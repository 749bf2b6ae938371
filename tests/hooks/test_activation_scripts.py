"""The generated activation scripts, run by real shells with hostile prefixes.

POSIX sh under bash, dash and zsh, and the fish script under fish, each where installed (skipped with the reason
otherwise). The cmd script runs under wine's cmd when wine is installed (an independent but imperfect cmd: it
drops ``%`` from expanded values, which real cmd keeps, so the wine prefix has no ``%``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conda_torchcheck.hooks.activation import render
from conda_torchcheck.hooks.activation.facts import ActivationFacts

HOSTILE = "a b'c\"d$e`id`f%g&h;i中文[j]*k\\l"
POSIX_SHELLS = ("bash", "dash", "zsh")
SONAMES = ("libcublas.so.12", "libnccl.so.2", "libcudnn.so.9", "libnvJitLink.so.12")
OWN = "lib/python3.11/site-packages/nvidia/cublas/lib"


def facts(**kw) -> ActivationFacts:
    base = dict(
        os="linux",
        torch="2.5.1 (pip, cuda)",
        python_version="3.11.9",
        dll_search_mode="active",
        sonames=SONAMES,
        own_lib_dirs=(OWN,),
    )
    base.update(kw)
    return ActivationFacts(**base)


class PosixEnv:
    """A hostile prefix with the scripts installed, plus folders to put on PATH / LD_LIBRARY_PATH."""

    def __init__(self, root: Path, name: str = HOSTILE) -> None:
        self.root = root
        self.prefix = root / name
        for sub in ("bin", "conda-meta", "etc/conda/activate.d", OWN):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        (self.prefix / OWN / "libcublas.so.12").write_bytes(b"")
        self.other = root / "other env $x"
        (self.other / "bin").mkdir(parents=True)
        (self.other / "conda-meta").mkdir()
        self.pyenv = root / "shims `x`"
        self.pyenv.mkdir()
        py = self.pyenv / "python3"  # python3 alone counts too (`python3` would start another interpreter)
        py.write_text("#!/bin/sh\n")
        py.chmod(0o755)
        self.plain = root / "plain (x)"  # a folder whose `python` is not executable: not a python
        self.plain.mkdir()
        (self.plain / "python").write_text("not executable\n")
        self.cuda = root / "cuda 12.1; lib64"
        self.cuda.mkdir()
        for name in ("libcublas.so.12", "libnccl.so.2", "libcudnn.so.9", "libnvJitLink.so.12"):
            (self.cuda / name).write_bytes(b"")
        self.sh = self.prefix / "etc/conda/activate.d" / render.filename(".sh")
        self.sh.write_bytes(render.render(".sh", facts()))
        self.fish = self.prefix / "etc/conda/activate.d" / render.filename(".fish")
        self.fish.write_bytes(render.render(".fish", facts()))

    def env(self, path: str, **extra: str) -> dict[str, str]:
        env = {"PATH": path, "CONDA_PREFIX": str(self.prefix), "LC_ALL": "C.UTF-8", "HOME": str(self.root)}
        env.update(extra)
        return env


def shell_or_skip(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed on this machine")
    return found


def run_sh(shell: str, env: PosixEnv, environ: dict[str, str], cwd: Path | None = None, pre: str = "set -eu; "):
    dump = env.root / "variables.txt"
    code = pre + '. "$1"; echo "after rc=$?"; set > "$2"'
    result = subprocess.run(
        [shell_or_skip(shell), "-c", code, "sh", str(env.sh), str(dump)],
        env=environ,
        capture_output=True,
        cwd=cwd or env.root,
        timeout=60,
    )
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, err
    assert out.splitlines() == ["after rc=0"], out  # sourced under set -eu and returned 0
    leaked = [v for v in dump.read_text(errors="replace").splitlines() if v.startswith("_ctc_")]
    assert not leaked, f"variables leaked into the shell: {leaked}"
    return [line for line in err.splitlines() if line]


@pytest.fixture
def penv(tmp_path) -> PosixEnv:
    return PosixEnv(tmp_path)


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_clean_activation_prints_nothing(shell, penv):
    path = f"{penv.plain}:{penv.prefix}/bin:/usr/bin:/bin"
    lines = run_sh(shell, penv, penv.env(path, LD_LIBRARY_PATH=str(penv.prefix / OWN)))
    assert lines == []


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_other_env_and_foreign_python_before_this_env(shell, penv):
    path = f"{penv.other}/bin:{penv.pyenv}:{penv.prefix}/bin:/usr/bin"
    lines = run_sh(shell, penv, penv.env(path))
    assert len(lines) == 2
    assert lines[0].startswith("conda-torchcheck TC801: PATH: ") and f"{penv.other}/bin (another conda" in lines[0]
    assert f"{penv.pyenv} comes before" in lines[1] and "own python" in lines[1]


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_env_missing_from_path_in_chinese(shell, penv):
    lines = run_sh(shell, penv, penv.env("/usr/bin:/bin", CONDA_TORCHCHECK_LANG="zh_CN"))
    assert lines == [
        f"conda-torchcheck TC801: PATH：本环境的文件夹 {penv.prefix}/bin 不在 PATH 中；是否有别的脚本改动了激活过程？"
    ]


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_ld_library_path_shadowing(shell, penv):
    ld = f"{penv.prefix / OWN}:{penv.cuda}/:/nonexistent"
    lines = run_sh(shell, penv, penv.env(f"{penv.prefix}/bin:/usr/bin", LD_LIBRARY_PATH=ld))
    assert len(lines) == 1
    assert lines[0].startswith(f"conda-torchcheck TC804: LD_LIBRARY_PATH: {penv.cuda} holds libcublas.so.12, ")
    assert "libcudnn.so.9, ..." in lines[0]  # at most three names, then "..."


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_empty_ld_library_path_entry_means_the_current_folder(shell, penv):
    lines = run_sh(shell, penv, penv.env(f"{penv.prefix}/bin", LD_LIBRARY_PATH=":/nonexistent"), cwd=penv.cuda)
    assert len(lines) == 1 and f"{penv.cuda} holds" in lines[0]


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_without_conda_prefix_does_nothing(shell, penv):
    environ = penv.env("/usr/bin")
    del environ["CONDA_PREFIX"]
    assert run_sh(shell, penv, environ) == []


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_prefix_with_a_colon_skips_the_path_check(shell, tmp_path):
    env = PosixEnv(tmp_path, name="with:colon")
    assert run_sh(shell, env, env.env("/usr/bin")) == []


@pytest.mark.parametrize("shell", POSIX_SHELLS)
def test_posix_script_is_safe_under_set_eu_with_nothing_optional_set(shell, penv):
    # `set -u` with every optional variable unset, and `set -e`: activation must not abort
    environ = {"PATH": f"{penv.prefix}/bin", "CONDA_PREFIX": str(penv.prefix)}
    assert run_sh(shell, penv, environ) == []


def test_windows_posix_script_reports_cwd_dlls_and_dll_search_variable(tmp_path):
    prefix = tmp_path / HOSTILE
    prefix.mkdir()
    script = tmp_path / "s.sh"
    script.write_bytes(render.render(".sh", facts(os="windows", dll_names=("cudnn64_9.dll",), sonames=())))
    here = tmp_path / "here"
    here.mkdir()
    (here / "cudnn64_9.dll").write_bytes(b"")
    environ = {
        "PATH": "/usr/bin:/bin",
        "CONDA_PREFIX": str(prefix),
        "OS": "Windows_NT",
        "CONDA_DLL_SEARCH_MODIFICATION_ENABLE": "1",
        "LC_ALL": "C.UTF-8",
    }
    result = subprocess.run(
        [shell_or_skip("bash"), "-c", 'set -eu; . "$1"', "sh", str(script)], env=environ, cwd=here, capture_output=True
    )
    lines = result.stderr.decode().splitlines()
    assert result.returncode == 0
    assert [line.split(":")[0] for line in lines] == ["conda-torchcheck TC802", "conda-torchcheck TC803"]
    assert "cudnn64_9.dll" in lines[0] and "Python 3.11.9" in lines[1]


# --- fish ----------------------------------------------------------------------------------------------------


def run_fish(env: PosixEnv, environ: dict[str, str], cwd: Path | None = None) -> list[str]:
    code = 'source $argv[1]; echo "after rc=$status"; set -n | string match -e _ctc_; true'
    result = subprocess.run(
        [shell_or_skip("fish"), "--no-config", "-c", code, str(env.fish)],
        env=environ,
        capture_output=True,
        cwd=cwd or env.root,
        timeout=60,
    )
    out = result.stdout.decode().splitlines()
    assert result.returncode == 0 and out == ["after rc=0"], (out, result.stderr.decode())
    return [line for line in result.stderr.decode().splitlines() if line]


def test_fish_clean_and_problems(penv):
    clean = penv.env(f"{penv.plain}:{penv.prefix}/bin:/usr/bin", LD_LIBRARY_PATH=str(penv.prefix / OWN))
    assert run_fish(penv, clean) == []
    lines = run_fish(
        penv,
        penv.env(f"{penv.other}/bin:{penv.pyenv}:{penv.prefix}/bin:/usr/bin", LD_LIBRARY_PATH=f"{penv.cuda}"),
    )
    assert [line.split(":")[0] for line in lines] == ["conda-torchcheck TC801"] * 2 + ["conda-torchcheck TC804"]
    assert f"{penv.other}/bin (another conda" in lines[0] and f"{penv.pyenv} comes before" in lines[1]
    assert f"{penv.cuda} holds libcublas.so.12, libnccl.so.2, libcudnn.so.9, ..." in lines[2]


def test_fish_missing_in_chinese_and_no_prefix(penv):
    lines = run_fish(penv, penv.env("/usr/bin", CONDA_TORCHCHECK_LANG="zh_CN"))
    assert lines == [
        f"conda-torchcheck TC801: PATH：本环境的文件夹 {penv.prefix}/bin 不在 PATH 中；是否有别的脚本改动了激活过程？"
    ]
    environ = penv.env("/usr/bin")
    del environ["CONDA_PREFIX"]
    assert run_fish(penv, environ) == []


# --- cmd (wine) ----------------------------------------------------------------------------------------------

WINE_PREFIX = "a b'c$e`fg&h(中文)!k=,x"
RUNNER = r"""@echo off
set "CONDA_PREFIX=%CTC_PREFIX%"
set "PATH=%CTC_OWN%"
call "%CTC_SCRIPT%"
>&2 echo ---clean rc=%ERRORLEVEL%
set "PATH=%CTC_OTHER%;%CTC_STRAY%;%CTC_OWN%"
call "%CTC_SCRIPT%"
>&2 echo ---before rc=%ERRORLEVEL%
set "PATH=%CTC_STRAY%"
call "%CTC_SCRIPT%"
>&2 echo ---missing rc=%ERRORLEVEL%
set "PATH=%CTC_OWN%"
cd /d "%CTC_CWD%"
set "CONDA_DLL_SEARCH_MODIFICATION_ENABLE=1"
call "%CTC_SCRIPT%"
>&2 echo ---cwd rc=%ERRORLEVEL%
set "CONDA_DLL_SEARCH_MODIFICATION_ENABLE=0"
cd /d "%CTC_SEMI%"
set "CONDA_PREFIX=%CTC_SEMI%"
set "PATH=%CTC_STRAY%"
call "%CTC_SCRIPT%"
>&2 echo ---semicolon rc=%ERRORLEVEL%
if defined ctc_p >&2 echo LEAKED
"""


def _win(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


@pytest.mark.wine
@pytest.mark.slow
def test_cmd_script_under_wine(tmp_path, wine_prefix):
    wine = shell_or_skip("wine")
    prefix = tmp_path / WINE_PREFIX
    for sub in ("Library/bin", "Scripts", "conda-meta"):
        (prefix / sub).mkdir(parents=True)
    other = tmp_path / "other env"
    (other / "Library/bin").mkdir(parents=True)
    (other / "conda-meta").mkdir()
    stray = tmp_path / "stray & dlls (x)"
    stray.mkdir()
    (stray / "cudnn64_9.dll").write_bytes(b"")
    cwd = tmp_path / "work dir"
    cwd.mkdir()
    (cwd / "libiomp5md.dll").write_bytes(b"")
    semi = tmp_path / "semi;colon"
    semi.mkdir()
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    script = scripts / render.filename(".bat")
    script.write_bytes(render.render(".bat", facts(os="windows", dll_names=("cudnn64_9.dll", "libiomp5md.dll"))))
    runner = scripts / "runner.bat"
    runner.write_bytes(RUNNER.replace("\n", "\r\n").encode())
    own = ";".join(_win(p) for p in (prefix, prefix / "Library/bin", prefix / "Scripts"))
    environ = dict(
        os.environ,
        WINEDEBUG="-all",
        WINEPREFIX=str(wine_prefix),
        CTC_PREFIX=_win(prefix),
        CTC_OWN=own,
        CTC_OTHER=_win(other / "Library/bin"),
        CTC_STRAY=_win(stray),
        CTC_CWD=_win(cwd),
        CTC_SEMI=_win(semi),
        CTC_SCRIPT=_win(script),
    )
    environ.pop("CONDA_DLL_SEARCH_MODIFICATION_ENABLE", None)
    result = subprocess.run([wine, "cmd", "/c", _win(runner)], env=environ, capture_output=True, timeout=300)
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in result.stderr.decode("utf-8", "replace").splitlines():
        if "---" in line:  # wine may put terminal escapes before the first line
            name, rc = line[line.index("---") + 3 :].split(" rc=")
            assert rc.strip() == "0", f"{name}: the script must exit 0 (a failure aborts conda's activation)"
            sections[name] = current
            current = []
        elif line.strip():
            current.append(line)
    assert "LEAKED" not in result.stderr.decode("utf-8", "replace")
    assert sections["clean"] == []
    before = sections["before"]
    assert len(before) == 2
    assert before[0].startswith("conda-torchcheck TC801: PATH: ") and "other env\\Library\\bin (another" in before[0]
    assert "stray & dlls (x) comes before" in before[1] and "holds cudnn64_9.dll" in before[1]
    missing = sections["missing"]  # this env not on PATH at all: one line, no verdict on the other folders
    assert len(missing) == 1 and "is not on PATH" in missing[0] and "!k=,x\\Library\\bin" in missing[0]
    cwd_lines = sections["cwd"]
    assert [line.split(":")[0] for line in cwd_lines] == ["conda-torchcheck TC802", "conda-torchcheck TC803"]
    assert "work dir holds libiomp5md.dll" in cwd_lines[0]
    # a prefix with a semicolon cannot be one PATH entry: the PATH check is skipped, not misreported
    assert sections["semicolon"] == []
