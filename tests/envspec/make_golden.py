"""Regenerate tests/envspec/golden/<case>.out.yml from <case>.in.yml with `spec fix` (no env).

Run by hand after a deliberate change of the rewrite rules, then review every diff before committing:
    .venv/bin/python tests/envspec/make_golden.py
"""

from __future__ import annotations

import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def main() -> int:
    from conda_torchcheck.envspec import fix_file
    from conda_torchcheck.envspec.parse import decode, encode, parse_text

    for source in sorted(GOLDEN.glob("*.in.yml")):
        data = source.read_bytes()
        text, encoding, bom = decode(data, source.name)
        result = fix_file(parse_text(text, source.name, encoding=encoding, bom=bom))
        target = source.with_name(source.name.replace(".in.yml", ".out.yml"))
        target.write_bytes(encode(result.fixed, encoding, bom))
        print(f"{source.name}: {len(result.plan.changes)} change(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
