"""Score `spec check` / `spec fix` on the real environment-file corpus (tests/data/envfiles).

Run by hand:  .venv/bin/python benchmarks/envspec_corpus.py [--json] [--misses] [--dir DIR]

Every ``eNNN.yml`` (verbatim from a public repository) has an ``eNNN.toml`` beside it with the expert
verdict: ``[[problem]]`` entries (``finding`` = ``TC6xx`` or ``new:<id>``, ``line``; 0 = the file as a
whole) and ``[[fine]]`` entries. Per file:

- crash: check or fix raised (a SpecFileError the CLI would print as one line is not a crash: it is counted
  as ``refused``);
- found / missed: a problem counts as found when a finding with that id is reported on that line (any line
  of its evidence) or, for line 0, anywhere; ``new:`` problems are counted apart (no id can match them);
- false alarm: a reported finding that matches no problem of the file, nor is on the line of one of its
  ``new:`` problems (precision = 1 - false alarms / findings);
- fix: idempotent (fixing the fixed text changes nothing), nothing lost (every dependency and pip line is
  kept or reported as removed/replaced; every comment survives), every rewritten conda spec parses with
  conda's own MatchSpec to the same or a narrower version constraint (skipped without conda), converged (no
  finding the fix claims to fix — ``spec fix --write`` in its fix — is reported again on the result, and no
  new error appears);
- suggested versions: every torch-family pin the fix writes exists in the knowledge tables;
- time: check + fix of the file, in-process.

The headline is first-pass (tests/data/envfiles/first_pass.toml): each blind set scored once as it arrived,
before anything was changed for it (``--first-pass DIR --set NAME`` scores and records a new one). The corpus score
comes second: in-sample. Beside the id-exact recall, ``recall_real`` counts every real problem but channel hygiene
(TC603, or a problem marked ``hygiene = true``), ``new:`` ones included, as found when a torch finding is reported
on its line; ``torch_share`` is the share of findings that are not channel hygiene. Channel hygiene (TC603) is
reported as a note apart from the findings (``CheckResult.notes``, JSON ``notes``): notes count for recall and
precision like findings, and ``torch_share`` is over the findings proper (with the notes the old figure is
``torch_share_with_notes``).

The floor test (tests/envspec/test_corpus_floor.py) imports ``score_corpus`` from here.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conda_torchcheck._toml import load_toml_text  # noqa: E402
from conda_torchcheck.envspec import check_file, fix_file  # noqa: E402
from conda_torchcheck.envspec.parse import SpecFileError, decode, parse_text  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "envfiles"
FIRST_PASS = CORPUS / "first_pass.toml"
HYGIENE = ("TC603",)


@dataclass
class FileScore:
    name: str
    refused: str | None = None
    crash: str | None = None
    problems: int = 0
    found: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    new_problems: list[str] = field(default_factory=list)
    findings: int = 0
    false_alarms: list[str] = field(default_factory=list)
    idempotent: bool = True
    lost: list[str] = field(default_factory=list)
    invalid_rewrites: list[str] = field(default_factory=list)
    non_convergent: list[str] = field(default_factory=list)
    unknown_versions: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: real problems (not channel hygiene), ``new:`` ones too, and those a torch finding was reported on
    real_problems: int = 0
    real_found: list[str] = field(default_factory=list)
    hygiene_findings: int = 0
    notes: int = 0


def _lines(value: Any) -> set[int]:
    found: set[int] = set()
    if isinstance(value, dict):
        if isinstance(value.get("line"), int):
            found.add(value["line"])
        for v in value.values():
            found |= _lines(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            found |= _lines(v)
    return found


def _matches(problem: dict[str, Any], f: Any) -> bool:
    if problem.get("finding") != f.id:
        return False
    line = int(problem.get("line") or 0)
    return line == 0 or line in _lines(dict(f.evidence))


def _variant(f: Any) -> str:
    """``TC602.pytorch`` from the title's catalog key ``TC602.pytorch.title``."""
    return f.title.key.rsplit(".", 1)[0]


def _key(f: Any) -> str:
    lines = sorted(_lines(dict(f.evidence)))
    return f"{_variant(f)}@{lines[0] if lines else 0}"


def _claims_fix(f: Any) -> bool:
    return any(getattr(x, "safe_automatic", False) and "spec fix" in " ".join(x.commands) for x in f.fixes)


def _comments(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        idx = line.find("#")
        if idx >= 0 and (idx == 0 or line[idx - 1] in " \t"):
            out.append(line[idx:].strip())
    return sorted(out)


def _conda_match_spec():
    try:
        from conda.models.match_spec import MatchSpec
    except Exception:  # conda absent or broken: the check is skipped, not failed
        return None
    return MatchSpec


_SAMPLE_VERSIONS = sorted(
    {f"{a}.{b}.{c}" for a in (0, 1, 2, 3) for b in range(0, 16) for c in (0, 1, 2)}
    | {f"{a}.{b}" for a in (0, 1, 2, 3, 9, 10, 11, 12, 13) for b in range(0, 10)}
)


def _narrower_or_same(old: Any, new: Any) -> bool:
    """Every sampled version the new spec's version constraint accepts, the old one accepts too."""
    if old.version is None:
        return True
    if new.version is None:
        return False
    return all(old.version.match(v) for v in _SAMPLE_VERSIONS if new.version.match(v))


def _check_rewrites(result: Any, score: FileScore) -> None:
    MatchSpec = _conda_match_spec()
    if MatchSpec is None:
        return
    for change in result.plan.changes:
        if change.section != "dependencies" or not change.new:
            continue
        try:
            new = MatchSpec(change.new)
        except Exception as e:  # conda's own verdict on the text
            score.invalid_rewrites.append(f"{change.new!r}: {type(e).__name__}: {e}")
            continue
        if not change.old:
            continue
        try:
            old = MatchSpec(change.old)
        except Exception:  # the original was not a valid spec either
            continue
        if old.name == new.name and not _narrower_or_same(old, new):
            score.invalid_rewrites.append(f"{change.old!r} -> {change.new!r}: broader version constraint")


_PIN = re.compile(r"^(?:[\w./:-]+::)?(pytorch|torchvision|torchaudio|pytorch-cuda)=+([0-9][0-9a-z.]*)")


def _check_versions(result: Any, score: FileScore) -> None:
    from conda_torchcheck.envspec.history import release
    from conda_torchcheck.envspec.intent import companion_ok, pytorch_channel_versions

    after = result.plan.result or parse_text(result.fixed, result.path)
    written = {c.new for c in result.plan.changes if c.new}
    pins: dict[str, str] = {}
    for dep in after.deps:
        m = _PIN.match(dep.text.strip())
        if m and dep.text in written:
            pins[m.group(1)] = m.group(2).rstrip(".*")
    torch = pins.get("pytorch")
    torch_on_channel = None
    for dep in after.deps:
        if dep.spec is not None and dep.spec.name == "pytorch":
            torch_on_channel = dep.spec.channel_name
    if torch and torch_on_channel == "pytorch" and len(torch.split(".")) >= 3:
        if torch not in pytorch_channel_versions():
            score.unknown_versions.append(f"pytorch={torch}")
    # a release the pytorch channel's version list holds (0.3.1 ...) exists, release table or not
    if torch and release(torch) is None and torch not in pytorch_channel_versions():
        score.unknown_versions.append(f"pytorch={torch} (no release table)")
    ref = torch
    if ref is None:
        for dep in after.deps:
            if dep.spec is not None and dep.spec.name == "pytorch" and dep.spec.exact:
                ref = dep.spec.exact
    for name in ("torchvision", "torchaudio"):
        if name in pins and ref and release(ref) is not None and companion_ok(name, ref, pins[name]) is False:
            score.unknown_versions.append(f"{name}={pins[name]} with torch {ref}")
    if "pytorch-cuda" in pins and ref:
        rel = release(ref)
        cuda = ".".join(pins["pytorch-cuda"].split(".")[:2])
        if rel is not None and cuda not in rel.pytorch_cuda:
            score.unknown_versions.append(f"pytorch-cuda={cuda} with torch {ref}")


_EXAMPLE = re.compile(r"torch==(\d+\.\d+\.\d+)\+([a-z]+[0-9]+(?:\.[0-9]+)*)")


def _check_suggested_pins(findings: list[Any], score: FileScore) -> None:
    """Every `torch==X+tag` a finding's fix text shows is a wheel that index has."""
    from conda_torchcheck.envspec.history import release, rocm_tags
    from conda_torchcheck.knowledge import releases

    for f in findings:
        for fix in f.fixes:
            for version, tag in _EXAMPLE.findall(fix.summary.render("en")):
                rel = release(version)
                tags = set(releases.pip_index_tags(version)) | set(rocm_tags(version)) | {"cpu"}
                if rel is not None:
                    tags |= set(rel.pip_cuda) | set(rel.pip_rocm)
                if rel is None or tag not in tags:
                    score.unknown_versions.append(f"suggested torch=={version}+{tag}")


def _hygiene(problem: dict[str, Any]) -> bool:
    return bool(problem.get("hygiene")) or problem.get("finding") in HYGIENE


def _on_line(problem: dict[str, Any], f: Any) -> bool:
    """A finding reported on the problem's own line (how a ``new:`` problem, which no id names, counts as seen)."""
    line = int(problem.get("line") or 0)
    return line > 0 and line in _lines(dict(f.evidence))


def _original_name(truth: dict[str, Any], yml: Path) -> str:
    """The file's path in its repository (docker/environment.yml), as a user checking it there would give it."""
    path = str(truth.get("path") or "")
    return path or yml.name


def score_file(yml: Path) -> FileScore:
    truth = load_toml_text(yml.with_suffix(".toml").read_text(encoding="utf-8"))
    score = FileScore(yml.stem)
    problems = [p for p in truth.get("problem", []) if str(p.get("finding", "")).startswith("TC")]
    score.new_problems = [str(p["finding"]) for p in truth.get("problem", []) if p not in problems]
    score.problems = len(problems)
    real = [p for p in truth.get("problem", []) if not _hygiene(p)]
    score.real_problems = len(real)
    start = time.perf_counter()
    try:
        data = yml.read_bytes()
        text, encoding, bom = decode(data, str(yml))
        # the file under the path its repository gives it (env_win.yml, docker/environment.yml): rules read the OS
        # and the variant a file is for from its name and folder, as they do for a user's file
        file = parse_text(text, _original_name(truth, yml), encoding=encoding, bom=bom)
    except SpecFileError as e:
        score.refused = str(e)
        score.missed = [f"{p['finding']}@{p.get('line', 0)}" for p in problems]
        return score
    try:
        checked = check_file(file)
        result = fix_file(file)
        score.seconds = time.perf_counter() - start
    except Exception as e:  # a crash is what this counts
        score.crash = f"{type(e).__name__}: {e}"
        score.missed = [f"{p['finding']}@{p.get('line', 0)}" for p in problems]
        return score
    # the notes (channel hygiene, TC603) are statements too: their recall and precision count; torch_share is the
    # share of the findings proper, which the notes are reported apart from
    findings = list(checked.findings) + list(checked.notes)
    score.findings = len(findings)
    _check_suggested_pins(findings, score)
    for p in problems:
        tag = f"{p['finding']}@{p.get('line', 0)}"
        (score.found if any(_matches(p, f) for f in findings) else score.missed).append(tag)
    unnamed = [p for p in truth.get("problem", []) if p not in problems]
    for f in findings:
        # a `new:` problem (no id existed when the verdict was written) is seen by a finding on its own line,
        # as recall_real counts it: that finding is not a false alarm
        if not any(_matches(p, f) for p in problems) and not any(_on_line(p, f) for p in unnamed):
            score.false_alarms.append(_key(f))
    torch_findings = [f for f in findings if f.id not in HYGIENE]
    score.hygiene_findings = len([f for f in checked.findings if f.id in HYGIENE])
    score.notes = len(checked.notes)
    for p in real:
        if any(_matches(p, f) or _on_line(p, f) for f in torch_findings):
            score.real_found.append(f"{p['finding']}@{p.get('line', 0)}")
    if result.changed:
        try:
            after = parse_text(result.fixed, _original_name(truth, yml))
            again = fix_file(after)
        except Exception as e:
            score.crash = f"fix of the fixed text: {type(e).__name__}: {e}"
            return score
        score.idempotent = again.fixed == result.fixed
        kept = {d.text for d in after.deps} | {p.text for p in after.pip or ()}
        reported = {c.old for c in result.plan.changes if c.old}
        for entry in [d.text for d in file.deps] + [p.text for p in file.pip or ()]:
            if entry not in kept and entry not in reported:
                score.lost.append(entry)
        before_c, after_c = _comments(text), _comments(result.fixed)
        for c in before_c:
            if c not in after_c:
                score.lost.append(c)
        _check_rewrites(result, score)
        _check_versions(result, score)
        claimed = {_variant(f) for f in result.findings_before if _claims_fix(f)}
        before_errors = {_variant(f) for f in result.findings_before if f.severity.value == "error"}
        for f in result.findings_after:
            if _variant(f) in claimed:
                score.non_convergent.append(f"{_key(f)} reported again after the fix")
            elif f.severity.value == "error" and _variant(f) not in before_errors:
                score.non_convergent.append(f"{_key(f)}: a new error after the fix")
    return score


def score_corpus(directory: Path = CORPUS) -> dict[str, Any]:
    files = sorted(directory.glob("*.yml"))
    scores = [score_file(p) for p in files if p.with_suffix(".toml").exists()]
    problems = sum(s.problems for s in scores)
    found = sum(len(s.found) for s in scores)
    findings = sum(s.findings for s in scores)
    false_alarms = sum(len(s.false_alarms) for s in scores)
    times = [s.seconds for s in scores if s.seconds]
    real = sum(s.real_problems for s in scores)
    real_found = sum(len(s.real_found) for s in scores)
    hygiene = sum(s.hygiene_findings for s in scores)
    notes = sum(s.notes for s in scores)
    proper = findings - notes
    return {
        "files": len(scores),
        "crashes": sum(1 for s in scores if s.crash),
        "refused": sum(1 for s in scores if s.refused),
        "problems": problems,
        "found": found,
        "recall": round(found / problems, 4) if problems else 1.0,
        "new_problems": sum(len(s.new_problems) for s in scores),
        "findings": findings,
        "false_alarms": false_alarms,
        "precision": round(1 - false_alarms / findings, 4) if findings else 1.0,
        "real_problems": real,
        "recall_real": round(real_found / real, 4) if real else 1.0,
        "notes": notes,
        "torch_share": round(1 - hygiene / proper, 4) if proper else 1.0,
        "torch_share_with_notes": round(1 - (hygiene + notes) / findings, 4) if findings else 1.0,
        "non_idempotent": sum(1 for s in scores if not s.idempotent),
        "lost": sum(len(s.lost) for s in scores),
        "invalid_rewrites": sum(len(s.invalid_rewrites) for s in scores),
        "non_convergent": sum(len(s.non_convergent) for s in scores),
        "unknown_versions": sum(len(s.unknown_versions) for s in scores),
        "ms_per_file_mean": round(1000 * statistics.mean(times), 1) if times else 0.0,
        "ms_per_file_max": round(1000 * max(times), 1) if times else 0.0,
        "per_file": [asdict(s) for s in scores],
    }


_RECORD_KEYS = ("files", "recall", "recall_real", "precision", "torch_share", "non_convergent", "invalid_rewrites")


def first_pass_records(path: Path = FIRST_PASS) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return list(load_toml_text(path.read_text(encoding="utf-8")).get("set", []))


def print_first_pass(records: list[dict[str, Any]]) -> None:
    print("First-pass (each blind set scored once on arrival, before any change made for it):")
    print("  " + " ".join(f"{k:>14}" for k in ("set", *_RECORD_KEYS)))
    for r in records:
        print("  " + " ".join(f"{str(r.get(k, '-')):>14}" for k in ("name", *_RECORD_KEYS)))


def record_first_pass(directory: Path, name: str, result: dict[str, Any], path: Path = FIRST_PASS) -> dict[str, Any]:
    """Append the set's one first-pass record; refuse a set that was scored before."""
    import subprocess

    from benchmarks.explain_corpus import verify_set

    if any(r.get("name") == name for r in first_pass_records(path)):
        raise SystemExit(f"set {name!r} already has its first-pass record in {path}: a set is scored once")
    digest = verify_set(directory)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    record = {
        "name": name,
        "collected": time.strftime("%Y-%m-%d"),
        "scored_at": commit,
        "sha256sums": digest,
        **{k: result[k] for k in _RECORD_KEYS},
        "lost": result["lost"],
        "unknown_versions": result["unknown_versions"],
        "in_corpus": False,
    }
    lines = ["", "[[set]]"] + [f"{k} = {json.dumps(v)}" for k, v in record.items()]
    with path.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="list every miss, false alarm and fix problem")
    ap.add_argument("--dir", type=Path, default=CORPUS)
    ap.add_argument("--first-pass", type=Path, metavar="DIR", help="score a new blind set once and record it")
    ap.add_argument("--set", help="the name of the set given with --first-pass")
    args = ap.parse_args(argv)
    if args.first_pass is not None:
        if not args.set:
            ap.error("--first-pass needs --set NAME")
        args.dir = args.first_pass
    result = score_corpus(args.dir)
    if args.first_pass is not None:
        print(json.dumps(record_first_pass(args.first_pass, args.set, result), indent=2))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    if args.dir == CORPUS:
        print_first_pass(first_pass_records())
        print("\nIn-sample (the whole corpus; its rules were written after reading these files):")
    for key, value in result.items():
        if key != "per_file":
            print(f"{key:>18}: {value}")
    if args.misses:
        for s in result["per_file"]:
            parts = {
                k: s[k]
                for k in (
                    "crash",
                    "refused",
                    "missed",
                    "false_alarms",
                    "lost",
                    "invalid_rewrites",
                    "non_convergent",
                    "unknown_versions",
                )
                if s[k]
            }
            if not s["idempotent"]:
                parts["idempotent"] = False
            if parts:
                print(f"{s['name']}: {json.dumps(parts, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
