"""What is typed but not yet applied is never lost (bin edges, a typed ε, the needed column sets: applied when the
field is left and before a save, a release or a recipe export); the keyboard leaves the column table with Tab;
closing the window during a release asks first."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from optrr_gui.common.commands import SetColumnValue
from optrr_gui.design.column_panel import ColumnPanel
from optrr_gui.state.session import ColumnState, SessionState
from tests.test_gui_release import release_stalled_while_writing
from tests.test_gui_support import WAIT_MS, tick_orange

INF = float("inf")


def focus(qtbot, widget) -> None:
    widget.window().activateWindow()
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus)


@pytest.fixture
def panel(qtbot):
    state = SessionState()
    state.load_columns(
        None,
        {},
        [
            ColumnState("age", type="numeric", bins={"method": "edges", "edges": [0, 40, 120]}),
            ColumnState("bmi", type="numeric", bins={"method": "edges", "edges": [0, 25, 60]}),
            ColumnState("smoker", categories=["no", "yes"]),
        ],
    )
    stack = QUndoStack()
    widget = ColumnPanel(state, stack)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    widget.show_column(0)
    return widget, state, stack


def type_into(qtbot, field, text: str) -> None:
    focus(qtbot, field)
    field.selectAll()
    QTest.keyClicks(field, text)


def test_typed_bin_edges_apply_when_the_field_is_left(qtbot, panel):
    widget, state, stack = panel
    type_into(qtbot, widget.bins, "-inf, 2.5, inf")
    focus(qtbot, widget.role)  # Tab or a click elsewhere: no Enter
    qtbot.waitUntil(lambda: state.columns[0].bins["edges"] == [-INF, 2.5, INF])
    assert stack.count() == 1 and widget.bins_error.text() == ""
    type_into(qtbot, widget.bins, "5, 3")  # invalid: the reason stays shown, the text stays as typed
    focus(qtbot, widget.role)
    qtbot.waitUntil(lambda: "increasing" in widget.bins_error.text())
    assert widget.bins.text() == "5, 3" and state.columns[0].bins["edges"] == [-INF, 2.5, INF]


def test_typed_bin_edges_go_to_their_column_when_another_is_shown(qtbot, panel):
    widget, state, _ = panel
    type_into(qtbot, widget.bins, "-inf, 2.5, inf")
    widget.show_column(1)  # the selection moved while the field kept the focus
    assert state.columns[0].bins["edges"] == [-INF, 2.5, INF]
    assert state.columns[1].bins["edges"] == [0, 25, 60] and widget.bins.text() == "0, 25, 60"
    type_into(qtbot, widget.bins, "not edges")
    widget.show_column(2)  # invalid: not applied, and not without a word
    assert state.columns[1].bins["edges"] == [0, 25, 60]
    assert widget.bins_error.isVisibleTo(widget) and "bmi" in widget.bins_error.text()
    assert "not applied" in widget.bins_error.text()


@pytest.fixture
def numeric_window(window):
    state = window.state
    row = [c.name for c in state.columns].index("deg-malig")
    window.stack.push(SetColumnValue(state, row, "type", "numeric"))
    window.attributes.view.selectRow(row)
    assert window.column_panel.row == row
    return window, row


def saved_project(window, path) -> dict:
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # Ctrl+S
    assert window.project_path == str(path) and window.stack.isClean(), window.windowTitle()
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture
def saved_window(numeric_window, tmp_path):
    window, row = numeric_window
    project = tmp_path / "p.optrr"
    window.save_project_to(str(project))
    return window, row, project


def test_ctrl_s_saves_bin_edges_typed_without_enter(qtbot, saved_window):
    window, row, project = saved_window
    type_into(qtbot, window.column_panel.bins, "-inf, 2.5, inf")
    saved = saved_project(window, project)
    assert saved["columns"][row]["bins"]["edges"] == [-INF, 2.5, INF]
    assert window.state.columns[row].bins["edges"] == [-INF, 2.5, INF]


def test_ctrl_s_with_invalid_typed_bin_edges_saves_nothing_and_says_why(qtbot, saved_window):
    """Saving the old edges while the field shows the new, invalid ones would say "Saved" about what is not shown:
    nothing is saved, the message bar says why, the typed text stays."""
    window, row, project = saved_window
    before = project.read_text(encoding="utf-8")
    old_edges = window.state.columns[row].bins
    type_into(qtbot, window.column_panel.bins, "-inf, 3, 2, inf")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # Ctrl+S
    assert project.read_text(encoding="utf-8") == before and window.state.columns[row].bins == old_edges
    assert "are not valid" in window.message_bar.label.text()
    assert window.column_panel.bins.text() == "-inf, 3, 2, inf"


def test_ctrl_s_saves_a_typed_epsilon(qtbot, saved_window):
    window, row, project = saved_window
    type_into(qtbot, window.column_panel.epsilon.spin.lineEdit(), "0.7")  # keyboard tracking off: not applied
    assert window.state.columns[row].epsilon != 0.7
    saved = saved_project(window, project)
    assert window.state.columns[row].epsilon == 0.7 and saved["columns"][row]["epsilon"] == 0.7


def test_ctrl_s_saves_typed_needed_column_sets(qtbot, saved_window):
    window, _, project = saved_window
    names = [c.name for c in window.state.perturbed_columns()][:2]
    type_into(qtbot, window.mechanism.needed.sets, ", ".join(names))
    saved = saved_project(window, project)
    assert window.state.needed_marginals["sets"] == [names]
    assert saved["session"]["needed_marginals"]["sets"] == [names]


def test_tab_leaves_the_column_table_for_the_side_panel_and_the_mechanism(qtbot, window):
    view = window.attributes.view
    focus(qtbot, view)
    view.setCurrentIndex(view.model().index(0, 0))
    QTest.keyClick(view, Qt.Key.Key_Down)  # the arrow keys still move between the rows
    assert view.currentIndex().row() == 1
    focus(qtbot, view)
    reached = set()
    for _ in range(40):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        w = QApplication.focusWidget()
        for name, panel in (("column panel", window.column_panel), ("mechanism", window.mechanism)):
            if w is not None and panel.isAncestorOf(w):
                reached.add(name)
        if window.mechanism.use_button.hasFocus():
            reached.add("use")
        if len(reached) == 3:
            break
    assert reached == {"column panel", "mechanism", "use"}


def start_stalled_release(window, tmp_path, monkeypatch):
    import optrr_gui.release.dialog as rd
    from optrr_engine import process_pool

    monkeypatch.setattr(rd, "run_release", release_stalled_while_writing)
    monkeypatch.setattr(process_pool, "GRACE_SECONDS", 0.5)
    window.open_release()
    dialog = window._release_dialog
    dialog.output.setText(str(tmp_path / "released.csv"))
    tick_orange(dialog)  # exactly the sample's rare categories are orange: ticked
    assert dialog.start()
    return dialog


@pytest.mark.parametrize("answer", ["No", "Yes"])
def test_closing_the_window_during_a_release_asks_first(qtbot, window, tmp_path, monkeypatch, answer):
    import optrr_gui.main_window as mw

    asked = []

    def ask(parent, title, text, *args):
        asked.append(text)
        return getattr(QMessageBox.StandardButton, answer)

    monkeypatch.setattr(mw.QMessageBox, "question", ask)
    dialog = start_stalled_release(window, tmp_path, monkeypatch)
    qtbot.waitUntil(lambda: "stalled while writing" in dialog.progress_label.text(), timeout=WAIT_MS)
    window.close()
    assert asked and "release is running" in asked[-1]
    if answer == "No":
        assert window.isVisible() and dialog.result_state == "running"  # nothing stopped
        dialog.cancel()
        window.runner.cancel_all()
    else:
        assert not window.isVisible()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    if answer == "Yes":  # the release was cancelled, not finished, and left nothing under the output name
        assert dialog.result_state == "cancelled" and not os.path.exists(dialog.output_path)
