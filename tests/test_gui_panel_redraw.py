"""The mechanism panel redraws once per batch of changes (issue 12: one redraw per state change, not one per
design result or progress message), and a redraw leaves alone what it shows already (real engine designs)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optrr_gui.design.controller import DesignController
from optrr_gui.design.mechanism_panel import MechanismPanel
from optrr_gui.state.session import ColumnState, SessionState
from optrr_gui.workers.runner import TaskRunner

WAIT_MS = 60_000


def computed_panel(qtbot, epsilons=None):
    """A mechanism panel over 4 columns (3, 4, 2 and 5 categories, 400 rows; ``epsilons``: their ε), every design
    computed and drawn: a generator for a fixture (the runner's tasks cancelled after it)."""
    state = SessionState()
    cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(a)]) for i, a in enumerate([3, 4, 2, 5])]
    state.load_columns(None, {}, cols, 400)
    if epsilons is not None:
        state.set_column_values(range(4), "epsilon", epsilons)
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    panel = MechanismPanel(controller)
    qtbot.addWidget(panel)
    controller.recompute()
    qtbot.waitUntil(lambda: controller.is_idle() and not panel.drawing_pending(), timeout=WAIT_MS)
    panel.flush()
    yield panel
    runner.cancel_all()
    runner.wait_for_done(30_000)


@pytest.fixture
def panel(qtbot):
    yield from computed_panel(qtbot)


def counted(panel) -> list:
    redraws: list = []
    panel.redrawn.connect(lambda: redraws.append(1))
    return redraws


def idle(qtbot, panel) -> None:
    c = panel.controller
    qtbot.waitUntil(lambda: c.is_idle() and not panel._refresh_timer.isActive(), timeout=WAIT_MS)


def test_changes_arriving_together_are_drawn_once(qtbot, panel):
    c = panel.controller
    redraws = counted(panel)
    for method in ("kronecker", "heuristic", "optimal"):  # results of one request, then progress, in one turn
        c.summaries[method] = replace(c.summaries[method])  # a new result object
        c.changed.emit()
    c.progress["auto"] = (0.5, "half way")
    c.changed.emit()
    idle(qtbot, panel)
    assert len(redraws) == 1
    rows = [panel.designs.item(r, 0).text() for r in range(panel.designs.rowCount())]
    assert any(text.startswith("★") for text in rows)


def test_an_edit_is_drawn_with_its_new_results_and_states_only_changes_are_drawn_once(qtbot, panel):
    c = panel.controller
    redraws = counted(panel)
    c.state.set_column_value(0, "epsilon", 0.4)
    idle(qtbot, panel)
    assert redraws  # (how many depends on when the results arrive; the bursts below are counted exactly)
    panel.flush()
    eps = [panel.designs.item(r, 1).text() for r in range(panel.designs.rowCount())]
    assert all(e != "—" for e in eps)
    shown = c.summaries[panel.shown_method]
    assert shown.requested[0] == pytest.approx(0.4) and not c.is_stale(panel.shown_method)
    assert panel.chart.values[1] == pytest.approx(shown.achieved)
    redraws.clear()
    for _ in range(5):  # states only (e.g. progress of a slow design): one redraw for the burst
        c.changed.emit()
    assert not panel.redraw_pending()  # no new result waits
    idle(qtbot, panel)
    assert len(redraws) == 1


def test_a_redraw_that_shows_nothing_new_touches_no_cell(qtbot, panel):
    changed: list = []
    for table in (panel.designs, panel.attributes):
        table.model().dataChanged.connect(lambda *_a: changed.append(1))
    items = [panel.designs.item(r, c) for r in range(panel.designs.rowCount()) for c in range(6)]
    panel.refresh()
    assert changed == []
    assert items == [panel.designs.item(r, c) for r in range(panel.designs.rowCount()) for c in range(6)]
    # one column's ε: only that row of the column table changes (every column of the shown design keeps its
    # typed ε, and a column's expected error depends on its own ε and categories only)
    rows: list = []
    panel.attributes.model().dataChanged.connect(
        lambda top, bottom, *_a: rows.extend(range(top.row(), bottom.row() + 1))
    )
    panel.controller.state.set_column_value(2, "epsilon", 0.3)
    idle(qtbot, panel)
    panel.flush()
    assert set(rows) == {2}
    assert panel.attributes.item(2, 2).text() == "0.300"
    assert [panel.attributes.item(i, 2).text() for i in (0, 1, 3)] == ["1.000"] * 3


def test_a_bulk_role_change_is_one_request_and_the_details_are_drawn_after_the_design_table(qtbot):
    """Perturbing 30 dropped columns at once: one design request per design (one submission per channel), the
    design table drawn first and the shown design's column table and chart at later turns of the event loop,
    each newly shown result drawn there once (issue 14: the bulk edit's UI work spread over turns)."""
    from PySide6.QtGui import QUndoStack

    from optrr_gui.common.commands import set_many
    from optrr_gui.design.controller import channel_of

    state = SessionState()
    cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(2 + i % 4)], role="drop") for i in range(30)]
    state.load_columns(None, {}, cols, 1000)
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    panel = MechanismPanel(controller)
    qtbot.addWidget(panel)
    stack = QUndoStack()
    submitted: list = []
    submit = runner.submit
    runner.submit = lambda channel, *a, **k: (submitted.append(channel), submit(channel, *a, **k))[1]
    at_redraw: list = []  # (shown summary, details drawn for it already?) at each redraw of the design table
    panel.redrawn.connect(lambda: at_redraw.append((panel._details[0], not panel._detail_steps)))
    drawn: list = []  # (shown summary, column-table rows, chart values) each time the details were drawn
    panel.detailsDrawn.connect(
        lambda: drawn.append((panel._details[0], panel.attributes.rowCount(), list(panel.chart.values[1])))
    )
    set_many(stack, state, range(30), "role", "perturb")
    assert stack.count() == 1
    qtbot.waitUntil(lambda: controller.is_idle() and not panel.drawing_pending(), timeout=WAIT_MS)
    try:
        designs = [m for m in controller.methods if m != "clusters"]  # clusters needs a file: answered at once
        assert sorted(submitted) == sorted(channel_of(m) for m in designs)  # one request, one job per design
        shown = [s for s, _ in at_redraw if s is not None and s.ok]
        assert shown, "no design was shown"
        # a newly shown result is never drawn in the same turn as the design table ...
        new = [
            done for i, (s, done) in enumerate(at_redraw) if s is not None and (i == 0 or s is not at_redraw[i - 1][0])
        ]
        assert new and not any(new)
        # ... but afterwards, once per shown result, with every column
        last = controller.summaries[panel.shown_method]
        assert drawn[-1][0] is last and drawn[-1][1] == 30 and drawn[-1][2] == pytest.approx(last.achieved)
        results = [s for s, *_ in drawn if s is not None]
        assert len(results) == len({id(s) for s in results})
        assert [panel.attributes.item(i, 0).text() for i in range(30)] == [f"c{i}" for i in range(30)]
    finally:
        runner.cancel_all()
        runner.wait_for_done(30_000)
