"""``docs [ID]``: a finding's page (shipped in the package), printed in the terminal; the index without an id."""

from __future__ import annotations

import argparse
import sys

HELP = "Print the documentation page of a finding id (e.g. TC301), or the index of all of them; works offline."


def configure_parser(parser: argparse.ArgumentParser, *, conda: bool = False) -> None:
    parser.add_argument("id", nargs="?", default=None, metavar="ID", help="finding id, e.g. TC301 (default: index)")
    parser.add_argument("--path", action="store_true", help="print only the installed page's path")
    if not conda:
        parser.add_argument("--json", action="store_true", default=False, help="print one JSON document on stdout")


def execute(args: argparse.Namespace) -> int:
    from conda_torchcheck.errors import UsageError
    from conda_torchcheck.findings import DOCS_DIR, docs_page
    from conda_torchcheck.messages import translate

    wanted = args.id
    page = DOCS_DIR / "README.md" if wanted is None else docs_page(wanted)
    if page is None or not page.is_file():
        from conda_torchcheck.registry import ids

        known = ids()
        raise UsageError(
            translate("cli.docs.unknown_id", id=wanted), hint=translate("cli.docs.known", ids=", ".join(known))
        )
    text = page.read_text(encoding="utf-8")
    if getattr(args, "json", False):
        import json

        from conda_torchcheck.schema import header

        doc = {**header("docs"), "id": None if wanted is None else page.stem, "path": str(page), "text": text}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif args.path:
        print(page)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
