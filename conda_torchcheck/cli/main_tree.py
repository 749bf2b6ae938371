"""``tree``: the dependency tree of torch (or of one DLL / shared object) as this env's loader would resolve it."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from conda_torchcheck.cli.options import add_host_options, add_output_options, add_target_options, load_target
from conda_torchcheck.errors import TargetError, UsageError

HELP = (
    "Show the dependency tree of torch (default) or of FILE, each library tagged with how the loader finds it; "
    "misses list the places searched."
)


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        default="torch",
        metavar="FILE | torch",
        help="a DLL, .pyd or shared object, or 'torch' for the whole of `import torch` (default)",
    )
    if not conda:
        add_target_options(parser)
        add_output_options(parser, formats=("text", "json"))
    else:
        add_output_options(parser, formats=("text", "json"), json_flag=False)
    add_host_options(parser)


def _loader_for(os_name: str):
    module_name = {"windows": "conda_torchcheck.loader.windows", "linux": "conda_torchcheck.loader.linux"}.get(os_name)
    if module_name is None:
        from conda_torchcheck.messages import translate

        raise TargetError(translate("tree.no_loader", os=os_name))
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            from conda_torchcheck.messages import translate

            raise TargetError(translate("tree.no_loader", os=os_name)) from exc
        raise


def _file_os(path: Path, default: str) -> str:
    from conda_torchcheck.binaries.headers import sniff

    header = sniff(path)
    if header is None:
        return default
    return {"pe": "windows", "elf": "linux"}.get(header.format, default)


def build_graph(args: argparse.Namespace):
    from conda_torchcheck.checks.context import CheckContext
    from conda_torchcheck.messages import translate

    env, host = load_target(args)
    ctx = CheckContext(env, host)
    target = args.target or "torch"
    if target == "torch":
        loader = _loader_for(env.os)
        graph = loader.build_torch_graph(ctx)
        if graph is None:
            raise TargetError(translate("tree.no_torch", prefix=str(env.prefix)))
        return env, graph
    path = Path(target).expanduser()
    if not path.is_file():
        raise TargetError(translate("tree.not_a_file", path=str(path)))
    loader = _loader_for(_file_os(path, env.os))
    return env, loader.build_graph_for_file(ctx, path.absolute())


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.render.style import wants_color
    from conda_torchcheck.render.tree import graph_failed, render_tree_json, render_tree_text

    fmt = "json" if getattr(args, "json", False) else (args.format or "text")
    if getattr(args, "json", False) and args.format not in (None, "json"):
        from conda_torchcheck.messages import translate

        raise UsageError(translate("cli.usage.json_and_format", format=args.format))
    env, graph = build_graph(args)
    if fmt == "json":
        text = render_tree_json(graph, target={"prefix": str(env.prefix), "os": env.os, "platform": env.platform})
    else:
        text = render_tree_text(
            graph, lang=getattr(args, "lang", None), color=wants_color(sys.stdout), verbose=args.verbose
        )
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 1 if graph_failed(graph) else 0
