"""Edit ▸ Merge rare categories in every column: the engine's rule of ``optrr schema --merge-rare`` applied to every
perturbed nominal and ordinal column of the window at once, one undo step (a review of the census sample: 52
columns with rare categories, and Group rare worked one column at a time)."""

from __future__ import annotations

import csv

from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.merge_rare import merge_column
from optrr_gui.workers.jobs.recode import released_counts
from tests.test_gui_support import WAIT_MS, open_window


def write(tmp_path):
    rows = (
        [("A", "1", "no")] * 50 + [("B", "3", "no")] * 38 + [("C", "2", "no")] * 2 + [("D", "4", "yes")] * 2
        + [("B", "4", "no")] * 28
    )
    path = tmp_path / "rare.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["site", "grade", "flag"])
        w.writerows(rows)
    return str(path)


def test_every_column_merged_by_the_engine_rule_in_one_undo_step(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, write(tmp_path))
    state = window.state
    names = [c.name for c in state.columns]
    grade = state.columns[names.index("grade")]
    state.set_column_values([names.index("grade")], "type", ["ordinal"])
    state.set_column_values([names.index("grade")], "categories", [["1", "2", "3", "4"]])
    window.stack.clear()
    before = {c.name: (list(c.categories or []), c.recode) for c in state.columns}
    expected = {}
    for c in state.columns:
        counts = released_counts(c, window.summaries[c.name], c.recode)
        new, changed = merge_column(ColumnConfig(**c.copied_fields()), counts)
        expected[c.name] = (list(new.categories), new.recode or None) if changed else before[c.name]
    assert all(expected[n] != before[n] for n in names)  # each has rare categories
    assert expected["flag"][0] == ["no", "Other"]  # two values, one rare: named no more, but still rare
    window.merge_rare_everywhere()
    qtbot.waitUntil(lambda: window.stack.count() == 1, timeout=WAIT_MS)
    after = {c.name: (list(c.categories or []), c.recode) for c in state.columns}
    assert after == expected
    assert window.stack.undoText() == "merge rare categories in 3 columns"
    text = window.message_bar.label.text()
    assert "Merged rare categories in 3 column(s): site, grade, flag" in text
    assert "Still rare in 1 column(s) (flag): drop them, or approve" in text
    window.stack.undo()
    assert {c.name: (list(c.categories or []), c.recode) for c in state.columns} == before
    assert grade.type == "ordinal"
