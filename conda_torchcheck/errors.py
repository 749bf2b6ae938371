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
