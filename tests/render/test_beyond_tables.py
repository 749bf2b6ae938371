"""A torch newer than the release tables is said so once in a report (text and Markdown), naming the newest
release the tool knows; a known release says nothing of the kind."""

from __future__ import annotations

import pytest

from conda_torchcheck.inventory import load_environment
from conda_torchcheck.knowledge import known_torch_minors
from conda_torchcheck.render.markdown import render_markdown
from conda_torchcheck.render.text import render_text
from conda_torchcheck.report import check_environment
from tests.checks.tc_helpers import healthy


def _report(b):
    env, host = load_environment(b.prefix, use_live_host=False)
    return check_environment(env, host)


def _next_minor() -> str:
    major, minor = (int(x) for x in known_torch_minors()[-1].split("."))
    return f"{major}.{minor + 1}.0"


@pytest.mark.parametrize("render", [render_text, render_markdown])
def test_said_once_naming_the_newest_known_release(make_env, render):
    version = _next_minor()
    b = healthy(make_env(layout="venv"), torch=version, vision="0.99.0", audio=None)
    text = render(_report(b), lang="en")
    assert text.count("newer than the releases this tool knows") == 1
    assert f"torch {version} is newer" in text and f"(up to {known_torch_minors()[-1]})" in text


@pytest.mark.parametrize("render", [render_text, render_markdown])
def test_a_known_release_is_not_called_newer(make_env, render):
    b = healthy(make_env(layout="venv"))
    assert "newer than the releases" not in render(_report(b), lang="en")
