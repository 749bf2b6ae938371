"""Rendering the activation scripts: markers, quoting, headers, messages of the catalog (no shell needed)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conda_torchcheck.hooks.activation import render
from conda_torchcheck.hooks.activation.facts import ActivationFacts
from conda_torchcheck.messages import catalog

LINUX = ActivationFacts(
    os="linux",
    torch="2.5.1 (pip, cuda)",
    python_version="3.11.9",
    dll_search_mode="active",
    sonames=("libcublas.so.12", "libnccl.so.2"),
    own_lib_dirs=("lib/python3.11/site-packages/nvidia/cublas/lib",),
)
WINDOWS = ActivationFacts(
    os="windows",
    torch="2.5.1 (conda, cuda)",
    python_version="3.10.14",
    dll_search_mode="active",
    dll_names=("cudnn64_9.dll", "libiomp5md.dll"),
)
LINE_KEYS = sorted(k for k in catalog() if re.fullmatch(r"TC8\d\d\.line(\.\w+)?", k))


@pytest.mark.parametrize("ext", render.ALL_EXTENSIONS)
@pytest.mark.parametrize("facts", [LINUX, WINDOWS], ids=["linux", "windows"])
def test_every_marker_is_replaced_and_the_header_is_ours(ext, facts):
    data = render.render(ext, facts, ("etc/conda/activate.d", "etc/conda"))
    text = data.decode("utf-8-sig")
    assert "@@" not in text
    fields = render.read_header(data)
    assert fields is not None and fields["fingerprint"] == facts.fingerprint()
    assert render.created_dirs(data) == ("etc/conda/activate.d", "etc/conda")


def test_line_endings_and_bom_per_shell():
    assert b"\r\n" in render.render(".bat", WINDOWS) and b"\r\n" in render.render(".ps1", WINDOWS)
    assert render.render(".ps1", WINDOWS).startswith(b"\xef\xbb\xbf")
    assert b"\r\n" not in render.render(".sh", LINUX) and b"\r\n" not in render.render(".fish", LINUX)


def test_files_per_os():
    assert render.extensions_for("windows") == (".bat", ".ps1", ".sh", ".fish")
    assert render.extensions_for("linux") == (".sh", ".fish") == render.extensions_for("darwin")


def test_blocks_follow_the_env():
    linux_sh = render.render(".sh", LINUX).decode()
    assert "LD_LIBRARY_PATH" in linux_sh and "libcublas.so.12" in linux_sh and "Windows_NT" not in linux_sh
    no_libs = render.render(".sh", ActivationFacts("linux", "none", "3.11", "active")).decode()
    assert "LD_LIBRARY_PATH-" not in no_libs  # no library names: the whole block is left out
    win_sh = render.render(".sh", WINDOWS).decode()
    assert "Windows_NT" in win_sh and "cudnn64_9.dll" in win_sh and "_ctc_p/bin" not in win_sh


def test_a_foreign_file_has_no_header():
    assert render.read_header(b"echo hello\n") is None
    assert render.read_header(b"") is None


@pytest.mark.parametrize("key", LINE_KEYS)
@pytest.mark.parametrize("ext", [".sh", ".fish", ".ps1"])
def test_every_activation_message_renders_for_every_shell(key, ext):
    shell = render.SHELLS[ext]
    code = render.message_code(shell, key, shell.variables, {"python": "3.11.9"})
    assert key.split(".")[0] in code
    if ext != ".ps1":
        assert "'\n" not in code


@pytest.mark.parametrize("key", LINE_KEYS)
def test_english_activation_messages_are_printable_by_cmd(key):
    text = catalog()[key]["en"]
    assert text.isascii(), "cmd prints batch files in the console code page: keep English lines ASCII"
    assert '"' not in text
    variables = {"dir": "%%~X", "libs": "%%~F"}
    code = render.message_code(render.SHELLS[".bat"], key, variables, {"python": "3.10", "var": "X_VAR"})
    assert code.startswith(">&2 echo conda-torchcheck TC8")


def test_cmd_literal_escapes_the_specials_and_refuses_quotes():
    assert render.cmd_literal("a (b) & c | d < e > f ^ 100%") == "a ^(b^) ^& c ^| d ^< e ^> f ^^ 100%%"
    with pytest.raises(ValueError):
        render.cmd_literal('say "hi"')


def test_powershell_literal_doubles_all_single_quote_characters():
    assert render.ps_literal("it's ‘x’") == "'it''s ‘‘x’’'"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX sh on this machine")
@pytest.mark.parametrize("text", ["plain", "it's", "a'b'c", "$HOME `id` \\n %s", "中文 ‘q’"])
def test_sh_literal_round_trips_through_a_shell(text):
    out = subprocess.run(["sh", "-c", f"printf '%s' {render.sh_literal(text)}"], capture_output=True, check=True)
    assert out.stdout.decode() == text


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
@pytest.mark.parametrize("text", ["plain", "it's", "back\\slash", "$HOME (id) *", "中文"])
def test_fish_literal_round_trips_through_fish(text):
    code = f"printf '%s' {render.fish_literal(text)}"
    out = subprocess.run(["fish", "--no-config", "-c", code], capture_output=True, check=True)
    assert out.stdout.decode() == text


def test_placeholder_without_a_shell_expression_is_a_bug_not_silence():
    with pytest.raises(KeyError):
        render.message_code(render.SHELLS[".bat"], "TC801.line.env", {}, {})
