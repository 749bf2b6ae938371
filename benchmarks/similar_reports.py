"""Evaluate explain's similar resolved reports, leave-one-set-out, and on a blind set.

    .venv/bin/python benchmarks/similar_reports.py [--dir BLIND_SET] [--json]

Leave-one-set-out: for each set of tests/data/reports (the letter of its names: w, x, y ...), an index is built
from the other sets only, and each paste of the held-out set is asked for its three nearest reports. With
``--dir``, a blind set is asked against the whole shipped index. Per paste:

- shown: at least one neighbour passes the score floor (similar.MIN_SCORE, MIN_SHARED);
- hit@1 / hit@3: the first / any shown neighbour's causes include one of the paste's own (aliases resolved);
- possible: some report outside the held-out set has one of the paste's causes (else no index could hit);
- also split by whether explain recognised the paste (the neighbours matter most where it did not).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conda_torchcheck._toml import load_toml_text  # noqa: E402
from conda_torchcheck.cli.main_explain import decode_input  # noqa: E402
from conda_torchcheck.explain import explain  # noqa: E402
from conda_torchcheck.explain.patterns import table  # noqa: E402
from conda_torchcheck.explain.similar import Index, ResolvedReport, shipped_index  # noqa: E402
from tools.build_resolved_reports import CORPUS, report_entries  # noqa: E402


def _alias() -> dict[str, str]:
    return {a: c.id for c in table().causes.values() for a in c.aliases}


def _reports(entries: list[dict]) -> list[ResolvedReport]:
    return [ResolvedReport(e["id"], e["url"], tuple(e["causes"]), e["summary"], e["tokens"]) for e in entries]


def evaluate(index: Index, pastes: list[Path], alias: dict[str, str]) -> dict[str, Any]:
    known = {alias.get(c, c) for r in index.reports for c in r.causes}
    rows = []
    for txt in pastes:
        meta = load_toml_text(txt.with_suffix(".toml").read_text(encoding="utf-8"))
        truth = {alias.get(str(c), str(c)) for c in meta.get("causes", [])}
        text = decode_input(txt.read_bytes())
        near = index.nearest(text, 3)
        got = [{alias.get(c, c) for c in n.report.causes} for n in near]
        rows.append(
            {
                "name": txt.stem,
                "recognised": explain(text).recognised,
                "possible": bool(truth & known),
                "shown": bool(near),
                "hit1": bool(got and got[0] & truth),
                "hit3": any(g & truth for g in got),
            }
        )
    return summarise(rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def rates(sub: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(sub)
        shown = [r for r in sub if r["shown"]]
        return {
            "n": n,
            "possible": sum(r["possible"] for r in sub),
            "shown": len(shown),
            "hit1": sum(r["hit1"] for r in sub),
            "hit3": sum(r["hit3"] for r in sub),
            "hit1_when_shown": round(sum(r["hit1"] for r in shown) / len(shown), 3) if shown else None,
        }

    return {
        "all": rates(rows),
        "recognised": rates([r for r in rows if r["recognised"]]),
        "unrecognised": rates([r for r in rows if not r["recognised"]]),
    }


def leave_one_set_out(corpus: Path = CORPUS) -> dict[str, dict[str, Any]]:
    alias = _alias()
    by_set: dict[str, list[Path]] = defaultdict(list)
    for txt in sorted(corpus.glob("*.txt")):
        if txt.with_suffix(".toml").is_file():
            by_set[txt.stem[:1]].append(txt)
    out = {}
    for name, pastes in sorted(by_set.items()):
        index = Index(_reports(report_entries(corpus, skip=frozenset({name}))))
        out[name] = evaluate(index, pastes, alias)
    return out


def _line(label: str, r: dict[str, Any]) -> str:
    n = r["n"] or 1
    when = f"{100 * r['hit1_when_shown']:.0f}%" if r["hit1_when_shown"] is not None else "-"
    return (
        f"  {label:<14} n={r['n']:>3}  shown {100 * r['shown'] / n:4.0f}%  hit@1 {100 * r['hit1'] / n:4.0f}%  "
        f"hit@3 {100 * r['hit3'] / n:4.0f}%  hit@1 when shown {when:>4}  (cause in index: {r['possible']})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="a blind set, asked against the whole shipped index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.dir is not None:
        pastes = [p for p in sorted(args.dir.glob("*.txt")) if p.with_suffix(".toml").is_file()]
        doc: dict[str, Any] = {"blind": evaluate(shipped_index(), pastes, _alias())}
    else:
        per_set = leave_one_set_out()
        rows_all = {k: [] for k in ("all", "recognised", "unrecognised")}
        doc = {"per_set": per_set}
        for k in rows_all:
            total = {"n": 0, "possible": 0, "shown": 0, "hit1": 0, "hit3": 0}
            shown_hits = 0
            for s in per_set.values():
                for key in total:
                    total[key] += s[k][key]
                shown_hits += s[k]["hit1"]
            total["hit1_when_shown"] = round(shown_hits / total["shown"], 3) if total["shown"] else None
            doc[k] = total
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    if "blind" in doc:
        print(f"blind set {args.dir} against the shipped index:")
        for k, r in doc["blind"].items():
            print(_line(k, r))
        return 0
    print("leave-one-set-out over tests/data/reports (each set asked against an index of the others):")
    for k in ("all", "recognised", "unrecognised"):
        print(_line(k, doc[k]))
    print("per set (all):")
    for name, s in doc["per_set"].items():
        print(_line(name, s["all"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
