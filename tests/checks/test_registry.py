from __future__ import annotations

from conda_torchcheck.checks import OS_ONLY, all_checks


def test_os_only_modules_agree_with_their_platforms():
    checks = {c.name: c for c in all_checks()}
    assert checks
    for module_name, os_name in OS_ONLY.items():
        import importlib

        check = importlib.import_module(module_name).CHECK
        assert check.platforms == (os_name,), module_name


def test_filtered_registry_keeps_every_check_for_that_os():
    for os_name in ("windows", "linux", "darwin"):
        expected = {c.name for c in all_checks() if os_name in c.platforms}
        got = {c.name for c in all_checks(os_name)}
        assert expected <= got
