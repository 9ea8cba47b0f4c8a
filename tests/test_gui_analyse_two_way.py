"""The Analyse tab's two-way table. (1) The Wald test's p-value is the result, shown prominently; Pearson's test on
the released counts, when not valid for the release, was shown right below in the same style (p = 8.61e-08 beside
the Wald test's 0.807, with a small "NOT a valid test here"): now only a grey "why no Pearson test?" line, whose
explanation (with its numbers) opens on a click; when it is valid (independent perturbation) it is listed below,
smaller. Negative cells are said in words with the right plural. (2) Row and column shares ("stroke rate among
hypertensive patients"), from the shown estimate.

Screenshots go to OPTRR_SCREENSHOTS (a folder) when it is set."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QUrl

from optrr_engine.estimation.result import MarginalEstimate
from optrr_gui.analyse.view import WHY_NOT, AnalyseView, negative_note
from tests.test_gui_analyse_kept_and_bins import screenshot

#: hypertension x stroke as the reviewer's release estimated it (joint shares).
JOINT = [[0.790, 0.026], [0.142, 0.042]]
INVALID = (
    "NOT a valid test here: this mechanism perturbs the two attributes jointly, so perturbed values are associated "
    "even when the true values are independent"
)


def estimate(point=JOINT, method="map", unbiased=None) -> MarginalEstimate:
    point = np.asarray(point, dtype=float)
    return MarginalEstimate(
        sizes=(2, 2),
        method=method,
        estimate=point,
        unbiased=point if unbiased is None else np.asarray(unbiased),
        std_error=np.full((2, 2), 0.02),
        ci_low=np.clip(point - 0.05, 0, 1),
        ci_high=np.clip(point + 0.05, 0, 1),
        confidence=0.95,
        rows=5110,
        observed=np.full((2, 2), 1277),
        attributes=["hypertension", "stroke"],
        categories=[["0", "1"], ["0", "1"]],
    )


def chi2_dict(pearson_valid: bool) -> dict:
    wald = {
        "test": "wald_on_unbiased_estimate",
        "statistic": 0.056,
        "dof": 1,
        "p_value": 0.807,
        "valid": True,
        "assumes": "records are independent; uses the covariance of the unbiased estimate",
        "p_value_method": "simulated: the share of 999 simulated releases",
    }
    pearson = {
        "test": "pearson_on_perturbed_counts",
        "statistic": 28.664,
        "dof": 1,
        "p_value": 8.61e-08,
        "valid": pearson_valid,
        "assumes": "valid test of independence here: the mechanism perturbs these two attributes independently"
        if pearson_valid
        else INVALID,
    }
    return {"tests": [wald, pearson], "recommended": "wald_on_unbiased_estimate"}


@pytest.fixture
def view(qtbot):
    v = AnalyseView(SimpleNamespace(runner=None, settings=None))
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    return v


def test_only_the_wald_result_is_shown_and_an_invalid_pearson_test_is_behind_why_not(qtbot, view):
    view._estimated({"estimate": estimate(), "chi2": chi2_dict(pearson_valid=False)})
    text = view.tests.toPlainText()
    assert "Wald test on the estimated table (accounts for the randomization) — recommended: p = 0.807" in text
    assert "Why no Pearson test?" in text
    assert "Assumes: records are independent; uses the covariance" in text  # its assumption, labelled as one
    assert "8.61e-08" not in text and "28.664" not in text and "NOT a valid test" not in text
    html = view.tests.toHtml()
    assert "font-size:large" in html and html.count("font-size:large") == 1  # one result stands out
    screenshot(view, "analyse_two_way_tests.png")
    view.tests.anchorClicked.emit(QUrl(f"{WHY_NOT}pearson_on_perturbed_counts"))  # the "why not" line clicked
    assert view.why_open == {"pearson_on_perturbed_counts"}
    text = view.tests.toPlainText()
    assert INVALID in text and "p = 8.61e-08" in text and "says nothing reliable about the true data" in text
    assert "#888888" in view.tests.toHtml()  # greyed
    screenshot(view, "analyse_two_way_why_not_pearson.png")
    view.tests.anchorClicked.emit(QUrl(f"{WHY_NOT}pearson_on_perturbed_counts"))
    assert view.why_open == set() and "8.61e-08" not in view.tests.toPlainText()


def test_a_new_estimate_closes_the_why_not_explanation(qtbot, view):
    view._estimated({"estimate": estimate(), "chi2": chi2_dict(pearson_valid=False)})
    view.tests.anchorClicked.emit(QUrl(f"{WHY_NOT}pearson_on_perturbed_counts"))
    view._estimated({"estimate": estimate(), "chi2": chi2_dict(pearson_valid=False)})
    assert view.why_open == set() and "8.61e-08" not in view.tests.toPlainText()


def test_a_valid_pearson_test_is_listed_below_the_wald_test_as_also_valid(qtbot, view):
    view._estimated({"estimate": estimate(), "chi2": chi2_dict(pearson_valid=True)})
    text = view.tests.toPlainText()
    assert text.index("p = 0.807") < text.index("Also valid here: Pearson test on the released counts as they are")
    assert "p = 8.61e-08" in text and "Why no" not in text
    assert view.tests.toHtml().count("font-size:large") == 1


def test_with_too_few_rows_the_wald_result_says_it_is_not_reliable(qtbot, view):
    chi2 = chi2_dict(pearson_valid=False)
    chi2.update(recommended=None, warning="only 11 records report this table for 22 cells")
    chi2["tests"][0]["valid"] = False
    view._estimated({"estimate": estimate(), "chi2": chi2})
    text = view.tests.toPlainText()
    assert "only 11 records report this table" in text and "recommended" not in text
    assert "Wald test on the estimated table (accounts for the randomization): p = 0.807 — not reliable" in text
    assert "8.61e-08" not in text and "Why no Pearson test?" in text


def test_negative_cells_are_said_in_words_with_the_right_plural(qtbot, view):
    assert negative_note(0) == ""
    assert negative_note(1) == (
        "in 1 cell the unbiased estimate (behind the intervals) is below zero: the share is small and the "
        "randomization's noise larger; its interval says how large it may be"
    )
    assert negative_note(2).startswith("in 2 cells the unbiased estimate") and "their intervals" in negative_note(2)
    view._estimated({"estimate": estimate(unbiased=[[0.8, -0.01], [0.22, -0.01]]), "chi2": None})
    label = view.result_label.text()
    assert (
        "negative cells" not in label
        and "in 2 cells the unbiased estimate (behind the intervals) is below zero" in label
    )
    view._estimated({"estimate": estimate(unbiased=[[0.8, -0.01], [0.2, 0.01]]), "chi2": None})
    assert "in 1 cell the unbiased" in view.result_label.text()


def cell_texts(view) -> list[list[str]]:
    return [
        [view.table.item(i, j).text() for j in range(view.table.columnCount())] for i in range(view.table.rowCount())
    ]


def test_row_and_column_shares_come_from_the_shown_estimate(qtbot, view):
    view._estimated({"estimate": estimate(), "chi2": chi2_dict(pearson_valid=False)})
    assert view.shares_row.isVisible() and view.shares.currentData() == "joint" and not view.shares_note.isVisible()
    assert cell_texts(view)[1][1].startswith("4.2 %  [")  # joint share with its interval
    assert view.shares.itemText(1) == "row shares (stroke within each hypertension)"
    view.shares.setCurrentIndex(view.shares.findData("row"))
    # stroke among hypertensive patients: 0.042 / (0.142 + 0.042)
    assert cell_texts(view) == [["96.8 %", "3.2 %"], ["77.2 %", "22.8 %"]]
    tip = view.table.item(1, 1).toolTip()
    assert tip.startswith("stroke = 1 among the records with hypertension = 1: 22.8 % = 4.2 % of all records")
    assert "from the smoothed maximum likelihood estimate shown" in tip and "no interval" in tip
    assert view.shares_note.isVisible() and "Each row sums to 100 %" in view.shares_note.text()
    screenshot(view, "analyse_two_way_row_shares.png")
    view.shares.setCurrentIndex(view.shares.findData("column"))
    assert cell_texts(view) == [["84.8 %", "38.2 %"], ["15.2 %", "61.8 %"]]
    assert "Each column sums to 100 %" in view.shares_note.text()
    view.shares.setCurrentIndex(view.shares.findData("joint"))
    assert cell_texts(view)[1][1].startswith("4.2 %  [") and view.shares_note.text() == ""


def test_the_shares_choice_is_only_offered_for_a_two_way_table(qtbot, view):
    view._estimated({"estimate": estimate(), "chi2": None})
    assert view.shares_row.isVisible()
    one = MarginalEstimate(
        sizes=(2,),
        method="map",
        estimate=np.array([0.9, 0.1]),
        unbiased=np.array([0.9, 0.1]),
        std_error=np.full(2, 0.01),
        ci_low=np.array([0.85, 0.05]),
        ci_high=np.array([0.95, 0.15]),
        confidence=0.95,
        rows=100,
        observed=np.array([80, 20]),
        attributes=["stroke"],
        categories=[["0", "1"]],
    )
    view._estimated({"estimate": one, "chi2": None})
    assert not view.shares_row.isVisible()
    view.clear_results()
    assert not view.shares_row.isVisible()


def test_a_row_without_a_positive_sum_has_no_row_shares(qtbot, view):
    view._estimated({"estimate": estimate([[0.0, 0.0], [0.6, 0.4]], method="unbiased"), "chi2": None})
    view.shares.setCurrentIndex(view.shares.findData("row"))
    assert cell_texts(view) == [["—", "—"], ["60.0 %", "40.0 %"]]


def test_a_one_way_estimate_whose_prior_the_release_lowered_says_so(qtbot, view, tmp_path):
    """The Analyse tab's estimate (its worker job, run here in the test's thread) of a column of mushroom's SMP
    release: the label says that the release's columns together lowered the uniform prior (engine's words)."""
    from optrr_gui.workers.jobs.analyse import estimate_task
    from tests.test_estimation_pooled_prior import release

    out, _ = release(tmp_path, "smp", 2.0)
    result = estimate_task(str(out), ["odor"], None, "map", 0.95, None)
    note = result["estimate"].info["prior_lowered"]
    view._estimated(result)
    assert note in view.result_label.text()
    screenshot(view, "analyse_prior_lowered.png")
