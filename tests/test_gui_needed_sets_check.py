"""The typed needed column sets are checked on the spot: a set naming a column that is not perturbed (unknown,
dropped, kept, two names without their comma) turns the field red with the reason in words and is not applied
(no undo step); sets applied earlier whose column stops being perturbed are named by the release dialog."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from optrr_gui.release.dialog import ReleaseDialog
from optrr_gui.state import needed_marginals as nm
from tests.test_gui_support import WAIT_MS, close_window, open_window

PERTURBED = ["stroke", "smoking_status", "gender", "casco", "snp10001"]
ROLES = {**{n: "perturb" for n in PERTURBED}, "id": "drop", "region": "keep"}


# -- Qt-free ---------------------------------------------------------------------------------------------------
def test_correct_sets_have_no_error():
    assert nm.sets_error("stroke, smoking_status; gender", PERTURBED, ROLES) == ""
    assert nm.sets_error("", PERTURBED, ROLES) == ""
    assert nm.sets_error(" casco ,snp10001 ; ", PERTURBED, ROLES) == ""


def test_unknown_name_is_named_with_the_closest_column():
    error = nm.sets_error("stroke, smokingstatus", PERTURBED, ROLES)
    assert "smokingstatus" in error and "not a perturbed column" in error and "smoking_status" in error
    assert error.startswith("Not applied")
    error = nm.sets_error("stroke, zzzz", PERTURBED, ROLES)
    assert "zzzz" in error and "did you mean" not in error


def test_dropped_and_kept_columns_are_refused_by_role():
    error = nm.sets_error("stroke, smokingstatus; id, stroke", PERTURBED, ROLES)
    assert "smokingstatus" in error and "smoking_status" in error
    assert "“id” is dropped (role drop)" in error
    error = nm.sets_error("region, stroke", PERTURBED, ROLES)
    assert "“region” is published as it is (role keep)" in error


def test_missing_comma_between_names():
    error = nm.sets_error("casco snp10001", PERTURBED, ROLES)
    assert "casco snp10001" in error and "comma is missing" in error


def test_unparseable_text_and_applied_sets_no_longer_perturbed():
    assert "distinct" in nm.sets_error("stroke, stroke", PERTURBED, ROLES)
    value = {"orders": [1], "sets": [["stroke", "gender"]]}
    assert nm.applied_error(value, PERTURBED, ROLES) == ""
    later = [n for n in PERTURBED if n != "gender"]
    error = nm.applied_error(value, later, {**ROLES, "gender": "drop"})
    assert "“gender” is dropped" in error and "Design tab" in error


# -- through the main window -----------------------------------------------------------------------------------
@pytest.fixture
def window(qtbot, tmp_path):
    w = open_window(qtbot, tmp_path)
    yield w
    close_window(w)


def enter(qtbot, field, text: str) -> None:
    field.setFocus(Qt.FocusReason.OtherFocusReason)
    field.selectAll()
    field.setText(text)
    QTest.keyClick(field, Qt.Key.Key_Return)


def test_a_bad_set_is_shown_and_not_applied_a_good_one_is(qtbot, window):
    state, editor, stack = window.state, window.mechanism.needed, window.stack
    state.set_column_value([c.name for c in state.columns].index("class"), "role", "drop")
    stack.clear()
    before = state.needed_marginals
    enter(qtbot, editor.sets, "age, menopuse; class, age")  # a typo and a dropped column
    assert state.needed_marginals == before and stack.count() == 0
    assert editor.error_label.isVisibleTo(editor) and editor.sets.styleSheet()
    message = editor.error_label.text()
    assert "menopuse" in message and "menopause" in message and "“class” is dropped" in message
    enter(qtbot, editor.sets, "age menopause")  # the comma forgotten
    assert state.needed_marginals == before and stack.count() == 0
    assert "comma is missing" in editor.error_label.text()
    enter(qtbot, editor.sets, "age, menopause")
    assert state.needed_marginals["sets"] == [["age", "menopause"]] and stack.count() == 1
    assert not editor.error_label.isVisibleTo(editor) and not editor.sets.styleSheet()


def test_release_dialog_names_a_needed_column_no_longer_perturbed(qtbot, window):
    state = window.state
    state.set_session_value("needed_marginals", {"orders": [1], "sets": [["age", "menopause"]]})
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    assert not any("needed column set" in p for p in dialog.problems())
    state.set_column_value([c.name for c in state.columns].index("menopause"), "role", "keep")
    problems = dialog.problems()
    assert any("needed column set" in p and "“menopause” is published as it is" in p for p in problems)
    qtbot.waitUntil(window.controller.is_idle, timeout=WAIT_MS)
    dialog._design_changed()
    assert "menopause" in dialog.progress_label.text() and not dialog.release_button.isEnabled()


def test_an_applied_set_whose_column_is_dropped_turns_the_field_red(qtbot, window):
    """Not only the release dialog: the Design tab's field says so as soon as the column stops being perturbed."""
    w = window
    editor = w.mechanism.needed
    enter(qtbot, editor.sets, "age, menopause")
    assert editor.error_label.isHidden() and ["age", "menopause"] in w.state.needed_marginals["sets"]
    names = [c.name for c in w.state.columns]
    w.state.set_column_value(names.index("menopause"), "role", "drop")
    assert not editor.error_label.isHidden() and "menopause" in editor.error_label.text()
    assert editor.sets_message == ""  # not a typed refusal: the release dialog names it once, as applied sets
    w.state.set_column_value(names.index("menopause"), "role", "perturb")
    assert editor.error_label.isHidden()
