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


@pytest.fixture
def panel(qtbot):
    state = SessionState()
    cols = [ColumnState(f"c{i}", categories=[str(v) for v in range(a)]) for i, a in enumerate([3, 4, 2, 5])]
    state.load_columns(None, {}, cols, 400)
    runner = TaskRunner()
    controller = DesignController(state, runner, lambda: [len(c.categories) for c in state.perturbed_columns()])
    panel = MechanismPanel(controller)
    qtbot.addWidget(panel)
    controller.recompute()
    qtbot.waitUntil(lambda: controller.is_idle() and not panel.redraw_pending(), timeout=WAIT_MS)
    panel.flush()
    yield panel
    runner.cancel_all()
    runner.wait_for_done(30_000)


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
