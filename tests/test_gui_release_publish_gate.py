"""The release dialog's tick approves exactly what its orange list names (the engine refuses anything else): a kept
column's values held by one row each are counted and shown; a rare category the window could not see (rows left out
for a missing value in another column) is refused by the release, added to the orange list and released once ticked;
a repeat found by the records (another file with the same values) is said to be one."""

from __future__ import annotations

import json
from contextlib import ExitStack, contextmanager

import pytest

from optrr_engine.release.perturb import perturb_file
from optrr_engine.release.schema import infer_schema
from optrr_gui.release.dialog import FOUND_BY_RELEASE, ReleaseDialog
from tests.test_gui_datamanager import index_of
from tests.test_gui_support import WAIT_MS, tick_orange, window_with_summaries
from tests.test_perturb_rare_and_unique_kept import kept_rows, write_csv

NOTHING: dict[str, list[str]] = {
    "kept": [], "rows_left_out": [], "labels_of_dropped": [], "bins_from_data": [], "rare_categories": []
}


@pytest.fixture
def opened(qtbot, tmp_path):
    """open(path): :func:`window_with_summaries` on ``path`` (a file the test writes first); closed after the test."""
    with ExitStack() as windows:
        yield lambda path: windows.enter_context(contextmanager(window_with_summaries)(qtbot, tmp_path, path))


def dialog_on(qtbot, window, output) -> ReleaseDialog:
    """The release dialog once the designs for the session as it is now are computed."""
    qtbot.waitUntil(lambda: window.controller.is_idle() and window.controller.chosen() is not None, timeout=WAIT_MS)
    dialog = ReleaseDialog(window, window)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(output))
    dialog._design_changed()
    return dialog


def released(qtbot, dialog) -> str:
    """Release, wait until the run ends; its result state."""
    assert dialog.start(), dialog.progress_label.text()
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    return dialog.result_state


def test_a_near_unique_kept_column_shows_how_many_rows_hold_a_value_no_other_row_has(qtbot, tmp_path, opened):
    src = write_csv(tmp_path, "codes.csv", "code,site,sex", kept_rows(30))
    window = opened(src)
    for name in ("code", "site"):
        window.state.set_column_value(index_of(window, name), "role", "keep")
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    unique = "'code': 30 of 100 rows have a value no other row has: it can link a record to the person"
    rare = "code: " + ", ".join(f"'U{i}' (1 row)" for i in range(10)) + " and 20 more"
    tick_orange(dialog, {**NOTHING, "kept": [unique, "site"], "rare_categories": [rare]})
    assert unique in dialog.columns_label.text()
    assert dialog.approved()["allow_flagged_kept"] == {"code", "site"}
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["kept_columns"] == ["code", "site"]


def excluded_rows_file(tmp_path) -> str:
    """60 rows: 'ward' empty in rows 0-2; 'grade' 'X' in rows 0, 10, 20, 30, 40 (5 rows: not rare as read), 'Y' and
    'Z' otherwise. With ward's missing values excluded, row 0 is left out and 'X' is released in 4 rows."""
    rows = [f"{'' if i < 3 else 'pq'[i % 2]},{'X' if i % 10 == 0 and i < 50 else 'YZ'[i % 2]}" for i in range(60)]
    return write_csv(tmp_path, "ward.csv", "ward,grade", rows)


def test_a_category_made_rare_by_rows_left_out_is_refused_then_listed_and_released_once_ticked(
    qtbot, tmp_path, opened
):
    window = opened(excluded_rows_file(tmp_path))
    window.state.set_column_value(index_of(window, "ward"), "missing", "exclude")
    out = tmp_path / "rel.csv"
    dialog = dialog_on(qtbot, window, out)
    tick_orange(dialog, {**NOTHING, "rows_left_out": ["ward"]})  # 'X' has 5 rows in the window: not listed
    assert dialog.approved() == {
        "allow_rare_categories": frozenset(), "allow_flagged_kept": frozenset(), "allow_identifier_kept": frozenset()
    }
    assert released(qtbot, dialog) == "failed" and not out.exists()
    # what the release found is orange now, the tick cleared and shown: Release waits for it
    found = {**NOTHING, "rows_left_out": ["ward"], "rare_categories": ["grade: 'X' (4 rows)"]}
    assert dialog.published_outside() == found
    assert not dialog.accept_clear.isChecked() and not dialog.accept_clear.isHidden()
    assert not dialog.release_button.isEnabled()
    text = dialog.progress_label.text()
    assert FOUND_BY_RELEASE in text and "'grade': 'X' (4 rows)" in text
    assert "tick the box under the orange list" in text
    dialog.accept_clear.setChecked(True)
    assert dialog.release_button.isEnabled() and dialog.approved()["allow_rare_categories"] == {("grade", "X")}
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert out.exists()


def test_a_repeat_found_by_the_records_names_the_identical_columns_and_the_file(qtbot, tmp_path, opened, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    import optrr_gui.release.dialog as rd

    rows = [f"{'pq'[i % 2]},{'YZ'[i % 3 == 0]}" for i in range(40)]
    first = write_csv(tmp_path, "first.csv", "ward,grade", rows)
    (tmp_path / "copy").mkdir()
    copy = write_csv(tmp_path / "copy", "copy.csv", "ward,grade", [*rows, ""])  # other bytes, the same records
    window = opened(copy)
    perturb_file(first, infer_schema(first), tmp_path / "first_rel.csv", audit_dir=window.settings.audit_dir())
    asked = []

    def answer(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(rd.QMessageBox, "warning", answer)
    dialog = dialog_on(qtbot, window, tmp_path / "copy_rel.csv")
    assert dialog.published_outside() == NOTHING and dialog.accept_clear.isHidden()
    assert dialog.start()
    qtbot.waitUntil(lambda: bool(asked) and dialog.result_state != "running", timeout=WAIT_MS)
    assert asked[0].startswith(
        "The same records (columns 'ward', 'grade' identical) were released 1 time before (file first.csv)"
    ), asked[0]
    assert "This data file" not in asked[0] and "Not released" in dialog.progress_label.text()


def test_the_repeat_question_says_when_the_same_records_came_in_another_order():
    from optrr_engine.release.audit import RepeatReleaseError
    from optrr_gui.release.dialog import repeat_sentence

    previous = [{"input": {"file": "first.csv"}}, {"input": {"file": "second.csv"}}]
    reordered = RepeatReleaseError("m", previous, 3.0, reordered=True)
    assert repeat_sentence(reordered) == (
        "The same records, in another order, were released 2 times before (files first.csv, second.csv)"
    )
    assert repeat_sentence(RepeatReleaseError("m", previous[:1], 2.0)) == "This data file was released 1 time before"
