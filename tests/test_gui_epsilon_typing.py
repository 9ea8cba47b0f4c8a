"""Typing an ε (side panel and table row): the text typed is committed exactly, or refused with a message in
words and nothing changed. A plain QDoubleSpinBox dropped the keystrokes it found out of range: "1e-5" became
15, "1000" became 10, "-1" became 1, each pushed as a normal undo step."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from optrr_gui.design.attribute_table import COL_EPS
from optrr_gui.design.epsilon_editor import EpsilonEditor
from optrr_gui.state.session import MAX_EPSILON, MIN_EPSILON

#: Typed text -> what the old spin box committed instead (the reviewer's table).
REFUSED = ["1e-5", "-1", "1000", "51", "0", "0.0001", "abc", "1e", ""]
#: Typed text -> the exact value committed.
ACCEPTED = {"0.5": 0.5, "5e-1": 0.5, "12": 12.0, "0.0125": 0.0125, "50": 50.0, "0.01": 0.01, "2.5E0": 2.5}
START = 0.273


def focus(qtbot, widget) -> None:
    widget.window().activateWindow()
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus)


def type_and_enter(qtbot, editor: EpsilonEditor, text: str) -> str:
    """Type ``text`` over the field's content, return the text shown just before Enter, then press Enter."""
    line = editor.spin.lineEdit()
    focus(qtbot, line)
    line.selectAll()
    QTest.keyClick(line, Qt.Key.Key_Delete)
    QTest.keyClicks(line, text)
    shown = line.text()
    QTest.keyClick(line, Qt.Key.Key_Return)
    return shown


@pytest.fixture
def panel_window(window):
    """The main window with ε per column, a perturbed column selected, its ε set to START (no undo history)."""
    state = window.state
    row = next(i for i, c in enumerate(state.columns) if c.role == "perturb")
    window.attributes.view.selectRow(row)
    assert window.column_panel.row == row
    state.set_column_values([row], "epsilon", [START])
    window.stack.clear()
    assert window.column_panel.epsilon.value() == START
    return window, row


def table_editor(window, row) -> EpsilonEditor:
    editor = window.attributes.view.indexWidget(window.attributes.model.index(row, COL_EPS))
    assert isinstance(editor, EpsilonEditor)
    return editor


def editors(window, row):
    return {"side panel": window.column_panel.epsilon, "table row": table_editor(window, row)}


@pytest.mark.parametrize("where", ["side panel", "table row"])
@pytest.mark.parametrize("text", REFUSED)
def test_out_of_range_or_non_numeric_epsilon_is_refused_with_a_message(qtbot, panel_window, where, text):
    window, row = panel_window
    editor = editors(window, row)[where]
    refused = []
    editor.inputRefused.connect(refused.append)
    shown = type_and_enter(qtbot, editor, text)
    assert shown == f"ε {text}"  # no keystroke was dropped while typing
    assert window.state.columns[row].epsilon == START  # unchanged ...
    assert window.stack.count() == 0  # ... and no undo step
    assert editor.value() == START and editor.spin.lineEdit().text() == "ε 0.273"
    expected = f"ε must be a number from {MIN_EPSILON:g} to {MAX_EPSILON:g}; got {text!r}"
    assert refused and refused[-1] == expected
    assert expected in window.statusBar().currentMessage()
    if where == "side panel":
        assert editor.error == expected and expected in editor.spin.toolTip()
        assert "c00000" in editor.spin.styleSheet()  # the field turns red
    else:  # a row's editor ends its edit on Enter: no red is left on the unchanged value (it was red while typed)
        assert editor.error is None and expected not in editor.spin.toolTip()
        assert "c00000" not in editor.spin.styleSheet()


@pytest.mark.parametrize("where", ["side panel", "table row"])
@pytest.mark.parametrize("text", list(ACCEPTED))
def test_in_range_epsilon_is_committed_exactly(qtbot, panel_window, where, text):
    window, row = panel_window
    editor = editors(window, row)[where]
    type_and_enter(qtbot, editor, text)
    value = ACCEPTED[text]
    assert window.state.columns[row].epsilon == value  # exactly, not rounded to the 3 decimals shown
    assert window.stack.count() == 1 and editor.value() == value and editor.error is None
    assert editor.spin.lineEdit().text() == ("ε 0.0125" if value == 0.0125 else f"ε {value:.3f}")
    # the other editor of the same column follows
    other = editors(window, row)["table row" if where == "side panel" else "side panel"]
    qtbot.waitUntil(lambda: other.value() == value)


def test_a_refused_value_then_a_valid_one_clears_the_message(qtbot, panel_window):
    window, row = panel_window
    editor = window.column_panel.epsilon
    type_and_enter(qtbot, editor, "1e-5")
    assert editor.error is not None and window.stack.count() == 0
    type_and_enter(qtbot, editor, "1e-1")
    assert window.state.columns[row].epsilon == 0.1 and window.stack.count() == 1
    assert editor.error is None and editor.spin.styleSheet() == ""
    assert "ε 1e-5" not in editor.spin.toolTip() and "1e-5" not in editor.spin.toolTip()


def test_refused_text_left_by_focus_out_changes_nothing(qtbot, panel_window):
    window, row = panel_window
    editor = window.column_panel.epsilon
    refused = []
    editor.inputRefused.connect(refused.append)
    line = editor.spin.lineEdit()
    focus(qtbot, line)
    line.selectAll()
    QTest.keyClicks(line, "1000")
    focus(qtbot, window.attributes.view)
    assert window.state.columns[row].epsilon == START and window.stack.count() == 0
    assert refused and "got '1000'" in refused[-1]


def test_weight_editor_refuses_out_of_range_weights_too(qtbot):
    editor = EpsilonEditor(kind="weight")
    qtbot.addWidget(editor)
    editor.show()
    editor.setValue(1.0)
    edited, refused = [], []
    editor.valueEdited.connect(lambda v, final: edited.append(v))
    editor.inputRefused.connect(refused.append)
    type_and_enter(qtbot, editor, "1000")
    assert editor.value() == 1.0 and not edited
    assert refused[-1] == "the weight must be a number from 0.01 to 100; got '1000'"
    type_and_enter(qtbot, editor, "2.5e1")
    assert edited == [25.0] and editor.value() == 25.0
