"""Design tab, mechanism side (GUI review on stroke.csv, total budget 2): a design whose needed tables all carry no
information says so in its row and is recommended only when no design has information (then flagged); in
total-budget mode the changed ε are told against the ε from weights, with the digits that show the change; while
the designs recompute, the caption, chart, change list
and column table show one design of one request, marked as computing for the new one."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from optrr_engine.utility.predicted import ties_with
from optrr_gui.design import mechanism_panel as mp
from optrr_gui.design.controller import DesignController
from optrr_gui.design.mechanism_panel import (
    ACHIEVED_COL,
    AVD_COL,
    CHANGED_COL,
    KRON_COL,
    REQUESTED_COL,
    MechanismPanel,
    fmt_avd,
)
from optrr_gui.state.design_summary import DesignSummary, changes_text, may_recommend, recommend
from optrr_gui.state.session import ColumnState, SessionState
from optrr_gui.workers.runner import TaskRunner

WAIT_MS = 120_000
#: stroke.csv as reviewed: ten perturbed columns (categories), 5,110 rows, whole-record target 2, equal weights.
NAMES = ["gender", "age", "hypertension", "heart_disease", "ever_married", "work_type", "avg_glucose_level", "bmi"]
NAMES += ["smoking_status", "stroke"]
SIZES = [3, 4, 2, 2, 2, 5, 4, 5, 4, 2]
ROWS = 5110


@pytest.fixture
def panel(qtbot):
    state = SessionState()
    cols = [ColumnState(n, categories=[str(v) for v in range(a)]) for n, a in zip(NAMES, SIZES, strict=True)]
    state.load_columns(None, {}, cols, ROWS)
    state.budget_mode, state.target_total = True, 2.0
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    panel = MechanismPanel(controller)
    qtbot.addWidget(panel)
    panel.resize(900, 900)
    panel.show()
    controller.recompute()
    idle(qtbot, panel)
    yield panel
    runner.cancel_all()
    runner.wait_for_done(30_000)


def idle(qtbot, panel) -> None:
    """Every design of the current request computed and drawn, details included."""
    c = panel.controller
    qtbot.waitUntil(lambda: c.is_idle() and not c.running() and not panel.drawing_pending(), timeout=WAIT_MS)
    panel.flush()


def cells(table, row: int) -> list[str]:
    return [table.item(row, col).text() for col in range(table.columnCount())]


def test_a_design_whose_needed_tables_carry_no_information_says_so_in_its_row_and_is_not_recommended(panel):
    c = panel.controller
    s = c.current()["heuristic"]
    assert s.no_information and s.needed_tables == 55  # 10 one-way + 45 two-way tables, none estimable
    assert not c.current()["auto"].no_information
    row = panel._rows.index("heuristic")
    item = panel.designs.item(row, AVD_COL)
    assert item.text() == "no information" and not item.icon().isNull()
    assert panel.designs.item(row, KRON_COL).text() == "—"  # no "+25 % error" of estimates that say nothing
    for col in range(panel.designs.columnCount()):  # the whole row greyed
        brush = panel.designs.item(row, col).data(Qt.ItemDataRole.ForegroundRole)
        assert brush is not None and brush.color() == QColor(140, 140, 140)
    tip = item.toolTip()
    assert "No information" in tip and "Recommended only when no design computed has information" in tip
    assert f"Predicted AVD {fmt_avd(s.predicted_avd)}" in tip and "% error vs. Kronecker" in tip  # numbers kept
    # not recommended while a design with information qualifies, even one it would rank before
    assert c.recommended() != "heuristic" and "★" not in item.text()
    assert not may_recommend(s, budget_mode=True)
    assert recommend({"heuristic": s, "kronecker": c.current()["kronecker"]}, budget_mode=True) == "kronecker"
    first = replace(s, predicted_rank=(0, 0.0), overall_epsilon=0.001)  # ranks first by every key but information
    assert recommend({"heuristic": first, "kronecker": c.current()["kronecker"]}, budget_mode=True) == "kronecker"


def test_when_no_design_has_information_the_best_of_them_is_recommended_as_the_engine_ranks_them_and_flagged(panel):
    """The engine's recommend() ranks a design without information as if it erased every needed table
    (PredictedError.rank_key), so when all lack it, it still recommends the best of them: so does the window."""
    c = panel.controller
    s = c.current()["heuristic"]
    assert recommend({"heuristic": s}, budget_mode=True) == "heuristic"
    # every design without information, ranked by the engine's key (erased-as-all first, then the predicted error)
    needed = s.needed_tables
    none = {m: replace(x, no_information=True, predicted_rank=(needed, x.predicted_rank[1]))
            for m, x in c.current().items() if x.ok and x.releasable and x.predicted_rank is not None}
    assert len(none) >= 3
    first = min(none.values(), key=lambda x: x.predicted_rank).predicted_rank
    best = recommend(none, budget_mode=True)
    # the best key, or one tying it within RANK_TOLERANCE (the engine's lead_with_ties: the lower epsilon first)
    assert best in none and ties_with(first, none[best].predicted_rank)
    ties = [m for m, x in none.items() if ties_with(first, x.predicted_rank)]
    assert all(none[best].overall_epsilon <= none[m].overall_epsilon * (1 + 1e-9) for m in ties)
    c.summaries.update(none)  # the window's own flag: the status line under the table
    assert c.recommended() == best
    status = panel.status_text(c.recommended(), c.chosen())
    assert "No design computed has information" in status and mp.METHOD_LABELS.get(best, best) in status


def test_total_budget_changes_are_told_against_the_epsilon_from_weights_with_the_digits_that_show_them(qtbot, panel):
    c = panel.controller
    s = c.current()["heuristic"]
    assert s.scale is not None and s.changes and s.scale < 0.001  # every ε from weights rounds to 0.001
    row = panel._rows.index("heuristic")
    changed = panel.designs.item(row, CHANGED_COL).text()
    assert changed == f"{len(s.changes)} above weights" and "raise" not in changed
    assert "you typed" not in panel.designs.item(row, CHANGED_COL).toolTip()
    panel.show_design("heuristic")
    idle(qtbot, panel)
    text = panel.changes.text()
    assert "ε from weights" in text and "typed" not in text
    pairs = re.findall(r"</b> ([0-9.e-]+) → ([0-9.e-]+) \(", text)
    assert len(pairs) == len(s.changes)
    for (before, after), ch in zip(pairs, s.changes, strict=True):
        assert before != after  # never "0.001 → 0.001"
        assert float(before) == pytest.approx(ch["requested"], rel=5e-3)
        assert float(after) == pytest.approx(ch["achieved"], rel=5e-3)
    table = panel.attributes
    for i in s.changed_attributes:
        assert table.item(i, REQUESTED_COL).text() != table.item(i, ACHIEVED_COL).text()
    assert table.item(0, REQUESTED_COL).text() == f"{s.requested[0]:#.3g}"  # 0.000691, not 0.001


def test_changed_epsilons_keep_the_per_column_wording_and_get_the_digits_that_differ():
    s = DesignSummary(
        method="heuristic",
        ok=True,
        changes=[
            {"attribute": 0, "requested": 1.0, "achieved": 1.2},
            {"attribute": 1, "requested": 1, "achieved": 0.5},
        ],
    )
    assert changes_text(s) == "raises 1, lowers 1"  # ε per column: against the ε typed
    s.scale = 0.5
    assert changes_text(s) == "1 above, 1 below weights"
    assert mp.fmt_change(0.000691, 0.000959) == ("0.000691", "0.000959")
    assert mp.fmt_change(0.5, 0.7) == ("0.500", "0.700")  # as everywhere from 0.01 on
    before, after = mp.fmt_change(0.5, 0.50004)
    assert before != after


def test_while_designs_recompute_everything_shown_is_one_design_of_one_request_marked_as_stale(qtbot, panel):
    c = panel.controller
    method = panel.shown_method
    old = c.summaries[method]
    assert c.request["target_total"] == 2.0 and "computing" not in panel.shown_label.text()
    c.state.target_total = 500.0
    c.recompute()  # the new request is out; no result of it can have arrived (they come through the event loop)
    panel.refresh()
    panel.flush()
    assert c.is_stale(method) and c.summaries[method] is old
    assert panel.shown_method == method  # the design shown does not jump to another stale row
    header = panel.shown_label.text()
    assert "computing for the new target ε = 500" in header and "the result for target ε = 2" in header
    assert "target ε = 2." in panel.changes.text() and "500" not in panel.changes.text()
    assert panel.chart.values == (old.requested, old.achieved)
    assert [cells(panel.attributes, i)[0] for i in range(panel.attributes.rowCount())] == NAMES
    assert panel._chart_fade.isEnabled() and panel.attributes.styleSheet()  # greyed

    idle(qtbot, panel)
    new = c.summaries[panel.shown_method]
    assert not c.is_stale(panel.shown_method) and c.request["target_total"] == 500.0
    assert "computing" not in panel.shown_label.text() and "500" in panel.changes.text()
    assert panel.chart.values == (new.requested, new.achieved)
    assert not panel._chart_fade.isEnabled() and not panel.attributes.styleSheet()


def test_the_caption_is_drawn_with_the_chart_and_table_of_the_same_design(qtbot, panel):
    c = panel.controller
    panel.show_design("kronecker")
    idle(qtbot, panel)
    kron, heur = c.current()["kronecker"], c.current()["heuristic"]
    assert panel.shown_label.text().startswith("<b>Kronecker")
    with qtbot.waitSignal(panel.detailsDrawn, timeout=WAIT_MS):
        panel.show_design("heuristic")
        # not drawn yet: the caption still names the design whose bars and columns are shown
        assert panel.chart.values == (kron.requested, kron.achieved)
        assert panel.shown_label.text().startswith("<b>Kronecker")
    assert panel.chart.values == (heur.requested, heur.achieved)
    assert panel.shown_label.text().startswith("<b>Heuristic")
    assert cells(panel.attributes, 5)[ACHIEVED_COL] == f"{heur.achieved[5]:#.3g}"
