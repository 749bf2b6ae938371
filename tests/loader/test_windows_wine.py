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


def oracle_process(app: Path, system: Path, path_dirs: list[Path] = ()) -> windows.ProcessModel:
    """The model of oracle.exe's process: ``app`` is its folder, ``system`` the System32 Wine uses."""
    from conda_torchcheck.inventory import fs

    fs.clear_cache()  # the tests change folders between runs; the model caches listings per run
    return windows.ProcessModel(
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


def model_verdict(app: Path, dll: Path, *, flags: str, dirs: list[Path], system: Path, path_dirs: list[Path] = ()):
    """What the model says for oracle.exe in ``app`` loading ``dll``: 'OK' or 'FAIL <code>'."""

    model = oracle_process(app, system, path_dirs)
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


# --- the already-loaded rule (issue 14): several loads in one process, oracle_seq.exe ----------------------------

ORACLE_SEQ = wl.fixture("oracle/oracle_seq.exe")
VC_NATIVE = "msvcp140,msvcp140_1,msvcp140_2,vcruntime140,vcruntime140_1=n"


def run_sequence(wine: Wine, app: Path, steps: list[tuple[str, Path | str]]) -> tuple[list[str], str]:
    """oracle_seq.exe with ``steps`` (("dir", folder), ("load", dll), ("which", name)); its LOAD/WHICH lines."""
    args = [str(app / "oracle_seq.exe")]
    for kind, value in steps:
        args.append(f"{kind}={Wine.path(value) if isinstance(value, Path) else value}")
    _verdict, log = wine.run(args, overrides=VC_NATIVE)
    # wine prints configuration lines on a fresh prefix: keep only the oracle's own
    return [line.strip() for line in log.splitlines() if line.startswith(("LOAD ", "WHICH "))], log


def model_sequence(app: Path, system: Path, steps: list[tuple[str, Path | str]]) -> tuple[list[str], dict]:
    """The model's LOAD/WHICH lines for the same steps, from one simulation (one process)."""

    model = oracle_process(app, system)
    graph = windows.WindowsLoadGraph(platform="windows", process=model)
    # wine's missing-export tolerance differs from Windows (module docstring): compare bindings, not exports
    sim = windows._Simulation(model, graph, check_all_symbols=False)
    sim.loaded["kernel32.dll"] = (system / "kernel32.dll", SearchPlace("known-dll"))
    lines = []
    for index, (kind, value) in enumerate(steps):
        if kind == "dir":
            model.torch_dirs.append(windows.Place(windows.STEP_USER_DIR, value, str(value), "AddDllDirectory"))
        elif kind == "load":
            error = sim.load_root(value, "file", index, fallback_prefix=None).error
            lines.append(f"LOAD OK {Wine.path(value)}" if error is None else f"LOAD FAIL {error} {Wine.path(value)}")
        else:
            bound = sim.loaded.get(str(value).lower())
            lines.append(f"WHICH {value} {Wine.path(bound[0]) if bound and bound[0] else '-'}")
    return lines, sim.loaded


def same_lines(wine_lines: list[str], model_lines: list[str]) -> bool:
    return [line.lower() for line in wine_lines] == [line.lower() for line in model_lines]


@pytest.fixture
def qt_and_torch(tmp_path):
    """The real files: PyQt5-Qt5 5.15.2's runtime (14.26) in site/PyQt5/Qt5/bin, torch 2.15.0's c10.dll with the
    14.44 runtime in torch/lib, pyqt_like.dll (an extension module importing msvcp140_2.dll) in site/PyQt5."""
    from tests.envbuilder import EnvBuilder

    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ORACLE_SEQ, app / "oracle_seq.exe")
    builder = EnvBuilder(tmp_path / "env", os="windows", layout="venv")
    qt_bin = wl.install_pyqt5_qt5(builder)
    pyqt = qt_bin.parent.parent
    put(pyqt, "mingw/pyqt_like.dll")
    lib = tmp_path / "torch" / "lib"
    wl.link_or_copy(wl.torch_root("2.15.0") / "torch" / "lib" / "c10.dll", lib / "c10.dll")
    wl.install_runtime(lib, "msvc-runtime-14.44", ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"])
    return app, qt_bin, pyqt, lib


@pytest.mark.realdata
def test_already_loaded_old_msvcp140_is_what_a_later_dll_gets(wine, qt_and_torch):
    """A DLL importing the old msvcp140 from its own folder loads first; c10.dll, beside a newer copy, gets the old
    one without any search (the already-loaded rule). Loaded alone, c10.dll gets the copy beside it."""
    app, qt_bin, _pyqt, lib = qt_and_torch
    system = system32_of(wine)
    first = [("load", qt_bin / "msvcp140_1.dll"), ("load", lib / "c10.dll"), ("which", "msvcp140.dll")]
    got, log = run_sequence(wine, app, first)
    want, loaded = model_sequence(app, system, first)
    assert same_lines(got, want), (got, want, log[-2000:])
    assert got[-1].lower().endswith("qt5\\bin\\msvcp140.dll")
    assert loaded["msvcp140.dll"][0] == qt_bin / "msvcp140.dll"
    alone = [("load", lib / "c10.dll"), ("which", "msvcp140.dll")]
    got, log = run_sequence(wine, app, alone)
    want, _ = model_sequence(app, system, alone)
    assert same_lines(got, want), (got, want, log[-2000:])
    assert got[-1].lower().endswith("torch\\lib\\msvcp140.dll")


@pytest.mark.realdata
def test_package_folder_copy_loses_to_python_exe_folder(wine, qt_and_torch):
    """PyQt5's shape: an extension module in PyQt5\\ imports a DLL from the added Qt5\\bin, which imports
    msvcp140.dll. That second-level search looks in the extension's folder, then the application folder (where
    conda's vc14_runtime puts its copy), then Qt5\\bin: with a copy beside the application it wins for both loads;
    without one, Qt5\\bin's old copy loads first and c10.dll gets it."""
    app, qt_bin, pyqt, lib = qt_and_torch
    system = system32_of(wine)
    steps = [("dir", qt_bin), ("load", pyqt / "pyqt_like.dll"), ("load", lib / "c10.dll"), ("which", "msvcp140.dll")]
    got, log = run_sequence(wine, app, steps)
    want, _ = model_sequence(app, system, steps)
    assert same_lines(got, want), (got, want, log[-2000:])
    assert got[-1].lower().endswith("qt5\\bin\\msvcp140.dll")
    wl.install_runtime(app, "msvc-runtime-14.44", ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"])
    got, log = run_sequence(wine, app, steps)
    want, _ = model_sequence(app, system, steps)
    assert same_lines(got, want), (got, want, log[-2000:])
    assert got[-1].lower().endswith("app\\msvcp140.dll")
