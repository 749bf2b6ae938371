"""``tree``: the dependency tree of torch (or of one DLL / shared object) as this env's loader would resolve it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conda_torchcheck.cli.options import (
    add_host_options,
    add_output_options,
    add_target_options,
    host_overrides,
    load_target,
)
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
    from conda_torchcheck.loader.contract import LOADER_MODULES, for_os
    from conda_torchcheck.messages import translate

    try:
        loader = for_os(os_name)
    except ModuleNotFoundError as exc:  # a trimmed install without that OS's model
        if exc.name == LOADER_MODULES.get(os_name):
            raise TargetError(translate("tree.no_loader", os=os_name)) from exc
        raise
    if loader is None:
        raise TargetError(translate("tree.no_loader", os=os_name))
    return loader


def build_graph(args: argparse.Namespace):
    """(target facts for the JSON document, the load graph)."""
    from conda_torchcheck.messages import translate

    target = args.target or "torch"
    path = file_format = None
    if target != "torch":
        path = Path(target).expanduser()
        if not path.is_file():
            raise TargetError(translate("tree.not_a_file", path=str(path)))
        from conda_torchcheck.binaries.headers import sniff

        header = sniff(path)
        file_format = header.format if header is not None else None
        if header is not None and header.format == "elf":
            return _elf_file_graph(args, path.absolute(), header.arch)
    from conda_torchcheck.checks.context import CheckContext

    env, host = load_target(args)
    ctx = CheckContext(env, host)
    facts = {"prefix": str(env.prefix), "os": env.os, "platform": env.platform, "platform_guess": env.platform_guess}
    if path is None:
        loader = _loader_for(env.os)
        graph = loader.build_torch_graph(ctx)
        if graph is None:
            raise TargetError(translate("tree.no_torch", prefix=str(env.prefix)))
        return facts, graph
    if file_format == "macho":
        # a Mach-O file is read with dyld's rules whatever the env; an env that is not a macOS one adds nothing
        loader = _loader_for("darwin")
        if env.os != "darwin":
            from conda_torchcheck.loader.contract import FileContext

            return facts, loader.build_graph_for_file(FileContext(host), path.absolute())
        return facts, loader.build_graph_for_file(ctx, path.absolute())
    loader = _loader_for("windows" if file_format == "pe" else env.os)
    return facts, loader.build_graph_for_file(ctx, path.absolute())


def _elf_file_graph(args: argparse.Namespace, path: Path, arch: str):
    """An ELF file is loaded as a program: ld.so and this machine's facts decide, not the env's packages.

    So the env is not read at all (reading it would be most of the run time); an env given with -p/-n must
    still exist, so that a typo is not silently ignored.
    """
    from conda_torchcheck.inventory.host import make_host_facts
    from conda_torchcheck.inventory.locate import readable_folder, resolve_target
    from conda_torchcheck.inventory.names import PLATFORMS
    from conda_torchcheck.loader import linux
    from conda_torchcheck.loader.contract import FileContext

    prefix = None
    if getattr(args, "prefix", None) or getattr(args, "name", None):
        prefix = readable_folder(resolve_target(getattr(args, "prefix", None), getattr(args, "name", None)))
    host = make_host_facts(
        "linux",
        prefix or path.parent,
        use_live=not getattr(args, "ignore_environment", False),
        overrides=host_overrides(args),
        cwd=getattr(args, "cwd", None),
    )
    graph = linux.build_graph_for_file(FileContext(host), path)
    facts = {
        "prefix": str(prefix) if prefix else None,
        "os": "linux",
        "platform": PLATFORMS.get(("linux", arch)),
        "platform_guess": None,
    }
    return facts, graph


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.render.style import wants_color
    from conda_torchcheck.render.tree import graph_failed, render_tree_json, render_tree_text

    fmt = "json" if getattr(args, "json", False) else (args.format or "text")
    if getattr(args, "json", False) and args.format not in (None, "json"):
        from conda_torchcheck.messages import translate

        raise UsageError(translate("cli.usage.json_and_format", format=args.format))
    facts, graph = build_graph(args)
    if fmt == "json":
        text = render_tree_json(graph, target=facts)
    else:
        text = render_tree_text(
            graph, lang=getattr(args, "lang", None), color=wants_color(sys.stdout), verbose=args.verbose
        )
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 1 if graph_failed(graph) else 0
