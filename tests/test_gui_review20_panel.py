"""GUI review 20 (snpassoc_snps.csv: 34 perturbed columns, 561 needed 2-way tables): the mechanism panel's
redraws stay linear in the number of needed tables, the column table's Expected-error header says that its
numbers are one standard error, and a design's "not available" reason names the other designs as the table's
rows do (no command-line options)."""

from __future__ import annotations

from itertools import combinations

import pytest

from optrr_gui.common.widgets import fmt_pp
from optrr_gui.design.mechanism_panel import (
    CHANGED_COL,
    ERROR_COL,
    short_reason,
)
from optrr_gui.state.design_summary import DesignSummary, design_wording, short_label
from optrr_gui.workers.jobs.design import compute_design
from tests.test_gui_panel_redraw import computed_panel

WAIT_MS = 60_000
#: ε that no design of the heuristic's family reaches (tests/test_clearer_errors.py): Family is not available.
OUT_OF_FAMILY = [0.5, 0.5, 0.5, 3.0]


@pytest.fixture
def panel(qtbot):
    """A mechanism panel over 4 columns whose ε the heuristic's family cannot meet, every design computed."""
    yield from computed_panel(qtbot, OUT_OF_FAMILY)


class Counted(list):
    """A needed table (1-based columns) that counts how often it is compared with another."""

    comparisons = 0

    def __eq__(self, other):
        Counted.comparisons += 1
        return list.__eq__(self, other)

    __hash__ = None  # (a list)


def snp_like(k: int = 34) -> DesignSummary:
    """A design with every 2-way table of k columns needed and unusable at these rows, those of column 1 with
    columns 3..k erased (as RS+FD on snpassoc_snps.csv: 561 needed 2-way tables)."""
    tables = [Counted([i, j]) for i, j in combinations(range(1, k + 1), 2)]
    erased = [Counted(t) for t in tables if t[0] == 1 and t[1] > 2]
    return DesignSummary(
        method="rsfd",
        ok=True,
        overall_epsilon=3.0,
        requested=[0.1] * k,
        achieved=[0.1] * k,
        predicted_avd=0.4,
        needed_tables=len(tables),
        non_identifiable=tables,
        erased=erased,
        names=[f"snp{i}" for i in range(k)],
        sizes=[3] * k,
    )


# -- 1. the UI thread while a wide file opens --------------------------------------------------------------------
def test_too_noisy_is_linear_in_the_number_of_needed_tables():
    """DesignSummary.too_noisy tested list membership in a loop: 561 x 33 list comparisons each time, asked by
    every row's tooltip at every redraw (~0.5 s of the UI thread per open of snpassoc_snps.csv). Fails before
    the fix (17,000+ comparisons)."""
    s = snp_like()
    Counted.comparisons = 0
    noisy = s.too_noisy
    assert Counted.comparisons <= len(s.non_identifiable)
    assert len(noisy) == 561 - 32
    assert [1, 2] in noisy and [2, 3] in noisy and all(t not in noisy for t in ([1, j] for j in range(3, 35)))
    # tuples and lists alike (a summary read back from a project holds either)
    s.erased = [tuple(t) for t in s.erased]
    assert len(s.too_noisy) == 561 - 32


def test_a_redraw_with_561_unusable_tables_compares_no_tables_pairwise(qtbot, panel):
    """The whole redraw of the design table (every row's tooltip and the status line) with a design that has 561
    unusable needed tables: linear in them, and the tooltip still counts the too-noisy ones right. Fails before
    the fix."""
    c = panel.controller
    s = snp_like()
    c.summaries["heuristic"] = s  # (shown in the heuristic's row: a current result of this request)
    Counted.comparisons = 0
    panel.refresh()
    assert Counted.comparisons <= 10 * len(s.non_identifiable)
    row = panel._rows.index("heuristic")
    assert "Too noisy at 400 rows for confidence intervals (529)" in panel.designs.item(row, 0).toolTip()


# -- 2. the Expected-error column says what its number is ------------------------------------------------------
def test_the_expected_error_header_says_one_standard_error(qtbot, panel):
    """The cells hold one standard error ("± 5.6 pp"), while the Analyse tab shows 95 % intervals: the header
    said "Expected error" and only its tooltip said "one standard error". Fails before the fix."""
    header = panel.attributes.horizontalHeaderItem(ERROR_COL)
    assert "1 s.e." in header.text()
    assert "95 %" in header.toolTip()  # what it is not
    s = panel.controller.summaries[panel.shown_method]
    panel.flush()
    assert panel.attributes.item(0, ERROR_COL).text() == fmt_pp(s.standard_errors[0])  # the number unchanged


def test_the_vs_kronecker_header_says_both_errors_are_predicted(qtbot, panel):
    """A newcomer read "-50 % error" as a measured gain; Compare measured -28 % on nursery (Kronecker's uniform-table
    prediction is pessimistic on skewed data). The header's tooltip says both are predictions and where to measure."""
    col = next(j for j in range(panel.designs.columnCount()) if panel.designs.horizontalHeaderItem(j).text()
               .startswith("vs."))
    tip = panel.designs.horizontalHeaderItem(col).toolTip()
    assert "both predicted from the designs alone" in tip and "Compare ▸ Designs at your ε measures it" in tip


# -- 3. the reasons a design is not available, in the GUI's words ------------------------------------------------
def engine_reasons() -> dict[str, str]:
    """The engine's own reasons (its CLI wording): Optimal for 34 columns, Family for ε out of its reach."""
    from optrr_engine.designs import run_design
    from optrr_engine.errors import OptRRError

    def reason(method, sizes, epsilons) -> str:
        with pytest.raises(OptRRError) as refused:
            run_design(method, sizes, epsilons)
        return str(refused.value)

    optimal = reason("optimal", [3] * 34, [1.0] * 34)
    family = reason("family", [3, 4, 2, 5], OUT_OF_FAMILY)
    # the engine (and so its command line) still says it its way
    assert "use --method heuristic, family or auto" in optimal
    assert "choose the method auto or optimal" in family
    # the window's design job words it once, where the summary is made (design_wording)
    request = {"budget_mode": False, "epsilons": [1.0] * 34, "weights": [1.0] * 34, "target_total": 1.0}
    assert compute_design("optimal", [3] * 34, request, 157).error == design_wording(optimal)
    return {"optimal": optimal, "family": family}


def test_design_wording_names_the_designs_as_the_table_does():
    reasons = engine_reasons()
    optimal, family = design_wording(reasons["optimal"]), design_wording(reasons["family"])
    names = [short_label(m) for m in ("heuristic", "family", "auto")]
    assert f"pick the {names[0]}, {names[1]} or {names[2]} design instead" in optimal
    assert f"pick the {short_label('auto')} or {short_label('optimal')} design instead" in family
    for text in (optimal, family):
        assert "--method" not in text and "the method" not in text
    assert design_wording("method heuristic cannot meet a whole-record epsilon of 3 with these weights").startswith(
        "the Heuristic design cannot meet"
    )
    assert design_wording("; use --method auto, family or smaller epsilons") == (
        "; pick the Auto or Family design instead, or use smaller ε"
    )
    assert short_reason(reasons["optimal"]) == "too many columns"
    assert (
        short_reason(
            "method family cannot meet a whole-record epsilon of 3 with these weights (no feasible "
            "design at or below it)"
        )
        == "cannot meet the target ε"
    )


def test_the_panel_shows_the_reasons_without_command_line_options(qtbot, panel):
    """The row tooltips and the text under the chart of Optimal and Family: "use --method heuristic, family or
    auto" and "choose the method auto or optimal" before. Fails before the fix."""
    c = panel.controller
    reasons = engine_reasons()
    # a summary as the window's design job makes it (worded there once, design_wording)
    c.summaries["optimal"] = DesignSummary(method="optimal", ok=False, error=design_wording(reasons["optimal"]))
    family = c.summaries["family"]
    assert not family.ok and family.error == design_wording(reasons["family"])  # computed by the panel's request
    panel.refresh()
    for method in ("optimal", "family"):
        row = panel._rows.index(method)
        tip = panel.designs.item(row, 0).toolTip()
        assert "Not available for this request:" in tip
        assert "--method" not in tip and "choose the method" not in tip, tip
        assert "--method" not in panel.designs.item(row, CHANGED_COL).text()
        panel._row_clicked(row)
        panel.flush()
        assert "--method" not in panel.changes.text() and "choose the method" not in panel.changes.text()
        assert "design instead" in panel.changes.text()
    tip = panel.designs.item(panel._rows.index("optimal"), 0).toolTip()
    assert "pick the Heuristic, Family or Auto design instead" in tip
