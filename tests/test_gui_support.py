"""Shared helpers of the GUI tests (no tests here): a window on the sample with private settings."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialogButtonBox

from optrr_gui.common.settings import Settings
from optrr_gui.main_window import MainWindow
from optrr_gui.state.paths import DEFAULT_SAMPLE

SAMPLE = str(DEFAULT_SAMPLE)
WAIT_MS = 120_000


def open_window(qtbot, tmp_path: Path, path: str = SAMPLE, options=None, safe_start: bool = False) -> MainWindow:
    """A shown window with ``path`` opened: columns inferred, rows read, every design computed. Unless
    ``safe_start``, the proposed columns are confirmed and the session uses ε per column (as before the safe
    start), with an empty undo stack."""
    window = MainWindow(Settings(tmp_path / "settings.ini"))
    # pytest-qt closes the window after the test: without the unsaved-changes question (a modal box)
    qtbot.addWidget(window, before_close_func=lambda w: w.stack.setClean())
    window.show()
    window.open_file(path, options)
    wait_ready(qtbot, window)
    assert window.state.data_path == path, window.last_error
    if not safe_start:
        choose_columns_per_column(qtbot, window)
    return window


def choose_columns_per_column(qtbot, window: MainWindow) -> None:
    """Step 1 done: columns confirmed, ε per column, the former default budget target, no undo history."""
    from optrr_gui.state.session import DEFAULT_EPSILON, DEFAULT_TARGET_TOTAL

    window.confirm_columns()
    n = len(window.state.columns)
    window.state.set_column_values(range(n), "epsilon", [DEFAULT_EPSILON] * n)
    window.state.set_session_value("budget_mode", False)
    window.state.set_session_value("target_total", DEFAULT_TARGET_TOTAL)
    window.stack.clear()
    wait_ready(qtbot, window)


def wait_ready(qtbot, window: MainWindow, timeout: int = WAIT_MS) -> None:
    qtbot.waitUntil(lambda: window.is_ready() and window.state.n_rows is not None, timeout=timeout)


def window_with_summaries(qtbot, tmp_path: Path, path: str):
    """:func:`open_window` on ``path``, once its column summaries are counted; closed after the test (a fixture
    body: ``yield from window_with_summaries(...)``)."""
    window = open_window(qtbot, tmp_path, path)
    qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
    yield window
    close_window(window)


def close_window(window: MainWindow) -> None:
    """Close without the unsaved-changes question (tests that check it answer it themselves)."""
    window.runner.cancel_all()
    window.runner.wait_for_done(60_000)
    window.stack.setClean()
    window.close()


def accept_dialog_when_ready(get_dialog, timeout_ms: int = 30_000) -> list:
    """Schedule: once ``get_dialog()`` returns a visible import dialog whose Open button is enabled (its
    preview was read), accept it. Returns a list that receives the dialog (to inspect afterwards)."""
    seen = []
    deadline = [timeout_ms]

    def poll():
        dialog = get_dialog()
        if dialog is not None and dialog.isVisible():
            ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
            if ok.isEnabled():
                seen.append(dialog)
                dialog.accept()
                return
        deadline[0] -= 50
        if deadline[0] > 0:
            QTimer.singleShot(50, poll)

    QTimer.singleShot(50, poll)
    return seen


#: What the release dialog marks in orange for the bundled sample as opened (ReleaseDialog.published_outside):
#: its rare categories, nothing else.
SAMPLE_ORANGE = {
    "kept": [],
    "rows_left_out": [],
    "labels_of_dropped": [],
    "bins_from_data": [],
    "rare_categories": [
        "age: '20-29' (1 row)",
        "tumor-size: '45-49' (3 rows), '5-9' (4 rows)",
        "inv-nodes: '24-26' (1 row), '12-14' (3 rows)",
        "breast-quad: '?' (1 row)",
    ],
}


def tick_orange(dialog, expected=None) -> None:
    """Tick the release dialog's box after checking that exactly ``expected`` is orange (SAMPLE_ORANGE by default)
    and that the tick is all the release waits for; then nothing is."""
    from optrr_gui.release.dialog import NEEDS_TICK

    assert dialog.published_outside() == (SAMPLE_ORANGE if expected is None else expected)
    assert dialog.problems() == [NEEDS_TICK] and not dialog.accept_clear.isHidden()
    dialog.accept_clear.setChecked(True)
    assert dialog.problems() == []
