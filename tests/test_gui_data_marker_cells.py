"""The Data tab's summary line never says "no missing cells" beside cells holding a missing-value marker (a GUI
review: bmi of the stroke file, 201 'N/A', read "no missing cells"): it names them and the way to treat them."""

from __future__ import annotations

from optrr_engine.release.column_stats import ColumnSummary
from optrr_gui.data.summary_view import marker_cells, missing_part, summary_line


def test_marker_texts_are_named_when_no_cell_is_missing():
    bmi = ColumnSummary("bmi", ["28.1", "N/A", "31.0", "?"], [300, 201, 250, 3], 0, ".")
    assert marker_cells(bmi) == [("N/A", 201), ("?", 3)]
    text = missing_part(bmi)
    assert "no missing cells" not in text
    assert text.startswith("no empty cells, but 201 'N/A', 3 '?'") and "Treat as missing" in text
    assert "201 'N/A'" in summary_line(bmi)


def test_plain_columns_and_counted_missing_cells_are_unchanged():
    sex = ColumnSummary("sex", ["F", "M"], [50, 40], 0, ".")
    assert marker_cells(sex) == [] and missing_part(sex) == "no missing cells"
    age = ColumnSummary("age", ["40", "NA"], [50, 5], 3, ".")
    assert missing_part(age, marked=5, treated=("NA",)) == "8 missing (14%: 3 empty, 5 treated as missing)"  # 58 rows


def test_untreated_markers_are_named_beside_empty_cells_too():
    """A second review: with 3 empty cells the line said "3 missing" and nothing of the 201 'N/A'; a marker already
    treated as missing is not named again."""
    bmi = ColumnSummary("bmi", ["28.1", "N/A", "31.0", "?"], [300, 201, 250, 3], 3, ".")
    text = missing_part(bmi)
    assert text.startswith("3 missing (") and "; and 201 'N/A', 3 '?': a missing-value marker?" in text
    assert missing_part(bmi, marked=201, treated=("N/A",)).endswith("; and 3 '?': a missing-value marker? (Treat as "
                                                                      "missing in the Design tab's side panel)")
    assert "'N/A'" not in missing_part(bmi, marked=204, treated=("N/A", "?"))
