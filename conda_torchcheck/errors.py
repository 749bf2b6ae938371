"""Errors the CLI turns into one clear line on stderr and exit code 2."""

from __future__ import annotations


class TorchCheckError(Exception):
    """Base class: a problem with the input, not a finding about the env."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class TargetError(TorchCheckError):
    """The target prefix does not exist, is not an environment, or cannot be read."""


class UsageError(TorchCheckError):
    """Bad command-line input."""


class InternalError(TorchCheckError):
    """A bug of this tool met while running a verb: reported as its own error (exit 2, one line or the JSON
    error document), never as a traceback or, under conda, as conda's "An unexpected error has occurred"."""

    def __init__(self, exc: BaseException) -> None:
        import traceback

        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
        super().__init__(
            f"internal error{where}: {type(exc).__name__}: {exc}",
            hint="this is a bug in conda-torchcheck, not a problem of the environment; "
            "CONDA_TORCHCHECK_DEBUG=1 shows the traceback",
        )
