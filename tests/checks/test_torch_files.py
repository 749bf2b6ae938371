"""TC211: torch's Python files against its pip RECORD (Linux, macOS)."""

from __future__ import annotations

from conda_torchcheck.checks import torch_files
from tests.checks.tc_helpers import context


def _env(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.5.1")
    return b


def test_an_intact_torch_is_silent(make_env):
    assert list(torch_files.CHECK.run(context(_env(make_env)))) == []


def test_a_missing_python_file_is_an_error_with_a_reinstall(make_env):
    b = _env(make_env)
    (b.site_packages / "torch" / "version.py").unlink()
    (f,) = torch_files.CHECK.run(context(b))
    assert (f.id, f.severity.value) == ("TC211", "error")
    assert f.evidence["missing"] == [str(b.site_packages / "torch" / "version.py")]
    assert "--force-reinstall --no-deps" in f.fixes[0].commands[0]


def test_a_file_cut_short_is_named_with_both_sizes(make_env):
    b = _env(make_env)
    path = b.site_packages / "torch" / "version.py"
    path.write_bytes(path.read_bytes()[:10])
    (f,) = torch_files.CHECK.run(context(b))
    [line] = f.evidence["wrong_size"]
    assert line.startswith(f"{path}: 10 bytes, expected ")


def test_no_torch_package_at_all_is_left_to_tc204(make_env):
    b = _env(make_env)
    (b.site_packages / "torch" / "__init__.py").unlink()
    assert list(torch_files.CHECK.run(context(b))) == []
