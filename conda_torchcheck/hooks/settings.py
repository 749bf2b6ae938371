"""The plugin's conda settings: declared once here, read through conda's context where conda runs.

``.condarc``::

    plugins:
      torchcheck_auto: true
      torchcheck_strict: false
      torchcheck_activation_hooks: false

or ``CONDA_PLUGINS_TORCHCHECK_STRICT=true`` in the environment. This module imports conda only inside
functions, so the standalone CLI can use :func:`setting` too (it then reads the environment variables).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class SettingSpec:
    name: str
    default: bool
    description: str

    @property
    def environment_variable(self) -> str:
        return "CONDA_PLUGINS_" + self.name.upper()


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "torchcheck_auto",
        True,
        "Check the environment after install/create/update/remove when torch-related packages changed, "
        "and print the errors found (conda-torchcheck).",
    ),
    SettingSpec(
        "torchcheck_strict",
        False,
        "Refuse a transaction that would leave torch broken (mixed pytorch channels, cuda and cpu builds "
        "mixed, ...) instead of only warning (conda-torchcheck).",
    ),
    SettingSpec(
        "torchcheck_activation_hooks",
        False,
        "Install conda-torchcheck's activation checks (etc/conda/activate.d) into an environment after torch "
        "is installed there (conda-torchcheck).",
    ),
)
_BY_NAME = {s.name: s for s in SETTINGS}

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n", ""}


def parse_bool(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return default


def setting(name: str) -> bool:
    """The value of one of :data:`SETTINGS`: conda's context when conda is loaded, else the env variable.

    Never raises: a broken ``.condarc`` entry falls back to the default rather than failing a hook.
    """
    spec = _BY_NAME[name]
    # conda ranks the environment variable above every .condarc: read it directly (also current when the
    # variable changed after conda's context was built)
    if spec.environment_variable in os.environ:
        return parse_bool(os.environ[spec.environment_variable], spec.default)
    import sys

    if "conda.base.context" in sys.modules:
        try:
            from conda.base.context import context

            plugins = context.plugins
            value = getattr(plugins, name)
            return parse_bool(value, spec.default)
        except Exception:
            pass
    return parse_bool(os.environ.get(spec.environment_variable), spec.default)
