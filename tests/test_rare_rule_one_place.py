"""One rare-category rule (optrr_engine.release.schema.is_rare / rare_categories: 1..RARE_COUNT-1 rows, rarest
first, ties in natural alphabetical order) for the schema's warning, the Design tab's warning and category list,
the Data tab's summary and the release dialog; the Data tab's title and bins count what "Released as" says."""

from __future__ import annotations

import pytest

from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.schema import RARE_COUNT, is_rare, rare_categories, rare_warning
from optrr_gui.state.config_bridge import column_warnings, released_rows
from optrr_gui.state.session import ColumnState, SessionState

#: Rows per category: "none" listed but never seen; "10-14" and "5-9" tie (plain text order puts "10-14" first).
COUNTS = {"none": 0, "10-14": 3, "5-9": 3, "b": 1, "common": 40, "edge": RARE_COUNT}


def test_the_rule_a_category_without_rows_is_not_rare_and_the_order_is_natural():
    assert [is_rare(n) for n in (0, 1, RARE_COUNT - 1, RARE_COUNT)] == [False, True, True, False]
    assert rare_categories(COUNTS) == [("b", 1), ("5-9", 3), ("10-14", 3)]
    assert rare_warning(COUNTS).startswith("rare categories (fewer than 5 rows): 'b' (1), '5-9' (3), '10-14' (3);")


def summary() -> ColumnSummary:
    values = [k for k, n in COUNTS.items() if n]
    return ColumnSummary("g", values, [COUNTS[v] for v in values], missing=0)


@pytest.fixture
def state() -> SessionState:
    s = SessionState()
    s.load_columns(None, {}, [ColumnState("g", categories=list(COUNTS))], 100)
    return s


def test_the_release_dialog_lists_the_rare_categories_in_the_warnings_order(state):
    from optrr_gui.release.dialog import rare_categories as dialog_rare

    found = dialog_rare(state, {"g": summary()})
    assert [(v, n) for _c, v, n in found] == rare_categories(COUNTS)
    warning = [w for w in column_warnings(state.columns[0], len(COUNTS), summary()) if w.startswith("rare")]
    assert warning == [rare_warning(released_rows(state.columns[0], summary()))]
    assert warning[0].index("'5-9'") < warning[0].index("'10-14'")


def test_a_listed_category_without_rows_is_rare_nowhere(qtbot, state):
    from optrr_gui.data.summary_view import SummaryModel, summary_line
    from optrr_gui.design.category_list import CategoryModel

    col = state.columns[0]
    rows = released_rows(col, summary())
    model = CategoryModel()
    model.set_labels(list(COUNTS), {**rows, "none": 0}, 100)
    assert [label for r, label in enumerate(COUNTS) if model.is_rare(r)] == ["10-14", "5-9", "b"]
    line = summary_line(summary(), rows={**rows, "none": 0})
    assert "Rare (fewer than 5 rows): 'b' (1), '5-9' (3), '10-14' (3) —" in line and "none" not in line
    recoded = summary_line(summary(), recode={"none": ["nothing of the kind"], "common": ["common"]})
    assert "'none'" not in recoded and "Rare after recoding (fewer than 5 rows): 'b' (1), '5-9' (3)" in recoded
    table = SummaryModel()
    table.set_summary(summary(), {"none": ["b"]})  # 'b' released as a category that then has its 1 row
    assert table.rare_rows("b", 1) == 1
    table.set_summary(summary(), {"gone": ["nothing"]})
    table.released_rows = {"gone": 0}  # a released category without rows: nobody disclosed
    assert table.rare_rows("b", 1) is None


def test_a_kept_column_without_categories_warns_of_its_rare_values_as_the_dialog_lists_them(state):
    """A free-text column the schema dropped (no categories), set to keep: its texts are copied as they are."""
    from optrr_gui.release.dialog import rare_categories as dialog_rare

    col = state.columns[0]
    col.role, col.categories = "keep", None
    listed = [(v, n) for _c, v, n in dialog_rare(state, {"g": summary()})]
    assert listed == [("b", 1), ("5-9", 3), ("10-14", 3)]
    assert rare_warning(dict(listed)) in column_warnings(col, None, summary())


def test_the_title_counts_an_unlisted_text_of_a_numeric_column_as_missing_as_released_as_says(qtbot):
    from optrr_gui.data.summary_view import ColumnSummaryView, summary_line

    s = ColumnSummary("age", ["30", "40", "50", "61", "see notes", "?"], [30, 30, 20, 10, 2, 3], missing=5)
    col = ColumnState("age", type="numeric", bins={"method": "edges", "edges": [0, 45, 100]}, categories=["NA"],
                      missing_values=["?"])
    view = ColumnSummaryView()
    qtbot.addWidget(view)
    view.show_summary(s, col)
    released = {view.model.data(view.model.index(r, 0)): view.model.data(view.model.index(r, 3)) for r in range(6)}
    assert released["see notes"] == "NA" and released["?"] == "NA"  # both released as missing
    assert "10 missing (10%: 5 empty, 5 treated as missing)" in view.title.text()
    line = summary_line(s, None, None, {'NA'}, rows=released_rows(col, s), marked=5, treated=("?", "see notes"))
    assert view.title.text() == f"age: {line}"  # '?' is treated as missing: not named as a marker
    assert "[0, 45): 60 (67%); [45, 100]: 30 (33%). Percentages of the 90 rows" in view.bins_text.text()
