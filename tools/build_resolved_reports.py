"""Build the index of resolved public reports that ``explain`` shows as similar threads.

    .venv/bin/python tools/build_resolved_reports.py [--corpus tests/data/reports] [--out PATH]

Reads every ``NAME.txt`` / ``NAME.toml`` pair of the report corpus and writes
``conda_torchcheck/explain/resolved_reports.json``: per report its URL, the cause ids the thread established,
the established cause in words (the collector's ``truth``), and the paste's weighted tokens
(:func:`conda_torchcheck.explain.similar.report_weights`: paths reduced to a library or module name, nothing
else of them). The pastes themselves are not shipped. Deterministic: run it again after the corpus grows and
commit the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conda_torchcheck._toml import load_toml_text  # noqa: E402
from conda_torchcheck.cli.main_explain import decode_input  # noqa: E402
from conda_torchcheck.explain.similar import INDEX_FILE, report_weights  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "reports"
SUMMARY_CHARS = 300


def report_entries(corpus: Path, skip: frozenset[str] = frozenset()) -> list[dict]:
    entries = []
    for txt in sorted(corpus.glob("*.txt")):
        meta_path = txt.with_suffix(".toml")
        if not meta_path.is_file() or txt.stem[:1] in skip:
            continue
        meta = load_toml_text(meta_path.read_text(encoding="utf-8"))
        causes = [str(c) for c in meta.get("causes", []) if not str(c).startswith("new:")]
        url = str(meta.get("url", ""))
        if not causes or not url:
            continue
        summary = " ".join(str(meta.get("truth", "")).split())
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
        entries.append(
            {
                "id": txt.stem,
                "url": url,
                "causes": causes,
                "summary": summary,
                "tokens": report_weights(decode_input(txt.read_bytes())),
            }
        )
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=INDEX_FILE)
    args = parser.parse_args(argv)
    doc = {
        "about": "Resolved public reports for `explain`'s similar threads; built by tools/build_resolved_reports.py "
        "from tests/data/reports (URLs, established causes, weighted tokens; no pastes, no paths).",
        "reports": report_entries(args.corpus),
    }
    args.out.write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(doc['reports'])} reports -> {args.out} ({args.out.stat().st_size // 1024} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
