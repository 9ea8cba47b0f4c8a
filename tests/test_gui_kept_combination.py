"""The release dialog and kept columns that single out records together: the dialog counts their combination on the
rows read (in a worker process) and lists it in orange as one entry; the release counts it again on the rows it
releases (:attr:`PublishRefusal.combination`) and the dialog adds what it found; the tick approves exactly that
combination (the tuple of the kept columns' names) besides the kept columns."""

from __future__ import annotations

import json

from optrr_gui.release.dialog import COMBINATION_CHANNEL, FOUND_BY_RELEASE
from tests.test_gui_datamanager import index_of
from tests.test_gui_release_publish_gate import NOTHING, dialog_on, opened, released  # noqa: F401 (fixture)
from tests.test_gui_support import WAIT_MS, tick_orange
from tests.test_kept_combination import ABC, source, together_rows


def entry(unique: int, rows: int) -> str:
    return (f"'a', 'b', 'c' together: {unique} of {rows} rows have a combination no other row has: it can link a "
            "record to the person")


def keep_abc(window) -> None:
    for name in ABC:
        window.state.set_column_value(index_of(window, name), "role", "keep")
    window.state.set_column_value(index_of(window, "sex"), "role", "perturb")


def counted(qtbot, dialog) -> None:
    """Wait until the dialog's count of the kept columns' combination on the rows read has arrived."""
    qtbot.waitUntil(lambda: dialog._combination[0] is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not dialog.runner.is_busy(COMBINATION_CHANNEL), timeout=WAIT_MS)
    qtbot.wait(50)  # its result is delivered on the UI thread


def test_the_dialog_lists_the_combination_before_the_release_and_its_tick_approves_exactly_it(
    qtbot, tmp_path, opened  # noqa: F811
):
    window = opened(source(tmp_path))
    keep_abc(window)
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    qtbot.waitUntil(lambda: "kept_together" in dialog.published_outside(), timeout=WAIT_MS)
    tick_orange(dialog, {**NOTHING, "kept": list(ABC), "kept_together": [entry(200, 200)]})
    assert entry(200, 200) in dialog.columns_label.text()
    assert dialog.approved()["allow_flagged_kept"] == {*ABC, ABC}
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == list(ABC)


def excluded_file(tmp_path) -> str:
    """Each (a, b, c) in 2 rows, i and i + 100 ('c' is c{(i // 20) % 5}); 'sex' empty in rows 100-199: with its
    missing values excluded, every released row's combination is unique, none of the rows read is."""
    rows = together_rows(c=lambda i: f"c{(i // 20) % 5}")
    rows = [r if i < 100 else r.rsplit(",", 1)[0] + "," for i, r in enumerate(rows)]
    return source(tmp_path, rows)


def test_a_combination_found_by_the_release_is_listed_and_its_tick_approves_exactly_it(qtbot, tmp_path, opened):  # noqa: F811
    window = opened(excluded_file(tmp_path))
    keep_abc(window)
    window.state.set_column_value(index_of(window, "sex"), "missing", "exclude")
    out = tmp_path / "rel.csv"
    dialog = dialog_on(qtbot, window, out)
    counted(qtbot, dialog)
    tick_orange(dialog, {**NOTHING, "kept": list(ABC), "rows_left_out": ["sex"]})  # none on the rows read
    assert dialog.approved()["allow_flagged_kept"] == set(ABC)
    assert released(qtbot, dialog) == "failed" and not out.exists()
    found = {**NOTHING, "kept": list(ABC), "rows_left_out": ["sex"], "kept_together": [entry(100, 100)]}
    assert dialog.published_outside() == found
    assert not dialog.accept_clear.isChecked() and not dialog.release_button.isEnabled()
    text = dialog.progress_label.text()
    assert FOUND_BY_RELEASE in text and "kept columns 'a', 'b', 'c' together" in text
    assert "tick the box under the orange list" in text and "--allow" not in text
    dialog.accept_clear.setChecked(True)
    assert dialog.approved()["allow_flagged_kept"] == {*ABC, ABC}
    assert released(qtbot, dialog) == "done", dialog.progress_label.text()
    assert json.loads((tmp_path / "rel.csv.manifest.json").read_text())["kept_columns"] == list(ABC)


def test_the_entry_goes_when_the_kept_columns_change(qtbot, tmp_path, opened):  # noqa: F811
    """The combination found was for 'a', 'b', 'c': once 'c' is dropped it no longer says anything."""
    from optrr_engine.release.perturb import PublishRefusal

    window = opened(excluded_file(tmp_path))
    keep_abc(window)
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    counted(qtbot, dialog)
    assert dialog.add_found(PublishRefusal("refused", combination=(ABC, 100, 100)))
    assert dialog.published_outside()["kept_together"] == [entry(100, 100)]
    window.state.set_column_value(index_of(window, "c"), "role", "drop")
    dialog._design_changed()
    counted(qtbot, dialog)
    assert "kept_together" not in dialog.published_outside()
    dialog.accept_clear.setChecked(True)
    assert dialog.approved()["allow_flagged_kept"] == {"a", "b"}


def test_a_count_for_columns_no_longer_kept_is_not_shown(qtbot, tmp_path, opened):  # noqa: F811
    """The count before the release arrives for the data it was asked for: a result for an earlier state of the
    same kept columns (here 'c' recoded while it was counted: the same names) is dropped, not listed."""
    window = opened(source(tmp_path))
    keep_abc(window)
    dialog = dialog_on(qtbot, window, tmp_path / "rel.csv")
    qtbot.waitUntil(lambda: "kept_together" in dialog.published_outside(), timeout=WAIT_MS)
    stale_key = dialog._combination[0]
    j = index_of(window, "c")
    window.state.set_column_value(j, "recode", {"c0-4": [f"c{i}" for i in range(5)]})  # the same kept columns
    assert dialog.kept_combination() is None  # counted again, for the recoded column
    new_key = dialog._combination[0]
    assert new_key != stale_key and new_key[3] == ABC
    dialog._combination_done(stale_key, None)  # an old count ("none refused"), arriving late: ignored
    assert dialog._combination == (new_key, None)
    dialog._combination_done(stale_key, (ABC, 200, 200))  # an old refusal, arriving late: never held or listed
    assert dialog._combination == (new_key, None)
