"""``explain`` from the command line: where the text comes from, which env is checked, formats, exit codes."""

from __future__ import annotations

import io
import json
import sys

import pytest

from conda_torchcheck.cli import main_explain
from conda_torchcheck.cli.main import main

WIN126_CN = 'OSError: [WinError 126] 找不到指定的模块。 Error loading "{prefix}\\Lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.'  # noqa: E501
IJIT = "ImportError: {site}/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent"


class FakeStdin(io.TextIOWrapper):
    def __init__(self, data: bytes, tty: bool = False):
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.fixture
def stdin(monkeypatch):
    def feed(data: bytes | str, tty: bool = False):
        monkeypatch.setattr(sys, "stdin", FakeStdin(data.encode("utf-8") if isinstance(data, str) else data, tty))

    feed(b"", tty=True)  # an interactive terminal unless a test pipes something
    return feed


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_argument_without_env(stdin, capsys):
    code, out, _ = run(["explain", "--no-env", WIN126_CN.format(prefix="C:\\e")], capsys)
    assert code == 0
    assert "WinError 126" in out and "shm.dll" in out
    assert "No environment checked" in out
    assert "1. The Microsoft Visual C++ runtime" in out


def test_unquoted_words_are_joined(stdin, capsys):
    code, out, _ = run(["explain", "--no-env", "OSError:", "[WinError", "1114]", "x"], capsys)
    assert code == 0 and "WinError 1114" in out


def test_stdin_dash_and_pipe(stdin, capsys):
    stdin(
        "Traceback (most recent call last):\n  ...\nOMP: Error #15: Initializing libiomp5md.dll, but found "
        "libiomp5md.dll already initialized.\n"
    )
    code, out, _ = run(["explain", "--no-env", "-"], capsys)
    assert code == 0 and "OMP Error #15" in out and "standard input" in out
    stdin("RuntimeError: operator torchvision::nms does not exist\n")
    code, out, _ = run(["explain", "--no-env"], capsys)  # piped: no '-' needed
    assert "torchvision::nms" in out


def test_console_code_pages_are_decoded(stdin, capsys):
    stdin("OSError: [WinError 126] 找不到指定的模块。\r\n".encode("gbk"))
    code, out, _ = run(["explain", "--no-env", "-"], capsys)
    assert "WinError 126" in out
    assert main_explain.decode_input("ä".encode("utf-16")) == "ä"
    assert main_explain.decode_input("\ufeff找不到".encode()) == "找不到"


def test_file_input(stdin, capsys, tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("ImportError: DLL load failed while importing _C: 找不到指定的模块。\n", encoding="utf-8")
    code, out, _ = run(["explain", "--no-env", "--file", str(log)], capsys)
    assert "DLL load failed while importing _C" in out
    code, _, err = run(["explain", "--no-env", "--file", str(tmp_path / "missing.txt")], capsys)
    assert code == 2 and "cannot read" in err and "Traceback" not in err


def test_no_text_is_a_usage_error(stdin, capsys):
    code, out, err = run(["explain", "--no-env"], capsys)
    assert code == 2 and out == ""
    assert "no error text given" in err and "hint:" in err


def test_no_text_message_in_chinese(stdin, capsys):
    code, _, err = run(["explain", "--no-env", "--lang", "zh_CN"], capsys)
    assert code == 2 and "没有提供报错文本" in err


def test_nothing_recognised(stdin, capsys):
    code, out, _ = run(["explain", "--no-env", "KeyError: 'weights'"], capsys)
    assert code == 0 and "No known error was recognised" in out


def test_several_errors_json(stdin, capsys):
    text = (
        WIN126_CN.format(prefix="C:\\e")
        + "\nOMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized."
    )
    code, out, _ = run(["explain", "--no-env", "--json", text], capsys)
    doc = json.loads(out)
    assert doc["kind"] == "explain" and doc["schema"] == 1 and doc["target"] is None
    assert [r["pattern"] for r in doc["recognised"]] == ["winerror-126", "omp-error-15"]
    first = doc["recognised"][0]
    assert first["fields"]["dll"] == "shm.dll"
    assert first["causes"][0]["rank"] == 1 and first["causes"][0]["how_to_tell"]
    assert all(c["status"] == "possible" for c in first["causes"])


def test_env_given_with_prefix_confirms(make_env, stdin, capsys):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.2.2", "py3.11_cuda12.1_cudnn8.9.2_0", channel="pytorch", depends=("mkl >=2018",))
    b.conda_record("mkl", "2024.1.0", "h0000000_691", channel="defaults")
    code, out, _ = run(["explain", "-p", str(b.prefix), IJIT.format(site=b.site_packages)], capsys)
    assert code == 1
    assert "Checked environment" in out and "given with -p" in out
    assert "Root cause" in out and "TC105" in out
    code, out, _ = run(["explain", "-p", str(b.prefix), "--json", IJIT.format(site=b.site_packages)], capsys)
    doc = json.loads(out)
    assert doc["target"]["reason"] == "prefix"
    assert doc["recognised"][0]["root_cause"] == "mkl-ijit"
    assert "TC105" in [f["id"] for f in doc["findings"]]


def test_env_named_by_the_error_is_checked(make_env, stdin, capsys):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    code, out, _ = run(["explain", "--json", IJIT.format(site=b.site_packages)], capsys)
    doc = json.loads(out)
    assert doc["target"]["prefix"] == str(b.prefix) and doc["target"]["reason"] == "from-error"


def test_active_env_is_checked_and_said_so(make_env, stdin, capsys, monkeypatch):
    b = make_env(os="linux", layout="conda")
    b.conda_pytorch("2.5.1", "cpu_mkl_py311_h0000000_100")
    monkeypatch.setenv("CONDA_PREFIX", str(b.prefix))
    code, out, _ = run(["explain", WIN126_CN.format(prefix="C:\\other")], capsys)
    assert "the active environment" in out
    assert "cannot have produced it" in " ".join(out.split())  # a Windows error, a Linux env
    assert "Checks run" not in out  # nothing on a Linux env can confirm a Windows error
    code, out, _ = run(["explain", "--no-env", WIN126_CN.format(prefix="C:\\other")], capsys)
    assert "Checked environment" not in out


def test_import_test_needs_an_env(stdin, capsys):
    code, _, err = run(["explain", "--no-env", "--import-test"], capsys)
    assert code == 2 and "--import-test needs an environment" in err


def test_markdown_output(stdin, capsys):
    code, out, _ = run(["explain", "--no-env", "--format", "markdown", WIN126_CN.format(prefix="C:\\e")], capsys)
    assert out.startswith("**conda-torchcheck explain:**")
    assert out.count("<details>") == out.count("</details>") > 3
    assert "### 1. WinError 126" in out


def test_json_and_markdown_contradict(stdin, capsys):
    code, out, err = run(["explain", "--no-env", "--json", "--format", "markdown", "x"], capsys)
    assert code == 2 and err == "" and "contradict" in json.loads(out)["message"]  # --json: the error as JSON


def test_under_conda_the_verb_brings_its_own_target_options():
    import argparse

    parser = argparse.ArgumentParser()
    main_explain.configure_parser(parser, conda=True)
    args = parser.parse_args(["-n", "myenv", "--import-test", "OSError: [WinError 126] x"])
    assert args.name == "myenv" and args.import_test and args.text == ["OSError: [WinError 126] x"]
    assert not any("--json" in a.option_strings for a in parser._actions)  # conda adds its own --json


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")
def test_import_test_produces_the_text(stdin, capsys, tmp_path):
    import venv

    prefix = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    site = next(prefix.glob("lib/python3*/site-packages"))
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(
        'raise ImportError("libcudnn.so.9: cannot open shared object file: No such file or directory")\n',
        encoding="utf-8",
    )
    code, out, _ = run(["explain", "-p", str(prefix), "--import-test"], capsys)
    assert code == 1
    assert "Import test run at " in out and "import failed (ImportError)" in out
    assert "libcudnn.so.9 cannot be found" in out
    assert "(import test)" in out  # where the text came from
    code, out, _ = run(["explain", "-p", str(prefix), "--import-test", "--json"], capsys)
    doc = json.loads(out)
    assert doc["import_test"]["outcome"] == "failed" and doc["source"] == "import-test"
    assert doc["recognised"][0]["pattern"] == "cannot-open-shared-object"


def test_a_multi_line_excerpt_keeps_every_line_quoted_and_indented(stdin, capsys):
    text = (
        "ImportError: dlopen(/x/_C.so, 0x0002): Library not loaded: @rpath/libomp.dylib\n"
        "  Referenced from: /x/lib/libtorch_cpu.dylib\n"
    )
    code, out, _ = run(["explain", "--no-env", text], capsys)
    lines = out.splitlines()
    first = lines.index("    > ImportError: dlopen(/x/_C.so, 0x0002): Library not loaded: @rpath/libomp.dylib")
    assert lines[first + 1] == "    >   Referenced from: /x/lib/libtorch_cpu.dylib"
