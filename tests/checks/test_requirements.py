"""TC209: torch's declared Python dependencies, evaluated with the target interpreter's markers."""

from __future__ import annotations

import pytest

from conda_torchcheck.checks import run_checks
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.inventory import load_environment

REQUIRES = (
    "filelock",
    "typing-extensions>=4.10.0",
    "sympy>=1.13.3",
    'nvidia-nccl-cu12==2.21.5; platform_system == "Linux"',
    'optree>=0.13.0; extra == "optree"',
    'pywin32>=300; sys_platform == "win32"',
)


def tc209(prefix):
    env, host = load_environment(prefix, use_live_host=False)
    return run_checks(CheckContext(env, host), only=["TC209"])


def test_missing_typing_extensions_fails_the_import(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=REQUIRES)
    [f] = tc209(b.prefix)
    assert (f.severity.value, f.title.key) == ("error", "TC209.import.title")
    assert f.evidence["missing"] == ["filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3"]
    # NVIDIA wheels are TC410's; extras are optional; a win32-only requirement does not apply on Linux
    assert f.fixes[0].commands == (
        f'"{b.prefix}/bin/python" -m pip install filelock "typing-extensions>=4.10.0" "sympy>=1.13.3"',
    )


def test_old_typing_extensions_fails_the_import_too(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=REQUIRES)
    for name, version in (("filelock", "3.16.1"), ("typing_extensions", "4.5.0"), ("sympy", "1.13.3")):
        b.dist(name, version)
    [f] = tc209(b.prefix)
    assert f.severity.value == "error"
    assert f.evidence["too old"] == ["typing-extensions>=4.10.0 (installed: 4.5.0)"]


def test_missing_feature_dependencies_are_a_warning(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=REQUIRES)
    b.dist("typing_extensions", "4.12.2")
    [f] = tc209(b.prefix)
    assert (f.severity.value, f.title.key) == ("warning", "TC209.later.title")
    assert f.evidence["missing"] == ["filelock", "sympy>=1.13.3"]


def test_satisfied_requirements_are_silent(make_env):
    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=REQUIRES)
    for name, version in (("filelock", "3.16.1"), ("typing_extensions", "4.12.2"), ("sympy", "1.14.0")):
        b.dist(name, version)
    assert tc209(b.prefix) == []


def test_markers_are_the_target_interpreters(make_env):
    """A Windows env read from Linux: the win32-only requirement applies, the Linux-only one does not."""
    b = make_env(os="windows", layout="venv")
    b.pip_torch("2.13.0+cpu", requires=REQUIRES)
    for name, version in (("filelock", "3.16.1"), ("typing_extensions", "4.12.2"), ("sympy", "1.14.0")):
        b.dist(name, version)
    [f] = tc209(b.prefix)
    assert f.evidence["missing"] == ["pywin32>=300"]
    assert f.evidence["evaluated for"] == "win32, Python 3.11"


def test_conda_owned_torch_gets_a_conda_fix(make_env):
    b = make_env(layout="conda")
    b.conda_pytorch("2.5.1", "cpu_generic_py311_h0000000_0")
    info = next(b.site_packages.glob("torch-*.dist-info"))
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nRequires-Dist: typing-extensions>=4.8.0\n",
        encoding="utf-8",
    )
    [f] = tc209(b.prefix)
    assert f.fixes[0].kind == "conda"
    assert f.fixes[0].commands[0].startswith("conda install")


def test_module_present_without_metadata_does_not_fail_the_import(make_env):
    """typing_extensions.py copied without its dist-info still imports: a warning, not an import error."""
    b = make_env(layout="venv")
    b.pip_torch("2.13.0+cpu", requires=("typing-extensions>=4.10.0",))
    (b.site_packages / "typing_extensions.py").write_text("# copied without metadata\n", encoding="utf-8")
    [f] = tc209(b.prefix)
    assert (f.severity.value, f.title.key) == ("warning", "TC209.later.title")


@pytest.mark.parametrize(
    "spec",
    [
        ">=4.10.0",
        ">=4.10",
        ">=4",
        ">=1!0",
        ">=4.10.0,<5",
        "==4.10.*",
        "~=4.10",
        ">4.10.0",
        "<=4.10.0",
        ">=4.10.0rc1",
        ">= 4.10",
        ">=x",
    ],
)
@pytest.mark.parametrize(
    "version",
    ["4.10.0", "4.9.9", "4.11.0rc1", "4.10.0rc1", "4.10.0.dev1", "4.10.0.post1", "4.10.0+local", "4.9+local", "1!0.1",
     "not a version", "4.10.0.0"],
)  # fmt: skip
def test_specifier_containment_is_packagings(spec, version):
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from conda_torchcheck.checks.requirements import _contains

    try:
        expected = SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        expected = True
    assert _contains(spec, version) == expected
