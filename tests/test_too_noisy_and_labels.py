"""One vocabulary for a table's error, the engine's rules only (GUI review of a 309-row release at whole-record
epsilon 0.2: the Analyse tab showed GENDER as "52.4 % / 47.6 %", standard error 142 %, with no warning, while the
Design tab called every column "no information" by a 50-point rule of its own):

- "no information" = ``MarginalError.no_information``; "too noisy" = ``MarginalError.too_noisy`` (the unbiased
  estimate's predicted cell standard deviation reaches MAX_CELL_SD: its intervals span everything);
- ``estimate_information`` says "too noisy" (``too_noisy``, ``too_noisy_warning``) to ``optrr estimate``,
  ``optrr analyze`` and the Analyse tab; the Design tab's per-column label follows both rules;
- the Design tab says why the recommended design is not one before it (erased needed tables, no information);
- counts of rows and records have their plurals, and a prediction of the rows reporting a table says it is one.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from optrr_engine.estimation.release_estimate import open_release
from optrr_engine.utility.identifiability import MAX_CELL_SD
from optrr_engine.utility.release_check import estimate_information
from optrr_gui.state.design_summary import DesignSummary, recommendation_text
from tests.test_uninformative_tables import PAIR, ROWS, release, run

#: In the weak release (whole-record 0.15 over 4 columns, 288 rows) this column's table has some information but
#: the unbiased estimate's standard error is above 100 points.
NOISY = "doors"
TOO_NOISY_HEAD = f"at {ROWS} rows the unbiased estimate of ({NOISY}) has a standard error of about "


@pytest.fixture
def weak(tmp_path, capsys, audit_dir, developer) -> str:
    return release(tmp_path, capsys, "weak", target_total=0.15)


def test_estimate_information_says_a_table_is_too_noisy(weak):
    manifest, mechanism = open_release(weak)
    info = estimate_information(manifest, mechanism, [NOISY])
    assert info["too_noisy"] is True and info["no_information"] is False
    sentence = info["too_noisy_warning"]
    assert sentence.startswith(TOO_NOISY_HEAD) and "uninformative" not in info
    points = float(sentence[len(TOO_NOISY_HEAD) :].split(" ")[0].replace(",", ""))
    assert points >= 100 * MAX_CELL_SD
    assert sentence.endswith(" percentage points: its intervals span everything; the shown estimate leans on the prior")
    unbiased = estimate_information(manifest, mechanism, [NOISY], "unbiased")["too_noisy_warning"]
    assert unbiased.endswith("its intervals span everything; the estimate is mostly randomization noise")
    tests = estimate_information(manifest, mechanism, [NOISY], "tests")["too_noisy_warning"]
    assert tests.endswith("the tests have little power: a large p-value says little about independence")
    # without information: too noisy as well, but only the stronger sentence
    pair = estimate_information(manifest, mechanism, PAIR)
    assert pair["no_information"] and pair["too_noisy"] and "too_noisy_warning" not in pair


def test_a_well_informed_table_is_not_too_noisy(tmp_path, capsys, audit_dir, developer):
    strong = release(tmp_path, capsys, "strong")
    manifest, mechanism = open_release(strong)
    info = estimate_information(manifest, mechanism, [NOISY])
    assert info["too_noisy"] is False and "too_noisy_warning" not in info


def test_optrr_estimate_prints_the_too_noisy_warning(weak, capsys):
    _, err = run(capsys, "estimate", weak, "--marginal", NOISY)
    assert f"optrr: warning: {TOO_NOISY_HEAD}" in err and "the shown estimate leans on the prior" in err
    out, err = run(capsys, "estimate", weak, "--marginal", NOISY, "--json")
    info = json.loads(out)["info"]
    assert info["too_noisy"] is True and f"optrr: warning: {info['too_noisy_warning']}" in err


def test_optrr_analyze_prints_the_too_noisy_warning(weak, capsys, monkeypatch):
    """The pair of the weak release has no information (its sentence is the other one): the test's output is given
    a too-noisy sentence to print, as chi2_release gives it from estimate_information."""
    import optrr_engine.analysis.release_chi2 as release_chi2

    real = release_chi2.chi2_release

    def too_noisy(*args, **kw):
        out = real(*args, **kw)
        out.pop("uninformative", None)
        out["too_noisy_warning"] = "TOO NOISY SENTENCE"
        return out

    monkeypatch.setattr(release_chi2, "chi2_release", too_noisy)
    _, err = run(capsys, "analyze", weak, "--chi2", ",".join(PAIR))
    assert "optrr: warning: TOO NOISY SENTENCE" in err
    monkeypatch.undo()
    out, _ = run(capsys, "analyze", weak, "--chi2", ",".join(PAIR), "--json")
    assert json.loads(out)["too_noisy"] is True  # from estimate_information, beside no_information


def test_the_analyse_tab_shows_the_too_noisy_warning(qtbot, window, weak):
    from optrr_gui.main_window import TAB_ANALYSE
    from optrr_gui.workers.jobs.analyse import estimate_task

    window.tabs.setCurrentIndex(TAB_ANALYSE)
    view = window.analyse_view
    result = estimate_task(weak, [NOISY], None, "map", 0.95, open_release(weak))  # the Analyse tab's job
    assert result["estimate"].info["too_noisy"]
    view._estimated(result)
    text = view.result_label.text()
    assert f"warning: {TOO_NOISY_HEAD}" in text and "the shown estimate leans on the prior" in text
    assert f"estimate from {ROWS} perturbed rows," in text


# -- the Design tab's per-column label ----------------------------------------------------------------------------
def test_the_design_tabs_column_label_follows_the_engines_rules(qtbot, tmp_path):
    """Binary columns, 400 rows, ε 0.01 / 0.04 / 0.2: no information (the data remove 0.2 % of the prior's
    spread), too noisy (standard error 125 points, 3 % information), and a number (± 25 pp). Too noisy starts at a
    standard error of 50 points (MAX_CELL_SD, since 2026-11-27: a 95 % interval is then wider than [0, 1]); ε 0.07
    (± 71.5 pp) was shown as a number under the former 100-point rule."""
    from optrr_engine.utility.predicted import predicted_error
    from optrr_gui.design.mechanism_panel import STATE_TEXTS, STATE_TIPS
    from optrr_gui.state.design_summary import NO_INFORMATION, TOO_NOISY, column_state
    from tests.test_gui_design_wording import ERROR, binary_file, show
    from tests.test_gui_support import open_window, wait_ready

    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    window.state.set_column_values(range(3), "epsilon", [0.01, 0.04, 0.2])
    wait_ready(qtbot, window)
    show(qtbot, window, "auto")
    s = window.controller.current()["auto"]
    errors = predicted_error(s.design.mechanism, 400, {"orders": [1]}).marginals
    assert [column_state(e) for e in errors] == [NO_INFORMATION, TOO_NOISY, ""]
    table = window.mechanism.attributes
    cells = [table.item(r, ERROR) for r in range(3)]
    assert [c.text() for c in cells[:2]] == [STATE_TEXTS[NO_INFORMATION], STATE_TEXTS[TOO_NOISY]]
    assert cells[0].text() == "no information" and cells[1].text() == "too noisy"
    assert cells[0].toolTip().startswith(STATE_TIPS[NO_INFORMATION]) and "± 500.0 pp" in cells[0].toolTip()
    assert cells[1].toolTip().startswith(STATE_TIPS[TOO_NOISY]) and "± 125.0 pp" in cells[1].toolTip()
    assert cells[2].text() == f"± {100 * s.standard_errors[2]:.1f} pp" and 20 < 100 * s.standard_errors[2] < 50
    assert cells[2].toolTip() == ""


# -- why the recommendation -----------------------------------------------------------------------------------------
def summary(method: str, avd: float, erased=(), no_information: bool = False) -> DesignSummary:
    """A computed design with its predicted error (default estimate) and the needed tables it erases."""
    erased = [list(a) for a in erased]
    return DesignSummary(
        method=method,
        ok=True,
        predicted_avd=avd,
        predicted_rank=(len(erased), avd),
        erased=erased,
        non_identifiable=erased,
        no_information=no_information,
    )


ORDER = ("auto", "optimal", "classes", "family", "heuristic", "kronecker", "utility", "smp", "sample-2")


def test_the_recommendation_says_which_designs_before_it_erase_needed_tables():
    designs = {
        "auto": summary("auto", 0.10, erased=[(1, 2)]),
        "optimal": summary("optimal", 0.10, erased=[(1, 2)]),
        "classes": summary("classes", 0.11, erased=[(1, 2)]),
        "kronecker": summary("kronecker", 0.30),
        "sample-2": summary("sample-2", 0.20),
    }
    assert recommendation_text(designs, "sample-2", ORDER, True) == (
        "Recommended: Sample-2 (2 columns per row): Auto, Optimal and Classes erase needed tables at this ε"
    )
    # a design with no information, and one erasing alone
    designs["heuristic"] = summary("heuristic", 0.05, no_information=True)
    del designs["optimal"], designs["classes"]
    assert recommendation_text(designs, "sample-2", ORDER, True) == (
        "Recommended: Sample-2 (2 columns per row): Auto erases needed tables at this ε; Heuristic has no "
        "information at this number of rows"
    )


def test_the_recommendation_line_is_absent_when_the_top_design_is_recommended():
    designs = {"auto": summary("auto", 0.10), "kronecker": summary("kronecker", 0.30, erased=[(1, 2)])}
    assert recommendation_text(designs, "auto", ORDER, True) == ""  # Kronecker: after it, and worse alone
    # erased but after it and with a larger error alone: not a reason; equal predictions neither
    designs["sample-2"] = summary("sample-2", 0.10 * (1 + 1e-5), erased=[(1, 2)])
    assert recommendation_text(designs, "auto", ORDER, True) == ""
    # per-column mode: erased designs are not kept from the recommendation (the ranking is by ε)
    designs = {"auto": summary("auto", 0.05, erased=[(1, 2)]), "kronecker": summary("kronecker", 0.30)}
    assert recommendation_text(designs, "kronecker", ORDER, False) == ""
    assert recommendation_text(designs, None, ORDER, True) == ""


def test_the_status_line_shows_why_the_recommendation(qtbot, tmp_path):
    """The mechanism panel's status line carries the line (the controller's summaries stand in for an edit that
    made the exact designs erase needed tables)."""
    from tests.test_gui_design_wording import binary_file
    from tests.test_gui_support import open_window

    window = open_window(qtbot, tmp_path, binary_file(tmp_path))
    panel, c = window.mechanism, window.controller
    current = c.current()
    assert "auto" in current and "kronecker" in current
    for method, s in current.items():
        erased = [] if method == "kronecker" else [[1, 2]]
        s.predicted_rank, s.predicted_avd = (len(erased), 0.30 if method == "kronecker" else 0.10), 0.10
        s.erased = s.non_identifiable = erased
    c.request["budget_mode"] = True
    panel.refresh()
    assert c.recommended() == "kronecker"
    text = panel.status_line.text()
    assert text.startswith("Recommended: Kronecker (independent RR): Auto, ")
    assert text.endswith(" erase needed tables at this ε")


# -- counts and plurals -----------------------------------------------------------------------------------------------
def sampled_reporting(reporting: int, total: int) -> str:
    """The sentence an estimate from an SMP release of ``total`` rows says on the ``reporting`` rows that sampled
    column 'sex' (what ``optrr estimate`` prints after the sampling design)."""
    import numpy as np

    from optrr_engine.estimation.sampled import estimate_sampled_codes
    from optrr_engine.sampling import NOT_REPORTED, make_sampling_design

    released = np.full((total, 3), NOT_REPORTED)
    released[:reporting, 0] = 0  # the reporting rows sampled 'sex', the others the second column
    released[reporting:, 1] = 0
    est = estimate_sampled_codes(make_sampling_design("smp", [2, 3, 2], 1.0), released, [0], attributes=["sex"])
    return est.info["reporting"]


def test_one_record_reports_in_the_singular():
    from optrr_engine.estimation.estimate import few_rows, few_rows_head

    assert few_rows_head(1, 4) == "only 1 record reports this table for 4 cells (fewer than 5 per cell)"
    assert few_rows(1, 4).startswith("only 1 record reports this table for 4 cells")
    assert few_rows_head(3, 1).startswith("only 3 records report this table for 1 cell ")
    assert sampled_reporting(1, 309).startswith("1 of 309 records reports sex (")
    assert sampled_reporting(7, 309).startswith("7 of 309 records report sex (")


def test_the_analyse_tab_says_which_rows_an_estimate_comes_from():
    from optrr_gui.analyse.view import rows_text

    sampled = SimpleNamespace(rows=1, info={"records_total": 309, "records_reporting_all": 1})
    assert rows_text(sampled) == "the 1 of 309 perturbed rows that reports this table"
    assert rows_text(SimpleNamespace(rows=5, info={"records_total": 309})) == (
        "the 5 of 309 perturbed rows that report this table"
    )
    assert rows_text(SimpleNamespace(rows=309, info={})) == "309 perturbed rows"
    assert rows_text(SimpleNamespace(rows=1, info={})) == "1 perturbed row"


def test_the_rows_expected_to_report_a_table_are_called_a_prediction():
    from optrr_engine.sampling import make_sampling_design
    from optrr_engine.utility.release_check import uninformative_notes

    design = make_sampling_design("sample-m", [4, 4, 3, 3], 0.2, m=2)
    names = ["buying", "doors", "lug_boot", "safety"]
    (note,) = uninformative_notes(design, names, [PAIR], ROWS)
    assert "at 288 rows (the design expects about 48 of them to report this table): its estimate" in note
    (one,) = uninformative_notes(design, names, [PAIR], 1)
    assert "at 1 row (the design expects about 0.17 of them to report this table)" in one
