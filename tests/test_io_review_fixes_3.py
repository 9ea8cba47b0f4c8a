"""Third review of the readers: a Parquet column of lists can be dropped (only requesting it is refused), CSV
files with old-Mac line endings are read, UTF-16 without a byte-order mark and Excel formulas without stored
results are named as such with a way out, and merged Excel cells are reported, never silently filled."""

import io
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from optrr_engine.errors import InputError
from optrr_engine.io.readers import open_source
from optrr_engine.io.xlsx_scan import affected_columns, scan_sheet
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import DROPPED, drop_reason, infer_schema


def rows_of(source, columns=None) -> list[dict]:
    return [row for table in source.tables(columns) for row in table.to_pylist()]


# -- 1. Parquet columns of nested values ------------------------------------------------------------------------


@pytest.fixture
def nested_parquet(tmp_path):
    path = tmp_path / "list.parquet"
    sex = ["F", "M", "F", "M"] * 30
    pq.write_table(pa.table({"sex": sex, "lst": [[1, 2]] * 120, "rec": [{"a": 1}] * 120}), path)
    return path


def test_schema_proposes_a_nested_column_as_drop_with_the_reason(nested_parquet):
    cfg = infer_schema(nested_parquet)
    cols = {c.name: c for c in cfg.columns}
    assert [c.name for c in cfg.columns] == ["sex", "lst", "rec"]
    assert cols["sex"].role == "perturb" and cols["sex"].categories == ["F", "M"]
    for name in ("lst", "rec"):
        assert cols[name].role == "drop" and cols[name].categories is None
        assert cols[name].warnings == [f"holds nested values (lists/structs){DROPPED} - it cannot be released"]
        assert drop_reason(cols[name].warnings[0]) == "holds nested values (lists/structs)"
    assert cfg.source["rows"] == 120


@pytest.mark.parametrize("listed", [True, False])
def test_a_configuration_that_drops_or_omits_a_nested_column_releases_the_others(
    nested_parquet, tmp_path, developer, audit_dir, listed
):
    columns = [ColumnConfig("sex", role="perturb", type="nominal", epsilon=1.0, categories=["F", "M"])]
    if listed:
        columns += [ColumnConfig("lst", role="drop"), ColumnConfig("rec", role="drop")]
    out = tmp_path / "rel.csv"
    perturb_file(nested_parquet, ReleaseConfig(columns=columns), out, insecure_test_seed=3, allow_repeat=True)
    lines = out.read_text().splitlines()
    assert lines[0].endswith("sex") and len(lines) == 121


@pytest.mark.parametrize("role", ["keep", "perturb"])
def test_requesting_a_nested_column_is_refused_with_the_reason(nested_parquet, tmp_path, developer, audit_dir, role):
    columns = [
        ColumnConfig("sex", role="perturb", type="nominal", epsilon=1.0, categories=["F", "M"]),
        ColumnConfig("lst", role=role, epsilon=1.0, categories=["a", "b"] if role == "perturb" else None),
    ]
    message = r"list\.parquet: column 'lst' holds nested values \(lists/structs\): it cannot be released; give it"
    with pytest.raises(InputError, match=message):
        perturb_file(nested_parquet, ReleaseConfig(columns=columns), tmp_path / "rel.csv", insecure_test_seed=3)
    source = open_source(nested_parquet)
    assert source.names == ["sex", "lst", "rec"] and source.readable_names() == ["sex"]
    with pytest.raises(InputError, match="column 'lst' holds nested values"):
        rows_of(source, ["sex", "lst"])  # asked for by name
    assert rows_of(source, ["sex"])[:2] == [{"sex": "F"}, {"sex": "M"}]
    assert rows_of(source) == rows_of(source, ["sex"])  # by default: the readable columns


# -- 2a. bare carriage returns (old Mac line endings) -------------------------------------------------------------


def test_a_csv_whose_lines_end_in_a_bare_carriage_return_is_read(tmp_path):
    path = tmp_path / "cr.csv"
    path.write_bytes(b'sex,city,smoker\rF,Bern,yes\rM,"Zur\rich",no\r\rF,Bern,\r')
    source = open_source(path)
    assert source.names == ["sex", "city", "smoker"]
    assert rows_of(source) == [
        {"sex": "F", "city": "Bern", "smoker": "yes"},
        {"sex": "M", "city": "Zur\rich", "smoker": "no"},
        {"sex": "F", "city": "Bern", "smoker": None},
    ]
    assert source.estimated_rows() >= 3


def test_a_ragged_row_of_a_bare_carriage_return_file_is_located(tmp_path):
    path = tmp_path / "cr.csv"
    path.write_bytes(b"sex,city\rF,Bern\rM,Zurich,extra\rF,Bern\r")
    with pytest.raises(InputError, match=r"row at data row 2 \(line 3 of the file\) has 3 fields but the header has 2"):
        rows_of(open_source(path))


# -- 2b. UTF-16 without a byte-order mark ---------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "other"), [("utf-16-le", "utf-16-be"), ("utf-16-be", "utf-16-le")])
def test_utf16_without_a_byte_order_mark_is_named_with_the_option_to_give(tmp_path, encoding, other):
    path = tmp_path / "u16.csv"
    path.write_bytes("sex\tcity\r\nF\tBern\r\nM\tZürich\r\n".encode(encoding))
    message = f"u16.csv looks like UTF-16 text without a byte-order mark: give --encoding {encoding} \\(or {other}\\)"
    with pytest.raises(InputError, match=message):
        open_source(path)
    path.write_bytes(bytes(range(256)) * 8)  # NUL bytes not alternating with text: still a binary file
    with pytest.raises(InputError, match=r"u16\.csv is not a text file \(it contains NUL bytes\)"):
        open_source(path)


# -- 2c and 3. Excel formulas without stored results, merged cells ------------------------------------------------


def workbook(path, rows, merged=(), cached=None):
    """An .xlsx of ``rows``; ``merged``: ranges to merge; ``cached``: a stored result given to every formula."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    for ref in merged:
        ws.merge_cells(ref)
    wb.save(path)
    if cached is not None:  # openpyxl writes formulas without results (<v />): store one, as Excel does
        with zipfile.ZipFile(path) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        name = "xl/worksheets/sheet1.xml"
        parts[name] = parts[name].replace(b"<v />", b"<v>" + cached + b"</v>")
        with zipfile.ZipFile(path, "w") as z:
            for n, data in parts.items():
                z.writestr(n, data)
    return path


FORMULAS = [["g", "x", "y"], ["a", 1, "=B2*2"], ["b", 2, "=B3*2"], ["a", 3, "=B4*2"]]


def test_formulas_without_stored_results_are_refused_with_the_way_out(tmp_path):
    path = workbook(tmp_path / "f.xlsx", FORMULAS)
    message = (
        r"f\.xlsx: the cells of column 'y' hold formulas without stored results \(cell C2 and perhaps others\): "
        "open the file in Excel and save it, then read it again"
    )
    with pytest.raises(InputError, match=message):
        infer_schema(path)
    assert rows_of(open_source(path), ["g", "x"])[0] == {"g": "a", "x": "1"}  # other columns are read
    path = workbook(tmp_path / "cached.xlsx", FORMULAS, cached=b"7")  # stored results: read as they are
    assert [r["y"] for r in rows_of(open_source(path))] == ["7", "7", "7"]


def test_the_scan_tells_empty_text_results_from_missing_results():
    xml = (
        b'<worksheet><sheetData><row r="2"><c r="C2" t="str"><f>IF(B2,"","x")</f><v></v></c>'
        b'<c r="D2"><f t="shared" si="0"/></c><c r="E2"><f>1+1</f><v>2</v></c></row></sheetData>'
        b'<mergeCells count="1"><mergeCell ref="A2:A4"/></mergeCells></worksheet>'
    )
    scan = scan_sheet(io.BytesIO(xml))
    assert scan.formulas == {4: 2} and scan.merged == ["A2:A4"]


def test_merged_cells_are_reported_on_the_columns_they_empty(tmp_path):
    rows = [["g", "x"], ["a", 1], [None, 2], [None, 3], ["b", 4], ["c", 5]]
    path = workbook(tmp_path / "m.xlsx", rows, merged=["A2:A4", "A6:B6"])
    source = open_source(path)
    note = "merged cells {}: only the first cell holds the value, the others are read as missing - unmerge and fill "
    note += "them"
    # the ranges reaching the data rows, in file order, each on the columns it empties
    assert list(source.column_warnings().items()) == [("g", [note.format("A2:A4")]), ("x", [note.format("A6:B6")])]
    assert [r["g"] for r in rows_of(source)] == ["a", None, None, "b", "c"]  # not filled
    cols = {c.name: c for c in infer_schema(path).columns}
    assert note.format("A2:A4") in cols["g"].warnings
    assert note.format("A6:B6") in cols["x"].warnings
    assert not any("A6:B6" in w for w in cols["g"].warnings)


def test_merged_ranges_in_the_header_row_only_affect_no_data():
    assert affected_columns("A1:C1") == []
    assert affected_columns("A1:A3") == [1]
    assert affected_columns("B5:D5") == [3, 4]
    assert affected_columns("B5:C6") == [2, 3]


def test_leaving_a_prefetched_loop_early_stops_its_thread_without_touching_the_queue(monkeypatch):
    """The consumer's clean-up only sets the stop flag and joins: the worker, blocked on a full queue, sees the flag
    within its put timeout. (A queue operation in the clean-up could wait for ever if an interrupt had left the
    queue's lock taken.)"""
    import itertools
    import queue
    import threading

    from optrr_engine.io.source_base import prefetched

    gets: list = []
    real_get = queue.Queue.get

    def counted_get(self, *args, **kwargs):
        gets.append(threading.current_thread().name)
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(queue.Queue, "get", counted_get)
    loop = prefetched(itertools.count(), depth=2)
    assert next(loop) == 0 and next(loop) == 1
    before = len(gets)
    loop.close()  # leaves the loop early: the clean-up runs
    assert len(gets) == before  # no get in the clean-up
    assert not any(t.name == "optrr-prefetch" and t.is_alive() for t in threading.enumerate())
