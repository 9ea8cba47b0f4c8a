"""The repeat-release question says that a release being replaced is still counted by the privacy ledger (it may
already have been sent), and says it only when the new release replaces the files of an earlier one."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

import optrr_gui.release.dialog as rd
from tests.test_gui_release import release
from tests.test_gui_support import WAIT_MS

COUNTED = "The release you are replacing is counted too: it may already have been sent."


def test_the_repeat_question_says_the_replaced_release_is_counted_only_when_replacing(
    qtbot, window, tmp_path, monkeypatch
):
    asked = []

    def replace_yes(parent, title, text, *args):
        return QMessageBox.StandardButton.Yes

    def repeat_no(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(rd.QMessageBox, "question", replace_yes)
    monkeypatch.setattr(rd.QMessageBox, "warning", repeat_no)
    out = tmp_path / "released.csv"
    dialog = release(qtbot, window, out)
    qtbot.waitUntil(lambda: dialog.result_state != "running", timeout=WAIT_MS)
    assert dialog.result_state == "done" and not asked

    # The same output again: its files are replaced, and the ledger still counts the release they hold.
    assert dialog.start()
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=WAIT_MS)
    assert "released 1 time before" in asked[0] and COUNTED in asked[0]
    assert asked[0].index(COUNTED) < asked[0].index("Release again?")

    # Another output: nothing is replaced, so nothing is said about a replaced release.
    dialog.output.setText(str(tmp_path / "other.csv"))
    assert dialog.start()
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=WAIT_MS)
    assert "released 1 time before" in asked[1] and "replacing" not in asked[1]
