"""Root-cause grouping: one finding per cause, the consequences as its evidence, severity from the consequence."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.causes import CONSEQUENCES, follow_consequences
from conda_torchcheck.findings import Severity, finding
from conda_torchcheck.inventory import load_environment
from conda_torchcheck.render.text import render_text
from conda_torchcheck.report import check_environment
from tests.checks.tc_helpers import PY_DEP


def _library(directory: Path, soname: str, **kwargs) -> Path:
    from tests.binaries.elfgen import make_elf

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / soname
    path.write_bytes(make_elf(soname=soname, **kwargs))
    return path


def _glibcxx(newest: int) -> list[str]:
    return ["GLIBCXX_3.4", *(f"GLIBCXX_3.4.{i}" for i in range(1, newest + 1)), "CXXABI_1.3"]


def _pip_torch(builder, needs: dict[str, list[str]]) -> Path:
    """A pip-style torch (RUNPATH $ORIGIN) whose libtorch_cpu.so needs ``needs`` and links libc10.so."""
    from tests.binaries.elfgen import make_elf
    from tests.loader.linux_layouts import TORCH_INIT

    lib = "torch/lib"
    files = {
        "torch/__init__.py": TORCH_INIT.encode(),
        "torch/version.py": b"__version__ = '2.5.1'\ncuda = None\nhip = None\nxpu = None\n",
        "torch/_C.cpython-311-x86_64-linux-gnu.so": make_elf(needed=["libtorch_cpu.so"], runpath="$ORIGIN/lib"),
        f"{lib}/libtorch_global_deps.so": make_elf(soname="libtorch_global_deps.so", runpath="$ORIGIN"),
        f"{lib}/libc10.so": make_elf(soname="libc10.so", defines=["c10_here"], runpath="$ORIGIN"),
        f"{lib}/libtorch_cpu.so": make_elf(
            soname="libtorch_cpu.so",
            needed=["libc10.so", *needs],
            version_needs=list(needs.items()),
            runpath="$ORIGIN",
        ),
    }
    builder.dist("torch", "2.5.1", files=files, installer="pip")
    return builder.site_packages / "torch"


def _report(prefix: Path, llp: str | None = None):
    env, host = load_environment(prefix, host_overrides={"LD_LIBRARY_PATH": llp} if llp else None)
    return check_environment(env, host, only=["TC4"])


def test_an_old_libstdcxx_on_ld_library_path_is_one_cause(make_env, tmp_path):
    builder = make_env(layout="venv")
    wanted = [f"GLIBCXX_3.4.{i}" for i in (19, 20, 21, 22, 26, 29)]
    _pip_torch(builder, {"libstdc++.so.6": wanted})
    old = _library(tmp_path / "old", "libstdc++.so.6", version_defs=_glibcxx(18)).parent
    report = _report(builder.prefix, str(old))
    [cause] = [f for f in report.findings if f.severity is Severity.ERROR]
    ids = [cause.id, *(c.id for c in cause.consequences)]
    assert ids.count("TC402") == len(wanted) - (cause.id == "TC402")
    assert all(c.evidence["loaded_copy"] == str(old / "libstdc++.so.6") for c in cause.consequences)
    text = render_text(report)
    assert text.count("\nERROR ") == 1
    assert len(text.splitlines()) - 6 <= 25, text  # less the target's 4 lines and the summary's 2
    verbose = render_text(report, verbose=1)
    assert all(f"GLIBCXX_3.4.{i} is not provided" in verbose for i in (19, 20, 21, 22, 26, 29))
    doc = report.to_dict()
    assert doc["summary"]["errors"] == 1
    assert len(doc["findings"][0]["consequences"]) == len(cause.consequences)


def test_tc402_offers_no_apt_upgrade_for_a_copy_apt_does_not_own(make_env, tmp_path):
    """An unowned old copy reached by the search path: the way out is the search path, not apt."""
    from conda_torchcheck.checks.linux_loading import dpkg_owner

    root = tmp_path / "root"
    info = root / "var" / "lib" / "dpkg" / "info"
    info.mkdir(parents=True)
    (info / "libstdc++6:amd64.list").write_text("/.\n/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30\n")
    (root / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    assert dpkg_owner(root / "usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", root) == "libstdc++6"
    assert dpkg_owner(root / "lib/x86_64-linux-gnu/libstdc++.so.6.0.30", root) == "libstdc++6"  # merged /usr
    assert dpkg_owner(root / "opt/old/libstdc++.so.6", root) == ""
    assert dpkg_owner(tmp_path / "x", tmp_path / "no-dpkg") is None

    builder = make_env(layout="venv")
    _pip_torch(builder, {"libstdc++.so.6": ["GLIBCXX_3.4.29"]})
    old = _library(tmp_path / "old", "libstdc++.so.6", version_defs=_glibcxx(18)).parent
    report = _report(builder.prefix, str(old))
    commands = [c for f in report.findings for c in _all_commands(f)]
    if dpkg_owner(old / "libstdc++.so.6") is not None:  # this host has dpkg, which does not own the copy
        assert not any("apt-get" in c for c in commands), commands
    assert any(c.startswith(("unset LD_LIBRARY_PATH", "export LD_LIBRARY_PATH")) for c in commands)


def _all_commands(f) -> list[str]:
    out = [c for fix in f.fixes for c in fix.commands]
    for c in f.consequences:
        out.extend(_all_commands(c))
    return out


def test_another_torch_library_on_ld_library_path_is_an_error(make_env, tmp_path):
    """Another torch build's libc10.so first on LD_LIBRARY_PATH loads into the process: an error, whatever
    the file's versions say."""
    builder = make_env(layout="venv")
    _pip_torch(builder, {})
    other = _library(tmp_path / "other" / "torch" / "lib", "libc10.so", defines=["c10_there", "more"]).parent
    report = _report(builder.prefix, str(other))
    [shadow] = [f for f in report.findings if f.id == "TC404"]
    assert shadow.severity is Severity.ERROR
    assert report.has_errors
    # a non-torch library shadowed the same way keeps the check's own severity
    plain = follow_consequences(
        [finding("TC404", Severity.WARNING, evidence={"library": "libz.so.1", "shadowed_copy": "/x/libz.so.1"})]
    )
    assert plain[0].severity is Severity.WARNING


def test_a_corrupt_pytorch_record_is_unreadable_not_absent(make_env):
    """TC901 is the cause; TC100 (torch not found) follows from it; the fix names the channel pytorch came
    from (conda-meta/history)."""
    b = make_env()
    b.conda_pytorch("2.5.1", "py3.11_cpu_0", depends=PY_DEP, channel="pytorch")
    record = b.prefix / "conda-meta" / "pytorch-2.5.1-py3.11_cpu_0.json"
    record.write_text(record.read_text()[:200], encoding="utf-8")
    (b.prefix / "conda-meta" / "history").write_text(
        "==> 2024-11-01 10:00:00 <==\n# cmd: conda install -c pytorch pytorch\n+pytorch::pytorch-2.5.1-py3.11_cpu_0\n"
    )
    import shutil

    shutil.rmtree(b.site_packages / "torch")
    shutil.rmtree(b.site_packages / "torch-2.5.1.dist-info")
    env, host = load_environment(b.prefix)
    report = check_environment(env, host)
    ids = [f.id for f in report.findings]
    assert "TC100" not in ids
    [cause] = [f for f in report.findings if f.id == "TC901"]
    assert [c.id for c in cause.consequences] == ["TC100"]
    assert cause.fixes[0].commands[-1] == f'conda install -p "{b.prefix}" -c pytorch "pytorch=2.5.1=py3.11_cpu_0"'


def test_consequence_fixes_are_not_shown_beside_the_cause():
    cause = finding("TC104", Severity.ERROR, evidence={"torch": "2.13.0", "torchvision": {"installed": "0.29.0"}})
    symptom = finding("TC209", Severity.WARNING, evidence={"package": "torchvision 0.29.0 (/site)"})
    other = finding("TC209", Severity.WARNING, evidence={"package": "torch 2.13.0 (/site)"})
    out = follow_consequences([symptom, cause, other])
    assert [f.id for f in out] == ["TC104", "TC209"]
    assert out[0].consequences == (symptom,)


def test_every_relation_names_known_ids():
    from conda_torchcheck.messages import lookup

    for rel in CONSEQUENCES:
        for fid in (rel.cause, rel.consequence):
            if fid == "*":
                continue
            assert lookup(f"{fid}.title") is not None or any(
                k for k in ("unreadable", "import", "later", "extension") if lookup(f"{fid}.{k}.title")
            ), fid
        assert rel.why


def test_text_wraps_at_the_terminal_width(monkeypatch):
    from conda_torchcheck.render.text import wrap

    words = "word " * 60
    monkeypatch.setenv("COLUMNS", "60")
    assert max(len(line) for line in wrap(words, "  ")) <= 60
    monkeypatch.setenv("COLUMNS", "150")
    assert 100 < max(len(line) for line in wrap(words, "  ")) <= 150


def test_an_import_test_failure_follows_from_the_finding_it_was_traced_to():
    loader = finding("TC401", Severity.ERROR, evidence={"library": "libshm.so"})
    imported = finding("TC701", Severity.ERROR, evidence={"confirmed_by": ["TC401"]})
    unrelated = finding("TC701", Severity.ERROR, evidence={"confirmed_by": ["TC999"]})
    out = follow_consequences([imported, loader, unrelated])
    assert [(f.id, [c.id for c in f.consequences]) for f in out] == [("TC401", ["TC701"]), ("TC701", [])]


def test_undefined_symbols_follow_from_the_copy_ld_library_path_puts_first():
    shadow = finding("TC404", Severity.ERROR, evidence={"library": "libc10.so", "loaded_copy": "/other/libc10.so"})
    cpu = finding(
        "TC403",
        Severity.ERROR,
        evidence={
            "required_by": ["/t/lib/libtorch_cpu.so"],
            "lookup_scope": ["/usr/lib/libc.so.6", "/other/libc10.so"],
        },
    )
    shm = finding("TC403", Severity.ERROR, evidence={"required_by": ["/t/lib/libshm.so"], "lookup_scope": []})
    [root] = follow_consequences([cpu, shm, shadow])
    assert root.id == "TC404"
    assert [c.evidence["required_by"][0] for c in root.consequences] == ["/t/lib/libtorch_cpu.so", "/t/lib/libshm.so"]


def test_another_torch_build_loaded_is_an_error_on_macos_and_windows():
    mac = finding(
        "TC456",
        Severity.WARNING,
        evidence={
            "library": "libc10.dylib",
            "loads": "/opt/old/libc10.dylib",
            "torch_copy": "/e/torch/lib/libc10.dylib",
        },
    )
    win = finding(
        "TC306",
        Severity.WARNING,
        evidence={
            "fallback_uses": "C:\\old\\torch\\lib\\c10.dll",
            "safe_search_uses": "C:\\E\\Lib\\torch\\lib\\c10.dll",
        },
    )
    other = finding(
        "TC306",
        Severity.WARNING,
        evidence={"fallback_uses": "C:\\app\\zlib.dll", "safe_search_uses": "C:\\E\\Lib\\torch\\lib\\zlib.dll"},
    )
    assert [f.severity for f in follow_consequences([mac], "/e/torch")] == [Severity.ERROR]
    assert [f.severity for f in follow_consequences([win, other], "c:\\e\\lib\\torch")] == [
        Severity.ERROR,
        Severity.WARNING,
    ]


def test_torch_libraries_of_another_torch_follow_from_the_preload_that_loads_it():
    shadow = finding(
        "TC404",
        Severity.WARNING,
        evidence={
            "library": "libc10.so",
            "loaded_copy": "/other/lib/libc10.so",
            "shadowed_copy": "/e/torch/lib/libc10.so",
        },
    )
    missing = finding(
        "TC401", Severity.ERROR, evidence={"library": "libtorch_cpu.so", "needed_by": ["/other/lib/libc10.so"]}
    )
    [root] = follow_consequences([missing, shadow], "/e/torch")
    assert (root.id, root.severity, [c.id for c in root.consequences]) == ("TC404", Severity.ERROR, ["TC401"])


def test_a_torch_library_found_elsewhere_in_place_of_torchs_own_is_an_error():
    """torch/lib/libc10.so missing, a libtorch copy in /usr/local/lib (ld.so.cache) loads instead."""
    other = finding(
        "TC406",
        Severity.INFO,
        evidence={
            "library": "libc10.so",
            "expected": "/e/torch/lib/libc10.so",
            "loaded_copy": "/usr/local/lib/libc10.so",
        },
    )
    plain = finding(
        "TC406",
        Severity.INFO,
        evidence={
            "library": "libgomp.so.1",
            "expected": "/e/torch/lib/libgomp.so.1",
            "loaded_copy": "/lib/libgomp.so.1",
        },
    )
    assert [f.severity for f in follow_consequences([other, plain], "/e/torch")] == [Severity.ERROR, Severity.INFO]


def test_what_the_torch_on_pythonpath_lacks_follows_from_it(make_env, tmp_path):
    """A PyTorch source checkout on PYTHONPATH: its missing _C and libraries, and its lack of metadata, are the
    consequences of the entry (one cause, unset PYTHONPATH), not a reinstall of the env's own torch."""
    checkout = tmp_path / "pytorch"
    (checkout / "torch").mkdir(parents=True)
    (checkout / "torch" / "__init__.py").write_text("", encoding="utf-8")
    (checkout / "torch" / "version.py").write_text("__version__ = '2.5.1'\n", encoding="utf-8")
    builder = make_env(layout="venv")
    _pip_torch(builder, {})
    env, host = load_environment(builder.prefix, host_overrides={"PYTHONPATH": str(checkout)})
    report = check_environment(env, host)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert [f.id for f in errors] == ["TC206"], [(f.id, f.evidence) for f in report.findings]
    [cause] = errors
    assert {c.id for c in cause.consequences} <= {"TC401", "TC204"} and cause.consequences
    assert [c for fix in cause.fixes for c in fix.commands] == ["unset PYTHONPATH"]


def test_a_torch_library_from_elsewhere_in_place_of_a_missing_own_copy_is_an_error(make_env, tmp_path):
    """minitorch (gcc-built) without its libtorch_cpu.so; another copy found elsewhere loads in its place (TC406,
    an info for other libraries): a library of another torch build in the process, so an error."""
    from tests.loader.linux_layouts import minitorch_env

    builder = make_env(layout="venv")
    pkg = minitorch_env(builder)
    other = tmp_path / "usr-local-lib"
    other.mkdir()
    own = pkg / "lib" / "libtorch_cpu.so"
    (other / "libtorch_cpu.so").write_bytes(own.read_bytes() + b"\0")  # another build's file
    own.unlink()
    report = _report(builder.prefix, str(other))
    [f] = [f for f in report.findings if f.id == "TC406"]
    assert f.evidence["loaded_copy"] == str(other / "libtorch_cpu.so")
    assert f.severity is Severity.ERROR and report.has_errors
