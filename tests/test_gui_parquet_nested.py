"""A Parquet file with a column of lists opens in the window (review of 2026-11: "Cannot open ...: column 'b' holds
nested values"): the readable columns are read, the column of lists is listed as dropped, cannot be given another
role, says why, and a release leaves it out.

The file: ``a`` (strings), ``b`` (lists of integers), ``c`` (strings), 60 rows.
"""

from __future__ import annotations

import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PySide6.QtCore import Qt

from optrr_engine.io.typed_sources import NESTED
from optrr_gui.data.table_view import NOT_READ
from optrr_gui.design.attribute_table import COL_ROLE, COL_WARN
from optrr_gui.release.dialog import ReleaseDialog
from optrr_gui.state.role_fields import role_choices
from optrr_gui.state.session import ROLES
from tests.test_gui_support import WAIT_MS, close_window, open_window

A, B, C = 0, 1, 2
WHY = "a column of lists or other nested values: it cannot be released"


def write_file(path) -> str:
    rows = 60
    table = pa.table(
        {
            "a": [["x", "y", "z"][i % 3] for i in range(rows)],
            "b": pa.array([[i, i + 1] for i in range(rows)], type=pa.list_(pa.int64())),
            "c": [["u", "v"][i % 2] for i in range(rows)],
        }
    )
    pq.write_table(table, path)
    return str(path)


@pytest.fixture
def window(qtbot, tmp_path):
    w = open_window(qtbot, tmp_path, write_file(tmp_path / "nested.parquet"))
    qtbot.waitUntil(lambda: bool(w.summaries), timeout=WAIT_MS)
    yield w
    close_window(w)


def test_the_window_reads_the_other_columns_and_lists_the_column_of_lists_as_dropped(window):
    assert not window.last_error
    assert [c.name for c in window.state.columns] == ["a", "b", "c"]
    assert [c.role for c in window.state.columns] == ["perturb", "drop", "perturb"]
    assert window.state.n_rows == 60 and window.store.file_columns == ["a", "b", "c"]
    model = window.data_view.model
    assert [model.data(model.index(r, A)) for r in range(3)] == ["x", "y", "z"]
    assert model.data(model.index(0, C)) == "u"
    assert model.data(model.index(0, B)) == NOT_READ
    assert WHY in model.headerData(B, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    window.show_summary_of(B)
    assert window.summary_view.title.text() == f"b: {WHY}. Its values are not read."
    assert window.summary_view.model.rowCount() == 0


def test_the_column_of_lists_says_why_and_keeps_the_role_drop(window):
    table = window.attributes.view.model()
    assert WHY in table.data(table.index(B, COL_WARN))
    assert WHY in table.data(table.index(B, COL_ROLE), Qt.ItemDataRole.ToolTipRole)
    assert not table.flags(table.index(B, COL_ROLE)) & Qt.ItemFlag.ItemIsEditable
    assert table.flags(table.index(A, COL_ROLE)) & Qt.ItemFlag.ItemIsEditable
    assert not table.setData(table.index(B, COL_ROLE), "perturb")
    window.attributes.set_roles([A, B], "keep")  # a bulk change: the readable column only
    assert [c.role for c in window.state.columns] == ["keep", "drop", "perturb"]
    assert "b stays dropped" in window.statusBar().currentMessage()
    panel = window.column_panel
    panel.show_column(B)
    assert not panel.role.isEnabled() and WHY in panel.role.toolTip()
    panel.role.activated.emit(ROLES.index("perturb"))
    assert window.state.columns[B].role == "drop"
    panel.show_column(A)
    assert panel.role.isEnabled()


def test_the_column_state_carries_the_readers_reason_not_a_warning_text(window):
    """The column of lists is known from the reader through the schema (ColumnConfig.unreadable ->
    ColumnState.unreadable): with its schema warning removed it still cannot take another role, and still says why;
    the release configuration carries the reason, and the engine refuses that column with another role."""
    from optrr_engine.errors import InputError

    assert window.store.unreadable == {"b": NESTED}
    assert [c.unreadable for c in window.state.columns] == [None, NESTED, None]
    window.state.set_column_value(B, "warnings", [])  # no warning text left to recognise it by
    assert role_choices(window.state.columns[B]) == ("drop",)
    table = window.attributes.view.model()
    assert table.data(table.index(B, COL_WARN)) == WHY
    assert not table.flags(table.index(B, COL_ROLE)) & Qt.ItemFlag.ItemIsEditable
    window.attributes.set_roles([B], "perturb")
    assert window.state.columns[B].role == "drop"
    window.show_summary_of(B)
    assert window.summary_view.title.text() == f"b: {WHY}. Its values are not read."
    column = window.state.to_release_config().columns[B]
    assert column.to_dict()["unreadable"] == NESTED
    column.role = "perturb"
    with pytest.raises(InputError, match=r"column 'b' holds .*: it cannot be released; set its role to drop"):
        column.validate()


def test_a_release_leaves_the_column_of_lists_out(qtbot, window, tmp_path):
    qtbot.waitUntil(lambda: window.controller.is_idle() and len(window.controller.sizes) == 2, timeout=WAIT_MS)
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    if not dialog.accept_clear.isHidden():  # the file's rare categories (none expected) would need the tick
        dialog.accept_clear.setChecked(True)
    out = tmp_path / "released.csv"
    dialog.output.setText(str(out))
    assert dialog.start(), dialog.progress_label.text()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["a", "c"] and len(rows) == 61


def test_the_import_preview_shows_the_readable_columns(qtbot, tmp_path):
    """File > Open's preview (read_preview) leaves the column of lists out instead of failing."""
    from optrr_gui.data.import_dialog import ImportDialog
    from optrr_gui.workers.runner import TaskRunner

    runner = TaskRunner()
    dialog = ImportDialog(write_file(tmp_path / "nested.parquet"), runner, {})
    qtbot.addWidget(dialog)

    def shown() -> list[str]:
        items = [dialog.preview.horizontalHeaderItem(i) for i in range(dialog.preview.columnCount())]
        return [item.text() if item is not None else "" for item in items]

    try:
        qtbot.waitUntil(lambda: dialog.frame is not None and shown() == ["a", "c"], timeout=WAIT_MS)
    finally:
        dialog.reject()
        runner.cancel_all()
        runner.wait_for_done(30_000)


def test_the_compare_loaders_read_the_readable_columns(tmp_path):
    from optrr_engine.compare.datasets import load_dataset
    from optrr_gui.workers.jobs.compare import load_data

    path = write_file(tmp_path / "nested.parquet")
    assert load_dataset(path).columns == ["a", "c"]
    assert load_data(path, {}, None).columns == ["a", "c"]
