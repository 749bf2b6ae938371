"""Similar resolved reports: the public threads nearest to a paste, with the cause each one established.

Offline retrieval over normalized tokens (Okapi BM25), pure Python. The index ships in the package
(``resolved_reports.json``, built by ``tools/build_resolved_reports.py`` from tests/data/reports): each report's
URL, the cause ids its thread established, the established cause in words, and the weighted tokens of its paste —
never the paste itself, and no path: paths become the file name they end in when that is a library or module
(``shm.dll``, ``libtorch_cuda.so``), and nothing otherwise, so user names and folders do not ship.

This is shown beside the diagnosis, never instead of it: a neighbour's cause is what *that* thread established.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

INDEX_FILE = Path(__file__).resolve().parent / "resolved_reports.json"

#: a paste is read for tokens in its first and last parts only (a 10 MB log stays fast; the error is at the end)
HEAD_CHARS = 64 * 1024
TAIL_CHARS = 192 * 1024
#: tokens kept per report in the shipped index (the highest weighted)
TOKENS_PER_REPORT = 40
#: a token on a line that states the failure (error, undefined, not found ...) counts this many times: the
#: error line says more about the cause than the log around it
ERROR_LINE_WEIGHT = 2
#: neighbours are grouped by their established cause and each cause's strength is the sum of its best reports'
#: scores, so the threads shown are the best of different causes (alternatives, not three copies of one)
VOTES_PER_CAUSE = 3
K1 = 1.2
B = 0.75
#: below this score a neighbour shares too little with the paste to be worth showing
MIN_SCORE = 6.0
#: and it must share at least this many distinct tokens
MIN_SHARED = 3

_WIN_PATH = re.compile(r"[A-Za-z]:[\\/][^\s\"'<>|,;)]*")
_UNIX_PATH = re.compile(r"(?<![\w.])/(?:[\w.+@-]+/)+[\w.+@-]*")
_LIBRARY = re.compile(r"([\w.+-]+\.(?:dll|pyd|so(?:\.\d+)*|dylib|py|exe|lib))$", re.IGNORECASE)
_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_.+-]*[a-z0-9_+]|[a-z0-9]")
_ERROR_LINE = re.compile(
    r"error|exception|undefined|not found|failed|cannot|could not|unable|no module|no such|错误|失败|找不到", re.I
)
_HEX = re.compile(r"^(?:0x)?[0-9a-f]{6,}$")
_STOP = frozenset(
    "the a an and or of to in on at for is it this that be was with as by from not no are have has i you we my"
    " but if so can do does did will would there their its after when then than all any some one also just"
    " line file most recent call last traceback"
    # words of the request around the error, not of the error
    " please make sure your could would should get got try tried trying use using used help thanks thank hi hello"
    " how what why which where who here now still same other again know need want like see seems problem issue"
    " when run running ran work works working worked install installed installing version".split()
)


def tokens(text: str) -> list[str]:
    """The paste's tokens: lower-case words, versions, numbers and library names; paths reduced to their file."""
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    text = _WIN_PATH.sub(_path_token, text)
    text = _UNIX_PATH.sub(_path_token, text)
    out = []
    for tok in _TOKEN.findall(text.lower()):
        tok = tok.strip(".-+")
        if len(tok) < 2 or len(tok) > 40 or tok in _STOP or _HEX.match(tok):
            continue
        out.append(tok)
    return out


def _path_token(match: re.Match[str]) -> str:
    name = re.split(r"[\\/]", match.group(0).rstrip("\\/"))[-1]
    lib = _LIBRARY.search(name)
    return f" {lib.group(1)} " if lib else " "


@dataclass(frozen=True)
class ResolvedReport:
    id: str
    url: str
    causes: tuple[str, ...]
    summary: str
    weights: dict[str, float]


@dataclass(frozen=True)
class Neighbour:
    report: ResolvedReport
    score: float
    shared: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.report.url,
            "causes": list(self.report.causes),
            "summary": self.report.summary,
            "score": round(self.score, 2),
            "shared": list(self.shared[:8]),
        }


class Index:
    """BM25 over the reports' token weights (term frequencies), with an inverted index."""

    def __init__(self, reports: Iterable[ResolvedReport]) -> None:
        self.reports = list(reports)
        n = len(self.reports)
        df: Counter[str] = Counter()
        self.postings: dict[str, list[tuple[int, float]]] = {}
        lengths = []
        for i, r in enumerate(self.reports):
            lengths.append(sum(r.weights.values()))
            for tok, tf in r.weights.items():
                df[tok] += 1
                self.postings.setdefault(tok, []).append((i, tf))
        self.lengths = lengths
        self.avg = (sum(lengths) / n) if n else 1.0
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def nearest(self, text: str, k: int = 3) -> list[Neighbour]:
        """The best report of each of the ``k`` causes whose reports are nearest to ``text``."""
        by_cause: dict[str, list[Neighbour]] = {}
        for n in self.scored(text, limit=10 * k):
            by_cause.setdefault(n.report.causes[0] if n.report.causes else n.report.id, []).append(n)
        groups = sorted(by_cause.values(), key=lambda ns: -sum(x.score for x in ns[:VOTES_PER_CAUSE]))
        return [ns[0] for ns in groups[:k]]

    def scored(self, text: str, limit: int) -> list[Neighbour]:
        """Reports by BM25 score against ``text``, best first, those under the floor left out."""
        query = set(tokens(text))
        scores: dict[int, float] = {}
        shared: dict[int, list[str]] = {}
        for tok in query:
            idf = self.idf.get(tok)
            if idf is None:
                continue
            for i, tf in self.postings[tok]:
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.lengths[i] / self.avg))
                scores[i] = scores.get(i, 0.0) + idf * norm
                shared.setdefault(i, []).append(tok)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], self.reports[kv[0]].id))
        out = []
        for i, score in ranked:
            if score < MIN_SCORE or len(shared[i]) < MIN_SHARED:
                continue
            words = tuple(sorted(shared[i], key=lambda t: -self.idf[t]))
            out.append(Neighbour(self.reports[i], score, words))
            if len(out) == limit:
                break
        return out


def report_weights(text: str, limit: int = TOKENS_PER_REPORT) -> dict[str, float]:
    """The report's tokens with their counts (a failure line's count double), the ``limit`` highest kept (ties:
    longer tokens first)."""
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        weight = ERROR_LINE_WEIGHT if _ERROR_LINE.search(line) else 1
        for tok in tokens(line):
            counts[tok] += weight
    kept = sorted(counts.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[:limit]
    return {t: float(c) for t, c in kept}


@lru_cache(maxsize=1)
def shipped_index() -> Index:
    """The index of resolved public reports shipped in the package (empty when the file is absent)."""
    try:
        doc = json.loads(INDEX_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Index(())
    return Index(
        ResolvedReport(
            id=str(r["id"]),
            url=str(r["url"]),
            causes=tuple(r.get("causes", ())),
            summary=str(r.get("summary", "")),
            weights={str(k): float(v) for k, v in r.get("tokens", {}).items()},
        )
        for r in doc.get("reports", ())
    )


def similar_reports(text: str, k: int = 3) -> list[Neighbour]:
    return shipped_index().nearest(text, k)
