"""The release dialog after the GUI review: rare released categories need the tick like everything else published
outside the ε; closing the dialog while a release runs asks before it stops it (and the main window says how it
ended); a column refused as an identifier is dropped from the dialog in one click, through the undo stack."""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QMessageBox

from optrr_gui.release.dialog import ReleaseDialog
from optrr_gui.state.role_fields import role_fields
from tests.test_gui_datamanager import index_of
from tests.test_gui_support import WAIT_MS, window_with_summaries

ROWS = 40


def clinic_file(folder) -> str:
    """40 patients: a record number each, a gender with one 'Other', a smoker column without rare values and a ward
    with two rows in 'ICU'."""
    path = folder / "clinic.csv"
    lines = ["record,gender,smoker,ward"]
    for i in range(ROWS):
        gender = "Other" if i == 7 else "MF"[i % 2]
        ward = "ICU" if i in (3, 11) else ("A", "B")[i % 2]
        lines.append(f"R{1000 + i},{gender},{('yes', 'no')[i % 3 == 0]},{ward}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def clinic(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, clinic_file(tmp_path))


def dialog_on(qtbot, window, output) -> ReleaseDialog:
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(output))
    dialog._design_changed()
    return dialog


def set_role(qtbot, window, name: str, role: str) -> None:
    j = index_of(window, name)
    window.state.set_column_fields(j, role_fields(window.state, j, role))
    qtbot.waitUntil(window.is_ready, timeout=WAIT_MS)


# -- 1. rare released categories are listed in orange and need the tick ---------------------------------------------
def test_rare_categories_of_released_columns_follow_the_design_tabs_rule(qtbot, clinic, tmp_path):
    from optrr_gui.release.dialog import rare_categories

    assert clinic.state.columns[index_of(clinic, "record")].role == "drop"
    found = rare_categories(clinic.state, clinic.summaries)
    assert found == [("gender", "Other", 1), ("ward", "ICU", 2)]
    # the Design tab warns about the same category, by name and count
    warnings = clinic.attributes.model.warnings[index_of(clinic, "gender")]
    assert any("'Other' (1)" in w for w in warnings), warnings
    # not released, not listed: no tick asked
    for name in ("gender", "ward"):
        set_role(qtbot, clinic, name, "drop")
    assert rare_categories(clinic.state, clinic.summaries) == []
    dialog = dialog_on(qtbot, clinic, tmp_path / "out.csv")
    assert "Rare categories" not in dialog.columns_label.text()
    assert dialog.accept_clear.isHidden() and dialog.problems() == []


def test_a_one_row_category_needs_the_tick_before_release(qtbot, clinic, tmp_path):
    out = tmp_path / "out.csv"
    set_role(qtbot, clinic, "ward", "keep")  # a kept column's rare values are released too
    dialog = dialog_on(qtbot, clinic, out)
    text = dialog.columns_label.text()
    assert "Rare categories released by name (fewer than 5 rows each" in text, text
    assert "gender: 'Other' (1 row)" in text and "ward: 'ICU' (2 rows)" in text, text
    assert dialog.accept_clear.isVisibleTo(dialog) and not dialog.accept_clear.isChecked()
    assert any("published outside the ε" in p for p in dialog.problems())
    assert not dialog.release_button.isEnabled()
    assert not dialog.start() and not out.exists()
    dialog.accept_clear.setChecked(True)
    assert dialog.problems() == [] and dialog.release_button.isEnabled()
    # a change of what is released rare clears the tick: it was given for another list
    set_role(qtbot, clinic, "ward", "drop")
    dialog._design_changed()
    assert "ward: 'ICU'" not in dialog.columns_label.text() and "gender: 'Other' (1 row)" in dialog.columns_label.text()
    assert not dialog.accept_clear.isChecked() and not dialog.start()
    dialog.accept_clear.setChecked(True)
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done", dialog.progress_label.text()
    assert out.exists()


# -- 2. closing while a release runs asks first ---------------------------------------------------------------------
def release_waiting_for_cancel(input_path, config, output_path, options, progress=None, cancel=None):
    """A release job (in the worker process) that says it is writing and then waits for its cancel flag."""
    import threading

    from optrr_engine.errors import Cancelled

    progress(0.5, "writing rows")
    stop = threading.Event()
    for _ in range(6000):  # at most a minute, so a failed test never leaves it behind
        if cancel():
            raise Cancelled("cancelled by the user")
        stop.wait(0.01)
    raise RuntimeError("never cancelled")


@pytest.fixture
def running(qtbot, clinic, tmp_path, monkeypatch):
    """A shown dialog whose release is running (and waits to be cancelled)."""
    import optrr_gui.release.dialog as rd

    monkeypatch.setattr(rd, "run_release", release_waiting_for_cancel)
    dialog = dialog_on(qtbot, clinic, tmp_path / "out.csv")
    dialog.accept_clear.setChecked(True)
    dialog.show()
    assert dialog.start()
    qtbot.waitUntil(lambda: "writing rows" in dialog.progress_label.text(), timeout=WAIT_MS)
    return dialog


def answer(monkeypatch, button) -> list:
    asked = []

    def question(parent, title, text, *args, **kwargs):
        asked.append((title, text))
        return button

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


def test_closing_a_running_release_asks_and_yes_stops_it_and_the_window_says_so(qtbot, running, monkeypatch, tmp_path):
    dialog, window = running, running.window_
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    assert dialog.close()
    assert asked == [("Stop the release?", "Stop the release? Nothing will be written.")]
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.result_state == "cancelled", timeout=WAIT_MS)
    message = window.statusBar().currentMessage()
    assert "release was stopped" in message and "nothing was written" in message, message
    assert not os.path.exists(tmp_path / "out.csv")


def test_closing_a_running_release_and_answering_no_keeps_it_running(qtbot, running, monkeypatch):
    dialog, window = running, running.window_
    asked = answer(monkeypatch, QMessageBox.StandardButton.No)
    assert not dialog.close()
    assert len(asked) == 1 and dialog.isVisible()
    assert dialog.result_state == "running" and dialog.cancel_button.isEnabled()
    assert "stopped" not in window.statusBar().currentMessage()
    dialog.cancel()  # the Cancel button: no question, and the dialog says it itself
    qtbot.waitUntil(lambda: dialog.result_state == "cancelled", timeout=WAIT_MS)
    assert len(asked) == 1 and "stopped" not in window.statusBar().currentMessage()


# -- 3. a column refused as an identifier is dropped in one click ---------------------------------------------------
def test_the_refused_identifier_is_dropped_in_one_undoable_click(qtbot, clinic, tmp_path):
    set_role(qtbot, clinic, "record", "perturb")
    clinic.stack.clear()
    dialog = dialog_on(qtbot, clinic, tmp_path / "out.csv")
    assert any(p.startswith("record has 40 different values in 40 rows") and "Drop button" in p
               for p in dialog.problems())
    button = dialog.drop_refused_button
    assert button.isVisibleTo(dialog) and button.text() == "Drop record, refused as an identifier"
    button.click()
    j = index_of(clinic, "record")
    assert clinic.state.columns[j].role == "drop"
    assert clinic.stack.count() == 1 and "record" in clinic.stack.undoText()
    assert button.isHidden() and "Refused" not in dialog.columns_label.text()
    assert not any("looks like an identifier" in p for p in dialog.problems())
    clinic.stack.undo()  # back as it was: refused again, the button again
    assert clinic.state.columns[j].role == "perturb"
    dialog._design_changed()
    assert button.isVisibleTo(dialog) and any("looks like an identifier" in p for p in dialog.problems())
