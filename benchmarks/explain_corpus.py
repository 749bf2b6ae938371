"""Score `explain --no-env` on the real-report corpus (tests/data/reports): is the thread's cause ranked first?

Run by hand:  .venv/bin/python benchmarks/explain_corpus.py [--json] [--subprocess] [--misses] [--dir DIR]
Score a new blind set once:  .venv/bin/python benchmarks/explain_corpus.py --first-pass DIR --set NAME

The headline is first-pass (tests/data/reports/first_pass.toml): each blind set scored once as it arrived, before
anything was changed for it, and the mean of the last three sets. The score on the whole corpus comes second: the
corpus's rules were written after reading its pastes, so it is in-sample.

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
FIRST_PASS = CORPUS / "first_pass.toml"


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
    #: explain said the text decides its first cause (Explanation.decision)
    decided: bool = False
    decider: str | None = None
    #: the collector's judgement from the paste alone: could an expert name the cause (yes / top3 / no); "" when
    #: the set predates that field
    expert: str = ""

    @property
    def confidently_wrong(self) -> bool:
        """A first cause stated as decided that is not the thread's cause."""
        return self.decided and not self.top1

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


def report_set(name: str) -> str:
    """The set a report belongs to: the letters its name starts with (``p`` for p003, ``issue-22`` stays whole)."""
    letters = name.rstrip("0123456789")
    return letters or name


_WITHOUT: dict[str, Any] = {}


def _index_without(set_name: str) -> Any:
    """The shipped similar-reports index without one set's reports: a paste must not find its own thread (the
    in-sample score is leave-one-set-out for the similar reports, as benchmarks/similar_reports.py evaluates them;
    a first-pass set is not in the index at all)."""
    from conda_torchcheck.explain import similar

    if set_name not in _WITHOUT:
        full = similar.shipped_index()
        _WITHOUT[set_name] = similar.Index(r for r in full.reports if report_set(r.id) != set_name)
    return _WITHOUT[set_name]


def score_case(txt: Path) -> CaseResult | None:
    meta_path = txt.with_suffix(".toml")
    if not meta_path.is_file():
        return None
    meta = load_truth(meta_path)
    text = decode_input(txt.read_bytes())
    from conda_torchcheck.explain import similar

    index = _index_without(report_set(txt.stem))
    start = time.perf_counter()
    real = similar.similar_reports
    similar.similar_reports = lambda t, k=3: index.nearest(t, k)
    try:
        result = explain(text, source="file")
        _ = result.similar  # computed here, while the index leaves the paste's own set out
    finally:
        similar.similar_reports = real
    ranked = result.likely_causes
    decision = result.decision
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
        decided=decision.decided,
        decider=decision.decider,
        expert=str(meta.get("expert_from_paste", "")),
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
        "decided": sum(c.decided for c in cases) / n if n else 0.0,
        "confidently_wrong": sum(c.confidently_wrong for c in cases) / n if n else 0.0,
        # the cases the collector judged an expert could name from the paste alone
        "yes_n": sum(c.expert == "yes" for c in cases),
        "yes_top1": _rate([c.top1 for c in cases if c.expert == "yes"]),
        "median_s": statistics.median(times) if times else 0.0,
        "max_s": max(times) if times else 0.0,
    }


def _rate(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def first_pass_records(path: Path = FIRST_PASS) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return list(load_toml_text(path.read_text(encoding="utf-8")).get("set", []))


def last_three_mean(records: list[dict[str, Any]]) -> dict[str, float]:
    """The mean of each rate over the last three sets that have it (the issue's target is on this)."""
    out = {}
    for key in ("top1", "top3", "unrecognised", "yes_top1", "confidently_wrong"):
        values = [r[key] for r in records if isinstance(r.get(key), (int, float))][-3:]
        if values:
            out[key] = sum(values) / len(values)
    return out


def print_first_pass(records: list[dict[str, Any]]) -> None:
    print("First-pass (each blind set scored once on arrival, before any change made for it):")
    print(f"  {'set':<10} {'n':>4} {'top-1':>7} {'top-3':>7} {'unrec':>7} {'yes:top-1':>9} {'conf.wrong':>10}")
    for r in records:
        print(
            f"  {r['name']:<10} {r['n']:>4} {_opt(r.get('top1'))} {_opt(r.get('top3'))} {_opt(r.get('unrecognised'))} "
            f"{_opt(r.get('yes_top1'), 9)} {_opt(r.get('confidently_wrong'), 10)}"
        )
    mean = last_three_mean(records)
    parts = [f"{k} {_pct(v).strip()}" for k, v in mean.items()]
    print("  mean of the last three sets: " + ", ".join(parts))


def _opt(value: Any, width: int = 7) -> str:
    return f"{100 * value:{width - 1}.1f}%" if isinstance(value, (int, float)) else f"{'-':>{width}}"


def verify_set(directory: Path) -> str:
    """The digest of the set's SHA256SUMS after checking every file still matches it (written before scoring)."""
    import hashlib

    sums = directory / "SHA256SUMS"
    if not sums.is_file():
        raise SystemExit(f"{sums}: missing; a blind set is hashed by its collector before it is scored")
    for line in sums.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, name = line.split(maxsplit=1)
        actual = hashlib.sha256((directory / name.lstrip("*")).read_bytes()).hexdigest()
        if actual != digest:
            raise SystemExit(f"{directory / name}: changed since the collector hashed it")
    return hashlib.sha256(sums.read_bytes()).hexdigest()


def record_first_pass(directory: Path, name: str, cases: list[CaseResult], path: Path = FIRST_PASS) -> dict[str, Any]:
    """Append the set's one first-pass record; refuse a set that was scored before."""
    import subprocess as sp

    if any(r.get("name") == name for r in first_pass_records(path)):
        raise SystemExit(f"set {name!r} already has its first-pass record in {path}: a set is scored once")
    digest = verify_set(directory)
    s = summary(cases)
    commit = sp.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    record = {
        "name": name,
        "collected": time.strftime("%Y-%m-%d"),
        "scored_at": commit,
        "sha256sums": digest,
        "n": s["n"],
        "top1": round(s["top1"], 3),
        "top3": round(s["top3"], 3),
        "unrecognised": round(s["unrecognised"], 3),
        "false_claims": s["false_claims"],
        "decided": round(s["decided"], 3),
        "confidently_wrong": round(s["confidently_wrong"], 3),
        "yes_n": s["yes_n"],
        "in_corpus": False,
    }
    if s["yes_top1"] is not None:
        record["yes_top1"] = round(s["yes_top1"], 3)
    lines = ["", "[[set]]"] + [f"{k} = {json.dumps(v)}" for k, v in record.items()]
    with path.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return record


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
    parser.add_argument("--first-pass", type=Path, metavar="DIR", help="score a new blind set once and record it")
    parser.add_argument("--set", help="the name of the set given with --first-pass")
    args = parser.parse_args(argv)
    if args.first_pass is not None:
        if not args.set:
            parser.error("--first-pass needs --set NAME")
        fresh = score_corpus(args.first_pass)
        record = record_first_pass(args.first_pass, args.set, fresh)
        print(json.dumps(record, indent=2))
        args.dir = args.first_pass
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
    if args.dir == CORPUS and not args.only:
        print_first_pass(first_pass_records())
        print("\nIn-sample (the whole corpus; its rules were written after reading these pastes):")
    print(
        f"{t['n']} pastes: top-1 {_pct(t['top1'])}, top-3 {_pct(t['top3'])}, unrecognised {_pct(t['unrecognised'])}, "
        f"false claims {t['false_claims']}, decided {_pct(t['decided']).strip()} "
        f"(confidently wrong {_pct(t['confidently_wrong']).strip()}), "
        f"time median {t['median_s'] * 1000:.1f} ms, max {t['max_s'] * 1000:.1f} ms"
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
