"""The one reason every conda-needing test gives when it is skipped: what is missing and how to get it."""

CONDA_SKIP_REASON = (
    "conda is not importable here (conda is not on PyPI): install it from the conda and menuinst wheels in "
    "../shared/wheels, as .ci/run does, or run the tests with a python that has conda (docs/plugin.md, "
    "'Developing')"
)
