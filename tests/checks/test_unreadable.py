"""Malformed input: every case ends in a clear TC901/TC902 finding or exit 2 with one line on stderr, never a
traceback. Driven through the CLI, as a user meets it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conda_torchcheck.checks import Check, run_checks
from conda_torchcheck.cli.main import main
from tests.checks.tc_helpers import PY_DEP, context


def check_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check", "--json", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def finding_ids(doc: dict) -> list[str]:
    return [f["id"] for f in doc["findings"]]


def _only(doc: dict, fid: str) -> dict:
    [f] = [f for f in doc["findings"] if f["id"] == fid]
    return f


def _root_can_read(path: Path) -> bool:
    try:
        path.read_bytes() if path.is_file() else os.listdir(path)
        return True
    except OSError:
        return False


# --- conda-meta --------------------------------------------------------------------------------------


def test_broken_json_in_conda_meta(make_env, capsys):
    b = make_env()
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    record = b.prefix / "conda-meta" / "pytorch-2.5.1-cpu_mkl_py311_h0000000_100.json"
    record.write_text(record.read_text()[:200], encoding="utf-8")  # truncated by a crash mid-write
    code, doc = check_json(capsys, "-p", str(b.prefix), "--only", "TC9")
    assert code == 0
    f = _only(doc, "TC901")
    assert f["severity"] == "warning"
    assert f["evidence"]["file"] == str(record)
    assert f["evidence"]["problem"].startswith("invalid JSON")
    move, reinstall = f["fixes"][0]["commands"]
    assert move == f'mv "{record}" "{record}.broken"'
    assert reinstall == f'conda install -p "{b.prefix}" "pytorch=2.5.1=cpu_mkl_py311_h0000000_100"'
    # the torch files are still found; conda's record is what is missing
    assert doc["torch"]["source"] == "conda" and doc["torch"]["version"] == "2.5.1"


def test_a_corrupt_pytorch_channel_record_is_reinstalled_from_its_channel(make_env, capsys):
    """Nothing else names the channel (no history, no sibling record), but the build string is one only the
    pytorch channel builds: the reinstall names it, and nvidia for a CUDA build's libraries (issue 25)."""
    b = make_env()
    b.conda_pytorch("2.5.1", "py3.11_cuda12.1_cudnn9_0", channel="pytorch", depends=PY_DEP, cuda="12.1")
    record = b.prefix / "conda-meta" / "pytorch-2.5.1-py3.11_cuda12.1_cudnn9_0.json"
    record.write_text(record.read_text()[:50], encoding="utf-8")
    history = b.prefix / "conda-meta" / "history"
    if history.exists():
        history.unlink()
    os.mkfifo(history)  # a FIFO in its place must not block the check
    code, doc = check_json(capsys, "-p", str(b.prefix), "--only", "TC9")
    f = _only(doc, "TC901")
    _, reinstall = f["fixes"][0]["commands"]
    assert reinstall == f'conda install -p "{b.prefix}" -c pytorch -c nvidia "pytorch=2.5.1=py3.11_cuda12.1_cudnn9_0"'


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"name": "numpy", "version": "2.1.0"}', "missing or invalid field(s): build"),
        (b'{"name": 3, "version": "2.1.0", "build": "py311h0_0"}', "missing or invalid field(s): name"),
        (b"[1, 2, 3]", "the file does not hold a JSON object"),
        (b'{"name": "numpy\xff", "version": "2.1.0", "build": "x"}', "not UTF-8 (byte 0xff at offset 15)"),
        (b"", "invalid JSON: Expecting value (line 1)"),
    ],
)
def test_malformed_records(make_env, capsys, content, problem):
    b = make_env()
    (b.prefix / "conda-meta" / "numpy-2.1.0-py311h0_0.json").write_bytes(content)
    code, doc = check_json(capsys, "-p", str(b.prefix))
    assert code == 0
    assert _only(doc, "TC901")["evidence"]["problem"] == problem


def test_record_fields_of_the_wrong_type_are_tolerated(make_env, capsys):
    b = make_env()
    (b.prefix / "conda-meta" / "odd-1.0-0.json").write_text(
        json.dumps(
            {
                "name": "odd",
                "version": "1.0",
                "build": "0",
                "depends": "python",
                "files": None,
                "paths_data": [],
                "build_number": "x",
                "channel": 5,
            }
        ),
        encoding="utf-8",
    )
    code, doc = check_json(capsys, "-p", str(b.prefix))
    assert code == 0 and "TC901" not in finding_ids(doc)


def test_unreadable_record_by_permissions(make_env, capsys):
    """As root (CI), in a child that runs as nobody (tests/hostile/harness.py), so the permissions apply."""
    import shutil

    from tests.envbuilder import EnvBuilder
    from tests.hostile.harness import open_tree, run_cli, unprivileged_prefix

    as_user = unprivileged_prefix()
    root = open_tree()
    try:
        b = EnvBuilder(root / "env")
        record = b.prefix / "conda-meta" / "numpy-2.1.0-py311h0_0.json"
        record.write_text("{}", encoding="utf-8")
        record.chmod(0)
        if as_user is None:
            if _root_can_read(record):
                pytest.skip("running as root with no way to drop the capability (setpriv)")
            code, doc = check_json(capsys, "-p", str(b.prefix))
        else:
            doc = run_cli("check", "--json", "-p", str(b.prefix), target=b.prefix, as_user=as_user).doc
        f = _only(doc, "TC901")
        assert f["title"] == f"conda-meta cannot be read: {record}"
    finally:
        shutil.rmtree(root)


def test_unreadable_record_as_any_user(make_env, capsys, monkeypatch):
    """The same case without relying on file permissions (which root ignores)."""
    b = make_env()
    record = b.prefix / "conda-meta" / "numpy-2.1.0-py311h0_0.json"
    record.write_text("{}", encoding="utf-8")
    from conda_torchcheck.inventory import fs

    real = fs.read_bytes

    def read_bytes(path, *args):  # every target file is read through the one bounded reader
        if Path(path) == record:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args)

    monkeypatch.setattr(fs, "read_bytes", read_bytes)
    code, doc = check_json(capsys, "-p", str(b.prefix))
    f = _only(doc, "TC901")
    assert f["evidence"]["problem"] == "Permission denied"
    assert "cannot be read" in f["title"]


# --- Python metadata ---------------------------------------------------------------------------------


def test_metadata_not_utf8(make_env, capsys):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    metadata = b.site_packages / "torch-2.5.1.dist-info" / "METADATA"
    metadata.write_bytes(b"Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nSummary: caf\xe9\n")
    code, doc = check_json(capsys, "-p", str(b.prefix))
    f = _only(doc, "TC902")
    assert f["evidence"]["problem"].startswith("not UTF-8 (byte 0xe9")
    assert f["fixes"][0]["commands"][0].endswith("-m pip install --force-reinstall --no-deps torch==2.5.1")
    assert doc["torch"]["version"] == "2.5.1"  # still read, with the bad byte replaced


def test_metadata_missing(make_env, capsys):
    b = make_env(layout="venv", os="windows")
    folder = b.dist("numpy", "2.1.0")
    (folder / "METADATA").unlink()
    code, doc = check_json(capsys, "-p", str(b.prefix))
    f = _only(doc, "TC902")
    assert f["evidence"]["problem"] == "the metadata file is missing"


def test_unreadable_site_packages(make_env, capsys, monkeypatch):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    real = Path.iterdir

    def iterdir(self):
        if self == b.site_packages:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    code, doc = check_json(capsys, "-p", str(b.prefix))
    f = _only(doc, "TC902")
    assert f["title"] == f"A folder on the import path cannot be read: {b.site_packages}"


# --- not an env, unreadable target ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["empty", "missing", "file"])
def test_not_an_environment(tmp_path, capsys, kind):
    target = tmp_path / "target"
    if kind == "empty":
        target.mkdir()
    elif kind == "file":
        target.write_text("x", encoding="utf-8")
    code = main(["check", "-p", str(target)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith("conda-torchcheck: error: ") and str(target) in lines[0]
    assert len(lines) <= 2 and "Traceback" not in err  # the error, and at most one hint


def test_unreadable_target(tmp_path, capsys, monkeypatch):
    target = tmp_path / "locked"
    target.mkdir()
    import conda_torchcheck.inventory.environment as environment

    real = os.listdir

    def listdir(path="."):
        if Path(path) == target:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(environment.os, "listdir", listdir)
    code = main(["check", "-p", str(target)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.strip() == f"conda-torchcheck: error: {target} cannot be read: Permission denied"


# --- non-ASCII and undecodable paths -------------------------------------------------------------------


@pytest.mark.parametrize("os_", ["linux", "windows"])
def test_chinese_path(make_env, capsys, os_):
    b = make_env(os=os_, name="环境 中文")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    (b.prefix / "conda-meta" / "坏-1.0-0.json").write_text("{", encoding="utf-8")
    code, doc = check_json(capsys, "-p", str(b.prefix))
    assert doc["target"]["prefix"] == str(b.prefix)
    assert "坏-1.0-0.json" in _only(doc, "TC901")["title"]
    assert main(["check", "-p", str(b.prefix), "--lang", "zh_CN"]) == 0
    out, err = capsys.readouterr()
    assert "无法读取 conda-meta 记录" in out and "环境 中文" in out and err == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names are bytes")
def test_undecodable_bytes_in_the_path(tmp_path):
    """A real subprocess with a strict UTF-8 stdout (PYTHONIOENCODING): no traceback, JSON keeps the bytes."""
    from tests.envbuilder import EnvBuilder

    prefix = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/env\xff"))
    b = EnvBuilder(prefix)
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100", depends=PY_DEP)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    outputs = {}
    for fmt in ("json", "text"):
        proc = subprocess.run(
            [sys.executable, "-m", "conda_torchcheck", "-p", os.fsencode(prefix), "--format", fmt],
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        assert b"Traceback" not in proc.stderr
        outputs[fmt] = proc.stdout
    assert os.fsencode(json.loads(outputs["json"])["target"]["prefix"]) == os.fsencode(prefix)
    assert b"env\\udcff" in outputs["text"]  # shown escaped, not crashed on


# --- TC990 -------------------------------------------------------------------------------------------


def test_a_crashing_check_becomes_tc990(make_env, monkeypatch):
    import conda_torchcheck.checks as checks

    def boom(ctx):
        raise KeyError("surprise")
        yield  # pragma: no cover

    monkeypatch.setattr(checks, "all_checks", lambda target_os=None: [Check("boom", ("TC000",), "explodes", boom)])
    [f] = run_checks(context(make_env()))
    assert (f.id, f.severity.value, f.check) == ("TC990", "warning", "boom")
    assert f.evidence["error"] == "KeyError: 'surprise'"
    assert f.title.render() == "Internal error in check 'boom'"
