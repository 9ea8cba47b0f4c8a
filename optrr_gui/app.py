"""Entry point of ``optrr-gui``: ``optrr-gui [FILE]`` opens FILE (or the bundled sample dataset);
``optrr-gui --screenshot PATH [FILE]`` waits until the designs are computed, renders the main window to a PNG
and exits (0 on success).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

#: Window size of screenshots (the smallest screen the window is designed for).
SCREENSHOT_SIZE = (1366, 768)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="optrr-gui", description="OptRR desktop application")
    parser.add_argument("file", nargs="?", help="data file or .optrr project to open (default: the bundled sample)")
    parser.add_argument("--screenshot", metavar="PATH", help="render the main window to this PNG and exit")
    parser.add_argument("--size", default=None, help="window size for --screenshot, e.g. 1366x768")
    parser.add_argument(
        "--tab", default="design", choices=("design", "data", "compare", "analyse"), help="tab shown in the screenshot"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds --screenshot waits for the designs")
    parser.add_argument("--settings", metavar="INI", help="settings file to use instead of the user's settings")
    parser.add_argument(
        "--start-report",
        action="store_true",
        help="with --screenshot: print, as one JSON line on stdout, the wall-clock times (seconds since the epoch) "
        "at which the window was shown, the file was read (columns listed, usable) and every design was ready",
    )
    return parser


def parse_size(text: str | None) -> tuple[int, int]:
    if not text:
        return SCREENSHOT_SIZE
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"optrr-gui: error: --size must look like 1366x768, got {text!r}") from None
    return w, h


def make_app():
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from .common.settings import APPLICATION, ORGANIZATION

    app = QApplication.instance()
    if app is None:
        QCoreApplication.setOrganizationName(ORGANIZATION)
        QCoreApplication.setApplicationName(APPLICATION)
        app = QApplication(sys.argv[:1])
    return app


def build_window(args):
    """The main window for parsed arguments, shown, with FILE (or the sample) opening in the background."""
    from .common.settings import Settings
    from .main_window import MainWindow
    from .state.paths import DEFAULT_SAMPLE

    path = str(Path(args.file).resolve()) if args.file else str(DEFAULT_SAMPLE)
    if args.settings:
        settings = Settings(args.settings)
    elif args.screenshot:
        settings = Settings(Path(tempfile.mkdtemp(prefix="optrr-gui-")) / "settings.ini")
    else:
        settings = Settings()
    window = MainWindow(settings)
    if args.screenshot:
        window.fit_when_shown = False  # the PNG has exactly the size asked for, whatever the screen
        window.resize(*parse_size(args.size))
    window.show()
    window.open_file(path)
    return window


def take_screenshot(window, args) -> int:
    from .main_window import TAB_ANALYSE, TAB_COMPARE, TAB_DATA, TAB_DESIGN

    tab = {"design": TAB_DESIGN, "data": TAB_DATA, "compare": TAB_COMPARE, "analyse": TAB_ANALYSE}[args.tab]
    window.tabs.setCurrentIndex(tab)
    stamps = StartStamps(window) if args.start_report else None
    ok = window.wait_until_ready(args.timeout)
    if tab == TAB_COMPARE and window.compare_view is not None:
        ok = window.compare_view.wait_until_ready(args.timeout) and ok
        ok = window.wait_until_ready(args.timeout) and ok
    if window.last_error:
        print(f"optrr-gui: {window.last_error}", file=sys.stderr)
    if not ok:
        print(f"optrr-gui: the window was not ready after {args.timeout:g} s; screenshot not written", file=sys.stderr)
        window.close()
        return 1
    window.mechanism.flush()
    if stamps is not None:
        stamps.report()
    saved = window.grab().save(args.screenshot, "PNG")
    window.close()
    if not saved:
        print(f"optrr-gui: cannot write {args.screenshot}", file=sys.stderr)
        return 1
    return 0


class StartStamps:
    """Wall-clock times of the start-up milestones (``--start-report``), observed by a 5 ms timer on the UI
    thread: *shown* = the first turn of the event loop after ``show()`` (the window has been painted);
    *usable* = the file is read (columns listed, data in); *ready* = every design computed (the screenshot)."""

    def __init__(self, window):
        from PySide6.QtCore import QTimer

        self.window = window
        self.times: dict[str, float] = {}
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        QTimer.singleShot(0, lambda: self.times.setdefault("shown", time.time()))

    def _tick(self) -> None:
        if not self.window.loading:
            self.times.setdefault("usable", time.time())

    def report(self) -> None:
        import json

        self.timer.stop()
        now = time.time()
        self.times.setdefault("shown", now)
        self.times.setdefault("usable", now)
        self.times["ready"] = now
        print(json.dumps(self.times), flush=True)


def main(argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    import multiprocessing

    multiprocessing.freeze_support()  # worker processes of a frozen (PyInstaller) build
    args = build_parser().parse_args(argv)
    if args.screenshot and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # renders without a display (CI, documentation)
    app = make_app()
    check_qt()
    window = build_window(args)
    window.startup_seconds = time.perf_counter() - t0
    if args.screenshot:
        return take_screenshot(window, args)
    return app.exec()


def check_qt() -> None:
    """PySide6 6.12.0 drops a reference to True on every Python-side signal emit and aborts the interpreter
    after a few hundred emits; say so instead of crashing mysteriously later."""
    import PySide6

    if PySide6.__version__ == "6.12.0":
        print(
            "optrr-gui: warning: PySide6 6.12.0 has a reference-counting bug that crashes long sessions; "
            "install another version (pip install 'PySide6-Essentials!=6.12.0')",
            file=sys.stderr,
        )


if __name__ == "__main__":
    sys.exit(main())
