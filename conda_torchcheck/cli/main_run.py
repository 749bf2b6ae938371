"""``run -- CMD [ARG ...]``: run a command, and when it fails with an error explain recognises, explain it against
the env of the python that ran.

The user asked for the command to run, so it runs as given (its standard input and output are the terminal's);
its standard error is passed through as it comes and the last :data:`CAPTURE_LIMIT` bytes are kept for explain.
The env checked is, in order: ``-p``/``-n``; the env the command's python lives in (the command itself when it is a
python, else the interpreter its ``#!`` line names: conda's and pip's entry-point scripts have one); the env the
error's paths name; the active env. The exit code is the command's own, so ``run`` can wrap a script in CI;
2 when the command cannot be started.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import deque
from pathlib import Path

from conda_torchcheck.cli.options import add_host_options, add_output_options, add_target_options, output_format
from conda_torchcheck.messages import translate

HELP = translate("run.help", "en")

#: the tail of standard error kept for explain: a traceback is at the end; a long log's start is not needed
CAPTURE_LIMIT = 8 * 1024 * 1024
_CHUNK = 64 * 1024
#: how much of a script is read to find its ``#!`` line
_SHEBANG_LIMIT = 512


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    parser.description = translate("run.help")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD [ARG ...]", help=translate("run.help_cmd"))
    add_target_options(parser)
    add_output_options(parser, json_flag=not conda)
    add_host_options(parser)


def env_of_command(argv: list[str]) -> Path | None:
    """The env whose python runs ``argv``: the program's own folder, or the interpreter its ``#!`` line names."""
    program = shutil.which(argv[0]) if argv else None
    if program is None:
        return None
    path = Path(program)
    env = _env_holding(path)
    if env is not None:
        return env
    interpreter = _shebang_interpreter(path)
    return _env_holding(interpreter) if interpreter is not None else None


def _env_holding(executable: Path) -> Path | None:
    """``PREFIX`` for ``PREFIX/bin/x``, ``PREFIX/Scripts/x`` or (Windows conda) ``PREFIX/x``, when it is an env.

    The path is taken as found, not resolved: a venv's ``bin/python`` links to its base interpreter, but the env
    that runs is the venv.
    """
    parent = Path(os.path.abspath(executable)).parent
    for candidate in (parent.parent, parent) if parent.name in ("bin", "Scripts") else (parent,):
        try:
            if (candidate / "conda-meta").is_dir() or (candidate / "pyvenv.cfg").is_file():
                return candidate
        except OSError:
            continue
    return None


def _shebang_interpreter(script: Path) -> Path | None:
    try:
        if not script.is_file():
            return None
        with script.open("rb") as handle:
            head = handle.read(_SHEBANG_LIMIT)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:  # #!/usr/bin/env python3
        found = shutil.which(words[-1])
        return Path(found) if found else None
    return Path(words[0])


def run_capturing(argv: list[str]) -> tuple[int, bytes, bool]:
    """Run ``argv`` with standard error passed through; (exit code, the kept tail of standard error, cut)."""
    from conda_torchcheck.errors import UsageError

    try:
        child = subprocess.Popen(argv, stderr=subprocess.PIPE)
    except OSError as exc:
        raise UsageError(translate("run.cannot_start", command=argv[0], detail=exc.strerror or exc)) from exc
    assert child.stderr is not None
    kept: deque[bytes] = deque()
    size = 0
    cut = False
    out = getattr(sys.stderr, "buffer", None)
    try:
        while chunk := child.stderr.read1(_CHUNK) if hasattr(child.stderr, "read1") else child.stderr.read(_CHUNK):
            if out is not None:
                out.write(chunk)
                out.flush()
            kept.append(chunk)
            size += len(chunk)
            while size - len(kept[0]) >= CAPTURE_LIMIT:
                size -= len(kept.popleft())
                cut = True
    except KeyboardInterrupt:  # the child got the same signal (one process group): let it finish
        pass
    finally:
        code = child.wait()
    data = b"".join(kept)
    if len(data) > CAPTURE_LIMIT:
        data, cut = data[-CAPTURE_LIMIT:], True
    return code, data, cut


def _known_origin(result) -> None:
    """The error certainly came from the env checked (its python ran the command): an env without torch is then
    the answer, not a sign the error came from elsewhere (explain's note for a pasted error)."""
    from dataclasses import replace

    from conda_torchcheck.messages import msg

    if result.env is None or result.torch is None or result.torch.installed:
        return
    prefix = str(result.env.prefix)
    for i, d in enumerate(result.diagnoses):
        notes = tuple(
            msg("run.note_no_torch", prefix=prefix) if n.key == "explain.note.no_torch" else n for n in d.notes
        )
        result.diagnoses[i] = replace(d, notes=notes)


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.cli.main_explain import decode_input, explanation_for, print_explanation
    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.messages import msg

    argv = list(args.command or [])
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise UsageError(translate("run.no_command"), hint=translate("run.no_command_hint"))
    if shutil.which(argv[0]) is None:
        raise UsageError(translate("run.cannot_start", command=argv[0], detail=translate("run.not_found")))
    code, data, cut = run_capturing(argv)
    if code == 0:
        return 0
    text = decode_input(data)
    prefix, reason = (None, None)
    if not (getattr(args, "prefix", None) or getattr(args, "name", None)):
        env = env_of_command(argv)
        if env is not None:
            prefix, reason = env, "command"
    result = explanation_for(args, text, "command", prefix=prefix, reason=reason)
    if reason == "command":
        _known_origin(result)
    if cut:
        result.notes.append(msg("run.note_cut", limit=CAPTURE_LIMIT // (1024 * 1024)))
    if not result.recognised:
        # the command failed for reasons of its own: say nothing unless asked for a document
        if output_format(args) != "json":
            return code
    print_explanation(args, result)
    return code
