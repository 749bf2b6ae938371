"""TC618 (what conda refuses or ignores in the file itself) and TC619 (torch only as another package's
dependency): both run on files that name no torch package too."""

from __future__ import annotations

from conda_torchcheck.envspec import check_text
from tests.envspec.test_rules import env, found


def test_no_torch_and_nothing_else_is_still_silent():
    assert found(env(["conda-forge"], ["python=3.12", "numpy"])) == {}


def test_a_section_conda_ignores_is_named_with_its_line():
    text = "name: t\nchannels:\n  - conda-forge\nchannel_priority: strict\ndependencies:\n  - pytorch=2.5.1\n"
    f = found(text)["TC618.ignored_key"]
    assert f.severity.value == "warning" and f.evidence["ignored"] == [{"line": 4, "key": "channel_priority"}]


def test_conda_locks_platforms_key_is_not_reported():
    text = "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - pytorch=2.5.1\nplatforms:\n  - linux-64\n"
    assert "TC618.ignored_key" not in found(text)


def test_an_env_name_conda_refuses():
    f = found("name: /home/me/envs/t\ndependencies:\n  - numpy\n")["TC618.bad_name"]
    assert f.severity.value == "error" and f.evidence["name"] == {"line": 1, "value": "/home/me/envs/t"}
    assert "reserved_name" in str(found("name: base\ndependencies:\n  - numpy\n"))
    assert found("name: my-env_2.1\ndependencies:\n  - numpy\n") == {}


def test_torch_only_through_a_dependency_conda_and_pip():
    f = found(env(["conda-forge"], ["python=3.10", "torchmetrics=0.6.0"], pip=["sentence-transformers"]))["TC619"]
    assert [b["entry"] for b in f.evidence["brought_by"]] == ["torchmetrics=0.6.0", "sentence-transformers"]
    # torch named: the dependency brings nothing unasked for
    assert "TC619" not in found(env(["conda-forge"], ["pytorch=2.5.1", "torchmetrics"]))
    # a package whose torch is optional (torch-geometric 2.3+) brings none
    assert "TC619" not in found(env(["conda-forge"], ["python=3.10"], pip=["torch-geometric"]))


def test_conda_forge_sentence_transformers_brings_torch():
    # blind-d d029: conda-forge's sentence-transformers run-requires pytorch (its feedstock's recipe, in
    # knowledge/torch_dependents.toml); the hand-written list had it for pip only
    text = "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - sentence-transformers\n  - yaml\n"
    f = found(text)["TC619"]
    assert f.evidence["brought_by"] == [{"line": 5, "entry": "sentence-transformers"}]


def test_pip_transformers_alone_brings_no_torch():
    # transformers' torch is an extra (transformers[torch]): pip installs no torch for it
    assert "TC619" not in found(env(["conda-forge"], ["python=3.11", "pip"], pip=["transformers"]))
    assert "TC619" not in found(env(["conda-forge"], ["python=3.11", "transformers"]))
    # a pip name is read as PyPI reads it (Sentence_Transformers is sentence-transformers)
    assert "TC619" in found(env(["conda-forge"], ["python=3.11", "pip"], pip=["Sentence_Transformers>=2"]))


def test_the_text_of_a_file_without_torch_shows_its_findings():
    result = check_text("name: t\nfoo: 1\ndependencies:\n  - numpy\n")
    assert not result.has_torch
    assert "names no torch package" in result.render_text() and "TC618" in result.render_text()


def test_an_empty_dependency_item_is_an_error_and_the_rest_is_checked():
    text = "name: t\nchannels:\n  - pytorch\ndependencies:\n  - # CUDA below\n  - pytorch\n"
    result = found(text)
    assert result["TC618.empty_item"].evidence["lines"] == [{"line": 5}]
    assert any(k.startswith("TC611") for k in result)  # the unpinned pytorch on line 6 is still seen


def test_an_exact_python_minor_pin_is_read_as_x_y_0():
    # conda 26.7.1: MatchSpec("python==3.7") matches 3.7.0, not 3.7.12 (e022, h043, h049)
    f = found(env(["conda-forge"], ["python==3.7", "pytorch=1.13.1"]))["TC620"]
    assert f.evidence["matches"] == "3.7.0" and f.evidence["python"]["line"] == 5
    for fine in ("python=3.7", "python==3.7.12", "python>=3.7", "python 3.7.*"):
        assert "TC620" not in found(env(["conda-forge"], [fine, "pytorch=1.13.1"]))
