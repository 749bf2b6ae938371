"""A platform the env's files do not tell is null in the JSON, with the guess in a field of its own."""

from __future__ import annotations

import json

from conda_torchcheck.cli.main import main
from conda_torchcheck.inventory import load_environment


def test_unreadable_python_gives_no_platform_but_a_guess(tmp_path, capsys):
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "history").write_text("")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python").write_bytes(b"not an ELF file")
    env, _ = load_environment(prefix)
    assert env.platform is None and env.platform_guess == "linux-64" and env.platform_text == "linux-64?"
    main(["check", "-p", str(prefix), "--json"])
    target = json.loads(capsys.readouterr().out)["target"]
    assert target["platform"] is None and target["platform_guess"] == "linux-64"


def test_known_platform_has_no_guess(make_env):
    b = make_env(layout="conda")
    env, _ = load_environment(b.prefix)
    assert env.platform == "linux-64" and env.platform_guess is None and env.platform_text == "linux-64"
