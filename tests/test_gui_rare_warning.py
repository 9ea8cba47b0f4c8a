"""After a merge of rare categories the warnings describe the recoded column (issue 14): the rare-category
warning of the Design tab (table and side panel) and the Data tab's summary name the merged category with
its new count, or disappear; they never name a category that was merged away. Expected counts come from the
CSV itself."""

from __future__ import annotations

import pytest

from optrr_gui.design.attribute_table import COL_WARN
from optrr_gui.main_window import TAB_DATA
from optrr_gui.state.config_bridge import category_counts
from tests.test_gui_datamanager import sample_counts as file_counts
from tests.test_gui_support import WAIT_MS


@pytest.fixture
def window(window, qtbot):
    """The main window (tests/conftest.py) once its column summaries are loaded."""
    qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
    return window




def rare_texts(window, j: int) -> list[str]:
    """The rare-category warnings of column j, as the table cell, the side panel and the shared counts say."""
    warnings = [w for w in category_counts(window.state).warnings[j] if w.startswith("rare categories")]
    cell = window.attributes.model.data(window.attributes.model.index(j, COL_WARN)) or ""
    panel = window.column_panel.warnings.text()
    for w in warnings:
        assert w[:60] in cell and w in panel
    return warnings


def test_the_rare_warning_follows_the_merges(qtbot, window):
    j = [c.name for c in window.state.columns].index("inv-nodes")
    window.attributes.view.selectRow(j)
    counts = file_counts("inv-nodes")
    rare = sorted((v for v, n in counts.items() if n < 5), key=counts.get)
    assert rare == ["24-26", "12-14"]
    (before,) = rare_texts(window, j)
    assert "'24-26' (1)" in before and "'12-14' (3)" in before
    # two rare categories merged into one that is still rare: named once, with its new count
    window.column_panel.merge_categories(["12-14", "24-26"], "12-26")
    (after,) = rare_texts(window, j)
    assert f"'12-26' ({counts['12-14'] + counts['24-26']})" in after and "after recoding" in after
    assert "24-26" not in after and "'12-14'" not in after
    window.tabs.setCurrentIndex(TAB_DATA)
    window.show_summary_of(j)
    title = window.summary_view.title.text()
    assert "Rare after recoding (fewer than 5 rows): '12-26' (4)" in title and "'24-26'" not in title
    # merged into a frequent category: the warning disappears
    window.column_panel.merge_categories(["12-26", "15-17"], "12+")
    assert rare_texts(window, j) == []
    assert not any("rare" in w for w in category_counts(window.state).warnings[j])
    window.show_summary_of(j)
    assert "No rare category after recoding" in window.summary_view.title.text()
    # undo: the file's own warning is back
    window.stack.undo()
    window.stack.undo()
    assert rare_texts(window, j) == [before]


def test_recoded_columns_are_recounted_when_the_rows_arrive(qtbot, window, tmp_path):
    """A project with a merge, opened again: until the rows are read the warning says it will be recounted;
    then it names the merged category with its rows."""
    j = [c.name for c in window.state.columns].index("inv-nodes")
    window.attributes.view.selectRow(j)
    window.column_panel.merge_categories(["12-14", "24-26"], "12-26")
    project = tmp_path / "p.optrr"
    assert window.save_project_to(str(project))
    seen = []
    window.state.subscribe(lambda kind, i, name: seen.append(list(category_counts(window.state).warnings[j])))
    with qtbot.waitSignal(window.summariesReady, timeout=WAIT_MS):
        assert window.open_project(str(project))
    early = [w for ws in seen for w in ws if w.startswith("rare categories")]
    assert any("recounted after recoding once the rows are read" in w for w in early)
    assert all("24-26" not in w for w in early)
    (final,) = rare_texts(window, j)
    assert "'12-26' (4)" in final
