"""Writers (every format reads back identically through the readers) and the atomic-file helpers."""

import hashlib
import os

import pyarrow as pa
import pytest

from optrr_engine.errors import InputError
from optrr_engine.io.atomic import (
    AtomicFile,
    check_output_path,
    file_mode,
    same_file,
    sha256_file,
    write_text_atomic,
)
from optrr_engine.io.readers import ReaderOptions, iter_chunks
from optrr_engine.io.writers import XLSX_MAX_ROWS, XlsxWriter, open_writer

NAMES = ["grade", "note; x", "id"]
TRICKY = ["plain", 'say "hi"', "a;b", "a,b", "two\nlines", " padded ", "", "é ü ß"]


def sample_table():
    codes = pa.array([0, 1, 2, 1, 0, 2, 1, 0], pa.int16())
    labels = pa.array(["A", "B,C", 'D"E'])
    return pa.table(
        [
            pa.DictionaryArray.from_arrays(codes, labels),
            pa.array(TRICKY[:7] + [None]),
            pa.array([str(i) for i in range(8)]),
        ],
        names=NAMES,
    )


def expected_rows():
    t = sample_table()
    grade = t.column(0).combine_chunks()
    return {
        "grade": grade.dictionary.take(grade.indices).to_pylist(),
        "note; x": [v if v not in ("", None) else None for v in TRICKY[:7] + [None]],
        "id": [str(i) for i in range(8)],
    }


@pytest.mark.parametrize(("fmt", "ext", "delimiter"), [("csv", "csv", ","), ("csv", "csv", ";"), ("csv", "tsv", "\t")])
def test_csv_round_trip_with_quoting(tmp_path, fmt, ext, delimiter):
    path = tmp_path / f"out.{ext}"
    w = open_writer(fmt, path, NAMES, delimiter=delimiter)
    table = sample_table()
    w.write(table.slice(0, 3))
    w.write(table.slice(3))
    w.close()
    assert w.rows == 8
    (df,) = list(iter_chunks(path, ReaderOptions(delimiter=delimiter)))
    got = {c: [None if not isinstance(v, str) else v for v in df[c]] for c in NAMES}
    assert got == expected_rows()  # an empty string is written as an empty cell, i.e. missing


def test_csv_minimal_quoting_and_bom(tmp_path):
    path = tmp_path / "q.csv"
    w = open_writer("csv", path, ["a"], bom=True)
    w.write(pa.table({"a": pa.array(["x", "y,z", None])}))
    w.close()
    assert path.read_bytes() == b'\xef\xbb\xbfa\nx\n"y,z"\n\n'


@pytest.mark.parametrize("fmt", ["parquet", "xlsx", "sav", "dta"])
def test_other_formats_round_trip(tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    names = ["grade", "id"] if fmt in ("sav", "dta") else NAMES  # SPSS/Stata need identifier names
    table = sample_table()
    table = table.select([0, 2]).rename_columns(names) if fmt in ("sav", "dta") else table
    w = open_writer(fmt, path, names)
    w.write(table.slice(0, 5))
    w.write(table.slice(5))
    w.close()
    frames = list(iter_chunks(path))
    df = frames[0] if len(frames) == 1 else None
    want = expected_rows()
    assert df["grade"].tolist() == want["grade"]
    assert df["id"].tolist() == want["id"]
    if fmt in ("parquet", "xlsx"):
        got = [v if isinstance(v, str) else None for v in df["note; x"]]
        assert got == want["note; x"]  # an empty text is missing when read back, in Parquet as in Excel


def test_xlsx_row_limit_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr("optrr_engine.io.writers.XLSX_MAX_ROWS", 5)
    w = XlsxWriter(tmp_path / "x.xlsx", ["a"])
    with pytest.raises(InputError, match="at most 5 data rows"):
        w.write(pa.table({"a": pa.array([str(i) for i in range(6)])}))
    w.abort()
    assert XLSX_MAX_ROWS == 1_048_575


def test_atomic_file_commit_and_discard(tmp_path):
    final = tmp_path / "final.txt"
    with AtomicFile(final) as tmp:
        assert os.path.dirname(tmp.path) == str(tmp_path) and os.path.basename(tmp.path).startswith(".final.txt.")
        with open(tmp.path, "w") as fh:
            fh.write("partial")
        assert not final.exists()
    assert not final.exists() and os.listdir(tmp_path) == []  # discarded without commit
    with AtomicFile(final) as tmp:
        with open(tmp.path, "w") as fh:
            fh.write("done")
        tmp.commit()
    assert final.read_text() == "done" and os.listdir(tmp_path) == ["final.txt"]
    assert final.stat().st_mode & 0o777 == file_mode()  # the umask is respected (mkstemp alone gives 0600)
    write_text_atomic(final, "again")
    assert final.read_text() == "again"
    assert sha256_file(final, block=2) == hashlib.sha256(b"again").hexdigest()


def test_output_path_checks(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    os.symlink(src, tmp_path / "link.csv")
    for same in (src, tmp_path / "link.csv", tmp_path / "sub" / ".." / "in.csv"):
        with pytest.raises(InputError, match="is the input file"):
            check_output_path(same, [src])
    assert same_file(tmp_path / "link.csv", src)
    with pytest.raises(InputError, match="is a folder"):
        check_output_path(tmp_path, [src])
    with pytest.raises(InputError, match="does not exist"):
        check_output_path(tmp_path / "nope" / "out.csv", [src])
    assert check_output_path(tmp_path / "out.csv", [src]) == str(tmp_path / "out.csv")
