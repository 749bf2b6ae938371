"""RECORD reading: record_paths gives the path field of every row exactly as record_rows does."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_torchcheck.inventory import dists


class _Dist:
    def __init__(self, record: Path) -> None:
        self.record_path = record


PLAIN = "torch/__init__.py,sha256=abc,12\r\ntorch/lib/libc10.so,sha256=def,34\r\n../../../bin/torchrun,,\r\n"


@pytest.mark.parametrize(
    "text",
    [
        PLAIN,  # as pip writes it: csv, "\r\n" line ends
        PLAIN.replace("\r\n", "\n"),
        'a,b,c\n"odd,name.py",sha256=x,1\nz.py,,\n',  # a quoted path: csv
        "one\n\ntwo,2\nthree,3,4,5\n",  # too few and too many fields
        "a,b,c\r\n\r\nx\r\n",
        "a\rb,c\r\n",  # a lone "\r" is a line break for splitlines
        "a\x85b,c,d\n",
        "a\u2028b,c,d\nlast,row,without-newline",
        "",
    ],
)
def test_record_paths_match_the_row_parser(tmp_path, text):
    record = tmp_path / "RECORD"
    record.write_bytes(text.encode("utf-8"))
    assert dists.record_paths(_Dist(record)) == tuple(row[0] for row in dists.record_rows(record))


def test_record_paths_of_a_missing_record_are_empty(tmp_path):
    assert dists.record_paths(_Dist(tmp_path / "RECORD")) == ()
