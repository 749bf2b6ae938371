"""explain says whether the paste decides its first cause, and names the fact that would when it does not."""

from __future__ import annotations

import json

from conda_torchcheck.explain import explain
from conda_torchcheck.explain.render import render_explanation_json, render_explanation_text

SHM_126 = (
    "OSError: [WinError 126] The specified module could not be found. Error loading "
    '"C:\\venv\\Lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.'
)


def test_a_bare_dll_failure_fits_several_causes_and_names_what_decides():
    decision = explain(SHM_126).decision
    assert not decision.decided
    assert decision.reason == "fits-several"
    assert len(decision.between) == 2
    # the runner-up cause is about one torch release: the paste states none, so the torch version decides
    assert decision.decider == "torch"


def test_stating_the_deciding_fact_moves_the_decider_on():
    decision = explain("torch 2.5.1\n" + SHM_126).decision
    assert decision.decider != "torch"


def test_nothing_recognised_asks_for_the_error_itself():
    decision = explain("my computer is slow").decision
    assert not decision.decided
    assert decision.decider == "error-text"


def test_an_error_that_names_its_cause_without_a_resolved_report_alike_is_not_decided():
    text = "Could not locate zlibwapi.dll. Please make sure it is in your library path!"
    result = explain(text)
    decision = result.decision
    assert result.likely_causes[0] == "cudnn-zlibwapi"
    # the table names one cause, but no resolved public report agrees (none is about zlibwapi): not settled,
    # and with a single cause what settles it is the env check
    assert not decision.decided
    assert decision.between == ("cudnn-zlibwapi",) and decision.decider == "env-check"


def test_a_lone_cause_the_nearest_resolved_report_agrees_with_is_decided():
    text = (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
        '"C:\\env\\Lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.'
    )
    result = explain(text)
    assert result.likely_causes[0] == "paging-file-too-small"
    assert "paging-file-too-small" in result.similar[0].report.causes
    assert result.decision.decided and result.decision.reason == "only-cause"


def test_two_named_causes_are_told_apart_by_the_fact_their_premises_differ_on():
    text = (
        "ImportError: /env/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent"
    )
    decision = explain(text).decision
    assert not decision.decided
    assert decision.between == ("mkl-ijit", "oneapi-mkl-ijit") and decision.decider == "source"


def test_json_and_text_carry_the_decision():
    result = explain(SHM_126)
    doc = json.loads(render_explanation_json(result))
    assert doc["decision"]["decided"] is False
    assert doc["decision"]["decider"] == "torch"
    assert "torch" in doc["decision"]["decider_text"]
    assert "What decides it" in render_explanation_text(result)
    assert "可以确定原因的是" in render_explanation_text(result, lang="zh_CN")
