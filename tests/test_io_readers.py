"""Readers: every format read as text chunks, detection of delimiter / encoding / decimal, and one-line
errors for broken files."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from optrr_engine.errors import InputError
from optrr_engine.io.readers import (
    ReaderOptions,
    column_names,
    count_rows,
    detect_options,
    iter_chunks,
    iter_tables,
    read_preview,
)
from tests.conftest import TEST_DATA


def read_all(path, **opts):
    frames = list(iter_chunks(path, ReaderOptions(**opts) if opts else None))
    return pd.concat(frames, ignore_index=True) if frames else None


def test_semicolon_cp1252_decimal_comma_is_detected(tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes("Name;Größe;Ort\nAnna;1,72;Köln\nBéa;1,65;Zürich\n".encode("cp1252"))
    opts = detect_options(path)
    assert (opts.delimiter, opts.encoding, opts.decimal) == (";", "cp1252", ",")
    df = read_all(path)
    assert list(df.columns) == ["Name", "Größe", "Ort"]
    assert df.to_dict("list") == {"Name": ["Anna", "Béa"], "Größe": ["1,72", "1,65"], "Ort": ["Köln", "Zürich"]}


def test_utf8_bom_tab_and_quotes(tmp_path):
    path = tmp_path / "bom.tsv"
    path.write_bytes(b'\xef\xbb\xbfa\tb\n"x\ty"\t"two\nlines"\n\t"He said ""hi"""\n')
    opts = detect_options(path)
    assert opts.encoding == "utf-8-sig" and opts.delimiter == "\t"
    df = read_all(path)
    assert list(df.columns) == ["a", "b"]
    assert df["a"].tolist()[0] == "x\ty" and df["b"].tolist() == ["two\nlines", 'He said "hi"']
    assert pd.isna(df["a"].iloc[1])  # an empty cell is the only missing value


def test_non_utf8_byte_far_from_the_start_is_noticed(tmp_path):
    path = tmp_path / "late.csv"
    rows = "".join(f"{i},caf\n" for i in range(400_000))  # ~4.5 MB of ASCII, then one Latin-1 byte
    path.write_bytes(("id,v\n" + rows).encode() + b"999999,caf\xe9\n")
    assert detect_options(path).encoding == "cp1252"
    last = read_all(path).iloc[-1].tolist()
    assert last == ["999999", "café"]


def test_text_markers_are_not_missing_and_values_are_strings(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b\nNA,?\n,None\n1.50,007\n")
    df = read_all(path)
    assert df["a"].tolist()[0] == "NA" and pd.isna(df["a"].iloc[1]) and df["a"].iloc[2] == "1.50"
    assert df["b"].tolist() == ["?", "None", "007"]
    assert all(dt is np.dtype(object) for dt in df.dtypes)


def test_chunks_have_exactly_chunk_rows(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("x\n" + "".join(f"{i}\n" for i in range(1003)))
    sizes = [len(c) for c in iter_chunks(path, ReaderOptions(chunk_rows=100))]
    assert sizes == [100] * 10 + [3]
    assert [t.num_rows for t in iter_tables(path, ReaderOptions(chunk_rows=500))] == [500, 500, 3]
    assert read_preview(path, nrows=7)["x"].tolist() == [str(i) for i in range(7)]


def test_columns_subset_and_unknown_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,b,c\n1,2,3\n")
    (frame,) = list(iter_chunks(path, columns=["c", "a"]))
    assert list(frame.columns) == ["c", "a"] and frame.iloc[0].tolist() == ["3", "1"]
    with pytest.raises(InputError, match="no column 'z'"):
        list(iter_chunks(path, columns=["z"]))


def test_parquet_typed_columns_become_text(tmp_path):
    path = tmp_path / "p.parquet"
    table = pa.table(
        {
            "f": pa.array([1.0, 2.5, None]),
            "i": pa.array([3, None, 5], pa.int64()),
            "b": pa.array([True, False, None]),
            "d": pa.array(["x", "y", "x"]).dictionary_encode(),
        }
    )
    pq.write_table(table, path, row_group_size=2)
    assert count_rows(path) == 3
    df = read_all(path, chunk_rows=2)
    assert df["f"].tolist()[:2] == ["1", "2.5"] and pd.isna(df["f"].iloc[2])
    assert df["i"].tolist()[0] == "3" and pd.isna(df["i"].iloc[1])
    assert df["b"].tolist()[:2] == ["true", "false"]
    assert df["d"].tolist() == ["x", "y", "x"]


def test_excel_sheets_numbers_and_dates(tmp_path):
    import datetime

    import openpyxl

    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "first"
    ws.append(["x"])
    ws.append([1])
    ws2 = wb.create_sheet("data")
    ws2.append(["age", "when", "grade"])
    ws2.append([41, datetime.datetime(2020, 5, 17), "A"])
    ws2.append([3.5, None, "B"])
    ws2.append([None, None, None])  # an empty row is skipped
    wb.save(path)
    df = read_all(path, sheet="data")
    assert df["age"].tolist() == ["41", "3.5"] and df["when"].tolist()[0] == "2020-05-17"
    assert df["grade"].tolist() == ["A", "B"] and pd.isna(df["when"].iloc[1])
    assert column_names(path, ReaderOptions(sheet=1)) == ["age", "when", "grade"]
    assert column_names(path) == ["x"]
    with pytest.raises(InputError, match="no sheet 'nope'.*first, data"):
        column_names(path, ReaderOptions(sheet="nope"))


@pytest.mark.parametrize("ext", ["sav", "dta"])
def test_spss_and_stata_value_labels_become_categories(tmp_path, ext):
    import pyreadstat

    path = tmp_path / f"survey.{ext}"
    frame = pd.DataFrame({"sex": [1.0, 2.0, 1.0, np.nan], "score": [1.5, 2.0, 3.0, 4.0]})
    labels = {"sex": {1.0: "male", 2.0: "female"}}
    writer = pyreadstat.write_sav if ext == "sav" else pyreadstat.write_dta
    writer(frame, str(path), variable_value_labels=labels)
    assert count_rows(path) == 4
    df = read_all(path, chunk_rows=3)
    assert df["sex"].tolist()[:3] == ["male", "female", "male"] and pd.isna(df["sex"].iloc[3])
    assert df["score"].tolist() == ["1.5", "2", "3", "4"]


def test_real_data_files_read_completely():
    expected = {"nursery.csv": (12960, 9), "heart_cleveland.csv": (303, 14), "breast_cancer.csv": (286, 10)}
    for name, (rows, cols) in expected.items():
        df = read_all(TEST_DATA / name, chunk_rows=1000)
        assert df.shape == (rows, cols)


def test_column_names_are_kept_as_they_are(tmp_path):
    path = tmp_path / "survey.csv"
    path.write_text("GENDER,FATIGUE ,ALLERGY \nM,1,2\n", encoding="utf-8")
    assert column_names(path) == ["GENDER", "FATIGUE ", "ALLERGY "]


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"", "is empty"),
        (b"\n\n", "is empty"),
        (b"a,b,c\n1,2,3\n4,5\n", "2 fields but the header has 3"),
        (b"a,b,c\n1,2,3\n4,5,6,7\n", "4 fields but the header has 3"),
        (b"a,b,a\n1,2,3\n", "'a' appears twice"),
        (b"a,,c\n1,2,3\n", "column 2 has no name"),
    ],
)
def test_broken_csv_gives_one_line_errors(tmp_path, content, pattern):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=pattern) as info:
        list(iter_chunks(path))
    assert "\n" not in str(info.value)


def test_header_only_yields_no_rows(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,b\n")
    assert list(iter_chunks(path)) == []
    assert list(read_preview(path).columns) == ["a", "b"]


def test_undecodable_bytes_with_a_given_encoding(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"a,b\n1,caf\xe9\n")
    with pytest.raises(InputError, match="not valid utf-8 text.*--encoding") as info:
        list(iter_chunks(path, ReaderOptions(encoding="utf-8")))
    assert "\n" not in str(info.value)
    assert read_all(path)["b"].tolist() == ["café"]  # detected as cp1252 by default


@pytest.mark.parametrize(
    ("name", "opts", "pattern"),
    [
        ("data.xls", {}, "unsupported file type .xls"),
        ("missing.csv", {}, "does not exist"),
        ("ok.csv", {"delimiter": ";;"}, "delimiter must be one character"),
        ("ok.csv", {"encoding": "klingon"}, "unknown text encoding"),
        ("ok.csv", {"decimal": ";"}, "decimal mark"),
        ("ok.csv", {"chunk_rows": 0}, "chunk_rows"),
        ("broken.parquet", {}, "could not be read as Parquet"),
        ("broken.xlsx", {}, "could not be read as an Excel"),
        ("broken.sav", {}, "could not be read as an SPSS"),
    ],
)
def test_bad_files_and_options(tmp_path, name, opts, pattern):
    (tmp_path / "data.xls").write_bytes(b"x")
    (tmp_path / "ok.csv").write_text("a\n1\n")
    for broken in ("broken.parquet", "broken.xlsx", "broken.sav"):
        (tmp_path / broken).write_bytes(b"this is not that format")
    with pytest.raises(InputError, match=pattern):
        list(iter_chunks(tmp_path / name, ReaderOptions(**opts)))
