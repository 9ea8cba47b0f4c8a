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


def open_window(qtbot, tmp_path: Path, path: str = SAMPLE, options=None) -> MainWindow:
    """A shown window with ``path`` opened: columns inferred, rows read, every design computed."""
    window = MainWindow(Settings(tmp_path / "settings.ini"))
    # pytest-qt closes the window after the test: without the unsaved-changes question (a modal box)
    qtbot.addWidget(window, before_close_func=lambda w: w.stack.setClean())
    window.show()
    window.open_file(path, options)
    wait_ready(qtbot, window)
    assert window.state.data_path == path, window.last_error
    return window


def wait_ready(qtbot, window: MainWindow, timeout: int = WAIT_MS) -> None:
    qtbot.waitUntil(lambda: window.is_ready() and window.state.n_rows is not None, timeout=timeout)


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
