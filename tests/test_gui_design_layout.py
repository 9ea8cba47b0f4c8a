"""The Design tab at 1280 x 800 (issue 14): the mechanism side has room for its whole design table (every
column, full design names, no sideways scrolling), while the column side still shows each column's name, role,
type, categories and ε in full and its risk text wraps (the warnings and the ε slider give way instead)."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from optrr_gui.design.attribute_table import COL_EPS, COL_NAME
from tests.test_gui_support import open_window, wait_ready


def filled(table) -> bool:
    """Every design row has its whole-record ε (a number, or "not available")."""
    rows = table.rowCount()
    return rows >= 5 and all(table.item(r, 1) is not None and table.item(r, 1).text() != "—" for r in range(rows))


def test_at_1280_by_800_the_design_table_fits_beside_the_columns(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path)
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == (1280, 800))
    wait_ready(qtbot, window)
    window.attributes.view.selectRow(1)
    table = window.mechanism.designs
    qtbot.waitUntil(lambda: filled(table) and window.is_ready(), timeout=120_000)
    QApplication.processEvents()

    # the design table: no sideways scrolling, every header and every design name in full
    header = table.horizontalHeader()
    assert table.horizontalScrollBar().maximum() == 0
    assert sum(header.sectionSize(c) for c in range(table.columnCount())) <= table.viewport().width()
    for c in range(table.columnCount()):
        assert header.sectionSize(c) >= header.sectionSizeHint(c), table.horizontalHeaderItem(c).text()
    for r in range(table.rowCount()):
        item = table.item(r, 0)
        advance = QFontMetrics(item.font()).horizontalAdvance(item.text())
        assert advance < header.sectionSize(0), item.text()
    assert table.sizeHintForColumn(0) <= header.sectionSize(0)  # (the delegate's own measure: not elided)
    assert window.mechanism.attributes.horizontalScrollBar().maximum() == 0  # the shown design's columns too

    # the right side has about half the width (it had ~35 %)
    left, right = window.design_splitter.sizes()
    assert right >= 0.45 * (left + right)

    # the column side: name, role, type, categories and ε in full, no sideways scrolling; the risk text wraps
    view = window.attributes.view
    assert view.horizontalScrollBar().maximum() == 0
    shown = sum(view.columnWidth(c) for c in range(COL_NAME, COL_EPS + 1))
    assert shown < view.viewport().width()
    for c in range(COL_NAME, COL_EPS):
        assert view.columnWidth(c) >= view.sizeHintForColumn(c)
    assert view.horizontalHeader().sectionSize(COL_EPS) >= view.horizontalHeader().sectionSizeHint(COL_EPS)
    # the column table shows most of the columns' rows (a newcomer's first step is to review each); it showed 4
    assert view.viewport().height() >= 7 * view.rowHeight(0)
    panel = window.column_panel
    assert panel.risk.isVisible() and panel.risk.text()
    left_area = window.design_splitter.widget(0)
    assert left_area.horizontalScrollBar().maximum() == 0
    panel_area = panel.parentWidget().parentWidget()  # the panel's own scroll area (it scrolls, not the table)
    assert panel_area.horizontalScrollBar().maximum() == 0
    assert panel.risk.width() <= panel_area.viewport().width()
    assert panel.risk.height() >= panel.risk.heightForWidth(panel.risk.width())  # every wrapped line shown
