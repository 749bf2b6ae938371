"""``list-checks``: the checks and the finding ids each can produce."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "List the checks and the finding ids they can report."


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    if not conda:
        parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--lang", choices=("en", "zh_CN"), default=None, help="language")


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.checks import all_checks
    from conda_torchcheck.findings import DOCS_DIR, docs_command, docs_page
    from conda_torchcheck.messages import translate

    checks = all_checks()
    if getattr(args, "json", False):
        doc = [
            {
                "name": c.name,
                "summary": c.summary,
                "platforms": list(c.platforms),
                "ids": [
                    {
                        "id": i,
                        "title": translate(f"{i}.title", args.lang),
                        "docs": {"path": str(docs_page(i) or "") or None, "command": docs_command(i)},
                    }
                    for i in c.ids
                ],
            }
            for c in checks
        ]
        from conda_torchcheck.schema import header

        json.dump({**header("checks"), "checks": doc}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(translate("cli.list_checks_header", args.lang))
    for c in checks:
        platforms = "" if len(c.platforms) == 3 else f" ({', '.join(c.platforms)})"
        print(f"  {c.name:<22} [{', '.join(c.ids)}]{platforms}")
        print(f"  {'':<22} {c.summary}")
    print(translate("cli.list_checks_footer", args.lang, path=str(DOCS_DIR)))
    return 0
