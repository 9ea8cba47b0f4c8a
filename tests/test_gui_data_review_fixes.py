"""Data tab and column warnings after the user acts (GUI review on stroke.csv): a dropped column is "not released"
with no advice to merge; the warnings about missing-value markers and rare categories follow Treat as missing;
Group rare says why it changed nothing; the Data tab's title counts the cells treated as missing and the bin
shares say what they are out of."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from optrr_gui.data.summary_view import COL_RELEASED, NOT_RELEASED
from optrr_gui.design.attribute_table import COL_WARN
from optrr_gui.main_window import TAB_DATA
from optrr_gui.state.config_bridge import category_counts
from tests.test_gui_support import window_with_summaries


def write_csv(path) -> str:
    """A small stroke-like file: id (a record number), gender with one 'Other', bmi numbers with 'N/A' cells."""
    lines = ["id,gender,bmi"]
    for i in range(200):
        gender = "Other" if i == 7 else ("Female" if i % 2 else "Male")
        bmi = "N/A" if i % 25 == 3 else ("" if i % 40 == 5 else f"{18 + (i * 37 % 200) / 10:.1f}")
        lines.append(f"{9000 + i * 3},{gender},{bmi}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def window(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, write_csv(tmp_path / "stroke_like.csv"))


def column(window, name: str) -> int:
    return [c.name for c in window.state.columns].index(name)


def warnings_shown(window, j: int) -> list[str]:
    """Column j's warnings, checked to be the same in the shared counts, the table's cell and the side panel."""
    window.attributes.view.selectRow(j)
    window.column_panel.show_column(j)
    warnings = list(category_counts(window.state).warnings[j])
    cell = window.attributes.model.data(window.attributes.model.index(j, COL_WARN)) or ""
    panel = window.column_panel.warnings.text()
    assert cell == "; ".join(warnings) and panel == "\n".join(f"\u26a0 {w}" for w in warnings)
    return warnings


def treat_as_missing(window, j: int, value: str) -> None:
    panel = window.column_panel
    window.attributes.view.selectRow(j)
    panel.show_column(j)
    panel.categories.setCurrentRow(panel.current_categories().index(value))
    panel.remove.click()
    assert value in window.state.columns[j].missing_values


def data_title(window, j: int) -> str:
    window.tabs.setCurrentIndex(TAB_DATA)
    window.show_summary_of(j)
    return window.summary_view.title.text()


def test_a_dropped_column_is_not_released_and_gets_no_advice_to_merge(qtbot, window, tmp_path):
    j = column(window, "id")
    assert window.state.columns[j].role == "drop"
    title = data_title(window, j)
    model = window.summary_view.model
    released = {model.data(model.index(r, COL_RELEASED)) for r in range(model.rowCount())}
    assert released == {NOT_RELEASED} and model.rowCount() == 200
    assert "Not released: the column is dropped" in title
    assert "merge" not in title and "Rare" not in title
    assert model.data(model.index(0, COL_RELEASED), Qt.ItemDataRole.BackgroundRole) is None  # not highlighted
    window.grab().save(str(tmp_path / "dropped.png"))


def test_the_marker_warning_goes_once_the_markers_are_treated_as_missing(qtbot, window):
    j = column(window, "bmi")
    assert any("missing-value markers ('N/A')" in w for w in warnings_shown(window, j))
    treat_as_missing(window, j, "N/A")
    # the panel's list counts them in 'NA' at once (it showed 'NA (0 rows)' until another column was shown)
    summary, model = window.summaries["bmi"], window.column_panel.categories.model_
    rows = summary.missing + summary.count_of("N/A")
    assert rows > 0 and model.text(model.labels.index("NA")).startswith(f"NA   ({rows:,} rows")
    assert not any("missing-value markers" in w for w in warnings_shown(window, j))
    window.stack.undo()  # the markers are categories again: so is the warning
    assert any("missing-value markers ('N/A')" in w for w in warnings_shown(window, j))


def test_the_rare_warning_names_the_categories_released_now(qtbot, window):
    j = column(window, "gender")
    (before,) = [w for w in warnings_shown(window, j) if w.startswith("rare categories")]
    assert "'Other' (1)" in before
    treat_as_missing(window, j, "Other")
    assert window.state.columns[j].categories == ["Female", "Male", "NA"]
    (after,) = [w for w in warnings_shown(window, j) if w.startswith("rare categories")]
    assert "'NA' (1)" in after and "Other" not in after  # the one row is released as NA now: still rare
    title = data_title(window, j)
    assert "Rare (fewer than 5 rows): 'NA' (1)" in title and "'Other'" not in title
    assert "1 missing (0.5%: treated as missing)" in title


def test_group_rare_says_why_it_changed_nothing(qtbot, window, tmp_path):
    j = column(window, "gender")
    panel = window.column_panel
    window.attributes.view.selectRow(j)
    panel.show_column(j)
    steps = window.stack.count()
    assert panel.group_rare_categories(5) == []
    assert window.stack.count() == steps and window.state.columns[j].categories == ["Female", "Male", "Other"]
    assert panel.recode_note.isVisibleTo(panel)
    assert "'Other' (1 row) is already the group of rare values and is still rare" in panel.recode_note.text()
    assert "Merge" in panel.recode_note.text()
    window.grab().save(str(tmp_path / "group_rare.png"))
    panel.group_rare_categories(1)  # nothing below 1 row
    assert panel.recode_note.text() == "Nothing grouped: no category has fewer than 1 row."
    panel.merge_categories(["Male", "Other"], "Male or other")  # something recoded: the note goes
    assert not panel.recode_note.isVisibleTo(panel)


def test_the_title_counts_the_cells_treated_as_missing_and_the_bins_say_their_base(qtbot, window, tmp_path):
    j = column(window, "bmi")
    assert "5 missing (2.5%)" in data_title(window, j)
    treat_as_missing(window, j, "N/A")
    title = data_title(window, j)
    assert "13 missing (6.5%: 5 empty, 8 treated as missing)" in title
    numbers = 200 - 13
    assert f"Percentages of the {numbers:,} rows with a number" in window.summary_view.bins_text.text()
    window.grab().save(str(tmp_path / "bmi.png"))
