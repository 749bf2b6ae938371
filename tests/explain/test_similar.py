"""Similar resolved reports: normalized tokens without personal paths, the shipped index in step with the corpus,
neighbours of different causes, and a leave-one-set-out floor (benchmarks/similar_reports.py prints the table)."""

from __future__ import annotations

import json

from benchmarks import similar_reports
from conda_torchcheck.explain import explain
from conda_torchcheck.explain.similar import INDEX_FILE, shipped_index, tokens
from tools.build_resolved_reports import CORPUS, report_entries


def test_paths_become_their_library_name_and_nothing_else():
    toks = tokens('Error loading "C:\\Users\\bob\\envs\\ml\\Lib\\site-packages\\torch\\lib\\shm.dll" /home/alice/x/y')
    assert "shm.dll" in toks
    assert not {"users", "bob", "alice", "envs", "home", "site-packages"} & set(toks)


def test_the_shipped_index_is_built_from_the_corpus_as_it_is():
    shipped = json.loads(INDEX_FILE.read_text(encoding="utf-8"))["reports"]
    assert shipped == json.loads(json.dumps(report_entries(CORPUS))), "run tools/build_resolved_reports.py"


def test_the_index_ships_no_paste_and_no_path():
    for report in json.loads(INDEX_FILE.read_text(encoding="utf-8"))["reports"]:
        assert set(report) == {"id", "url", "causes", "summary", "tokens"}
        assert not any("/" in t or "\\" in t for t in report["tokens"])


def test_neighbours_are_the_best_of_different_causes():
    text = "OSError: [WinError 126] Error loading fbgemm.dll or one of its dependencies."
    near = shipped_index().nearest(text, 3)
    assert 1 <= len(near) <= 3
    firsts = [n.report.causes[0] for n in near]
    assert len(firsts) == len(set(firsts))
    assert near[0].score >= near[-1].score or len(near) == 1


def test_explain_carries_them_in_json_and_text():
    result = explain("ImportError: libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent")
    doc = result.to_dict()
    assert doc["similar_reports"] and doc["similar_reports"][0]["url"].startswith("https://")
    assert any("mkl-ijit" in r["causes"] for r in doc["similar_reports"])


def test_leave_one_set_out_floor():
    """Each set asked against an index of the others: the floor is what it reached when written, rounded down."""
    per_set = similar_reports.leave_one_set_out()
    n = sum(s["all"]["n"] for s in per_set.values())
    hit3 = sum(s["all"]["hit3"] for s in per_set.values())
    assert hit3 / n >= 0.60


def test_with_nothing_recognised_the_nearest_reports_causes_are_leads_never_a_decision():
    """A text no pattern reads (a description of a crash): the causes the nearest resolved reports established
    rank the paste as leads, labelled so in text and JSON; the decision stays 'not recognised'."""
    from conda_torchcheck.explain.render import render_explanation_text

    expl = explain("my program crashes when i start training, the window just closes, torch 2.1 conda windows gpu")
    assert not expl.recognised and expl.similar
    assert expl.leads_from_similar and expl.likely_causes == expl.similar_causes
    doc = expl.to_dict()
    assert doc["likely_causes_from"] == "similar_reports" and doc["decision"]["decided"] is False
    assert "Leads, not a diagnosis" in render_explanation_text(expl)


def test_leads_for_another_os_than_the_paste_shows_are_left_out():
    from conda_torchcheck.explain.patterns import table

    expl = explain("my program crashes when i start training, the window just closes, torch 2.1 conda windows gpu")
    causes = table().causes
    assert any(causes[c].applies.os == ("darwin",) for c in expl.similar_causes)  # a macOS cause among the leads
    expl.clues.facts["os"] = "windows"
    del expl.__dict__["similar_causes"]
    assert expl.similar_causes and all(
        not causes[c].applies.os or "windows" in causes[c].applies.os for c in expl.similar_causes
    )
