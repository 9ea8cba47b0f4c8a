"""Second review of the readers: the encoding is decided by the weight of the evidence on whole lines (a cp1252
file with a mojibake row stays cp1252), a few columns of a wide CSV are read without converting the others
(the empty rows still judged over all columns), and a blank cell (empty or only white space) is missing in
every format."""

import numpy as np
import pyarrow as pa
import pytest

from optrr_engine.errors import InputError
from optrr_engine.io import csv_source, sniff
from optrr_engine.io.readers import detect_options, iter_chunks, open_source


def rows_of(source, columns=None) -> list[dict]:
    return [row for table in source.tables(columns) for row in table.to_pylist()]


# -- 1. encoding: the weight of the evidence, on whole lines ----------------------------------------------------


def test_cp1252_file_with_a_mojibake_row_is_read_as_cp1252(tmp_path):
    """ "CafÃ©" in cp1252 is the bytes of UTF-8 "Café": one such row must not make the file UTF-8."""
    rows = ["id;city"] + [f"{i};Bern" for i in range(29)] + ["29;CafÃ©", "30;Montréal", "31;Genève", "32;Zürich"]
    path = tmp_path / "cp.csv"
    path.write_bytes(("\n".join(rows) + "\n").encode("cp1252"))
    assert detect_options(path).encoding == "cp1252"
    assert [r["city"] for r in rows_of(open_source(path))][-4:] == ["CafÃ©", "Montréal", "Genève", "Zürich"]


def test_utf8_file_of_300000_rows_with_one_cp1252_row_at_the_end_is_refused_at_that_row(tmp_path):
    cities = ["Zürich", "Bern", "Genève"]
    lines = ["sex,city"] + [f"{'FM'[i % 2]},{cities[i % 3]}" for i in range(300_000)]
    path = tmp_path / "mixed.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode() + "F,Zürich\n".encode("cp1252"))
    assert detect_options(path).encoding == "utf-8"
    with pytest.raises(InputError, match=r"at data row 300,001 \(line 300,002 of the file\) are not valid utf-8"):
        list(iter_chunks(path))


def test_the_evidence_is_weighed_valid_utf8_lines_must_outnumber_invalid_ones():
    head = "a,b\nx,Café\n".encode() + "y,Montréal\n".encode("cp1252")
    assert sniff.guess_encoding(head, []) == "cp1252"  # one each: no clear evidence
    assert sniff.guess_encoding(head + "z,Genève\n".encode(), []) == "utf-8"
    assert sniff.utf8_evidence(head, []) == (1, 1)


def wide_ascii_file(path, lines: int) -> bytes:
    data = b"sex,city\n" + b"".join(b"%s,Bern-%06d\n" % (b"FM"[i % 2 : i % 2 + 1], i) for i in range(lines))
    path.write_bytes(data)
    return data


def test_sample_windows_hold_whole_lines_only(tmp_path):
    path = tmp_path / "big.csv"
    data = wide_ascii_file(path, 200_000)
    head, windows = sniff.read_samples(path)
    assert head == data[: sniff.SAMPLE_BYTES] and len(windows) == sniff.WINDOWS
    for window in windows:
        at = data.find(window, sniff.SAMPLE_BYTES)
        assert window and data[at - 1 : at] == b"\n" and window.endswith(b"\n")
    assert data.endswith(windows[-1])


def test_a_window_cut_inside_a_line_gives_no_evidence(tmp_path):
    """Lines cut by a window's end just before an invalid byte would look like valid UTF-8 ("Ã©" of "Ã©é")."""
    path = tmp_path / "cut.csv"
    data = bytearray(wide_ascii_file(path, 200_000))
    for number in (10, 20):  # two cp1252 lines in the head: "Montréal"
        at = data.index(b"Bern-%06d" % number)
        data[at : at + 11] = b"Montr\xe9al---"
    size = len(data)
    last = size - sniff.WINDOW_BYTES
    for i in range(3):  # the ends of the first three windows cut a line just before a cp1252 "é"
        end = sniff.SAMPLE_BYTES + (last - sniff.SAMPLE_BYTES) * i // (sniff.WINDOWS - 1) + sniff.WINDOW_BYTES
        line = data.rindex(b"\n", 0, end) + 1
        assert data[line + 2 : line + 7] == b"Bern-" and line + 7 <= end - 2 and end + 1 < data.index(b"\n", end)
        data[end - 2 : end + 1] = b"\xc3\xa9\xe9"
    path.write_bytes(bytes(data))
    head, windows = sniff.read_samples(path)
    assert sniff.utf8_evidence(head, windows) == (0, 2)
    assert detect_options(path).encoding == "cp1252"


# -- 2. a few columns of a wide CSV ---------------------------------------------------------------------------


def wide_csv(path, quoted_newline: bool = False) -> None:
    names = [f"c{j}" for j in range(12)]
    lines = [",".join(names)]
    for i in range(3000):
        if i % 100 == 7:
            lines.append(",".join([""] * 12))  # an empty row
        elif i % 100 == 8:
            lines.append(",".join(['"  "', " ", "\t"] * 4))  # a row of blank cells: empty too
        elif i % 100 == 9:
            lines.append(",".join([""] * 11 + ["x"]))  # a record with one value in the last column
        else:
            lines.append(",".join(f"v{(i + j) % 3}" for j in range(12)))
    if quoted_newline:
        lines.append(",".join(['"two\nlines"'] + ["a"] * 11))
    path.write_text("\r\n".join(lines) + "\r\n\r\n", newline="")


@pytest.mark.parametrize("quoted_newline", [False, True])
def test_three_columns_of_a_wide_csv_agree_with_all_columns_on_the_records(tmp_path, monkeypatch, quoted_newline):
    path = tmp_path / "wide.csv"
    wide_csv(path, quoted_newline)
    converted = []
    reader = csv_source.CsvSource._reader
    monkeypatch.setattr(
        csv_source.CsvSource, "_reader", lambda self, cols: converted.append(cols) or reader(self, cols)
    )
    source = open_source(path)
    every = rows_of(source)
    assert source.empty_rows_skipped == 60 and len(every) == 3000 - 60 + quoted_newline
    chosen = ["c0", "c5", "c11"]
    assert rows_of(source, chosen) == [{c: row[c] for c in chosen} for row in every]
    assert source.empty_rows_skipped == 60
    assert [r for r in every if r["c11"] == "x"][0] == {**{f"c{j}": None for j in range(11)}, "c11": "x"}
    assert converted[-1] == (source.names if quoted_newline else chosen)  # only the chosen columns, when it can
    assert (source.empty_records() is None) == quoted_newline


def test_empty_records_maps_lines_to_records(tmp_path):
    path = tmp_path / "e.csv"
    path.write_bytes(b'a;b\n;\n\nx;y\r\n" ";""\n\r\n;z\n;""""\n;\n')
    found, records = csv_source.empty_records(path, "utf-8", ";")
    assert found.tolist() == [0, 2, 5] and records == 6  # blank lines are no records; '""""' is a quote
    path.write_bytes(b'a;b\n"x\n";y\n')
    assert csv_source.empty_records(path, "utf-8", ";") is None


# -- 3. blank cells are missing in every format; empty rows skipped in CSV / Excel, kept elsewhere --------------

BLANKS = {"code": ["A", "  ", "", "\t", "B", None], "other": ["1", " ", None, "", "2", " \u00a0"]}
EXPECTED_CODES = ["A", None, None, None, "B", None]


def write_format(folder, fmt: str):
    import pandas as pd

    path = folder / f"blank.{fmt}"
    if fmt == "csv":
        rows = ["code,other"] + [f"{a or ''},{b or ''}" for a, b in zip(*BLANKS.values(), strict=True)]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    elif fmt == "xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        book.active.append(list(BLANKS))
        for row in zip(*BLANKS.values(), strict=True):
            book.active.append(list(row))
        book.save(path)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(pa.table(BLANKS), path)
    else:
        import pyreadstat

        frame = pd.DataFrame({k: [v if v is not None else "" for v in vals] for k, vals in BLANKS.items()})
        (pyreadstat.write_sav if fmt == "sav" else pyreadstat.write_dta)(frame, str(path))
    return path


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "parquet", "sav", "dta"])
def test_a_blank_cell_is_missing_in_every_format(tmp_path, fmt):
    source = open_source(write_format(tmp_path, fmt))
    rows = rows_of(source)
    keeps_empty_rows = fmt in ("parquet", "sav", "dta")  # a case with all values missing is a case
    expected = EXPECTED_CODES if keeps_empty_rows else ["A", "B"]  # rows 2-4 and 6: no value in either column
    assert [r["code"] for r in rows] == expected
    assert {r["other"] for r in rows} <= {"1", "2", None}
    assert source.empty_rows_skipped == (0 if keeps_empty_rows else 4)


def test_a_spaces_only_category_is_never_released(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,b\nx,1\n  ,2\ny,3\n")
    assert [r["a"] for r in rows_of(open_source(path))] == ["x", None, "y"]
    assert np.isnan(next(iter_chunks(path))["a"].iloc[1])
