"""``list-checks``: every emitter of findings (checks, spec rules, activation scripts, the runner) and its ids,
from conda_torchcheck.registry."""

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
    from conda_torchcheck import registry
    from conda_torchcheck.findings import DOCS_DIR, docs_command, docs_page
    from conda_torchcheck.messages import lookup, translate

    def title(finding_id: str) -> str:
        # ids whose every message has a variant (TC602's three channel-order cases) have no plain title
        if lookup(f"{finding_id}.title") is None:
            return registry.spec(finding_id).summary  # type: ignore[union-attr]
        return translate(f"{finding_id}.title", args.lang)

    # every emitter the registry knows: the engine checks, spec check's rules, the activation scripts, the runner
    emitters = [e for e in registry.EMITTERS if e.ids]
    if getattr(args, "json", False):
        doc = [
            {
                "name": e.name,
                "summary": e.summary,
                "platforms": list(e.platforms),
                "ids": [
                    {
                        "id": i,
                        "title": title(i),
                        "docs": {"path": str(docs_page(i) or "") or None, "command": docs_command(i)},
                    }
                    for i in e.ids
                ],
            }
            for e in emitters
        ]
        from conda_torchcheck.schema import header

        json.dump({**header("checks"), "checks": doc}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(translate("cli.list_checks_header", args.lang))
    for e in emitters:
        platforms = "" if len(e.platforms) == 3 else f" ({', '.join(e.platforms)})"
        print(f"  {e.name:<22} [{', '.join(e.ids)}]{platforms}")
        print(f"  {'':<22} {e.summary}")
    print(translate("cli.list_checks_footer", args.lang, path=str(DOCS_DIR)))
    return 0
