"""GUI review 20 (a genotype file of 34 perturbed columns): switching from the whole-record budget to ε per column
kept the stale ε written when the file was opened, a dropped column's side panel showed a stale greyed ε, the ε
slider's hint was garbled, and the Compare tab's target box wrote ε with other decimals than the design table."""

from __future__ import annotations

import pytest

from optrr_gui.common.widgets import fmt_eps
from optrr_gui.design.epsilon_editor import EPSILON_HINT, NO_VALUE, EpsilonEditor, rounded_down
from optrr_gui.main_window import TAB_COMPARE
from tests.test_gui_design_wording import binary_file
from tests.test_gui_support import WAIT_MS, close_window, open_window

TARGET = 10.0


def budget_window(qtbot, tmp_path, k: int = 4):
    """A file opened with the safe start (a whole-record budget, each column at SAFE_START_TARGET / k), the budget
    raised to TARGET and every design computed for it."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=k, with_id=True), safe_start=True)
    window.resize(1280, 800)
    assert window.state.budget_mode
    window.attributes.target.setValue(TARGET)
    c = window.controller
    qtbot.waitUntil(lambda: c.is_idle() and c.request.get("target_total") == TARGET, timeout=WAIT_MS)
    return window


# -- 1. the switch to ε per column ------------------------------------------------------------------------------------
def test_switching_to_per_column_starts_each_column_at_the_epsilon_the_budget_gave_it(qtbot, tmp_path):
    """Before: only the mode flipped; every column jumped back to the safe start's ε (3 / k) and the greyed
    whole-record field still read the budget."""
    window = budget_window(qtbot, tmp_path)
    try:
        state, c, panel = window.state, window.controller, window.attributes
        stale = [col.epsilon for col in state.perturbed_columns()]
        method = c.chosen()
        summary = c.current()[method]
        if summary.scale is None:  # a design choosing its own ε: the best one splitting the budget by weights
            summary = next(s for s in c.current().values() if s.ok and s.scale is not None)
        from_budget = [rounded_down(e) for e in summary.requested]  # the design table's "ε from weights"
        assert from_budget != stale
        steps = window.stack.count()

        panel.per_column.click()
        assert not state.budget_mode
        assert [col.epsilon for col in state.perturbed_columns()] == from_budget
        assert window.stack.count() == steps + 1 and window.stack.undoText() == "switch to ε per column"
        qtbot.waitUntil(lambda: c.is_idle() and not c.request.get("budget_mode"), timeout=WAIT_MS)
        per_column = c.current()[c.chosen()]
        assert per_column.overall_epsilon <= TARGET * (1 + 1e-9)  # rounded down: within the budget that gave them
        # the greyed field: what the per-column ε give, not the budget
        qtbot.waitUntil(lambda: panel.target.text() == f"whole-record ε {fmt_eps(per_column.overall_epsilon)}")
        assert not panel.target.isEnabled()

        window.stack.undo()  # one step back: the budget with the ε before
        assert state.budget_mode and state.target_total == TARGET
        assert [col.epsilon for col in state.perturbed_columns()] == stale
        assert panel.target.text() == "whole-record ε 10.000" and panel.target.isEnabled()
        window.stack.redo()
        assert not state.budget_mode and [col.epsilon for col in state.perturbed_columns()] == from_budget
    finally:
        close_window(window)


def test_the_whole_record_field_shows_no_number_while_the_per_column_designs_compute(qtbot, tmp_path):
    """Before: the greyed field kept the budget (10.000) whatever the columns' ε gave."""
    window = budget_window(qtbot, tmp_path, k=3)
    try:
        panel, c = window.attributes, window.controller
        panel.per_column.click()
        assert panel.target.text() == f"whole-record ε {NO_VALUE}"  # the designs of these ε have not answered yet
        qtbot.waitUntil(lambda: c.is_idle() and not c.request.get("budget_mode"), timeout=WAIT_MS)
        qtbot.waitUntil(lambda: NO_VALUE not in panel.target.text(), timeout=WAIT_MS)
        assert panel.target.text() == f"whole-record ε {fmt_eps(c.current()[c.chosen()].overall_epsilon)}"
    finally:
        close_window(window)


# -- 2. a dropped column has no ε --------------------------------------------------------------------------------------
def test_a_dropped_column_shows_no_epsilon_in_the_side_panel(qtbot, tmp_path):
    """Before: the dropped identifier's panel showed a greyed "ε 0.0882" and a slider at it."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path, with_id=True))
    try:
        state, side = window.state, window.column_panel
        dropped = next(i for i, col in enumerate(state.columns) if col.role == "drop")
        perturbed = state.perturbed_indices()[0]
        side.show_column(dropped)
        assert not side.epsilon.isEnabled() and not side.epsilon.shows_value()
        assert side.epsilon.spin.text() == NO_VALUE and not side.epsilon.slider.isVisible()
        side.show_column(perturbed)
        assert side.epsilon.shows_value() and side.epsilon.slider.isVisible()
        assert side.epsilon.spin.text() == f"ε {state.columns[perturbed].epsilon:.3f}"
        window.attributes.set_roles([perturbed], "drop")  # the column shown becomes dropped
        assert side.epsilon.spin.text() == NO_VALUE
        window.stack.undo()
        assert side.epsilon.spin.text() == f"ε {state.columns[perturbed].epsilon:.3f}"
    finally:
        close_window(window)


def test_an_editor_disabled_only_with_its_parent_keeps_its_value(qtbot):
    editor = EpsilonEditor()
    qtbot.addWidget(editor)
    editor.setValue(0.5)
    editor.show()
    editor.setEnabled(False)
    assert editor.spin.text() == NO_VALUE
    editor.setValue(0.7)  # a value set while blank is kept, not shown
    assert editor.spin.text() == NO_VALUE and editor.value() == 0.7
    editor.setEnabled(True)
    assert editor.spin.text() == "ε 0.700" and editor.slider.isVisible()
    from PySide6.QtWidgets import QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    editor.setParent(parent)
    parent.setEnabled(False)  # (a busy window): still the value
    assert editor.spin.text() == "ε 0.700"


def test_rounded_down_keeps_the_editor_decimals_and_never_rounds_up():
    assert rounded_down(1.1585768950586368) == 1.158
    assert rounded_down(1.159) == 1.159
    assert rounded_down(0.004) == 0.01  # the editor's minimum
    assert rounded_down(80.0) == 50.0  # and maximum


# -- 3. the slider's hint ----------------------------------------------------------------------------------------------
def test_the_epsilon_hint_reads_cleanly(qtbot):
    """Before: "◀ more private · lower = more private · more accurate ▶"."""
    editor = EpsilonEditor()
    qtbot.addWidget(editor)
    assert editor.hint.text() == EPSILON_HINT == "◀ lower = more private · higher = more accurate ▶"
    assert editor.hint.text().count("more private") == 1


# -- 4. the Compare tab's target box -----------------------------------------------------------------------------------
def test_the_compare_target_writes_epsilon_as_the_design_table(qtbot, tmp_path):
    """Before: "ε 8.21" beside the design table's 8.210 (two decimals)."""
    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    try:
        c = window.controller
        window.tabs.setCurrentIndex(TAB_COMPARE)
        page = window.compare_view.designs
        page.follow_design()
        overall = c.current()[c.chosen()].overall_epsilon
        assert page.target.text() == f"ε {fmt_eps(overall)}"
        assert page.target.value() == pytest.approx(overall, abs=5e-4)
        page.target.setValue(8.21)
        assert page.target.text() == "ε 8.210"
    finally:
        close_window(window)


def test_the_switch_never_starts_from_a_result_for_other_category_counts():
    """An adversarial review: during the designs' debounce after a recoding, the kept result (for the old category
    counts) gave the per-column ε. A result whose sizes differ from the columns' now is not used."""
    from types import SimpleNamespace

    from optrr_gui.design.attribute_table import budget_epsilons
    from optrr_gui.state.design_summary import DesignSummary
    from optrr_gui.state.session import ColumnState, SessionState

    state = SessionState()
    state.columns = [ColumnState(name=n, role="perturb", type="nominal", epsilon=1.0, categories=["a", "b", "c"])
                     for n in ("x", "y")]
    state.budget_mode, state.target_total = True, 2.0
    old = DesignSummary(method="kronecker", ok=True, overall_epsilon=2.0, requested=[0.9, 1.1], achieved=[0.9, 1.1],
                        scale=0.9, target=2.0, names=["x", "y"], sizes=[5, 3])
    controller = SimpleNamespace(
        request={"weights": state.weights()}, current=lambda: {"kronecker": old}, chosen=lambda: "kronecker",
        sizes_fn=lambda: [3, 3],
    )
    assert budget_epsilons(state, controller) == [1.0, 1.0]  # Kronecker's split, not the stale 0.9 / 1.1
    controller.sizes_fn = lambda: [5, 3]
    assert budget_epsilons(state, controller) == [0.9, 1.1]  # the result for these counts


def test_per_column_mode_says_why_utility_and_the_sampling_rows_are_gone(qtbot, tmp_path):
    """A newcomer's review: after the switch to ε per column, Utility and the sampling designs left the design
    table without a word. The mechanism heading says they need a total budget."""
    from optrr_gui.design.mechanism_panel import PER_COLUMN_MODE
    from optrr_gui.state.design_summary import BUDGET_ONLY_METHODS
    from tests.test_gui_support import close_window, open_window, wait_ready

    window = open_window(qtbot, tmp_path, binary_file(tmp_path, k=3))
    try:
        window.attributes.per_column.setChecked(True)
        wait_ready(qtbot, window)
        window.mechanism.flush()
        assert window.mechanism.title.text().endswith(PER_COLUMN_MODE)
        assert "Utility and the sampling designs need a total budget" in PER_COLUMN_MODE
        assert set(BUDGET_ONLY_METHODS) >= {"utility", "smp"}
        window.attributes.total.setChecked(True)
        wait_ready(qtbot, window)
        window.mechanism.flush()
        assert window.mechanism.title.text().endswith("total budget")
    finally:
        close_window(window)
