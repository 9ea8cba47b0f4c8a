"""Review fixes of the input side: a UTF-8 file with one row in another encoding is refused at that row (never
read whole as cp1252), rows whose every cell is empty are no records (skipped and counted), and schema and
perturb share one ASCII number rule."""

import json
import shutil
import zipfile

import numpy as np
import pyarrow as pa
import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.io import sniff
from optrr_engine.io.readers import ReaderOptions, detect_options, iter_chunks, open_source, read_preview
from optrr_engine.release.column_stats import is_number_text, numeric_values


def rows_of(source, columns=None) -> list[dict]:
    return [row for table in source.tables(columns) for row in table.to_pylist()]


# -- 1. a UTF-8 file with one row in another encoding --------------------------------------------------------


def test_utf8_file_with_one_cp1252_row_at_the_end_is_refused_at_that_row(tmp_path):
    cities = ["Zürich", "Bern", "Genève"]
    lines = ["sex,city,smoker"] + [f"{'FM'[i % 2]},{cities[i % 3]},{('yes', 'no')[i % 2]}" for i in range(150_000)]
    path = tmp_path / "mixed_enc.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode() + "F,Zürich,yes\n".encode("latin-1"))
    assert path.stat().st_size > sniff.SAMPLE_BYTES  # the bad row lies outside the head, in the last window
    assert detect_options(path).encoding == "utf-8"
    with pytest.raises(InputError) as info:
        list(iter_chunks(path))
    assert str(info.value) == (
        "mixed_enc.csv: bytes at data row 150,001 (line 150,002 of the file) are not valid utf-8 text; "
        "give the file's encoding with --encoding (for example cp1252 or latin-1)"
    )
    assert read_preview(path)["city"].tolist()[:3] == cities  # the head reads as UTF-8, no mojibake


def test_valid_utf8_text_anywhere_in_the_samples_means_utf8_and_pure_cp1252_stays_cp1252(tmp_path):
    utf8_window = "M,Zürich,no\nF,Genève,yes\n".encode()
    assert sniff.guess_encoding(b"sex,city\nF,Z\xfcrich\n", [utf8_window]) == "utf-8"
    assert sniff.guess_encoding(b"sex,city\nF,Bern\n", [b"no\nF,Z\xfcrich\n", utf8_window]) == "utf-8"
    assert sniff.guess_encoding("a;b\nÿ;1\n".encode("latin-1") + b"\x81;2\n", []) == "latin-1"
    path = tmp_path / "cp.csv"  # pure cp1252 with a late non-ASCII byte: detected and read as before
    body = "".join(f"{('Bern', 'Genève', 'Zürich')[i % 3]};{60 + i % 40},{i % 10}\n" for i in range(100_000))
    path.write_bytes(("stadt;gewicht\n" + body + "Bern – Süd;72,5\n").encode("cp1252"))
    opts = detect_options(path)
    assert (opts.encoding, opts.delimiter, opts.decimal) == ("cp1252", ";", ",")
    assert sorted({row["stadt"] for row in rows_of(open_source(path))}) == ["Bern", "Bern – Süd", "Genève", "Zürich"]


# -- 2. rows whose every cell is empty --------------------------------------------------------------------


def semicolon_export(path, real: int = 200, empty: int = 50) -> None:
    rng = np.random.default_rng(1)
    rows = ["sex;smoker;dx"] + [
        f"{rng.choice(['F', 'M'])};{rng.choice(['ja', 'nein'])};{rng.choice(['a', 'b', 'c'])}" for _ in range(real)
    ]
    path.write_text("\r\n".join(rows + [";;"] * empty) + "\r\n", newline="")


def test_csv_rows_of_empty_cells_are_skipped_and_counted(tmp_path):
    path = tmp_path / "emptyrows.csv"
    semicolon_export(path)
    source = open_source(path)
    rows = rows_of(source)
    assert len(rows) == 200 and source.empty_rows_skipped == 50
    assert all(None not in row.values() for row in rows)
    assert len(rows_of(source, ["dx"])) == 200 and source.empty_rows_skipped == 50  # every pass agrees
    assert len(read_preview(path, nrows=1000)) == 200


def test_csv_row_with_one_value_is_a_record_and_empty_in_the_chosen_columns_is_not_empty(tmp_path):
    path = tmp_path / "partly.csv"
    path.write_text('a;b;c\nx;y;z\n;;\n;;w\n"";"";""\n;;\nv;;\n')
    source = open_source(path, ReaderOptions(chunk_rows=2))
    assert rows_of(source) == [
        {"a": "x", "b": "y", "c": "z"},
        {"a": None, "b": None, "c": "w"},
        {"a": "v", "b": None, "c": None},
    ]
    assert source.empty_rows_skipped == 3
    assert rows_of(source, ["a"]) == [{"a": "x"}, {"a": None}, {"a": "v"}]  # row 2 has "w" in column c


def test_schema_and_perturb_do_not_count_empty_rows(tmp_path):
    path = tmp_path / "emptyrows.csv"
    semicolon_export(path)
    cfg, out = tmp_path / "c.json", tmp_path / "rel.csv"
    assert main(["schema", str(path), "-o", str(cfg)]) == 0
    config = json.loads(cfg.read_text())
    assert config["source"]["rows"] == 200
    assert {c["name"]: c["categories"] for c in config["columns"]} == {
        "sex": ["F", "M"],
        "smoker": ["ja", "nein"],
        "dx": ["a", "b", "c"],
    }
    assert main(["perturb", str(path), "--config", str(cfg), "-o", str(out), "--quiet", "--no-shuffle"]) == 0
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["rows"] == 200
    assert len(out.read_text().splitlines()) == 201


def excel_with_empty_rows(path) -> None:
    """A sheet with 3 records, one row of cells holding empty text and one row of empty (styled) cells."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["a", "b"], ["x", 1], ["EMPTYTEXT", "EMPTYTEXT"], [None, None], ["y", None], [None, 2]):
        sheet.append(row)
    sheet.cell(row=4, column=1).number_format = "0.00"  # a styled empty cell keeps its row in the file
    sheet.cell(row=4, column=2).number_format = "0.00"
    book.save(path)
    raw = path.with_suffix(".tmp")
    shutil.move(path, raw)
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):  # inline strings or shared strings, by version
                data = data.replace(b">EMPTYTEXT<", b"><")
            if item.filename == "xl/sharedStrings.xml":
                data = data.replace(b">EMPTYTEXT<", b"><")
            dst.writestr(item, data)


def test_excel_rows_of_empty_cells_are_skipped_and_counted(tmp_path):
    path = tmp_path / "book.xlsx"
    excel_with_empty_rows(path)
    source = open_source(path)
    assert rows_of(source) == [{"a": "x", "b": "1"}, {"a": "y", "b": None}, {"a": None, "b": "2"}]
    assert source.empty_rows_skipped == 2


def test_typed_formats_keep_rows_of_missing_values(tmp_path):
    """Parquet (and SPSS / Stata) rows are records of the format, counted in its metadata: none is skipped."""
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": ["x", None], "b": [None, None]}), path)
    source = open_source(path)
    assert len(rows_of(source)) == source.row_count == 2 and source.empty_rows_skipped == 0


# -- 3. one ASCII number rule -------------------------------------------------------------------------------

TEXTS = ["12", " 12 ", "\t1.5\n", "+1e5", ".5", "1.", "１２", "١٢", "۱۲", "1\xa0", "\u200312", "1e", "", "-", "1,5"]


def test_schema_and_perturb_number_rules_agree_and_are_ascii():
    mask, numbers = numeric_values(pa.array(TEXTS))
    assert [is_number_text(t) for t in TEXTS] == mask.tolist()
    assert mask.tolist() == [True] * 6 + [False] * 9
    assert numbers.tolist() == [12.0, 12.0, 1.5, 1e5, 0.5, 1.0]
    assert is_number_text("1,5", ",") and not is_number_text("１,５", ",")


def test_full_width_digits_are_text_in_schema_and_perturb_accepts_its_configuration(tmp_path):
    path = tmp_path / "fullwidth.csv"
    path.write_text("weight\n" + "１２\n" * 3 + "".join(f"{40 + i % 80}\n" for i in range(297)), encoding="utf-8")
    cfg, out = tmp_path / "c.json", tmp_path / "rel.csv"
    assert main(["schema", str(path), "-o", str(cfg)]) == 0
    column = json.loads(cfg.read_text())["columns"][0]
    assert column["type"] == "numeric" and column["missing"] == "category"
    args = ["perturb", str(path), "--config", str(cfg), "-o", str(out), "--quiet", "--no-shuffle"]
    assert main([*args, "--allow-rare-categories"]) == 0  # the 3 texts make 'NA' a rare category (not the subject)
    assert len(out.read_text().splitlines()) == 301
