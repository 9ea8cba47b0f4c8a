"""Lines above the header: Excel's ``sep=X`` first line (gives the delimiter, is neither header nor data) and
``skip_rows`` title lines / rows (delimited text and Excel; refused for the typed formats), with error messages that
keep naming the file's own line numbers, the option's validation and round trip, and ``--skip-rows`` on the CLI."""

import csv
import json

import pytest

from optrr_engine.cli.main import main
from optrr_engine.errors import InputError
from optrr_engine.io.readers import ReaderOptions, column_names, detect_options, open_source, read_preview

ROWS = [["x", "p"], ["y", "q"], ["x", "r"]] * 20
TITLES = "Export of 2026-03-01\n\n"


def write(path, text: str, encoding: str = "utf-8") -> str:
    path.write_bytes(text.encode(encoding))
    return str(path)


def body(delimiter: str = ";") -> str:
    return "".join(delimiter.join(r) + "\n" for r in [["a", "b"], *ROWS])


def test_a_sep_line_gives_the_delimiter_and_is_not_the_header(tmp_path):
    path = write(tmp_path / "excel.csv", "sep=;\n" + body())
    assert detect_options(path).delimiter == ";"
    frame = read_preview(path)
    assert list(frame.columns) == ["a", "b"]
    assert frame.values.tolist() == ROWS  # the sep line is no data row either


@pytest.mark.parametrize("first", ["\ufeffsep=;", "\ufeffSEP=;", "Sep=;"])
def test_a_sep_line_after_a_byte_order_mark_or_in_any_case(tmp_path, first):
    path = write(tmp_path / "bom.csv", first + "\r\n" + body().replace("\n", "\r\n"))
    assert column_names(path) == ["a", "b"]
    assert len(read_preview(path)) == len(ROWS)


def test_a_sep_line_naming_a_tab_reads_a_tab_separated_file(tmp_path):
    path = write(tmp_path / "tabs.txt", "sep=\t\n" + body("\t"))
    assert detect_options(path).delimiter == "\t"
    assert column_names(path) == ["a", "b"]


def test_sep_with_more_than_one_character_is_an_ordinary_first_line(tmp_path):
    path = write(tmp_path / "header.csv", "sep=;x\n" + body())
    assert column_names(path) == ["sep=", "x"]  # not Excel's hint: read as the header it is


def test_a_sep_line_and_another_explicit_delimiter_are_refused(tmp_path, capsys):
    path = write(tmp_path / "excel.csv", "sep=;\n" + body())
    with pytest.raises(
        InputError,
        match=r"excel\.csv: its first line 'sep=;' says the delimiter is ';', but the "
        r"delimiter ',' was given \(--delimiter\)",
    ):
        open_source(path, ReaderOptions(delimiter=","))
    assert column_names(path, ReaderOptions(delimiter=";")) == ["a", "b"]  # the same one: fine
    assert main(["schema", path, "-o", str(tmp_path / "s.json"), "--delimiter", ",", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'sep=;'" in err and "','" in err and not (tmp_path / "s.json").exists()


def test_title_lines_skipped_and_a_bad_row_named_by_its_line_in_the_file(tmp_path):
    rows = body().splitlines(keepends=True)
    rows[30] = "y;q;extra\n"  # data row 30: line 3 + 30 = 33 of the file
    path = write(tmp_path / "hospital.csv", TITLES + "".join(rows))
    options = ReaderOptions(skip_rows=2)
    assert column_names(path, options) == ["a", "b"]
    assert read_preview(write(tmp_path / "good.csv", TITLES + body()), options).values.tolist() == ROWS
    with pytest.raises(InputError, match=r"at data row 30 \(line 33 of the file\) has 3 fields but the header has 2"):
        list(open_source(path, options).tables())


def test_sep_line_and_title_lines_together_keep_the_real_line_numbers(tmp_path):
    rows = body().splitlines(keepends=True)
    rows[10] = "x\n"  # data row 10 has one field: line 1 (sep) + 2 (titles) + 1 (header) + 10 = 14
    path = write(tmp_path / "both.csv", "sep=;\n" + TITLES + "".join(rows))
    options = ReaderOptions(skip_rows=2)
    assert column_names(path, options) == ["a", "b"]
    with pytest.raises(InputError, match=r"at data row 10 \(line 14 of the file\)"):
        list(open_source(path, options).tables(["a"]))


def test_an_empty_row_below_title_lines_is_skipped_in_a_pass_over_some_columns(tmp_path):
    path = write(tmp_path / "gaps.csv", TITLES + "a;b;c\n1;2;3\n;;\n4;5;6\n")
    source = open_source(path, ReaderOptions(skip_rows=2))
    tables = list(source.tables(["a"]))  # a few columns: the empty rows come from the byte scan
    assert [v for t in tables for v in t.column("a").to_pylist()] == ["1", "4"]
    assert source.empty_rows_skipped == 1


@pytest.mark.parametrize("delimiter", [",", ";"])
def test_title_lines_without_skip_rows_get_an_error_suggesting_it(tmp_path, delimiter):
    path = write(tmp_path / "titled.csv", TITLES + body(delimiter))
    assert detect_options(path).delimiter == delimiter  # judged by the lines below the title
    with pytest.raises(
        InputError,
        match=r"header row names 1 column\(s\) but the lines below it have 2 fields .*"
        r"if line 3 is the header row .* give --skip-rows 2 \(rows above the header\)",
    ):
        open_source(path)


def test_a_one_column_file_whose_values_hold_semicolons_stays_one_column(tmp_path):
    values = ["J45;J46", "C;D", "J45;J46", "E11;I10"] * 10
    path = write(tmp_path / "codes.csv", "codes\n" + "".join(v + "\n" for v in values))
    assert detect_options(path).delimiter == ","  # a one-word first line is a column's name, not a title
    frame = read_preview(path)
    assert list(frame.columns) == ["codes"] and frame["codes"].tolist() == values


def test_a_ragged_file_whose_header_is_right_gets_no_suggestion(tmp_path):
    path = write(tmp_path / "ragged.csv", body() + "x;p;extra\n")
    with pytest.raises(InputError, match=r"ragged rows\); fix that row, or give the right --delimiter$"):
        list(open_source(path).tables())


def test_a_title_row_of_empty_cells_gets_the_suggestion_too(tmp_path):
    path = write(tmp_path / "titled.csv", "Export;\n" + body())
    with pytest.raises(InputError, match=r"column 2 has no name.*give --skip-rows 1"):
        open_source(path)


def write_book(path, rows) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(path)
    return str(path)


def test_excel_title_row_skipped(tmp_path):
    path = write_book(tmp_path / "book.xlsx", [["Export of 2026-03-01"], ["a", "b"], *ROWS])
    source = open_source(path, ReaderOptions(skip_rows=1))
    assert source.names == ["a", "b"] and source.row_count == len(ROWS)
    assert read_preview(path, ReaderOptions(skip_rows=1)).values.tolist() == ROWS


def test_excel_rows_keep_their_sheet_numbers_and_a_title_row_suggests_skip_rows(tmp_path):
    path = write_book(tmp_path / "book.xlsx", [["Export"], [], ["a", "b"], ["x", "p"], ["y", "q", "extra"]])
    with pytest.raises(InputError, match=r"row 5 has values to the right"):
        list(open_source(path, ReaderOptions(skip_rows=2)).tables())
    with pytest.raises(InputError, match=r"if row 3 is the header row .* give --skip-rows 2"):
        list(open_source(path).tables())
    with pytest.raises(InputError, match=r"has nothing in row 10"):
        open_source(path, ReaderOptions(skip_rows=9))


def test_excel_blank_rows_above_the_header_are_skipped_as_in_text(tmp_path):
    path = write_book(tmp_path / "t.xlsx", [["Export"], [], ["a", "b"], ["x", "p"], ["y", "q", "extra"]])
    source = open_source(path, ReaderOptions(skip_rows=1))  # the blank row 2 is skipped, as a blank line in text
    assert source.names == ["a", "b"] and source.header_row == 3
    with pytest.raises(InputError, match=r"row 5 has values to the right"):  # the sheet's own row number
        list(source.tables())
    gap = write_book(tmp_path / "gap.xlsx", [[], [None, None], ["a", "b"], *ROWS])
    assert read_preview(gap).values.tolist() == ROWS  # blank rows above the header without skip_rows too
    text = write(tmp_path / "t.csv", "Export\n\na;b\n" + "".join(";".join(r) + "\n" for r in ROWS))
    assert read_preview(text, ReaderOptions(skip_rows=1)).values.tolist() == ROWS  # as delimited text does


def test_skip_rows_on_parquet_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"a": ["x", "y"]}), path)
    assert column_names(path, ReaderOptions(skip_rows=0)) == ["a"]
    with pytest.raises(InputError, match=r"data\.parquet is a Parquet file: .*delimited text and Excel only"):
        open_source(path, ReaderOptions(skip_rows=1))


@pytest.mark.parametrize("bad", [-1, 1.5, "two", True, "-3"])
def test_skip_rows_must_be_a_whole_number(tmp_path, bad):
    path = write(tmp_path / "a.csv", body())
    with pytest.raises(InputError, match=r"skip_rows \(--skip-rows, the rows above the header\) must be a whole"):
        open_source(path, ReaderOptions(skip_rows=bad))


def test_skip_rows_round_trips_through_a_dict(tmp_path):
    options = ReaderOptions(delimiter=";", skip_rows=3)
    assert options.to_dict() == {"delimiter": ";", "skip_rows": 3}
    assert ReaderOptions.from_dict(options.to_dict()) == options
    assert "skip_rows" not in ReaderOptions().to_dict()
    path = write(tmp_path / "t.csv", "t1\nt2\nt3\n" + body())
    detected = open_source(path, ReaderOptions.from_dict({"skip_rows": "3"})).options
    assert detected.skip_rows == 3 and ReaderOptions.from_dict(detected.to_dict()) == detected


def test_perturb_with_skip_rows_releases_under_the_real_header(tmp_path, capsys, audit_dir):
    path = write(tmp_path / "hospital.csv", TITLES + body())
    config = tmp_path / "release.json"
    categories = {"a": ["x", "y"], "b": ["p", "q", "r"]}
    columns = [{"name": n, "role": "perturb", "epsilon": 1.0, "categories": c} for n, c in categories.items()]
    config.write_text(json.dumps({"method": "kronecker", "columns": columns}))
    out, key = tmp_path / "release.csv", tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    args = ["perturb", path, "--config", str(config), "-o", str(out), "--key-file", str(key), "--quiet"]
    assert main(args) == 2  # without --skip-rows the title line is the header
    assert "give --skip-rows 2" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--skip-rows", "2"]) == 0, capsys.readouterr().err
    with open(out, newline="") as fh:
        released = list(csv.reader(fh, delimiter=";"))  # (a release keeps its input's delimiter)
    assert released[0] == ["a", "b"] and len(released) == 1 + len(ROWS)
    assert all(r[0] in categories["a"] and r[1] in categories["b"] for r in released[1:])
    record = json.loads((audit_dir / "optrr-audit.json").read_text())
    assert json.dumps(record).count('"skip_rows": 2') == 1  # the audit record tells how the input was read


def test_cli_refuses_a_bad_skip_rows_in_one_line(tmp_path, capsys):
    path = write(tmp_path / "a.csv", body())
    assert main(["schema", path, "-o", str(tmp_path / "s.json"), "--skip-rows", "x", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "optrr: error: skip_rows (--skip-rows" in err and "'x'" in err


def test_schema_reads_below_title_lines_with_skip_rows(tmp_path, capsys):
    path = write(tmp_path / "hospital.csv", TITLES + body())
    target = tmp_path / "s.json"
    assert main(["schema", path, "-o", str(target), "--skip-rows", "2", "--quiet"]) == 0, capsys.readouterr().err
    names = [c["name"] for c in json.loads(target.read_text())["columns"]]
    assert names == ["a", "b"]


def test_schema_stores_skip_rows_and_perturb_reads_the_file_with_it(tmp_path, capsys, audit_dir):
    """The configuration carries the reader's skip_rows (like its delimiter): perturb needs no --skip-rows again."""
    path = write(tmp_path / "hospital.csv", TITLES + body())
    config = tmp_path / "s.json"
    assert main(["schema", path, "-o", str(config), "--skip-rows", "2", "--quiet"]) == 0, capsys.readouterr().err
    cfg = json.loads(config.read_text())
    assert cfg["input"]["skip_rows"] == 2
    out, key = tmp_path / "release.csv", tmp_path / "hospital.key"
    assert main(["keygen", "-o", str(key)]) == 0
    args = ["perturb", path, "--config", str(config), "-o", str(out), "--key-file", str(key), "--quiet"]
    assert main(args) == 0, capsys.readouterr().err
    with open(out, newline="") as fh:
        assert next(csv.reader(fh, delimiter=";")) == ["a", "b"]
