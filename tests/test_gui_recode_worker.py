"""Recoding a column with many categories (issue 14): the work runs in a worker process while the window's event
loop keeps turning, the result is exactly the engine's synchronous recoding applied as ONE state change and one
undo step, and cancelling (or an edit of the column meanwhile) leaves the session unchanged.

The gated tests hold the job mid-recoding with a threading.Event, which cannot be sent to a process: their job
runs in the runner's worker thread (its fallback for what cannot be pickled), where the gate can reach it."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from optrr_engine.release.recode import group_rare, merge
from optrr_gui.design.column_panel import RECODE_WORKER_MIN
from optrr_gui.state.config_bridge import category_counts
from tests.test_gui_support import WAIT_MS, close_window, open_window, wait_ready

DISTINCT = RECODE_WORKER_MIN + 500


@pytest.fixture
def window(qtbot, tmp_path):
    """A file whose column ``code`` has DISTINCT values (most of them in fewer than 5 rows), perturbed over all
    of them, selected in the table."""
    rng = np.random.default_rng(3)
    rows = np.concatenate([np.arange(DISTINCT), rng.integers(0, 40, 3000)])
    path = tmp_path / "codes.csv"
    path.write_text("code,sex\n" + "".join(f"K{c:05d},{'FM'[c % 2]}\n" for c in rows), encoding="utf-8")
    w = open_window(qtbot, tmp_path, str(path))
    qtbot.waitUntil(lambda: "code" in w.summaries, timeout=WAIT_MS)
    values = [str(v) for v in w.summaries["code"].values]
    w.state.set_column_fields(0, {"role": "perturb", "categories": values})
    w.stack.clear()
    wait_ready(qtbot, w)
    w.attributes.view.selectRow(0)
    assert w.column_panel.row == 0
    yield w
    close_window(w)


class GatedSummary:
    """The column's summary, whose first count waits until ``gate`` is set (holds the worker mid-recoding)."""

    def __init__(self, summary, gate: threading.Event):
        self._summary, self.gate, self.entered = summary, gate, threading.Event()

    def recoded(self, recode):
        self.entered.set()
        assert self.gate.wait(WAIT_MS / 1000)
        return self._summary.recoded(recode)

    def __getattr__(self, name):
        return getattr(self._summary, name)


def gate_the_worker(window) -> tuple[threading.Event, GatedSummary]:
    panel = window.column_panel
    gate = threading.Event()
    gated = GatedSummary(panel.summaries["code"], gate)
    panel.summaries = {**panel.summaries, "code": gated}
    return gate, gated


def test_grouping_rare_categories_runs_off_the_ui_thread_and_equals_the_engine(qtbot, window):
    state, panel = window.state, window.column_panel
    summary = window.summaries["code"]
    before = list(state.columns[0].categories)
    expected_recode, expected_categories, expected_merged = group_rare(None, before, summary.recoded(None), 5, "Other")
    heard = []
    state.subscribe(lambda *event: heard.append(event))
    gate, gated = gate_the_worker(window)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(gated.entered.is_set()))
    timer.start(1)
    steps = window.stack.count()
    with qtbot.waitSignal(panel.recodeFinished, timeout=WAIT_MS) as finished:
        panel.start_recode("group_rare", {"min_rows": 5, "label": "Other"})
        assert state.columns[0].categories == before  # nothing applied yet: the work is on the worker
        assert panel.recode_running() and panel.recode_cancel.isVisibleTo(panel)
        # the UI thread's event loop keeps turning while the worker is inside the recoding
        qtbot.waitUntil(lambda: ticks.count(True) >= 3, timeout=WAIT_MS)
        assert state.columns[0].categories == before
        gate.set()
    timer.stop()
    assert finished.args == [expected_merged]
    col = state.columns[0]
    assert col.recode == expected_recode and col.categories == expected_categories
    assert heard == [("column", 0, "categories")]  # recode and categories: one state change
    assert window.stack.count() == steps + 1
    assert window.stack.undoText() == f"group {len(expected_merged)} rare categories of code into 'Other'"
    assert category_counts(state).counts[0] == len(expected_categories)
    assert not panel.recode_cancel.isVisibleTo(panel)
    shown = panel.categories
    assert [shown.model().labels[r] for r in range(shown.count())] == expected_categories
    other = expected_categories.index("Other")
    assert shown.text(other) == f"Other   ({summary.recoded(expected_recode)['Other']:,} rows, " + (
        f"{100 * summary.recoded(expected_recode)['Other'] / summary.present:.1f}%)")
    window.stack.undo()
    assert state.columns[0].categories == before and state.columns[0].recode is None
    assert shown.count() == len(before)
    assert category_counts(state).counts[0] == len(before)


def test_cancelling_a_recoding_leaves_the_session_unchanged(qtbot, window):
    state, panel = window.state, window.column_panel
    before = (list(state.columns[0].categories), state.columns[0].recode)
    version, steps = state.data_version, window.stack.count()
    gate, gated = gate_the_worker(window)
    with qtbot.waitSignal(panel.recodeCancelled, timeout=WAIT_MS):
        panel.start_recode("group_rare", {"min_rows": 5, "label": "Other"})
        assert gated.entered.wait(WAIT_MS / 1000)
        panel.cancel_recode()
    gate.set()
    wait_ready(qtbot, window)
    assert (state.columns[0].categories, state.columns[0].recode) == before
    assert state.data_version == version and window.stack.count() == steps
    assert not panel.recode_running() and not panel.recode_cancel.isVisibleTo(panel)


def test_a_recoding_outdated_by_an_edit_of_the_column_is_not_applied(qtbot, window):
    state, panel = window.state, window.column_panel
    gate, gated = gate_the_worker(window)
    with qtbot.waitSignal(panel.recodeCancelled, timeout=WAIT_MS):
        panel.start_recode("group_rare", {"min_rows": 5, "label": "Other"})
        assert gated.entered.wait(WAIT_MS / 1000)
        gate.set()  # the result reaches the window at its next event-loop turn, after this edit:
        edited = state.columns[0].categories[1:]
        state.set_column_value(0, "categories", edited)  # the column changes while the worker recodes it
    assert state.columns[0].categories == edited and state.columns[0].recode is None
    assert "changed meanwhile" in panel.recode_status.text()


def test_merging_many_categories_from_the_worker_equals_the_engine(qtbot, window):
    state, panel = window.state, window.column_panel
    before = list(state.columns[0].categories)
    labels = before[5:2005]
    expected = merge(None, before, labels, "Merged")
    with qtbot.waitSignal(panel.recodeFinished, timeout=WAIT_MS) as finished:
        panel.start_recode("merge", {"labels": labels, "new_label": "Merged"})
    assert finished.args == [labels]
    assert (state.columns[0].recode, state.columns[0].categories) == expected
    assert window.stack.undoText().startswith("merge '")


def test_a_recoding_runs_in_a_worker_process_and_its_counts_reach_the_window(qtbot, window, monkeypatch):
    """The window does not count the recoded column again: the rows per released category come back with the
    result (counted in the worker process; a count in this process would show up in the spy)."""
    import optrr_engine.release.recode as recode_module

    state, panel = window.state, window.column_panel
    summary = window.summaries["code"]
    before = list(state.columns[0].categories)
    expected_recode, expected_categories, _ = group_rare(None, before, summary.recoded(None), 5, "Other")
    expected_counts = recode_module.recode_counts(summary.values, summary.counts, expected_recode)
    counted_here = []
    original = recode_module.recode_counts
    monkeypatch.setattr(
        recode_module, "recode_counts", lambda *a: counted_here.append(a[2]) or original(*a)
    )
    with qtbot.waitSignal(panel.recodeFinished, timeout=WAIT_MS):
        panel.start_recode("group_rare", {"min_rows": 5, "label": "Other"})
    wait_ready(qtbot, window)
    assert state.columns[0].recode == expected_recode and state.columns[0].categories == expected_categories
    assert summary.recoded(expected_recode) == expected_counts
    shown = panel.categories
    other = expected_categories.index("Other")
    assert shown.text(other).startswith(f"Other   ({expected_counts['Other']:,} rows")
    assert counted_here == []  # neither the job nor the list or the warnings counted in this process


def test_a_refused_recoding_in_the_worker_says_why_and_changes_nothing(qtbot, window):
    """Bad input (a new name that is already another category) is refused by the engine in the worker
    process: its message reaches the panel and the session, undo stack included, stays as it was."""
    state, panel = window.state, window.column_panel
    before = (list(state.columns[0].categories), state.columns[0].recode)
    steps = window.stack.count()
    labels = before[0][5:2005]
    taken = before[0][0]
    panel.start_recode("merge", {"labels": labels, "new_label": taken})
    qtbot.waitUntil(lambda: panel.bins_error.isVisibleTo(panel) and not panel.recode_running(), timeout=WAIT_MS)
    assert f"{taken!r} is already a category" in panel.bins_error.text()
    assert (state.columns[0].categories, state.columns[0].recode) == before
    assert window.stack.count() == steps


def test_grouping_rare_categories_counts_the_missing_value_category_with_its_empty_cells():
    """Empty cells are counted apart in a column's summary; the category they are released as ('NA', 50 rows)
    is not rare and stays (it was merged into 'Other' as if it had 0 rows)."""
    from optrr_engine.release.column_stats import ColumnSummary
    from optrr_gui.state.session import ColumnState
    from optrr_gui.workers.jobs.recode import recode_column

    summary = ColumnSummary("c", ["a", "b", "c", "?"], [200, 100, 2, 3], missing=50)
    col = ColumnState(name="c", role="perturb", categories=["a", "b", "c", "NA"], missing_values=["?"])
    result = recode_column(col, summary, "group_rare", {"min_rows": 5, "label": "Other"})
    assert result.merged == ["c"] and result.categories == ["a", "b", "NA", "Other"]
    few = ColumnSummary("c", ["a", "b", "c"], [200, 100, 2], missing=1)
    result = recode_column(col, few, "group_rare", {"min_rows": 5, "label": "Other"})
    # a rare missing-value category is not grouped: a missing value is not a value (grouping it, then treating
    # 'Other' as missing, left a column without a design: a review); its warning says allow it or drop the column
    assert result.merged == ["c"] and result.categories == ["a", "b", "NA", "Other"]


def test_the_list_counts_each_column_state_once_a_recoding_undone_and_redone_counts_nothing_again(
    qtbot, window, monkeypatch
):
    """The rows per category of the recoded column come back with the worker's result (counted there); the list
    keeps the last states' rows, so an undo and a redo of the recoding count nothing on the UI thread, and show
    what the engine's rule counts."""
    import optrr_gui.design.column_panel as panel_module
    from optrr_gui.workers.jobs.recode import released_counts

    state, panel = window.state, window.column_panel
    summary = window.summaries["code"]
    before = list(state.columns[0].categories)
    counted_here = []
    monkeypatch.setattr(
        panel_module, "released_counts", lambda *a: counted_here.append(a[2]) or released_counts(*a)
    )
    with qtbot.waitSignal(panel.recodeFinished, timeout=WAIT_MS):
        panel.start_recode("group_rare", {"min_rows": 5, "label": "Other"})
    wait_ready(qtbot, window)
    col = state.columns[0]
    recoded = released_counts(col, summary, col.recode)
    shown = panel.categories
    assert [shown.text(r) for r in range(shown.count())] == [
        f"{c}   ({recoded.get(c, 0):,} rows, {100 * recoded.get(c, 0) / summary.present:.1f}%)" for c in col.categories
    ]
    for step in (window.stack.undo, window.stack.redo, window.stack.undo):
        step()
        wait_ready(qtbot, window)
        col = state.columns[0]
        rows = released_counts(col, summary, col.recode)
        assert [shown.text(r) for r in range(shown.count())] == [
            f"{c}   ({rows.get(c, 0):,} rows, {100 * rows.get(c, 0) / summary.present:.1f}%)" for c in col.categories
        ]
    assert state.columns[0].categories == before
    assert counted_here == []  # the worker counted the recoded state; the list kept the one before
    assert len(panel._rows) <= panel_module.ROWS_KEPT
