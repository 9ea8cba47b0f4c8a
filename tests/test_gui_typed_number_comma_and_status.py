"""Typed numbers (an ε or weight editor, the whole-record target): a decimal comma is read as a decimal point
("2,5" was refused as "must be a number"), text with two decimal marks is refused saying so, and a valid commit
after a refusal clears the refusal's "Not changed: ..." from the status bar (it stayed while 0.5 and 500 were
applied)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMainWindow

from optrr_gui.design.epsilon_editor import EpsilonEditor, MixedDecimalMarks, refusal_status, typed_number
from optrr_gui.state.session import MAX_EPSILON, MIN_EPSILON
from tests.test_gui_epsilon_typing import focus, type_and_enter
from tests.test_gui_target_typing import budget_window, type_target  # noqa: F401 (a fixture)

MIXED = "must be a number with one decimal mark, a point or a comma (e.g. 2.5)"


@pytest.fixture
def editor_window(qtbot):
    """An ε editor in a main window of its own (its refusals go to that window's status bar), at ε 1."""
    window = QMainWindow()
    editor = EpsilonEditor(window)
    window.setCentralWidget(editor)
    qtbot.addWidget(window)
    window.show()
    editor.setValue(1.0)
    return window, editor


def test_a_decimal_comma_is_a_decimal_point_and_two_marks_are_not_a_number():
    assert typed_number("2,5") == 2.5 and typed_number("5,0e-1") == 0.5 and typed_number("2.5") == 2.5
    for text in ("1,000.5", "1.000,5", "1,000,000"):
        with pytest.raises(ValueError):
            typed_number(text)
    # a comma before exactly three digits may group thousands: "1,000" is not read as 1
    for text in ("1,000", "12,500", "-2,000e-3"):
        with pytest.raises(MixedDecimalMarks):
            typed_number(text)
    assert typed_number("0,125") == 0.125 and typed_number("2,50") == 2.5 and typed_number("1,5") == 1.5


@pytest.mark.parametrize("text,value", [("2,5", 2.5), ("0,125", 0.125), ("5,0e-1", 0.5)])
def test_an_epsilon_typed_with_a_decimal_comma_is_committed(qtbot, editor_window, text, value):
    window, editor = editor_window
    edited = []
    editor.valueEdited.connect(lambda v, final: edited.append(v))
    type_and_enter(qtbot, editor, text)
    assert edited == [value] and editor.value() == value and editor.error is None
    assert window.statusBar().currentMessage() == ""


@pytest.mark.parametrize("text", ["1,000.5", "1.000,5", "1,000,000"])
def test_an_epsilon_with_two_decimal_marks_is_refused_saying_so(qtbot, editor_window, text):
    window, editor = editor_window
    refused = []
    editor.inputRefused.connect(refused.append)
    type_and_enter(qtbot, editor, text)
    assert editor.value() == 1.0
    assert refused and set(refused) == {f"ε {MIXED}; got {text!r}"}
    assert window.statusBar().currentMessage() == refusal_status(refused[-1])


def test_a_valid_epsilon_after_a_refused_one_clears_the_status_message(qtbot, editor_window):
    window, editor = editor_window
    type_and_enter(qtbot, editor, "1e3")
    refused = window.statusBar().currentMessage()
    assert refused.startswith("Not changed: ε must be a number") and "'1e3'" in refused
    type_and_enter(qtbot, editor, "0.5")
    assert editor.value() == 0.5 and window.statusBar().currentMessage() == ""
    type_and_enter(qtbot, editor, "abc")
    window.statusBar().showMessage("Design ready")  # the refusal's words are no longer shown: another message stays
    type_and_enter(qtbot, editor, "0.25")
    assert editor.value() == 0.25 and window.statusBar().currentMessage() == "Design ready"


def test_a_valid_epsilon_equal_to_the_old_one_also_clears_it(qtbot, editor_window):
    """The commit is valid although nothing changes (no valueChanged): the refusal's words are stale all the same."""
    window, editor = editor_window
    type_and_enter(qtbot, editor, "abc")
    assert window.statusBar().currentMessage().startswith("Not changed:")
    type_and_enter(qtbot, editor, "1")
    assert editor.value() == 1.0 and window.statusBar().currentMessage() == ""


def test_a_step_after_a_refusal_clears_it_and_leaving_the_field_does_not(qtbot, editor_window):
    window, editor = editor_window
    type_and_enter(qtbot, editor, "abc")
    message = window.statusBar().currentMessage()
    editor.spin.clearFocus()  # focus-out with the (restored) old value: not a new commit, the words stay
    assert window.statusBar().currentMessage() == message
    QTest.keyClick(editor.spin, Qt.Key.Key_Up)
    assert editor.value() == pytest.approx(1.1) and window.statusBar().currentMessage() == ""


def test_the_target_after_a_refused_1e3_takes_0_5_and_500_and_clears_the_message(qtbot, budget_window):  # noqa: F811
    w = budget_window
    type_target(qtbot, w, "1e3")
    assert "got '1e3'" in w.statusBar().currentMessage()
    type_target(qtbot, w, "0.5")
    assert w.state.target_total == 0.5 and w.statusBar().currentMessage() == ""
    type_target(qtbot, w, "1e3")
    type_target(qtbot, w, "500")
    assert w.state.target_total == 500.0 and w.statusBar().currentMessage() == ""


def test_the_target_takes_a_decimal_comma_and_refuses_two_marks(qtbot, budget_window):  # noqa: F811
    w = budget_window
    type_target(qtbot, w, "2,5")
    assert w.state.target_total == 2.5 and w.attributes.target.lineEdit().text() == "whole-record ε 2.500"
    type_target(qtbot, w, "1,000.5")
    assert w.state.target_total == 2.5
    assert w.statusBar().currentMessage() == f"Not changed: the whole-record ε {MIXED}; got '1,000.5'"


#: Text ``float`` read (or a thousands grouping) that is not ASCII number text: refused, nothing changed.
NOT_ASCII_NUMBERS = ["0_5", "٣", "２,５", "1 000", "0x1", "1_000,5", "１,０００", "inf", "nan"]


def test_only_ascii_number_text_is_a_number():
    """``float`` took "0_5" as 5 (ten times the 0.5 meant), other scripts' digits ("٣" 3, "２,５" 2.5): refused
    now, as any text that is not ASCII number text; every form taken before still is."""
    for text in NOT_ASCII_NUMBERS:
        with pytest.raises(ValueError):
            typed_number(text)
    with pytest.raises(ValueError) as refused:
        typed_number("１,０００")
    assert not isinstance(refused.value, MixedDecimalMarks)  # no thousands grouping: not a number at all
    taken = {"0.5": 0.5, "5e-1": 0.5, ".5": 0.5, "5.": 5.0, "+2.5E0": 2.5, "-1": -1.0, " 2,5 ": 2.5, "1e+1": 10.0}
    assert {text: typed_number(text) for text in taken} == taken


@pytest.mark.parametrize("text", NOT_ASCII_NUMBERS)
def test_an_epsilon_that_is_not_ascii_number_text_is_refused_and_nothing_changes(qtbot, editor_window, text):
    window, editor = editor_window
    edited, refused = [], []
    editor.valueEdited.connect(lambda v, final: edited.append(v))
    editor.inputRefused.connect(refused.append)
    line = editor.spin.lineEdit()
    focus(qtbot, line)
    line.selectAll()
    QTest.keyClick(line, Qt.Key.Key_Delete)
    for char in text:  # key events carrying the text (QTest.keyClicks aborts on characters beyond Latin-1)
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(line, QKeyEvent(kind, Qt.Key.Key_unknown, Qt.KeyboardModifier.NoModifier, char))
    assert line.text() == f"ε {text}"
    QTest.keyClick(line, Qt.Key.Key_Return)
    assert edited == [] and editor.value() == 1.0
    assert refused and set(refused) == {f"ε must be a number from {MIN_EPSILON:g} to {MAX_EPSILON:g}; got {text!r}"}
    assert window.statusBar().currentMessage() == refusal_status(refused[-1])
