"""The window lists, before the release, the rare categories the engine refuses in a numeric column: the texts
listed beside its bins (here a note naming a patient, listed by the user) and its missing-value category; never its
bins. The same rule as the engine's CategoryGuard (tests/test_numeric_rare_categories.py)."""

from __future__ import annotations

import pytest

from optrr_gui.release.dialog import rare_categories
from tests.test_gui_datamanager import index_of
from tests.test_gui_support import WAIT_MS, window_with_summaries

NOTE = "deceased 2019-03-04 (Mrs J. Smith)"


def ages_file(folder) -> str:
    """120 patients: an age (numbers 20-79, one cell a note naming a patient), a sex."""
    path = folder / "ages.csv"
    lines = ["age,sex"] + [f"{NOTE if i == 7 else 20 + i % 60},{'FM'[i % 2]}" for i in range(120)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def ages(qtbot, tmp_path):
    yield from window_with_summaries(qtbot, tmp_path, ages_file(tmp_path))


def test_a_listed_text_of_a_numeric_column_is_a_rare_category_and_its_bins_are_not(qtbot, ages):
    j = index_of(ages, "age")
    col = ages.state.columns[j]
    assert col.type == "numeric" and col.role == "perturb" and NOTE not in (col.categories or [])
    before = rare_categories(ages.state, ages.summaries)
    assert [(c, v) for c, v, _n in before if c == "age"] == [("age", "NA")]  # the note is released as missing
    ages.state.set_column_fields(j, {"categories": [*(col.categories or []), NOTE]})
    qtbot.waitUntil(ages.is_ready, timeout=WAIT_MS)
    found = [(c, v, n) for c, v, n in rare_categories(ages.state, ages.summaries) if c == "age"]
    assert found == [("age", NOTE, 1)]  # listed by name now; 'NA' holds no row any more; no bin is named
    warnings = ages.attributes.model.warnings[j]  # the Design tab warns about it too
    assert any(f"{NOTE!r} (1)" in w for w in warnings), warnings
    assert not any("'NA' (1)" in w for w in warnings), warnings  # the schema's warning follows the column


def test_the_rare_refusal_names_the_windows_way_to_merge_not_the_command_line():
    from optrr_engine.release.schema import rare_refusal
    from optrr_gui.state.config_bridge import gui_wording

    text = gui_wording(rare_refusal([("age", [(NOTE, 1)])]))
    assert "Group rare… in the column's side panel" in text and "tick the box under the orange list" in text
    assert "optrr schema" not in text and "--merge-rare" not in text and "--allow-rare" not in text


def test_group_rare_never_merges_the_missing_value_category(qtbot, ages):
    """'NA' (the note, released as missing: 1 row) is rare, but Group rare leaves it: merging it into 'Other' made
    the missing rows a value, and treating 'Other' as missing then left the column without a design (a review)."""
    from optrr_engine.release.recode import group_rare
    from optrr_gui.design.column_panel import nothing_grouped

    j = index_of(ages, "age")
    ages.attributes.view.selectRow(j)
    qtbot.waitUntil(lambda: ages.column_panel.row == j, timeout=WAIT_MS)
    assert ages.column_panel.group_rare_categories(5) == []
    col = ages.state.columns[j]
    assert col.recode is None and "NA" in col.categories
    why = nothing_grouped(col, ages.summaries["age"], {"min_rows": 5, "label": "Other"})
    assert why.startswith("Nothing grouped: only 'NA', the missing-value category (1 row), is rare")
    # the engine's rule: the categories in keep are never merged
    recode, categories, merged = group_rare(None, ["a", "b", "NA"], {"a": 40, "b": 2, "NA": 1}, 5, keep=["NA"])
    assert merged == ["b"] and categories == ["a", "NA", "Other"] and recode == {"Other": ["b"]}
