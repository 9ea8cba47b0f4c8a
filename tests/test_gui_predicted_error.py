"""The design table's predicted error (issue 13): the column, the non-identifiable marginals, and the budget-mode
recommendation by predicted error (Qt-free state and jobs; real engine designs)."""

import math

from optrr_engine.budget import distribute_budget
from optrr_engine.utility import predicted_error
from optrr_gui.design.mechanism_panel import DESIGN_COLUMNS, fmt_avd
from optrr_gui.state.design_summary import recommend
from optrr_gui.state.needed_marginals import describe, label_index_sets
from optrr_gui.workers.jobs.design import compute_design


def test_summary_carries_the_engine_prediction_and_names_erased_pairs():
    request = {"budget_mode": True, "epsilons": [1, 1, 1], "weights": [1.0] * 3, "target_total": 1.5}
    opt = compute_design("optimal", [2, 2, 2], request, 5000)
    kron = compute_design("kronecker", [2, 2, 2], request, 5000)
    assert opt.ok and sorted(opt.non_identifiable) == [[1, 2], [1, 3], [2, 3]] and math.isinf(opt.predicted_avd)
    mech = distribute_budget("kronecker", [2, 2, 2], [1.0] * 3, 1.5).design.mechanism
    assert kron.predicted_avd == predicted_error(mech, 5000, {"orders": [1, 2]}).score()
    assert kron.predicted_orders == "1/2-way" and kron.non_identifiable == []
    # budget mode: every design meets the target, so the one with the least predicted error is recommended
    assert recommend({"optimal": opt, "kronecker": kron}, True) == "kronecker"
    assert "Predicted AVD" in DESIGN_COLUMNS


def test_per_column_mode_keeps_the_exact_eps_recommendation():
    request = {"budget_mode": False, "epsilons": [0.5, 0.5, 0.5], "weights": [1.0] * 3, "target_total": 1.0}
    opt = compute_design("optimal", [2, 2, 2], request, 5000)
    kron = compute_design("kronecker", [2, 2, 2], request, 5000)
    assert opt.predicted_avd is not None and kron.predicted_avd is not None
    assert recommend({"optimal": opt, "kronecker": kron}, False) == "optimal"  # lowest whole-record epsilon


def test_panel_shows_the_predicted_error_column(qtbot):
    from optrr_gui.design.controller import DesignController
    from optrr_gui.design.mechanism_panel import MechanismPanel
    from optrr_gui.state.session import ColumnState, SessionState
    from optrr_gui.workers.runner import TaskRunner

    state = SessionState()
    cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(a)]) for i, a in enumerate([3, 4, 2])]
    state.load_columns(None, {}, cols, 400)
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    panel = MechanismPanel(controller)
    qtbot.addWidget(panel)
    try:
        controller.recompute()
        qtbot.waitUntil(controller.is_idle, timeout=60_000)
        panel.flush()
        col = DESIGN_COLUMNS.index("Predicted AVD")
        for row, method in enumerate(panel._rows):  # the rows in display order
            s = controller.current().get(method)
            if s is not None and s.ok and s.predicted_avd is not None:
                text = panel.designs.item(row, col).text()
                expected = "not identifiable" if s.erased else None
                assert text == (expected or fmt_avd(s.predicted_avd) + (" ⚠" if s.non_identifiable else ""))
    finally:
        runner.cancel_all()
        runner.wait_for_done(30_000)


def test_tables_are_named_in_parentheses():
    """User-facing text lists tables as "(gender, age)", not with a Python set's braces."""
    names = ["gender", "age", "work_type"]
    assert label_index_sets([[1, 2], [1, 3], [2, 3]], names, 2) == "(gender, age), (gender, work_type) and 1 more"
    assert describe({"orders": [], "sets": [["gender", "age"]]}, 3) == "(gender, age)"


def test_the_predicted_avd_header_explains_itself_in_plain_words(qtbot):
    from optrr_gui.design.controller import DesignController
    from optrr_gui.design.mechanism_panel import MechanismPanel
    from optrr_gui.state.session import SessionState
    from optrr_gui.workers.runner import TaskRunner

    state = SessionState()
    panel = MechanismPanel(DesignController(state, TaskRunner(), lambda: []))
    qtbot.addWidget(panel)
    item = panel.designs.horizontalHeaderItem(DESIGN_COLUMNS.index("Predicted AVD"))
    assert item.text() == "Predicted\nerror"  # short and plain; the tooltip says it is the AVD
    tip = item.toolTip()
    assert "average distance between the estimated and the true table" in tip
    assert "half the sum of absolute differences" in tip and "0.05 ≈ 5 % of the records in the wrong cell" in tip
    assert "before release from the design and the row count" in tip


def test_a_design_computed_for_an_older_row_count_has_only_its_own_error_recomputed(qtbot):
    """A design that comes back computed for fewer rows than are now known gets its predicted error recomputed for
    the current count; the designs already up to date are not predicted again (each such prediction held the
    worker's GIL while a 77-column file opened)."""
    from dataclasses import replace

    from optrr_gui.design.controller import DesignController
    from optrr_gui.state.session import ColumnState, SessionState
    from optrr_gui.workers.runner import TaskRunner

    state = SessionState()
    cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(a)]) for i, a in enumerate([3, 4, 2])]
    state.load_columns(None, {}, cols, 400)
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    try:
        controller.recompute()
        qtbot.waitUntil(controller.is_idle, timeout=60_000)
        done = [m for m, s in controller.current().items() if s.ok]
        assert len(done) >= 2
        calls = []
        controller._repredict = lambda method, summary, key, n_rows: calls.append((method, n_rows))
        method = done[0]
        controller._done(method, controller.key, 200, replace(controller.summaries[method]))
        assert calls == [(method, 400)]
    finally:
        runner.cancel_all()
