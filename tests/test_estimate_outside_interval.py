"""A shown (default) estimate outside its interval, which belongs to the unbiased estimate, is counted and said in
words (engine), marked in the Analyse table and the CLI (a cell showed "10.9 % [26.6 % - 100.0 %]" unexplained)."""

from __future__ import annotations

import numpy as np

from optrr_engine.estimation.result import MarginalEstimate


def estimate_with(point, low, high) -> MarginalEstimate:
    point, low, high = (np.asarray(x, dtype=float).reshape(2, 2) for x in (point, low, high))
    return MarginalEstimate(
        sizes=(2, 2), method="map", estimate=point, unbiased=point, std_error=np.full((2, 2), 0.1), ci_low=low,
        ci_high=high, confidence=0.95, rows=40, observed=np.full((2, 2), 10), attributes=["a", "b"],
        categories=[["x", "y"], ["u", "v"]],
    )


def test_cells_outside_their_interval_are_counted_and_said():
    est = estimate_with([0.109, 0.3, 0.3, 0.291], [0.266, 0.1, 0.1, 0.1], [1.0, 0.5, 0.5, 0.5])
    assert est.outside_interval.tolist() == [[True, False], [False, False]]
    assert est.outside_interval_note.startswith("in 1 cell the map estimate lies outside the interval")
    assert est.to_json_dict()["cells_outside_their_interval"] == 1
    inside = estimate_with([0.25] * 4, [0.2] * 4, [0.3] * 4)
    assert not inside.outside_interval.any() and inside.outside_interval_note == ""


def test_analyse_marks_the_cell_and_says_why(qtbot, window):
    from optrr_gui.analyse.view import OUTSIDE_MARK
    from optrr_gui.main_window import TAB_ANALYSE

    window.tabs.setCurrentIndex(TAB_ANALYSE)  # built on first use
    view = window.analyse_view
    est = estimate_with([0.109, 0.3, 0.3, 0.291], [0.266, 0.1, 0.1, 0.1], [1.0, 0.5, 0.5, 0.5])
    view._estimated({"estimate": est, "chi2": None})
    assert view.table.item(0, 0).text().startswith(OUTSIDE_MARK)
    assert not view.table.item(0, 1).text().startswith(OUTSIDE_MARK)
    text = view.result_label.text()
    assert "outside the interval" in text and "read such cells as unknown" in text


def test_the_unbiased_estimate_outside_its_cut_interval_is_said_for_what_it_is():
    est = estimate_with([-0.06, 0.4, 0.4, 0.26], [0.0, 0.2, 0.2, 0.1], [0.586, 0.6, 0.6, 0.4])
    est.method = "unbiased"
    note = est.outside_interval_note
    assert note.startswith("in 1 cell the unbiased estimate is below 0 or above 1") and "disagree" not in note
