"""torch's own error and warning texts (tests/data/torch_messages.toml) are each recognised by their pattern, whose
first cause is the one the code path that prints them means."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from conda_torchcheck.explain import explain
from conda_torchcheck.explain.recognise import recognise

MESSAGES = tomllib.loads((Path(__file__).resolve().parents[1] / "data" / "torch_messages.toml").read_text("utf-8"))[
    "message"
]


@pytest.mark.parametrize("message", MESSAGES, ids=[m["id"] for m in MESSAGES])
def test_torch_message_is_recognised_with_its_cause(message: dict[str, str]) -> None:
    assert [m.pattern_id for m in recognise(message["text"])] == [message["pattern"]], message["source"]
    result = explain(message["text"])
    assert result.likely_causes[:1] == [message["cause"]], result.likely_causes
