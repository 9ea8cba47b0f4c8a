"""The Design tab's column table (reviewer findings): a row's ε editor drops refused text once the edit ends
(it stayed red until a valid value was typed there), the Warnings column's elided text is readable in full in
its tooltip at a 1400 px wide window, and Tab from the table goes on to the chosen column's panel (it went back
up to the filter above the table; from a row's ε editor, to the next row's, then to the tab bar)."""

from __future__ import annotations

import html
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QToolTip

from optrr_gui.design.attribute_table import COL_COUNT, COL_EPS, COL_NAME, COL_WARN
from tests import test_gui_epsilon_typing
from tests.test_gui_epsilon_typing import START, focus, table_editor

#: the main window, a perturbed column selected, its ε START (the fixture of the ε typing tests)
panel_window = test_gui_epsilon_typing.panel_window

REASON = "ε must be a number from 0.01 to 50; got {!r}"


def is_red(editor) -> bool:
    return "c00000" in editor.spin.styleSheet()


def typed_over(qtbot, editor, text: str):
    """Focus the row's ε field, select its text and type ``text`` over it (the editor stays open)."""
    line = editor.spin.lineEdit()
    focus(qtbot, line)
    line.selectAll()
    qtbot.keyClicks(line, text)
    return line


def unchanged(window, row, editor) -> bool:
    """The column's ε, the cell and the field show START; nothing was pushed to the undo stack."""
    model = window.attributes.model
    return (
        window.state.columns[row].epsilon == START
        and model.data(model.index(row, COL_EPS), Qt.ItemDataRole.EditRole) == START
        and editor.value() == START
        and editor.spin.lineEdit().text() == "ε 0.273"
        and window.stack.count() == 0
    )


# -- 1. the row's ε editor: red while typing, dropped when the edit ends -----------------------------------------
def test_typed_text_that_cannot_be_committed_is_red_while_typing_and_dropped_by_escape(qtbot, panel_window):
    window, row = panel_window
    editor = table_editor(window, row)
    line = typed_over(qtbot, editor, "1000")
    # still typing: red, and the reason in the field's tooltip
    assert line.text() == "ε 1000" and is_red(editor)
    assert editor.error == REASON.format("1000") and editor.error in editor.spin.toolTip()
    qtbot.keyClick(line, Qt.Key.Key_0)
    assert line.text() == "ε 10000" and is_red(editor) and editor.error == REASON.format("10000")
    assert window.state.columns[row].epsilon == START and window.stack.count() == 0
    # Escape: the typed text is dropped, the unchanged value shown, no red
    qtbot.keyClick(line, Qt.Key.Key_Escape)
    assert unchanged(window, row, editor)
    assert editor.error is None and not is_red(editor) and "got" not in editor.spin.toolTip()


def test_the_red_goes_as_soon_as_the_text_typed_is_valid(qtbot, panel_window):
    window, row = panel_window
    editor = table_editor(window, row)
    line = typed_over(qtbot, editor, "100")
    assert is_red(editor)
    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    assert line.text() == "ε 10" and not is_red(editor) and editor.error is None
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert window.state.columns[row].epsilon == 10.0 and window.stack.count() == 1


def test_the_start_of_a_valid_number_is_not_red_while_typing(qtbot, panel_window):
    """Typing 0.5 or 2e-1 passes through "0", "0.", "2e", "2e-": none is marked (only a text no further typing can
    make valid is)."""
    window, row = panel_window
    editor = table_editor(window, row)
    for text in ("0.5", "2e-1"):
        line = typed_over(qtbot, editor, "")
        for ch in text:
            qtbot.keyClicks(line, ch)
            assert not is_red(editor), line.text()
        qtbot.keyClick(line, Qt.Key.Key_Return)
        assert window.state.columns[row].epsilon == float(text)
    line = typed_over(qtbot, editor, "0.0001")  # no decimal left to reach the minimum
    assert is_red(editor)


@pytest.mark.parametrize("text", ["1e-5", "abc", "51"])
def test_enter_on_refused_text_says_why_and_leaves_no_red(qtbot, panel_window, text):
    window, row = panel_window
    editor = table_editor(window, row)
    refused = []
    editor.inputRefused.connect(refused.append)
    line = typed_over(qtbot, editor, text)
    assert is_red(editor)
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert set(refused) == {REASON.format(text)}  # refused in words (the spin box's fixup runs twice on Enter) ...
    assert REASON.format(text) in window.statusBar().currentMessage()  # ... which stay in the status bar
    assert unchanged(window, row, editor)
    assert editor.error is None and not is_red(editor) and "got" not in editor.spin.toolTip()


def test_refused_text_left_by_focus_is_dropped_without_red(qtbot, panel_window):
    window, row = panel_window
    editor = table_editor(window, row)
    refused = []
    editor.inputRefused.connect(refused.append)
    typed_over(qtbot, editor, "1000")
    assert is_red(editor)
    focus(qtbot, window.attributes.view)
    assert set(refused) == {REASON.format("1000")} and REASON.format("1000") in window.statusBar().currentMessage()
    assert unchanged(window, row, editor)
    assert editor.error is None and not is_red(editor)


# -- 2. the Warnings column at 1400 x 900 ---------------------------------------------------------------------------
def plain(rich: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "\n", rich))


def test_at_1400_the_elided_warnings_are_in_full_in_a_wrapped_tooltip(qtbot, window):
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == (1400, 900))
    qtbot.waitUntil(window.is_ready)
    view, model = window.attributes.view, window.attributes.model
    # the sample's breast-quad: two warnings (a rare category, a missing-value marker), 330 characters
    row = max(range(model.rowCount()), key=lambda r: len(model.data(model.index(r, COL_WARN))))
    warnings = model.warnings[row]
    assert len(warnings) == 2
    index = model.index(row, COL_WARN)
    cell = view.visualRect(index)
    shown = QFontMetrics(view.font()).boundingRect(cell, Qt.TextFlag.TextWordWrap, model.data(index))
    assert shown.height() > cell.height()  # the cell cannot show it all (elided) ...
    tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
    for w in warnings:  # ... its tooltip has every warning, in full
        assert f"⚠ {w}" in plain(tip)
    # shown, the tooltip wraps at a readable width (as plain text it was one line as wide as the screen)
    QToolTip.showText(view.viewport().mapToGlobal(cell.center()), tip, view.viewport())
    qtbot.waitUntil(QToolTip.isVisible)
    label = next(w for w in QApplication.topLevelWidgets() if w.metaObject().className() == "QTipLabel")
    assert label.wordWrap() and label.isVisible()
    assert label.width() <= window.width() // 2
    assert label.height() >= label.heightForWidth(label.width())  # every wrapped line shown
    QToolTip.hideText()
    # the other columns stay readable: in full, one line per row, no sideways scrolling
    assert view.horizontalScrollBar().maximum() == 0
    for c in range(COL_NAME, COL_COUNT + 1):
        assert view.columnWidth(c) >= view.sizeHintForColumn(c)
    assert view.rowHeight(row) == view.rowHeight(0)
    assert view.columnWidth(COL_WARN) >= 100  # the warnings take what is left


# -- 3. Tab from the table ------------------------------------------------------------------------------------------
def tab_stops(start, count: int, forward: bool = True) -> list:
    """The next ``count`` widgets Tab (or Shift+Tab) reaches from ``start``, as in the window's focus chain."""
    stops, widget = [], start
    while len(stops) < count:
        widget = widget.nextInFocusChain() if forward else widget.previousInFocusChain()
        assert widget is not start, "the focus chain came back to its start"
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisible() and widget.isEnabled():
            stop = widget.focusProxy() or widget  # a spin box's line edit: the spin box
            if not stops or stops[-1] is not stop:
                stops.append(stop)
    return stops


def test_tab_from_the_column_table_goes_to_the_chosen_columns_panel(qtbot, panel_window):
    window, row = panel_window
    table, panel = window.attributes, window.column_panel
    # reading order: the filter and the privacy mode above the table, the table, then the column's panel
    expected = [panel.role, panel.type, panel.missing, panel.epsilon.spin, panel.epsilon.slider, panel.categories]
    assert tab_stops(table.view, 6) == expected
    assert tab_stops(table.view, 3, forward=False) == [table.total, table.per_column, table.filter]
    focus(qtbot, table.view)
    qtbot.keyClick(table.view, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is panel.role
    qtbot.keyClick(panel.role, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is table.view
    # from a row's ε editor too (Tab went on to the next row's editor, and from the last one to the tab bar)
    editor = table_editor(window, row)
    focus(qtbot, editor.spin.lineEdit())
    qtbot.keyClick(editor.spin.lineEdit(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is panel.role
    focus(qtbot, editor.slider)
    qtbot.keyClick(editor.slider, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is table.view


def test_tab_from_the_design_table_goes_to_the_release_buttons(qtbot, window):
    mechanism = window.mechanism
    assert tab_stops(mechanism.designs, 3) == [
        mechanism.use_button,
        mechanism.recommended_button,
        mechanism.accept_changed,
    ]
    focus(qtbot, mechanism.designs)
    qtbot.keyClick(mechanism.designs, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is mechanism.use_button
