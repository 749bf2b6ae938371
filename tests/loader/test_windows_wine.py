"""Oracle tier: the model's verdict against wine's real loader, for the cases wine reproduces faithfully.

Skipped unless ``wine`` is installed (``apt-get install --no-install-recommends wine wine64``). A fresh wine prefix
is created once per session in a temporary folder (about 15 s and 700 MB); ``oracle.exe`` (tests/fixtures/pe/src/
oracle.c, prebuilt) calls ``AddDllDirectory`` for each folder and then ``LoadLibraryExW(dll, NULL, flags)`` or
``LoadLibraryW``. Wine differs from Windows for missing exports (it loads and warns) and for a wrong-architecture
dependency (126 with ``c000007b`` instead of 193): those cases are compared with Windows' documented behaviour in
test_windows.py, not here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conda_torchcheck.loader import windows
from conda_torchcheck.loader.graph import SearchPlace
from tests.loader import windows_layouts as wl

pytestmark = [
    pytest.mark.wine,
    pytest.mark.skipif(shutil.which("wine") is None, reason="wine is not installed (apt-get install wine wine64)"),
]

ORACLE = wl.fixture("oracle/oracle.exe")


class Wine:
    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        self.env = dict(
            os.environ,
            WINEPREFIX=str(prefix),
            WINEDEBUG="-all,err+module",
            WINEDLLOVERRIDES="mscoree,mshtml=",
        )

    def run(self, args: list[str], *, overrides: str = "", timeout: float = 120) -> tuple[str, str]:
        env = dict(self.env)
        if overrides:
            env["WINEDLLOVERRIDES"] = "mscoree,mshtml=;" + overrides
        log = self.prefix / "run.log"
        # wine's server inherits our pipes: write to files and read them afterwards, stdin from /dev/null
        with open(log, "w") as out, open(os.devnull) as devnull:
            subprocess.run(
                ["wine", *args], stdin=devnull, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout
            )
        text = log.read_text(errors="replace")
        verdict = next((line.strip() for line in text.splitlines() if line.startswith(("OK", "FAIL"))), "")
        return verdict, text

    @staticmethod
    def path(p: Path) -> str:
        return "Z:" + str(p).replace("/", "\\")


@pytest.fixture(scope="session")
def wine(wine_prefix):
    w = Wine(wine_prefix)
    with open(os.devnull) as devnull, open(wine_prefix.parent / "server.log", "w") as log:
        # a persistent server turns each run from ~2.5 s into ~0.1 s
        subprocess.Popen(["wineserver", "-p", "60"], stdin=devnull, stdout=log, stderr=subprocess.STDOUT, env=w.env)
    yield w
    with open(os.devnull) as devnull:
        subprocess.run(["wineserver", "-k"], stdin=devnull, env=w.env, capture_output=True, timeout=60)


def model_verdict(app: Path, dll: Path, *, flags: str, dirs: list[Path], system: Path, path_dirs: list[Path] = ()):
    """What the model says for oracle.exe in ``app`` loading ``dll``: 'OK' or 'FAIL <code>'."""
    from conda_torchcheck.inventory import fs

    fs.clear_cache()  # the test changes folders between runs; the model caches listings per run
    model = windows.ProcessModel(
        arch="x86_64",
        python_exe=None,
        app_dir=app,
        app_dir_shown=str(app),
        python_dll=None,
        python_tag=None,
        exec_prefix=app,
        base_exec_prefix=app,
        system_dir=system,
        windows_dir=system.parent,
        system_known=True,
        system_source="option",
        known_dlls=windows.system_tables().known_dlls,
        path_entries=[(str(p), p) for p in path_dirs],
        cwd=None,
        cwd_shown=None,
    )
    model.torch_dirs = [windows.Place(windows.STEP_USER_DIR, d, str(d), "AddDllDirectory") for d in dirs]
    graph = windows.WindowsLoadGraph(platform="windows", process=model)
    sim = windows._Simulation(model, graph, check_all_symbols=True)
    sim.loaded["kernel32.dll"] = (system / "kernel32.dll", SearchPlace("known-dll"))
    if flags == "0x1100":
        error = sim.load_root(dll, "file", 0, fallback_prefix=None).error
    else:  # plain LoadLibraryW: the classic order
        attempt = windows._Attempt(model.classic_order(), flags, record=True)
        sim.load(dll, attempt, [dll])
        error = attempt.error
    return "OK" if error is None else f"FAIL {error}"


@pytest.fixture
def stage(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ORACLE, app / "oracle.exe")
    return app


def system32_of(wine: Wine) -> Path:
    return wine.prefix / "drive_c" / "windows" / "system32"


def both(wine, stage, dll: Path, *, flags="0x1100", dirs=(), path_dirs=(), overrides="", system=None):
    args = [str(stage / "oracle.exe"), "plain" if flags == "plain" else flags, Wine.path(dll), *map(Wine.path, dirs)]
    env_path = ""
    if path_dirs:
        env_path = ";".join(Wine.path(p) for p in path_dirs)
        wine.env["WINEPATH"] = env_path
    try:
        verdict, log = wine.run(args, overrides=overrides)
    finally:
        wine.env.pop("WINEPATH", None)
    model = model_verdict(
        stage, dll, flags=flags, dirs=list(dirs), system=system or system32_of(wine), path_dirs=list(path_dirs)
    )
    return verdict, model, log


def put(folder: Path, fixture: str, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (name or Path(fixture).name)
    shutil.copy(wl.fixture(fixture), target)
    return target


def test_dependency_beside_the_dll(wine, stage, tmp_path):
    a = put(tmp_path / "lib", "x64/liba.dll")
    put(tmp_path / "lib", "x64/libb.dll")
    verdict, model, _ = both(wine, stage, a)
    assert verdict == model == "OK"


def test_missing_dependency(wine, stage, tmp_path):
    a = put(tmp_path / "lib", "x64/liba.dll")
    verdict, model, log = both(wine, stage, a)
    assert verdict == model == "FAIL 126"
    assert "libb.dll" in log


def test_path_is_ignored_by_0x1100_but_used_by_loadlibraryw(wine, stage, tmp_path):
    a = put(tmp_path / "lib", "x64/liba.dll")
    elsewhere = tmp_path / "onpath"
    put(elsewhere, "x64/libb.dll")
    verdict, model, _ = both(wine, stage, a, path_dirs=[elsewhere])
    assert verdict == model == "FAIL 126"
    verdict, model, _ = both(wine, stage, a, flags="plain", path_dirs=[elsewhere])
    assert verdict == model == "OK"


def test_added_directory_is_searched_by_0x1100(wine, stage, tmp_path):
    a = put(tmp_path / "lib", "x64/liba.dll")
    added = tmp_path / "added"
    put(added, "x64/libb.dll")
    verdict, model, _ = both(wine, stage, a, dirs=[added])
    assert verdict == model == "OK"


def test_delay_load_import_does_not_fail_the_load(wine, stage, tmp_path):
    a = put(tmp_path / "lib", "x64/liba.dll")  # delay-imports libmissing.dll, which exists nowhere
    put(tmp_path / "lib", "x64/libb.dll")
    verdict, model, _ = both(wine, stage, a)
    assert verdict == model == "OK"


@pytest.mark.parametrize("folder", ["x86", "arm64"])
def test_foreign_architecture_at_the_top(wine, stage, tmp_path, folder):
    a = put(tmp_path / "lib", f"{folder}/liba.dll")
    verdict, model, _ = both(wine, stage, a)
    assert verdict == model == "FAIL 193"


@pytest.mark.realdata
def test_real_c10_without_and_with_the_microsoft_runtime(wine, stage, tmp_path):
    lib = tmp_path / "lib"
    wl.link_or_copy(wl.torch_root("2.3.0") / "torch" / "lib" / "c10.dll", lib / "c10.dll")
    fake = wl.fake_windows(tmp_path / "Windows") / "System32"  # the model's System32: OS DLLs only
    disabled = "vcruntime140,vcruntime140_1,msvcp140=d"  # wine's builtin runtime off
    verdict, model, log = both(wine, stage, lib / "c10.dll", overrides=disabled, system=fake)
    assert verdict == model == "FAIL 126"
    assert "MSVCP140.dll" in log
    wl.install_runtime(lib, "msvc-runtime-14.44", ["vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"])
    native = "vcruntime140,vcruntime140_1,msvcp140=n"
    verdict, model, _ = both(wine, stage, lib / "c10.dll", overrides=native, system=fake)
    assert verdict == model == "OK"


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("version", "runtime", "missing"),
    [
        ("2.3.0", "msvc-runtime-14.44", "mkl_intel_thread.1.dll"),
        ("2.15.0", "msvc-runtime-14.34", "VCRUNTIME140_THREADS.dll"),
    ],
)
def test_real_torch_cpu_chains(wine, stage, tmp_path, version, runtime, missing):
    lib = tmp_path / "lib"
    for path in (wl.torch_root(version) / "torch" / "lib").glob("*.dll"):
        wl.link_or_copy(path, lib / path.name)
    wl.install_runtime(lib, runtime)
    names = ",".join(n.removesuffix(".dll") for n in wl.runtime_dlls(runtime))
    fake = wl.fake_windows(tmp_path / "Windows") / "System32"
    verdict, model, log = both(wine, stage, lib / "torch_cpu.dll", overrides=f"{names}=n", system=fake)
    assert verdict == model == "FAIL 126"
    assert missing.lower() in log.lower()
