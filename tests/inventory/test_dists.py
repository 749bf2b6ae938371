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


UNDER = [
    PLAIN,
    PLAIN.replace("\r\n", "\n"),
    "torch/lib/libc10.so,h,1\nxtorch/lib/no.so,h,1\ntorch\\lib\\win.dll,h,2\ntorch/lib\\mixed.so,,\n",
    "torch/lib/a,b.so,h,1\ntorch/lib/one-comma,5\ntorch/lib/no-comma\ntorch/libx/no.so,,\ntorch/lib/sub/deep.so,h,1",
    'torch/lib/q.so,h,1\n"torch/lib/odd,name.so",h,2\n',  # quoted: through csv
    "torch/lib/a.so,h,1\r\ntorch/lib/b\x85c.so,h,2\n",
    "torch/lib/,h,1\n",
    "",
]


@pytest.mark.parametrize("text", UNDER)
def test_record_paths_under_a_folder_are_those_of_all_rows_inside_it(tmp_path, text):
    record = tmp_path / "RECORD"
    record.write_bytes(text.encode("utf-8"))
    every = dists.record_paths(_Dist(record))
    inside = tuple(p for p in every if p.replace("\\", "/").startswith("torch/lib/"))
    assert dists.record_paths(_Dist(record), under="torch/lib") == inside


@pytest.mark.parametrize("text", UNDER)
def test_record_paths_mentioning_are_all_rows_or_none(tmp_path, text):
    record = tmp_path / "RECORD"
    record.write_bytes(text.encode("utf-8"))
    every = dists.record_paths(_Dist(record))
    got = dists.record_paths(_Dist(record), mentioning=".so")
    assert got == every if any(".so" in p for p in every) else got in (every, ())


def test_record_paths_of_a_missing_record_are_empty(tmp_path):
    assert dists.record_paths(_Dist(tmp_path / "RECORD")) == ()


@pytest.mark.parametrize(
    "text",
    [
        *UNDER,
        PLAIN + "torch/x.pyi,h,3\ntorch/y.py\ntorch/z.py,7\ntorch/a,b.py,h,8\ntorch/.py/no.txt,h,9\nw.py,,\n",
        'torch/a.py,h,1\n"torch/odd,name.py",h,2\nb.py,h,3\n',  # quoted: through csv, its row last
        "torch/a.py,h,1\r\ntorch/b\x85c.py,h,2\n",
        "no python here,h,1\n",
        "torch/\u00e9t\u00e9.py,h,12\ntorch/\u4e2d.py,h,\u00b2\n\ufefffirst.py,h,1\n",
        "a.py,h,1\r\nb.py,h,2",  # no line end after the last row
        "x.py,h,1\n\u0085y.py,h,2\n",  # a NEL: through the row parser
    ],
)
def test_record_sizes_are_the_row_parsers_rows_of_that_suffix(tmp_path, text):
    record = tmp_path / "RECORD"
    record.write_bytes(text.encode("utf-8"))
    expected = tuple((row[0], row[2]) for row in dists.record_rows(record) if row[0].endswith(".py") and row[2])
    assert dists.record_sizes(record, ".py") == expected


@pytest.mark.parametrize(
    "text",
    [
        "a.py,h,1\r\nb.py,h,2\r\n",
        "a.py,h,1\r\nb.py,h,2\nc.py,h,3\r\n",
        "a.py,h,1\r\nb.py\rc.py,h,2\r\n",
        "a.py,h,1\n\r\n",
    ],
)
def test_record_sizes_with_windows_and_mixed_line_ends(tmp_path, text):
    record = tmp_path / "RECORD"
    record.write_bytes(text.encode("utf-8"))
    expected = tuple((row[0], row[2]) for row in dists.record_rows(record) if row[0].endswith(".py") and row[2])
    assert dists.record_sizes(record, ".py") == expected


@pytest.mark.parametrize(
    "raw",
    [
        b"torch/\xff\xfe.py,h,1\nb.py,h,2\n",
        b"a\xe2.py,h,1\r\n\xc2.py,h,\xc2\n",
        b"\xe2\x80\n.py,h,1\n",
        b"x.py,h,1\n\xe2\x80\xa8",
    ],
)
def test_record_sizes_of_undecodable_bytes_are_the_row_parsers(tmp_path, raw):
    record = tmp_path / "RECORD"
    record.write_bytes(raw)
    expected = tuple((row[0], row[2]) for row in dists.record_rows(record) if row[0].endswith(".py") and row[2])
    assert dists.record_sizes(record, ".py") == expected
