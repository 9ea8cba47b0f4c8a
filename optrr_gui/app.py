"""Entry point of ``optrr-gui``: ``optrr-gui [FILE]`` opens FILE (or the bundled sample dataset);
``optrr-gui --screenshot PATH [FILE]`` waits until the designs are computed, renders the main window to a PNG
and exits (0 on success).
"""

from __future__ import annotations

import argparse
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

    from .settings import APPLICATION, ORGANIZATION

    app = QApplication.instance()
    if app is None:
        QCoreApplication.setOrganizationName(ORGANIZATION)
        QCoreApplication.setApplicationName(APPLICATION)
        app = QApplication(sys.argv[:1])
    return app


def main(argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    args = build_parser().parse_args(argv)
    app = make_app()
    from .main_window import TAB_ANALYSE, TAB_COMPARE, TAB_DATA, TAB_DESIGN, MainWindow
    from .paths import DEFAULT_SAMPLE
    from .settings import Settings

    path = str(Path(args.file).resolve()) if args.file else str(DEFAULT_SAMPLE)
    if args.screenshot:
        tmp = tempfile.TemporaryDirectory(prefix="optrr-gui-")
        settings = Settings(args.settings or Path(tmp.name) / "settings.ini")
    else:
        tmp = None
        settings = Settings(args.settings) if args.settings else Settings()
    window = MainWindow(settings)
    if args.screenshot:
        window.resize(*parse_size(args.size))
    window.show()
    window.startup_seconds = time.perf_counter() - t0
    window.open_file(path)
    if not args.screenshot:
        return app.exec()

    tab = {"design": TAB_DESIGN, "data": TAB_DATA, "compare": TAB_COMPARE, "analyse": TAB_ANALYSE}[args.tab]
    window.tabs.setCurrentIndex(tab)
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
    saved = window.grab().save(args.screenshot, "PNG")
    window.close()
    if tmp is not None:
        tmp.cleanup()
    if not saved:
        print(f"optrr-gui: cannot write {args.screenshot}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
