"""The whole-record target box keeps typed text exactly or refuses it in words (a plain spin box dropped keystrokes:
1e-5 became 15, 5e-1 became 51, 20000 became 2000), at most 50 per perturbed column."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest


def type_target(qtbot, window, text: str) -> None:
    box = window.attributes.target
    line = box.lineEdit()
    window.activateWindow()
    line.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(line.hasFocus)
    line.selectAll()
    QTest.keyClick(line, Qt.Key.Key_Delete)
    QTest.keyClicks(line, text)
    QTest.keyClick(line, Qt.Key.Key_Return)


@pytest.fixture
def budget_window(window):
    window.attributes.total.setChecked(True)
    assert window.state.budget_mode
    window.stack.clear()
    return window


@pytest.mark.parametrize("text", ["1e-5", "20000", "abc", "0.001", "-1"])
def test_a_target_out_of_range_or_not_a_number_is_refused(qtbot, budget_window, text):
    w = budget_window
    before = w.state.target_total
    type_target(qtbot, w, text)
    assert w.state.target_total == before and w.stack.count() == 0
    assert "whole-record ε must be a number from 0.01 to 500" in w.statusBar().currentMessage()
    assert "background-color" in w.attributes.target.styleSheet()


@pytest.mark.parametrize("text,value", [("5e-1", 0.5), ("2.5", 2.5), ("500", 500.0)])
def test_a_target_in_range_is_kept_exactly(qtbot, budget_window, text, value):
    w = budget_window
    type_target(qtbot, w, text)
    assert w.state.target_total == value and w.stack.count() == 1
    assert w.attributes.target.styleSheet() == ""


def test_a_refused_epsilon_is_cleared_when_another_column_is_shown(qtbot, window):
    """The side panel's red state belongs to the text typed for the column left, not to the next one shown."""
    from tests.test_gui_epsilon_typing import type_and_enter

    w = window
    rows = [i for i, c in enumerate(w.state.columns) if c.role == "perturb"][:2]
    w.attributes.view.selectRow(rows[0])
    editor = w.column_panel.epsilon
    type_and_enter(qtbot, editor, "abc")
    assert editor.error is not None
    w.attributes.view.selectRow(rows[1])
    assert w.column_panel.row == rows[1]
    assert editor.error is None and editor.spin.styleSheet() == ""
