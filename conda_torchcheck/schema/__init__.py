"""The JSON every verb prints: one document with ``schema``, ``tool`` and ``kind`` first; the JSON Schema that
describes all of them ships beside this module (``output.schema.json``)."""

from __future__ import annotations

from pathlib import Path

#: version of every JSON document (reports, trees, explanations, spec results, errors ...)
SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).resolve().parent / "output.schema.json"


def header(kind: str) -> dict[str, object]:
    """The first keys of a document of ``kind`` (``report``, ``fleet``, ``tree``, ``error`` ...)."""
    from conda_torchcheck import __version__

    return {"schema": SCHEMA_VERSION, "tool": {"name": "conda-torchcheck", "version": __version__}, "kind": kind}
