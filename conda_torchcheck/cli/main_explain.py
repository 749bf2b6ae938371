"""``explain [TEXT | -]``: recognise a pasted error, rank its causes, confirm one on an env.

Which env is checked (and said so in the output):
1. the one given with ``-p``/``-n``;
2. without one, an env whose folder the error's paths point into (``…\\envs\\x\\Lib\\site-packages\\torch``),
   when that folder exists on this machine: the error came from it;
3. else the active env (CONDA_PREFIX, then VIRTUAL_ENV);
4. else none: the causes are listed in order, each with how to tell it apart.
``--no-env`` always gives 4. The env's own python is run only with ``--import-test``.

Exit codes: 0 nothing confirmed (or nothing recognised), 1 a cause is confirmed on the env or the import test
failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import locale
import os
import sys
from pathlib import Path

from conda_torchcheck.cli.options import (
    add_host_options,
    add_output_options,
    add_target_options,
    output_format,
    timeout_seconds,
)
from conda_torchcheck.messages import translate

HELP = translate("explain.help", "en")

STDIN_LIMIT = 8 * 1024 * 1024  # a whole CI log is fine; an endless pipe is not


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    parser.description = translate("explain.help")
    parser.add_argument("text", nargs="*", metavar="TEXT", help=translate("explain.help_text"))
    parser.add_argument("-f", "--file", type=Path, metavar="FILE", help=translate("explain.help_file"))
    # the target is optional here, so under conda (which treats explain as a verb without a target) the verb
    # adds -p/-n itself
    add_target_options(parser)
    add_output_options(parser, json_flag=not conda)
    parser.add_argument("--no-env", action="store_true", help=translate("explain.help_no_env"))
    parser.add_argument("--import-test", action="store_true", help=translate("explain.help_import_test"))
    parser.add_argument(
        "--import-timeout",
        type=timeout_seconds,
        default=60.0,
        metavar="SECONDS",
        help=translate("explain.help_import_timeout", default=60),
    )
    add_host_options(parser)


def decode_input(data: bytes) -> str:
    """Pasted bytes from a pipe or file: UTF-8 (with or without BOM), UTF-16 with BOM, else the console's code page.

    Windows consoles in China write GBK (cp936); PowerShell 5 pipes UTF-16. Nothing is lost: undecodable
    bytes become U+FFFD rather than an exception.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    for encoding in (locale.getpreferredencoding(False), "gb18030"):
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("utf-8", errors="replace")


def _cut(data: bytes, source: str) -> bytes:
    """``data`` within STDIN_LIMIT, saying on stderr when it was longer (the error may sit past the cut)."""
    if len(data) <= STDIN_LIMIT:
        return data
    sys.stderr.write(translate("explain.input_cut", source=source, limit=STDIN_LIMIT >> 20) + "\n")
    return data[:STDIN_LIMIT]


def read_text(args: argparse.Namespace) -> tuple[str, str]:
    """(text, source) from the arguments, ``--file`` or standard input."""
    from conda_torchcheck.errors import UsageError

    parts: list[str] = []
    source = "argument"
    words = list(args.text or [])
    wants_stdin = words == ["-"] or (not words and not args.file and not sys.stdin.isatty())
    if args.file is not None:
        try:
            # open() as it is: a FIFO is a fine -f (a shell's <(...)); the cap bounds what an endless one costs
            with open(args.file, "rb") as fh:
                data = fh.read(STDIN_LIMIT + 1)
        except (OSError, ValueError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(translate("explain.file_unreadable", path=str(args.file), detail=detail)) from exc
        parts.append(decode_input(_cut(data, str(args.file))))
        source = "file"
    if wants_stdin:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is not None:
            data = stream.read(STDIN_LIMIT + 1)
        else:
            data = sys.stdin.read(STDIN_LIMIT + 1).encode("utf-8")
        parts.append(decode_input(_cut(data, "standard input")))
        source = "stdin"
    elif words:
        parts.append(" ".join(w for w in words if w != "-"))
    return "\n".join(parts), source


def choose_target(args: argparse.Namespace, text: str) -> tuple[Path | None, str | None]:
    """The env to check and why (see the module docstring)."""
    if getattr(args, "no_env", False):
        return None, None
    if getattr(args, "prefix", None):
        return Path(os.path.expanduser(args.prefix)), "prefix"
    if getattr(args, "name", None):
        from conda_torchcheck.inventory.locate import resolve_name

        return resolve_name(args.name), "name"
    if text:
        from conda_torchcheck.explain.diagnose import prefix_named_by
        from conda_torchcheck.explain.recognise import recognise

        for match in recognise(text):
            named = prefix_named_by(match)
            if named and _is_env(Path(named)):
                return Path(named), "from-error"
    for var in ("CONDA_PREFIX", "VIRTUAL_ENV"):
        value = os.environ.get(var)
        if value and Path(value).is_dir():
            return Path(value), "active"
    return None, None


def _is_env(path: Path) -> bool:
    try:
        return path.is_dir() and ((path / "conda-meta").is_dir() or (path / "pyvenv.cfg").is_file())
    except OSError:
        return False


def build_explanation(args: argparse.Namespace):
    from conda_torchcheck.errors import UsageError

    text, source = read_text(args)
    if not text.strip() and not args.import_test:
        raise UsageError(translate("explain.no_text"), hint=translate("explain.no_text_hint"))
    return explanation_for(args, text, source)


def explanation_for(
    args: argparse.Namespace, text: str, source: str, *, prefix: Path | None = None, reason: str | None = None
):
    """explain ``text`` against the env ``prefix`` (when given) or the one :func:`choose_target` picks."""
    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.explain import explain
    from conda_torchcheck.messages import msg

    if prefix is None:
        prefix, reason = choose_target(args, text)
    import_test = bool(getattr(args, "import_test", False))
    if import_test and prefix is None:
        raise UsageError(
            translate("explain.import_test_needs_env"), hint=translate("explain.import_test_needs_env_hint")
        )
    ctx = None
    if prefix is not None:
        from conda_torchcheck.checks.context import CheckContext, CheckOptions
        from conda_torchcheck.cli.options import host_overrides
        from conda_torchcheck.inventory import load_environment

        env, host = load_environment(
            prefix,
            use_live_host=not getattr(args, "ignore_environment", False),
            host_overrides=host_overrides(args),
            cwd=getattr(args, "cwd", None),
            system_root=getattr(args, "system_root", None),
        )
        timeout = float(getattr(args, "import_timeout", None) or 60.0)
        options = CheckOptions(import_test=import_test, import_timeout=timeout)
        ctx = CheckContext(env, host, options)
    import_result = None
    notes = []
    if import_test and ctx is not None:
        from conda_torchcheck.checks.import_test import import_test_result

        import_result = import_test_result(ctx)
        if import_result.outcome != "ok" or import_result.report.get("warnings"):
            extra = import_result.error_text()
            if extra.strip():
                text = f"{text}\n{extra}" if text.strip() else extra
                if source == "argument" and not args.text:
                    source = "import-test"
                notes.append(msg("explain.note.import_test_text"))
    result = explain(text, ctx, source=source, target_reason=reason)
    result.text_length = len(text)
    result.notes.extend(notes)
    if import_result is not None:
        result.import_test = import_result.to_dict()
    if ctx is not None and output_format(args) == "markdown":
        from conda_torchcheck.report import environment_facts

        result.facts = environment_facts(ctx)
    return result


def execute(args: argparse.Namespace) -> int:
    result = build_explanation(args)
    print_explanation(args, result)
    return 1 if result.has_errors else 0


def print_explanation(args: argparse.Namespace, result) -> None:
    """The explanation on stdout in the format the arguments ask for (text, json, markdown)."""
    from conda_torchcheck.explain.render import render_explanation_json, render_explanation_text
    from conda_torchcheck.render.style import wants_color

    fmt = output_format(args)
    lang = getattr(args, "lang", None)
    if fmt == "json":
        out = render_explanation_json(result, lang=lang)
    elif fmt == "markdown":
        from conda_torchcheck.render.markdown import render_explanation_markdown

        out = render_explanation_markdown(result, lang=lang)
    else:
        out = render_explanation_text(result, lang=lang, color=wants_color(sys.stdout), verbose=args.verbose)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
