"""Score `explain --no-env` on the real-report corpus (tests/data/reports): is the thread's cause ranked first?

Run by hand:  .venv/bin/python benchmarks/explain_corpus.py [--json] [--subprocess] [--misses] [--dir DIR]

Every ``NAME.txt`` (a verbatim paste) has a ``NAME.toml`` beside it with the truth its thread established:
``causes`` (acceptable first causes), ``false_claims`` (causes the thread shows false), ``classes``, ``os``,
``language``. Scored per paste, from the paste-level ranking ``Explanation.likely_causes`` (what the JSON
calls ``likely_causes``):

- top-1: the first cause is one of ``causes``; top-3: one of the first three is;
- unrecognised: no pattern matched at all;
- false claim: the first cause of the paste is in ``false_claims``;
- time: explain() per paste, in-process (``--subprocess`` also times the real command line).

The floor test (tests/explain/test_corpus_floor.py) imports ``score_corpus`` from here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conda_torchcheck._toml import load_toml_text  # noqa: E402
from conda_torchcheck.cli.main_explain import decode_input  # noqa: E402
from conda_torchcheck.explain import explain  # noqa: E402
from conda_torchcheck.explain.patterns import table  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "reports"


@dataclass
class CaseResult:
    name: str
    os: str
    language: str
    classes: list[str]
    truth: list[str]
    false_claims: list[str]
    ranked: list[str]
    #: the first cause of each recognised error
    firsts: list[str]
    patterns: list[str]
    seconds: float
    #: truth ids the pattern table does not know (coined by the collectors)
    unknown_ids: list[str] = field(default_factory=list)

    @property
    def top1(self) -> bool:
        return bool(self.ranked) and self.ranked[0] in self.truth

    @property
    def top3(self) -> bool:
        return any(c in self.truth for c in self.ranked[:3])

    @property
    def unrecognised(self) -> bool:
        return not self.patterns

    @property
    def false_claim(self) -> list[str]:
        # what the paste is said to be caused by: the first of the paste-level ranking (an earlier error's own
        # first cause can be right for that error and still not the thread's root cause)
        return sorted(set(self.ranked[:1]) & set(self.false_claims))


def load_truth(path: Path) -> dict[str, Any]:
    return load_toml_text(path.read_text(encoding="utf-8"))


def score_case(txt: Path) -> CaseResult | None:
    meta_path = txt.with_suffix(".toml")
    if not meta_path.is_file():
        return None
    meta = load_truth(meta_path)
    text = decode_input(txt.read_bytes())
    start = time.perf_counter()
    result = explain(text, source="file")
    ranked = result.likely_causes
    seconds = time.perf_counter() - start
    causes = table().causes
    known = set(causes)
    # a cause the collectors filed under another name counts as that cause (patterns.Cause.aliases)
    alias = {a: c.id for c in causes.values() for a in c.aliases}
    truth = [alias.get(str(c), str(c)) for c in meta.get("causes", [])]
    return CaseResult(
        name=txt.stem,
        os=str(meta.get("os", "?")),
        language=str(meta.get("language", "?")),
        classes=[str(c) for c in meta.get("classes", [])] or ["(none)"],
        truth=truth,
        false_claims=[alias.get(str(c), str(c)) for c in meta.get("false_claims", [])],
        ranked=ranked,
        firsts=[d.causes[0].id for d in result.diagnoses if d.causes],
        patterns=[d.match.pattern_id for d in result.diagnoses],
        seconds=seconds,
        unknown_ids=[c for c in truth if c not in known],
    )


def score_corpus(directory: Path = CORPUS) -> list[CaseResult]:
    out = []
    for txt in sorted(directory.glob("*.txt")):
        case = score_case(txt)
        if case is not None:
            out.append(case)
    return out


def summary(cases: list[CaseResult]) -> dict[str, Any]:
    n = len(cases)
    times = [c.seconds for c in cases]
    return {
        "n": n,
        "top1": sum(c.top1 for c in cases) / n if n else 0.0,
        "top3": sum(c.top3 for c in cases) / n if n else 0.0,
        "unrecognised": sum(c.unrecognised for c in cases) / n if n else 0.0,
        "false_claims": sum(bool(c.false_claim) for c in cases),
        "median_s": statistics.median(times) if times else 0.0,
        "max_s": max(times) if times else 0.0,
    }


def grouped(cases: list[CaseResult], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for c in cases:
        values = c.classes if key == "class" else [getattr(c, key)]
        for v in values:
            groups[v].append(c)
    return {k: summary(v) for k, v in sorted(groups.items())}


def time_subprocess(cases: list[CaseResult], directory: Path) -> dict[str, float]:
    """Wall time of the real command line per paste (interpreter start-up included)."""
    times = []
    for c in cases:
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "conda_torchcheck",
                "explain",
                "--no-env",
                "--json",
                "--file",
                str(directory / f"{c.name}.txt"),
            ],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "max_s": max(times)} if times else {}


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def print_table(title: str, rows: dict[str, dict[str, Any]]) -> None:
    print(f"\n{title:<34} {'n':>4} {'top-1':>7} {'top-3':>7} {'unrec':>7} {'false':>5}")
    for name, s in rows.items():
        rates = f"{_pct(s['top1'])} {_pct(s['top3'])} {_pct(s['unrecognised'])}"
        print(f"{name[:34]:<34} {s['n']:>4} {rates} {s['false_claims']:>5}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=CORPUS)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--subprocess", action="store_true", help="also time the command line per paste")
    parser.add_argument("--misses", action="store_true", help="list the misses (default: on for text output)")
    parser.add_argument("--only", help="only cases whose name starts with this (w, x, w012 ...)")
    args = parser.parse_args(argv)
    cases = score_corpus(args.dir)
    if args.only:
        cases = [c for c in cases if c.name.startswith(args.only)]
    total = summary(cases)
    doc: dict[str, Any] = {
        "total": total,
        "by_class": grouped(cases, "class"),
        "by_os": grouped(cases, "os"),
        "by_language": grouped(cases, "language"),
        "misses": [
            {**asdict(c), "top1": c.top1, "top3": c.top3, "false_claim": c.false_claim}
            for c in cases
            if not c.top1 or c.false_claim
        ],
        "unknown_truth_ids": sorted({i for c in cases for i in c.unknown_ids}),
    }
    if args.subprocess:
        doc["subprocess"] = time_subprocess(cases, args.dir)
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    t = total
    print(
        f"{t['n']} pastes: top-1 {_pct(t['top1'])}, top-3 {_pct(t['top3'])}, unrecognised {_pct(t['unrecognised'])}, "
        f"false claims {t['false_claims']}, time median {t['median_s'] * 1000:.1f} ms, max {t['max_s'] * 1000:.1f} ms"
    )
    if "subprocess" in doc:
        s = doc["subprocess"]
        print(f"command line: median {s['median_s']:.2f} s, max {s['max_s']:.2f} s")
    print_table("by class", doc["by_class"])
    print_table("by OS", doc["by_os"])
    print_table("by language", doc["by_language"])
    if doc["unknown_truth_ids"]:
        print("\ntruth ids the table lacks:", ", ".join(doc["unknown_truth_ids"]))
    print("\nmisses (name: truth | first three | patterns):")
    for c in cases:
        if not c.top1 or c.false_claim:
            mark = "FALSE " if c.false_claim else ("top3  " if c.top3 else "")
            first = ", ".join(c.ranked[:3]) or "-"
            print(f"  {mark}{c.name}: {'/'.join(c.truth)} | {first} | {', '.join(c.patterns) or '-'}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BrokenPipeError:  # `... | head`
        sys.stderr.close()
