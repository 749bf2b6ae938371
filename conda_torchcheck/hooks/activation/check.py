"""TC810: this tool's activation scripts are installed but were generated for another torch (or tool version).

Registered in ``conda_torchcheck.registry``. Costs one directory listing when no scripts are installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from conda_torchcheck.checks import Check
from conda_torchcheck.checks.context import CheckContext
from conda_torchcheck.findings import Finding, Fix, Severity, finding
from conda_torchcheck.messages import msg

#: render.STEM, repeated so that this check need not import the renderer (a test keeps them equal)
SCRIPT_STEM = "zz_conda_torchcheck"


def run(ctx: CheckContext) -> Iterator[Finding]:
    env = ctx.env
    if env.layout not in ("conda", "pixi"):
        return
    # one listing decides, before importing the script machinery (~15 ms) that only installed scripts need
    try:
        listed = os.listdir(env.prefix / "etc" / "conda" / "activate.d")
    except OSError:
        return
    if not any(name.startswith(SCRIPT_STEM) for name in listed):
        return
    from conda_torchcheck.hooks.activation import install, render
    from conda_torchcheck.hooks.activation.facts import facts_for
    from conda_torchcheck.hooks.summary import report_command

    directory = install.activate_dir(env.prefix)
    if not any((directory / render.filename(ext)).exists() for ext in render.ALL_EXTENSIONS):
        return
    state = install.status(env.prefix, facts_for(env, ctx.torch))
    if not state.installed_any or state.up_to_date:
        return
    stale = [f.name for f in state.files if f.state in ("outdated", "missing", "stray")]
    command = report_command(env.prefix).replace("conda torchcheck -p", "conda torchcheck hooks install -p", 1)
    yield finding(
        "TC810",
        Severity.WARNING,
        directory=str(directory),
        files=", ".join(stale),
        evidence={"directory": directory, "files": {f.name: f.state for f in state.files}},
        fixes=[Fix("file", msg("TC810.fix"), commands=(command,), safe_automatic=True)],
    )


CHECK = Check.declared(__name__, run)
