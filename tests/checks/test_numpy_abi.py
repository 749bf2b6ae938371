"""TC210: NumPy 2 beside a torch built against NumPy 1 (before 2.3)."""

from __future__ import annotations

from conda_torchcheck.checks import numpy_abi
from conda_torchcheck.explain import explain
from tests.checks.tc_helpers import context
from tests.explain.confirming import assert_confirmed, assert_not_confirmed

NUMPY2_WARNING = (
    "A module that was compiled using NumPy 1.x cannot be run in\n"
    "NumPy 2.0.0 as it may crash. To support both 1.x and 2.x\n"
    "UserWarning: Failed to initialize NumPy: _ARRAY_API not found"
)


def _env(make_env, torch: str, numpy: str):
    b = make_env(layout="venv")
    b.pip_torch(torch)
    b.dist("numpy", numpy)
    return b


def test_numpy_2_beside_torch_22_is_a_warning_with_both_fixes(make_env):
    (f,) = numpy_abi.CHECK.run(context(_env(make_env, "2.2.2", "2.0.1")))
    assert (f.id, f.severity.value) == ("TC210", "warning")
    assert f.evidence["numpy"] == "2.0.1"
    assert 'install "numpy<2"' in f.fixes[0].commands[0]


def test_torch_23_and_numpy_1_are_silent(make_env):
    assert list(numpy_abi.CHECK.run(context(_env(make_env, "2.3.0", "2.0.1")))) == []
    assert list(numpy_abi.CHECK.run(context(_env(make_env, "2.2.2", "1.26.4")))) == []


def test_conda_numpy_is_fixed_with_conda(make_env):
    b = make_env(layout="conda")
    b.pip_torch("2.1.2")
    b.conda_python_package("numpy", "2.1.3", "py311h0000000_0")
    (f,) = numpy_abi.CHECK.run(context(b))
    assert f.fixes[0].commands[0].startswith("conda install")


def test_explain_confirms_the_numpy_2_cause_on_such_an_env(make_env):
    assert_confirmed(explain(NUMPY2_WARNING, context(_env(make_env, "2.2.2", "2.0.1"))), "numpy-1-build-under-numpy-2")
    assert_not_confirmed(
        explain(NUMPY2_WARNING, context(_env(make_env, "2.2.2", "1.26.4"))), "numpy-1-build-under-numpy-2"
    )
