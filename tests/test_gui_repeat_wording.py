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


def test_a_keyed_reproduction_is_asked_as_a_copy_that_adds_nothing(qtbot, window, tmp_path, monkeypatch):
    """The same data, key and settings again (a keyed reproduction): the engine's refusal names the release it would
    copy and survives the worker process (pickle); the question says the copy adds nothing and the accumulated ε
    stays, not that the people are randomized anew."""
    import pickle

    from optrr_engine.release.audit import RepeatReleaseError

    earlier = {"created": "2026-11-27T10:00:00Z", "input": {"file": "heart.csv"}, "overall_epsilon": 2.0}
    exc = RepeatReleaseError("refused", [earlier], 2.0, reproduces=earlier)
    again = pickle.loads(pickle.dumps(exc))
    assert again.reproduces == earlier and again.accumulated == 2.0
    asked = []

    def no(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(rd.QMessageBox, "warning", no)
    dialog = rd.ReleaseDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.confirm_repeat(again) is False
    (text,) = asked
    assert "release of 2026-11-27T10:00:00Z (file heart.csv) again, with the same noise" in text
    assert "stays 2" in text and "anew" not in text and text.endswith("Write the copy?")
