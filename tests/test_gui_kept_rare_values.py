"""A kept column with a value fewer than RARE_COUNT rows hold (an attacker review: stroke's gender kept, 'Other' in one
row, exported in the clear) is refused by perturb unless the kept column is approved; the release dialog names the
value in its rare categories' line before the release, its tick approves the kept column (the release passes), and
a refusal found by the release itself gets its own words (not "a value no other row has")."""

from __future__ import annotations

import json

from optrr_engine.release.perturb import PublishRefusal
from optrr_gui.release.dialog import kept_rare_entry
from tests.test_gui_datamanager import index_of
from tests.test_gui_release_publish_gate import NOTHING, dialog_on, opened, released  # noqa: F401 (fixture)
from tests.test_gui_support import tick_orange
from tests.test_perturb_rare_and_unique_kept import write_csv

ENTRY = "'gender': 1 value held by fewer than 5 rows (1 row), published in the clear: it can single the person out"


def gender_file(tmp_path) -> str:
    rows = [f"{'Other' if i == 0 else 'FM'[i % 2]},{'abc'[i % 3]}" for i in range(120)]
    return write_csv(tmp_path, "in.csv", "gender,site", rows)


def test_a_rare_kept_value_is_listed_and_the_tick_lets_the_release_pass(qtbot, tmp_path, opened):  # noqa: F811
    window = opened(gender_file(tmp_path))
    window.state.set_column_value(index_of(window, "gender"), "role", "keep")
    window.state.set_column_value(index_of(window, "site"), "role", "perturb")
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    assert "gender: 'Other' (1 row)" in dialog.columns_label.text()
    tick_orange(dialog, {**NOTHING, "kept": ["gender"], "rare_categories": ["gender: 'Other' (1 row)"]})
    assert "gender" in dialog.approved()["allow_flagged_kept"]  # what perturb asks for a kept column's rare value
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == ["gender"]


def test_a_rare_kept_value_found_by_the_release_has_its_own_entry(qtbot, tmp_path, opened):  # noqa: F811
    assert kept_rare_entry("gender", 1, 1) == ENTRY
    window = opened(gender_file(tmp_path))
    window.state.set_column_value(index_of(window, "gender"), "role", "keep")
    window.state.set_column_value(index_of(window, "site"), "role", "perturb")
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    assert dialog.add_found(PublishRefusal("refused", kept_rare=[("gender", 1, 1)]))
    assert ENTRY in dialog.columns_label.text() and "no other row has" not in dialog.columns_label.text()
    assert not dialog.accept_clear.isChecked()  # the list changed: the tick is asked again
