"""One rule for the rows per released category: the GUI's count (``released_counts``, the column panel's list and
its Group rare…) is the engine's ``category_rows`` (what perturb's rare rule counts), which agrees with the codec's
labels (what perturb releases), for a column with missing values as a category, texts listed as missing values, a
recoding (of the missing-value label too), a missing-value label other than 'NA', and missing values excluded."""

from __future__ import annotations

import pytest

from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.schema import category_rows
from optrr_gui.state.config_bridge import released_rows
from optrr_gui.state.session import ColumnState
from optrr_gui.workers.jobs.recode import released_counts

#: the texts read and their rows; 4 empty cells
SUMMARY = ColumnSummary("c", ["a", "b", "?", "NA", "x", "Unknown"], [6, 2, 3, 1, 1, 2], missing=4)

CASES = {
    "missing values a category, '?' listed": (
        {"categories": ["a", "b", "x", "Unknown", "NA"], "missing_values": ["?"]},
        {"a": 6, "b": 2, "x": 1, "Unknown": 2, "NA": 1 + 3 + 4},
    ),
    "recoded, the missing-value label too": (
        {
            "categories": ["ab", "x", "Unknown"],
            "missing_values": ["?"],
            "recode": {"ab": ["a", "b"], "Unknown": ["NA"]},
        },
        {"ab": 8, "x": 1, "Unknown": 2 + 1 + 3 + 4},
    ),
    "missing-value label 'Unknown'": (
        {"categories": ["a", "b", "x", "NA", "Unknown"], "missing_values": ["?"], "missing_label": "Unknown"},
        {"a": 6, "b": 2, "x": 1, "NA": 1, "Unknown": 2 + 3 + 4},
    ),
    "missing values excluded": (
        {"categories": ["a", "b", "x", "NA", "Unknown"], "missing_values": ["?"], "missing": "exclude"},
        {"a": 6, "b": 2, "x": 1, "NA": 1, "Unknown": 2},
    ),
}


@pytest.mark.parametrize("fields, expected", CASES.values(), ids=list(CASES))
def test_the_gui_counts_the_released_rows_by_the_engines_rule(fields, expected):
    column = ColumnState(name="c", role="perturb", **fields)
    engine = category_rows(ColumnConfig(**column.copied_fields()), SUMMARY.as_dict(), SUMMARY.missing)
    assert engine == expected
    assert released_counts(column, SUMMARY, column.recode) == engine
    assert released_rows(column, SUMMARY) == engine  # the codec's labels: what perturb releases


def test_a_recoding_that_swaps_two_labels_moves_both():
    column = ColumnState(name="c", role="perturb", categories=["a", "b"], recode={"a": ["b"], "b": ["a"]})
    engine = category_rows(ColumnConfig(**column.copied_fields()), {"a": 6, "b": 2}, 0)
    assert engine == {"a": 2, "b": 6}
    assert released_counts(column, SUMMARY, column.recode) == {**SUMMARY.as_dict(), "a": 2, "b": 6, "NA": 1 + 4}
