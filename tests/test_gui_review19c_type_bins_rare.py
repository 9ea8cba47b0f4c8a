"""Review 19c: a numeric column made nominal or ordinal lists its categories from the rows read (one undo step, as a
role change does); the warning on quantile bins follows the column's current bins and type; Group rare on an
ordinal column merges rare categories with their neighbours by the engine's rule (``optrr schema --merge-rare``),
never into an 'Other' placed last."""

from __future__ import annotations

import csv
from collections import Counter

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox

from optrr_engine.release.bins import DATA_BIN_METHODS
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.merge_rare import merge_column
from optrr_engine.release.schema import BINS_WARNING, RARE_WARNING_START, is_rare
from optrr_gui.design.attribute_table import COL_COUNT, COL_TYPE, COL_WARN
from optrr_gui.state.config_bridge import category_counts
from optrr_gui.state.paths import SAMPLE_DIR
from tests.test_gui_support import wait_ready, window_with_summaries

HEART = str(SAMPLE_DIR / "heart_cleveland.csv")


@pytest.fixture
def window(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, HEART)


def ages() -> Counter:
    with open(HEART, newline="", encoding="utf-8") as fh:
        return Counter(r["age"] for r in csv.DictReader(fh))


def show_age(window) -> int:
    j = [c.name for c in window.state.columns].index("age")
    window.attributes.view.selectRow(j)
    assert window.column_panel.row == j
    return j


def pick_type(panel, name: str) -> None:
    panel.type.setCurrentIndex(panel.type.findText(name))
    panel.type.activated.emit(panel.type.currentIndex())


def cell(window, row: int, column: int):
    model = window.attributes.model
    return model.data(model.index(row, column), Qt.ItemDataRole.DisplayRole)


def test_numeric_made_ordinal_or_nominal_lists_the_read_categories_in_one_undo_step(qtbot, window):
    j = show_age(window)
    col = window.state.columns[j]
    bins = dict(col.bins)
    assert col.type == "numeric" and col.role == "perturb" and not col.categories
    steps = window.stack.count()
    pick_type(window.column_panel, "ordinal")
    wait_ready(qtbot, window)
    col = window.state.columns[j]
    read = sorted(ages(), key=float)
    assert col.type == "ordinal" and col.categories == read  # numeric order for an ordinal column
    assert window.stack.count() == steps + 1  # the type and its categories: one undo step
    assert cell(window, j, COL_COUNT) == str(len(read))
    warnings = category_counts(window.state).warnings[j]
    assert not any("fewer than 2 categories" in w for w in warnings)
    assert any(w.startswith(RARE_WARNING_START) for w in warnings)  # and the rare ones are really listed now
    window.stack.undo()
    col = window.state.columns[j]
    assert col.type == "numeric" and not col.categories and col.bins == bins  # the numeric column as it was
    # the same from the table's Type cell, to nominal: alphabetical, as the schema lists a nominal column
    window.attributes.model.setData(window.attributes.model.index(j, COL_TYPE), "nominal")
    wait_ready(qtbot, window)
    col = window.state.columns[j]
    assert col.type == "nominal" and col.categories == sorted(ages())
    # nominal made ordinal: the numeric order (the same here: whole numbers), one step
    pick_type(window.column_panel, "ordinal")
    wait_ready(qtbot, window)
    assert window.state.columns[j].categories == read and window.stack.count() == steps + 2
    window.stack.undo()
    assert window.state.columns[j].categories == sorted(ages())
    window.stack.undo()
    assert window.state.columns[j].type == "numeric" and not window.state.columns[j].categories


def test_an_order_the_user_chose_is_kept_when_a_nominal_column_becomes_ordinal(qtbot, window):
    from optrr_gui.state.role_fields import ordinal_order
    from optrr_gui.state.session import ColumnState

    chosen = ColumnState("grade", categories=["low", "mid", "high"])
    assert ordinal_order(chosen, None) is None  # not alphabetical: the user's order, kept
    # the nominal order is natural ('9' before '10') but reads decimals digit run by digit run: '1.5' before '1.25'
    natural = ColumnState("dose", categories=["0.5", "1.5", "1.25", "NA"], missing="category", missing_label="NA")
    assert ordinal_order(natural, None) == ["0.5", "1.25", "1.5", "NA"]  # numbers in order, the missing one last
    assert ordinal_order(ColumnState("n", categories=["1", "2", "10"]), None) is None  # already in order


def test_the_quantile_bins_warning_follows_the_typed_edges_and_the_type(qtbot, window):
    j = show_age(window)
    panel = window.column_panel
    col = window.state.columns[j]
    assert col.bins["method"] in DATA_BIN_METHODS
    assert BINS_WARNING in category_counts(window.state).warnings[j]
    assert BINS_WARNING in panel.warnings.text() and "quantile bins" in cell(window, j, COL_WARN)
    panel.bins.setText("-inf, 40, 50, 60, 70, inf")
    panel.bins.setModified(True)
    assert panel.apply_typed_bins()
    wait_ready(qtbot, window)
    assert window.state.columns[j].bins["method"] == "edges"
    assert BINS_WARNING not in category_counts(window.state).warnings[j]  # the user's edges, not the data's
    assert BINS_WARNING not in panel.warnings.text() and "quantile bins" not in (cell(window, j, COL_WARN) or "")
    window.stack.undo()  # the data's edges again: the warning again
    wait_ready(qtbot, window)
    assert BINS_WARNING in category_counts(window.state).warnings[j] and BINS_WARNING in panel.warnings.text()
    pick_type(panel, "ordinal")  # categories, no bins used
    wait_ready(qtbot, window)
    assert BINS_WARNING not in category_counts(window.state).warnings[j]
    assert BINS_WARNING not in panel.warnings.text()
    # the release agrees: the bins the column keeps for a change back to numeric are not released
    assert window.state.columns[j].bins["method"] in DATA_BIN_METHODS
    assert "age" not in window.state.to_release_config().published_outside_epsilon()["bins_from_data"]


def test_group_rare_on_an_ordinal_column_merges_with_neighbours_by_the_engine_rule(qtbot, window, monkeypatch):
    j = show_age(window)
    panel = window.column_panel
    pick_type(panel, "ordinal")
    wait_ready(qtbot, window)
    before = list(window.state.columns[j].categories)
    counts = ages()
    expected, changed = merge_column(ColumnConfig(name="age", type="ordinal", categories=before), counts)
    assert changed
    asked = []

    def question(parent, title, text, *args, **kwargs):
        asked.append(text)
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "question", question)
    # a threshold for 'Other' is not asked for an ordinal column (answered, so the test cannot hang if it is)
    monkeypatch.setattr(QInputDialog, "getInt", lambda *a, **k: (asked.append("getInt"), (5, True))[1])
    steps = window.stack.count()
    panel.group_rare.click()
    wait_ready(qtbot, window)
    col = window.state.columns[j]
    assert len(asked) == 1 and "ordinal" in asked[0] and "'Other'" in asked[0]  # says why not 'Other', and what instead
    assert "Other" not in col.categories
    assert col.categories == expected.categories and col.recode == expected.recode
    assert col.categories[-1].endswith("+")  # the oldest, rare, merged into an open range kept last
    lows = [float(c.lstrip("<=").split("-")[0].rstrip("+")) for c in col.categories]
    assert lows == sorted(lows)  # the order is kept
    rows = {label: sum(counts[v] for v in (col.recode or {}).get(label, [label])) for label in col.categories}
    assert not any(is_rare(n) for n in rows.values())
    assert not any(w.startswith(RARE_WARNING_START) for w in category_counts(window.state).warnings[j])
    assert window.stack.count() == steps + 1 and "with their neighbours" in window.act_undo.text()
    window.stack.undo()
    assert window.state.columns[j].categories == before and not window.state.columns[j].recode
    # the programmatic 'Other' grouping is refused for an ordinal column, with the reason
    assert panel.group_rare_categories(5) == []
    assert window.state.columns[j].categories == before
    assert "ordinal" in panel.bins_error.text() and "Other" in panel.bins_error.text()
