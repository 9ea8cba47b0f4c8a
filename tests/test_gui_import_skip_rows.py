"""The import dialog's "Rows above the header" spin box: the live preview follows it (delimited text and Excel), its
value goes into the options the dialog returns, and a ``sep=`` first line needs no setting at all."""

from __future__ import annotations

from optrr_gui.data.import_dialog import ImportDialog
from tests.test_gui_support import WAIT_MS

ROWS = [["x", "p"], ["y", "q"], ["x", "r"]] * 5


def open_dialog(qtbot, runner, path, options=None) -> ImportDialog:
    dialog = ImportDialog(str(path), runner, options or {})
    qtbot.addWidget(dialog)
    return dialog


def shown_columns(dialog: ImportDialog) -> list[str]:
    """The column names the preview table shows."""
    items = [dialog.preview.horizontalHeaderItem(i) for i in range(dialog.preview.columnCount())]
    return [item.text() if item is not None else "" for item in items]


def wait_columns(qtbot, dialog: ImportDialog, names: list[str]) -> None:
    """Wait until the background preview shows ``names`` (and no preview is pending)."""
    qtbot.waitUntil(
        lambda: (
            not dialog.runner.is_busy("import:preview") and dialog.frame is not None and shown_columns(dialog) == names
        ),
        timeout=WAIT_MS,
    )


def test_the_spin_box_moves_the_header_of_a_text_file(qtbot, runner, tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("Export;2026-03-01\na;b\n" + "".join(";".join(r) + "\n" for r in ROWS))
    dialog = open_dialog(qtbot, runner, path)
    assert dialog.skip_rows.isVisibleTo(dialog) and dialog.skip_rows.maximum() == 1000
    assert "header" in dialog.skip_rows.toolTip()
    wait_columns(qtbot, dialog, ["Export", "2026-03-01"])
    assert "skip_rows" not in dialog.options()
    dialog.skip_rows.setValue(1)
    wait_columns(qtbot, dialog, ["a", "b"])
    assert dialog.preview.rowCount() == len(ROWS) and dialog.preview.item(0, 1).text() == "p"
    assert dialog.options()["skip_rows"] == 1
    assert "skip_rows" not in dialog.detected  # the user's choice, not something detected
    dialog.skip_rows.setValue(0)
    wait_columns(qtbot, dialog, ["Export", "2026-03-01"])
    assert "skip_rows" not in dialog.options()
    dialog.reject()


def test_the_dialog_starts_from_the_given_rows_above_the_header(qtbot, runner, tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("Export of 2026-03-01\n\na;b\n" + "".join(";".join(r) + "\n" for r in ROWS))
    dialog = open_dialog(qtbot, runner, path, {"skip_rows": 2})
    assert dialog.skip_rows.value() == 2
    wait_columns(qtbot, dialog, ["a", "b"])
    assert dialog.options() == {"skip_rows": 2}
    dialog.reject()


def test_a_sep_line_needs_no_setting(qtbot, runner, tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("sep=;\na;b\n" + "".join(";".join(r) + "\n" for r in ROWS))
    dialog = open_dialog(qtbot, runner, path)
    wait_columns(qtbot, dialog, ["a", "b"])
    assert dialog.detected["delimiter"] == ";" and dialog.preview.rowCount() == len(ROWS)
    assert dialog.options() == {}
    dialog.reject()


def test_the_spin_box_moves_the_header_of_a_sheet(qtbot, runner, tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    for row in [["Export", "of 2026"], ["a", "b"], *ROWS]:
        book.active.append(row)
    path = tmp_path / "book.xlsx"
    book.save(path)
    dialog = open_dialog(qtbot, runner, path)
    assert dialog.skip_rows.isVisibleTo(dialog)
    qtbot.waitUntil(lambda: dialog.sheet.count() == 1, timeout=WAIT_MS)
    wait_columns(qtbot, dialog, ["Export", "of 2026"])
    dialog.skip_rows.setValue(1)
    wait_columns(qtbot, dialog, ["a", "b"])
    assert dialog.preview.rowCount() == len(ROWS)
    assert dialog.options() == {"sheet": "Sheet", "skip_rows": 1}
    dialog.reject()


def test_no_spin_box_for_a_typed_format(qtbot, runner, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"a": ["x", "y"]}), path)
    dialog = open_dialog(qtbot, runner, path)
    wait_columns(qtbot, dialog, ["a"])
    assert not dialog.skip_rows.isVisibleTo(dialog) and "skip_rows" not in dialog.options()
    dialog.reject()


def test_a_title_line_gets_the_suggestion_in_the_dialog_s_words(qtbot, runner, tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("Export of 2026-03-01\n\na;b\n" + "".join(";".join(r) + "\n" for r in ROWS))
    dialog = open_dialog(qtbot, runner, path)
    qtbot.waitUntil(lambda: "Cannot read" in dialog.info.text(), timeout=WAIT_MS)
    text = dialog.info.text()
    assert "if line 3 is the header row" in text and "set 'Rows above the header' to 2" in text
    assert "--skip-rows" not in text
    dialog.skip_rows.setValue(2)  # as the message says
    wait_columns(qtbot, dialog, ["a", "b"])
    dialog.reject()


def test_a_failed_preview_shows_no_stale_columns_and_escapes_the_message(qtbot, runner, tmp_path):
    """After an error the preview shows no column headers of the earlier preview, and a message quoting a name
    with < reads as written (escaped in the label's rich text)."""
    path = tmp_path / "t.csv"
    path.write_text("<x>,<x>\na,b\n" + "".join(",".join(r) + "\n" for r in ROWS))
    dialog = open_dialog(qtbot, runner, path, {"skip_rows": 1})
    wait_columns(qtbot, dialog, ["a", "b"])
    dialog.skip_rows.setValue(0)  # the header is now "<x>,<x>": a name given twice
    qtbot.waitUntil(lambda: "Cannot read" in dialog.info.text(), timeout=WAIT_MS)
    assert "'&lt;x&gt;'" in dialog.info.text() and dialog.preview.columnCount() == 0
    dialog.reject()
