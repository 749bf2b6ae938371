"""``hooks install|remove|status``: this tool's activation checks in a conda env's ``etc/conda/activate.d``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "Install, remove or show the activation checks that run on `conda activate` (PATH, LD_LIBRARY_PATH, ...)."

ACTIONS = {
    "install": "write the scripts for cmd, PowerShell, POSIX shells and fish (rewrites ours only)",
    "remove": "delete the scripts and the folders install created; nothing is left behind",
    "status": "show whether the scripts are installed and up to date",
}


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    parser.add_argument("action", choices=tuple(ACTIONS), help="; ".join(f"{k}: {v}" for k, v in ACTIONS.items()))
    if not conda:
        from conda_torchcheck.cli.options import add_target_options

        add_target_options(parser)
        parser.add_argument("--json", action="store_true", default=False, help="print one JSON document on stdout")
    parser.add_argument("--lang", choices=("en", "zh_CN"), default=None, help="language of the messages")


def _prefix(args: argparse.Namespace) -> Path:
    from conda_torchcheck.inventory.locate import resolve_target

    return Path(resolve_target(getattr(args, "prefix", None), getattr(args, "name", None))).absolute()


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.hooks.activation import install as activation
    from conda_torchcheck.messages import translate
    from conda_torchcheck.schema import header

    lang = getattr(args, "lang", None)
    prefix = _prefix(args)
    as_json = bool(getattr(args, "json", False))
    if args.action == "install":
        result = activation.install(prefix)
        if as_json:
            doc = {
                "action": "install",
                "directory": str(result.directory),
                "written": result.written,
                "unchanged": result.unchanged,
                "removed": result.removed,
            }
            print(json.dumps({**header("hooks"), **doc}, ensure_ascii=False))
        elif result.written or result.removed:
            print(
                translate(
                    "activation_hooks.installed",
                    lang,
                    directory=str(result.directory),
                    files=", ".join(result.written) or "-",
                )
            )
        else:
            print(translate("activation_hooks.unchanged", lang, directory=str(result.directory)))
        return 0
    if args.action == "remove":
        removed = activation.remove(prefix)
        if as_json:
            doc = {
                "action": "remove",
                "directory": str(removed.directory),
                "removed": removed.removed,
                "removed_dirs": removed.removed_dirs,
            }
            print(json.dumps({**header("hooks"), **doc}, ensure_ascii=False))
        elif removed.removed:
            print(
                translate(
                    "activation_hooks.removed", lang, directory=str(removed.directory), files=", ".join(removed.removed)
                )
            )
        else:
            print(translate("activation_hooks.nothing_to_remove", lang, directory=str(removed.directory)))
        return 0
    if not (prefix / "conda-meta").is_dir():
        from conda_torchcheck.errors import TargetError

        raise TargetError(translate("activation_hooks.not_conda_env", lang, prefix=str(prefix)))
    state = activation.status(prefix, activation.current_facts(prefix))
    if as_json:
        print(json.dumps({**header("hooks"), "action": "status", **state.to_dict()}, ensure_ascii=False))
        return 0
    print(translate("activation_hooks.status_header", lang, directory=str(state.directory)))
    for f in state.files:
        label = translate(f"activation_hooks.status_{f.state}", lang) if f.state != "foreign" else f.state
        print(f"  {f.name:<26} {label}")
    sys.stdout.flush()
    return 0
