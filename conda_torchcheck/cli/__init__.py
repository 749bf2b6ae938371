"""Command-line verbs shared by the standalone ``conda-torchcheck`` and ``conda torchcheck``.

Each verb lives in ``cli/main_<verb>.py`` and exposes ``HELP``, ``configure_parser(parser)`` and
``execute(args) -> int``.
"""

from __future__ import annotations

# verb name -> module; modules are imported only when their parser is built or the verb runs
VERBS: dict[str, str] = {
    "check": "conda_torchcheck.cli.main_check",
    "repair": "conda_torchcheck.cli.main_repair",
    "tree": "conda_torchcheck.cli.main_tree",
    "explain": "conda_torchcheck.cli.main_explain",
    "run": "conda_torchcheck.cli.main_run",
    "spec": "conda_torchcheck.cli.main_spec",
    "hooks": "conda_torchcheck.cli.main_hooks",
    "list-checks": "conda_torchcheck.cli.main_list_checks",
    "docs": "conda_torchcheck.cli.main_docs",
}
DEFAULT_VERB = "check"
