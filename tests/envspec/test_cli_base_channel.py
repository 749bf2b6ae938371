"""``spec fix --base-channel``: the base channel is added only when asked for (TC603 offers the choice)."""

from __future__ import annotations

import json

from conda_torchcheck.cli.main import main

NO_BASE = "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=11.8\n"


def test_without_the_option_no_base_channel_is_added(tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(NO_BASE)
    main(["spec", "fix", str(f), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert "defaults" not in doc["diff"] and "conda-forge" not in doc["diff"]
    assert any(x["id"] == "TC603" for x in doc["findings_after"])


def test_with_the_option_the_chosen_channel_and_nodefaults_are_written(tmp_path, capsys):
    f = tmp_path / "environment.yml"
    f.write_text(NO_BASE)
    assert main(["spec", "fix", str(f), "--base-channel", "conda-forge", "--write"]) == 0
    text = f.read_text()
    assert "  - conda-forge\n  - nodefaults\n" in text
    assert "  - defaults\n" not in text
