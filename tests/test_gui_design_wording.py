"""Wording and numbers of the Design tab (GUI review on stroke.csv): in total-budget mode the column table does not
call ε "requested" that nobody typed; an expected error of a share without information is said in words;
the predicted AVDs of a column have the same digits; a column without categories says why in words; the step-1
banner never names a whole-record ε the current settings do not give."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtGui import QUndoStack

from optrr_engine.release.schema import infer_schema
from optrr_gui.design.column_panel import ColumnPanel
from optrr_gui.design.mechanism_panel import ATTR_COLUMNS, avd_text
from optrr_gui.state.design_summary import DesignSummary, joint_note
from optrr_gui.state.session import ColumnState, SessionState
from tests.test_gui_support import WAIT_MS, open_window, wait_ready

REQUESTED, ERROR = ATTR_COLUMNS.index("Requested ε"), ATTR_COLUMNS.index("Expected error")
#: From this expected error on (percentage points of a share) the unbiased estimate's intervals span everything.
TOO_NOISY_PP = 100.0


def binary_file(tmp_path, k: int = 3, n: int = 400, with_id: bool = False) -> str:
    """k correlated binary columns (seeded; every design is quick), and with ``with_id`` an identifier first."""
    rng = np.random.default_rng(11)
    base = rng.integers(0, 2, n)
    path = tmp_path / "binary.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow((["patient_id"] if with_id else []) + [f"b{i}" for i in range(k)])
        for r in range(n):
            values = ["yes" if (base[r] ^ (rng.random() < 0.2)) else "no" for _ in range(k)]
            w.writerow(([f"P{r:05d}"] if with_id else []) + values)
    return str(path)


def show(qtbot, window, method: str) -> None:
    """The mechanism panel shows ``method``'s columns (its table and chart drawn)."""
    c = window.controller
    qtbot.waitUntil(lambda: c.is_idle() and method in c.current(), timeout=WAIT_MS)
    window.mechanism.show_design(method)
    window.mechanism.flush()


def column_table(window) -> tuple[str, list[list[str]], str]:
    """(the third column's header, the cells' texts, the sentence above the table)."""
    table = window.mechanism.attributes
    header = table.horizontalHeaderItem(REQUESTED).text()
    cells = [[table.item(r, col).text() for col in range(table.columnCount())] for r in range(table.rowCount())]
    return header, cells, window.mechanism.changes.text()


def test_total_budget_column_table_says_where_the_column_epsilons_come_from(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    show(qtbot, window, "auto")
    header, _cells, sentence = column_table(window)
    a = window.controller.current()["auto"]
    assert header == "Requested ε"  # ε per column
    assert sentence == "Every column gets exactly the ε requested." + joint_note(a.achieved, a.overall_epsilon)

    window.attributes.total.setChecked(True)
    window.attributes.target.setValue(3.0)
    c = window.controller
    qtbot.waitUntil(lambda: c.is_idle() and c.request.get("budget_mode") and not c.is_stale("utility"), timeout=WAIT_MS)
    # The utility design chooses each column's ε itself: nobody requested them.
    show(qtbot, window, "utility")
    header, cells, sentence = column_table(window)
    assert "requested" not in header.lower() and "requested" not in sentence.lower()
    assert header == "ε chosen by design"
    u = c.current()["utility"]
    assert sentence == "The design chooses each column's ε; the whole record stays within the target ε = 3." + (
        joint_note(u.achieved, u.overall_epsilon)
    )
    assert "chosen by design" in window.mechanism.shown_label.text()  # the chart's legend says the same
    # A budget design splits the target by the weights (scale c × weight).
    show(qtbot, window, "kronecker")
    header, cells, sentence = column_table(window)
    s = c.current()["kronecker"]
    assert header == "ε from weights" and "requested" not in sentence.lower()
    assert sentence.startswith(f"No column's ε was typed: each gets scale c = {s.scale:.4g} × its weight")
    assert sentence.endswith("within the target ε = 3.")
    assert [row[REQUESTED] for row in cells] == ["1.000"] * 3  # 3 / 3 columns of equal weight
    # Unequal weights: the weights are shares (divided by the largest), and the sentence says so (a review read
    # "c = 1.184 × its weight" where the weight-1 columns got 0.592 and the weight-2 one 1.184).
    window.state.set_column_values([0], "weight", [2.0])
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("kronecker"), timeout=WAIT_MS)
    show(qtbot, window, "kronecker")
    header, cells, sentence = column_table(window)
    s = c.current()["kronecker"]
    assert sentence.startswith(
        f"No column's ε was typed: each gets scale c = {s.scale:.4g} × its weight ÷ the largest weight (2)"
    )
    assert [float(row[REQUESTED]) for row in cells] == pytest.approx([s.scale, s.scale / 2, s.scale / 2], abs=1e-3)
    window.state.set_column_values([0], "weight", [1.0])
    qtbot.waitUntil(lambda: c.is_idle() and not c.is_stale("kronecker"), timeout=WAIT_MS)

    # Back to ε per column: today's wording.
    window.attributes.per_column.setChecked(True)
    qtbot.waitUntil(lambda: c.is_idle() and not c.request.get("budget_mode"), timeout=WAIT_MS)
    show(qtbot, window, "auto")
    header, _cells, sentence = column_table(window)
    a = c.current()["auto"]
    assert header == "Requested ε"
    assert sentence == "Every column gets exactly the ε requested." + joint_note(a.achieved, a.overall_epsilon)


def test_an_expected_error_without_information_is_said_in_words_with_the_number_in_the_tooltip(qtbot, tmp_path):
    """The engine's rules (tests/test_too_noisy_and_labels.py): no information, or too noisy (one standard error
    of MAX_CELL_SD = 100 pp or more), in words; no number that large is shown."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    window.state.set_column_value(0, "epsilon", 0.01)  # 400 rows: one standard error of ~500 pp
    wait_ready(qtbot, window)
    show(qtbot, window, "auto")
    s = window.controller.current()["auto"]
    assert 100 * s.standard_errors[0] > TOO_NOISY_PP and 100 * s.standard_errors[1] < TOO_NOISY_PP
    table = window.mechanism.attributes
    noisy, fine = table.item(0, ERROR), table.item(1, ERROR)
    assert noisy.text() == "no information"
    assert f"± {100 * s.standard_errors[0]:.1f} pp" in noisy.toolTip() and "whatever the data" in noisy.toolTip()
    assert fine.text() == f"± {100 * s.standard_errors[1]:.1f} pp" and fine.toolTip() == ""
    shown = [table.item(r, ERROR).text() for r in range(table.rowCount())]
    assert not any(t.startswith("± ") and float(t[2:-3]) >= TOO_NOISY_PP for t in shown)


def test_predicted_avds_have_the_same_digits():
    """3 significant digits, trailing zeros kept: "0.200 ⚠" beside "0.204", never "0.2 ⚠"."""
    for avd, noisy, expected in [
        (0.2, True, "0.200 ⚠"),
        (0.204, False, "0.204"),
        (0.17, True, "0.170 ⚠"),
        (0.0916, False, "0.0916"),
        (1.0, False, "1.00"),
    ]:
        s = DesignSummary(method="auto", ok=True, predicted_avd=avd, non_identifiable=[[1, 2]] if noisy else [])
        assert avd_text(s) == expected


def test_a_dropped_column_without_categories_says_so_in_words(qtbot, tmp_path):
    path = binary_file(tmp_path, with_id=True)
    state = SessionState()
    state.load_columns(path, {}, [ColumnState.from_config(c) for c in infer_schema(path).columns])
    assert state.columns[0].role == "drop" and state.columns[0].categories is None
    widget = ColumnPanel(state, QUndoStack())
    qtbot.addWidget(widget)
    widget.show_column(0)
    assert widget.title.text() == "patient_id — dropped, categories not listed"
    widget.show_column(1)
    assert widget.title.text() == "b0 — 2 categories"


def test_the_step_1_banner_names_no_whole_record_epsilon_the_settings_do_not_give(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, binary_file(tmp_path), safe_start=True)
    state, c, banner = window.state, window.controller, window.start_banner.label
    assert "a whole-record budget ε = 3 shared by weight" in banner.text()
    state.set_session_value("budget_mode", False)
    wait_ready(qtbot, window)
    assert "Privacy: the whole record within ε = 3 (ε 1 per column)" in banner.text()  # the proposal, unchanged
    state.set_column_values(range(3), "epsilon", [2.0] * 3)
    wait_ready(qtbot, window)
    qtbot.waitUntil(lambda: c.is_idle() and c.recommended() is not None, timeout=WAIT_MS)
    assert c.current()[c.recommended()].overall_epsilon > 3  # the settings no longer give the 3 proposed
    text = banner.text()
    assert "within ε = 3" not in text and "ε = 3" not in text
    assert "Privacy: ε 2 per column as set" in text
    state.set_column_value(0, "epsilon", 0.5)  # 2.5 + 2 = 4.5 > 3: still no whole-record claim
    wait_ready(qtbot, window)
    assert "Privacy: ε 0.5 to 2 per column as set" in banner.text() and "ε = 3" not in banner.text()
    state.set_column_values(range(3), "epsilon", [0.5, 1.0, 1.0])  # a sum of 2.5: within the 3 proposed
    wait_ready(qtbot, window)
    assert "Privacy: the whole record within ε = 3 (ε 0.5 to 1 per column)" in banner.text()


def test_the_columns_epsilons_adding_up_to_more_than_the_whole_record_are_explained():
    """A newcomer added Utility's column ε (0.494 x 4 + 0.842 x 2 + 0.686 x 2 + 0.274 = 5.31) against the target of
    3 and thought it broken; a later reviewer read "their ε add up to 5.26, more than the whole record's 3" as the
    budget broken. The note under the chart says plainly that the whole record's ε is the promise, what a column's ε
    bounds, and that the whole-record ε is computed for the columns together (not by adding)."""
    note = joint_note([0.494] * 4 + [0.842] * 2 + [0.686] * 2 + [0.274], 3.0)
    assert note == (
        " The promise is the whole record's ε, 3. Each column's ε bounds what that column reveals on its own; the "
        "whole-record ε is computed exactly for all columns together, not by adding them, so the columns' ε can sum "
        "to more (5.31) without breaking the promise."
    )
    assert "add up to" not in note and "more than the whole record's" not in note
    assert joint_note([1.0, 1.0, 1.0], 3.0) == "" and joint_note([0.5, 0.5], 1.0) == ""  # Kronecker: the sum itself
