"""Nothing important cut off at a 1280-px-wide window: a design's reason for not being available in full in its
cell (spanning "vs. Kronecker"), the column table's Warnings column wide enough for a warning's first words, and
every elided cell of the Data tab (the file's values, a column's values and released labels), of the Design tab's
category list and of Compare ▸ Designs' "each row carries" readable in full as its tooltip."""

from __future__ import annotations

import html
import re

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics, QHelpEvent
from PySide6.QtWidgets import QApplication, QStyle, QToolTip

from optrr_gui.design.attribute_table import COL_WARN
from optrr_gui.design.mechanism_panel import CHANGED_COL, KRON_COL, short_reason
from tests.test_gui_support import WAIT_MS, close_window, open_window, wait_ready

SIZE = (1280, 800)
LONG_VALUE = (
    "a free-text answer far longer than any column of the table is wide so that its cell shows only its start "
    "and the rest is elided"
)


def plain(rich: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rich))


def at_1280(qtbot, window) -> None:
    window.fit_when_shown = False
    window.resize(*SIZE)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == SIZE)
    wait_ready(qtbot, window)


def pad(view) -> int:
    return 2 * view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 8


def hover_tip(qtbot, view, index) -> str:
    """The tooltip the view shows when the mouse rests on ``index`` ("" when none)."""
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    view.scrollTo(index)
    QApplication.processEvents()
    pos = view.visualRect(index).center()
    event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    text = QToolTip.text() if QToolTip.isVisible() else ""
    QToolTip.hideText()
    return text


# -- the design table ----------------------------------------------------------------------------------------------
def test_first_clause_and_short_reasons():
    from optrr_gui.design.mechanism_panel import first_clause

    assert first_clause("the design cannot be built: the LP has no solution (try another ε)") == (
        "the design cannot be built"
    )
    assert first_clause("x" * 10 + " " + "y" * 50).endswith("…") and len(first_clause("x " * 40)) <= 40
    assert short_reason("a new engine refusal; with its details (and more)") == "a new engine refusal"
    assert short_reason("not available in total-budget mode (its ε per column comes from the clusters)") == (
        "needs ε per column"
    )
    # the known reasons keep their words
    assert short_reason("method family cannot meet a whole-record epsilon of 3 with these weights") == (
        "cannot meet the target ε"
    )


def test_at_1280_a_design_s_reason_is_shown_in_full_and_in_its_tooltip(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    try:
        at_1280(qtbot, window)
        window.attributes.total.setChecked(True)  # a whole-record budget: Family and Heuristic cannot meet 3
        qtbot.waitUntil(lambda: window.controller.request.get("budget_mode"), timeout=WAIT_MS)
        wait_ready(qtbot, window)
        panel = window.mechanism
        panel.flush()
        QApplication.processEvents()
        table, header = panel.designs, panel.designs.horizontalHeader()
        summaries = window.controller.current()
        failed = [(r, m) for r, m in enumerate(panel._rows) if summaries.get(m) is not None and not summaries[m].ok]
        assert len(failed) >= 2
        assert table.horizontalScrollBar().maximum() == 0  # (no sideways scrolling for it)
        for row, method in failed:
            item = table.item(row, CHANGED_COL)
            error = summaries[method].error
            assert item.text() == short_reason(error)
            # the reason spans "vs. Kronecker" ("—" for a design not available) and fits there: was 78 px,
            # "cannot meet the t…"
            assert table.columnSpan(row, CHANGED_COL) == KRON_COL - CHANGED_COL + 1
            shown = sum(header.sectionSize(c) for c in range(CHANGED_COL, KRON_COL + 1))
            assert shown >= QFontMetrics(item.font()).horizontalAdvance(item.text()) + pad(table), item.text()
            assert error in item.toolTip()  # the engine's words in full
        reasons = {table.item(r, CHANGED_COL).text() for r, _m in failed}
        assert "cannot meet the target ε" in reasons and "needs ε per column" in reasons
        # a design that is available again loses the span
        ok_rows = [r for r, m in enumerate(panel._rows) if summaries.get(m) is not None and summaries[m].ok]
        assert ok_rows and all(table.columnSpan(r, CHANGED_COL) == 1 for r in ok_rows)
    finally:
        close_window(window)


# -- the column table's Warnings -----------------------------------------------------------------------------------
def test_at_1280_the_warnings_column_shows_a_warning_s_first_words(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    try:
        at_1280(qtbot, window)
        QApplication.processEvents()
        view, model = window.attributes.view, window.attributes.model
        row = [c.name for c in window.state.columns].index("age")  # its warning: "rare categories (fewer than…"
        index = model.index(row, COL_WARN)
        assert model.data(index).startswith("rare categories")
        # the cell shows "rare" / "categories…" on its two lines (it was 69 px: "rare" / "categori…")
        word = QFontMetrics(view.font()).horizontalAdvance("categories…")
        margins = 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)
        assert view.columnWidth(COL_WARN) >= word + margins
        assert view.horizontalScrollBar().maximum() == 0
        for w in model.warnings[row]:  # every warning in full in the tooltip
            assert f"⚠ {w}" in plain(model.data(index, Qt.ItemDataRole.ToolTipRole))
    finally:
        close_window(window)


# -- the Data tab ---------------------------------------------------------------------------------------------------
def long_value_file(tmp_path) -> str:
    path = tmp_path / "answers.csv"
    lines = ["group,answer"]
    for i in range(60):
        lines.append(f"{'ab'[i % 2]},{LONG_VALUE if i % 3 == 0 else 'short'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def data_window(qtbot, tmp_path):
    from optrr_gui.main_window import TAB_DATA

    window = open_window(qtbot, tmp_path, long_value_file(tmp_path))
    at_1280(qtbot, window)
    window.tabs.setCurrentIndex(TAB_DATA)
    qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
    yield window
    close_window(window)


def test_at_1280_a_long_value_of_the_file_is_in_full_in_its_tooltip(qtbot, data_window):
    table = data_window.data_view.table
    model = table.model()
    column = [c.name for c in data_window.state.columns].index("answer")
    qtbot.waitUntil(lambda: model.rowCount() >= 60, timeout=WAIT_MS)
    long_index, short_index = model.index(0, column), model.index(1, column)
    assert model.data(long_index) == LONG_VALUE and model.data(short_index) == "short"
    assert table.columnWidth(column) < QFontMetrics(table.font()).horizontalAdvance(LONG_VALUE)  # elided
    assert plain(hover_tip(qtbot, table, long_index)) == LONG_VALUE
    assert "short" not in plain(hover_tip(qtbot, table, short_index))  # a value shown in full: no tooltip of its own


def test_at_1280_a_long_value_of_a_column_summary_is_in_full_in_its_tooltip(qtbot, data_window):
    column = [c.name for c in data_window.state.columns].index("answer")
    data_window.show_summary_of(column)
    view = data_window.summary_view
    table, model = view.table, view.table.model()
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=WAIT_MS)
    QApplication.processEvents()
    row = next(r for r in range(model.rowCount()) if model.data(model.index(r, 0)) == LONG_VALUE)
    for col in range(model.columnCount()):
        index = model.index(row, col)
        text = model.data(index)
        if text == LONG_VALUE:  # the value, and "Released as" (the same label)
            assert table.columnWidth(col) < QFontMetrics(table.font()).horizontalAdvance(text)
            assert plain(hover_tip(qtbot, table, index)) == LONG_VALUE


def test_a_long_category_label_is_in_full_in_its_tooltip(qtbot, data_window):
    from optrr_gui.main_window import TAB_DESIGN

    window = data_window
    window.tabs.setCurrentIndex(TAB_DESIGN)
    column = [c.name for c in window.state.columns].index("answer")
    window.attributes.set_roles([column], "perturb")  # (a free-text column is proposed dropped)
    wait_ready(qtbot, window)
    window.attributes.view.selectRow(column)
    window.column_panel.show_column(column)
    QApplication.processEvents()
    categories = window.column_panel.categories
    model = categories.model()
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=WAIT_MS)
    row = next(r for r in range(model.rowCount()) if LONG_VALUE in model.data(model.index(r, 0)))
    index = model.index(row, 0)
    assert categories.visualRect(index).width() < QFontMetrics(categories.font()).horizontalAdvance(LONG_VALUE)
    assert LONG_VALUE in plain(hover_tip(qtbot, categories, index))


# -- Compare ▸ Designs at your ε ------------------------------------------------------------------------------------
def test_the_compare_designs_note_is_in_full_in_its_tooltip(qtbot, window):
    import pandas as pd

    note = "each row carries 3 of 10 columns (chosen at random, independently of the data); the others are missing"
    rows = pd.DataFrame(
        [
            {
                "design": design,
                "rank": rank,
                "way": 1,
                "whole_record_epsilon": 3.0,
                "predicted_avd": 0.1,
                "measured_avd": 0.12,
                "not_identifiable": "",
                "note": text,
            }
            for rank, (design, text) in enumerate([("auto", ""), ("sample-3", note)], start=1)
        ]
    )
    from optrr_gui.main_window import TAB_COMPARE

    window.tabs.setCurrentIndex(TAB_COMPARE)  # (the Compare tab is built when first shown)
    page = window.compare_view.designs
    page.fill_table(rows)
    table = page.table
    last = table.columnCount() - 1
    assert table.horizontalHeaderItem(last).text() == "each row carries"
    assert table.item(1, last).text() == note and table.item(1, last).toolTip() == note
    assert table.item(0, last).toolTip() == "every column"
