"""Render the main views of the real main window to ``docs/img/*.png``, offscreen (no display needed).

Each view is the application as a user sees it, on real engine calls: the bundled sample (breast cancer, 10
columns, 286 rows) and the 77-column survey-sized synthetic file of ``bench/gui_stall.py`` (``make_wide_csv``).
Windows are 1280 x 800 unless the name says otherwise (the Design and Compare tabs again at 1024 x 600, the
smallest screen the window is made for). Releases made for the *Analyse* view go to a temporary folder, their
audit record too (``OPTRR_AUDIT_DIR``); nothing outside ``--out`` is written.

    QT_QPA_PLATFORM=offscreen python3 tools/screenshots.py              # every view into docs/img
    python3 tools/screenshots.py --only design,data --out /tmp/shots     # some of them elsewhere

Look at every image after running it (the script checks sizes, not layout).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LARGE = (1280, 800)
SMALL = (1024, 600)
#: The sample's columns shown in the Data, Compare and Analyse views.
RARE_COLUMN = "inv-nodes"
PREVIEW_COLUMNS = ["age", "menopause", "tumor-size"]
ANALYSE_COLUMNS = ["age", "menopause"]


def wait(condition, timeout: float = 300.0, what: str = "the window") -> None:
    """Turn the event loop until ``condition()`` holds (a script: polling is fine here, unlike in tests)."""
    from PySide6.QtWidgets import QApplication

    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        QApplication.processEvents()
        if condition():
            QApplication.processEvents()
            return
        time.sleep(0.02)
    raise SystemExit(f"screenshots: {what} was not ready after {timeout:g} s")


class Shots:
    def __init__(self, out: Path, work: Path):
        self.out, self.work = out, work
        self.written: list[Path] = []

    def window(self, path: str | None = None, size=LARGE, confirm: bool = True):
        """The main window on ``path`` (default: the bundled sample), every design computed; ``confirm`` presses
        step 1 (the proposed columns are the ones shared)."""
        from optrr_gui.common.settings import Settings
        from optrr_gui.main_window import MainWindow
        from optrr_gui.state.paths import DEFAULT_SAMPLE

        settings = Settings(Path(tempfile.mkdtemp(dir=self.work)) / "settings.ini")
        window = MainWindow(settings)
        window.fit_when_shown = False  # the exact size asked for (the offscreen screen is 800 x 800)
        window.resize(*size)
        window.show()
        window.open_file(str(path or DEFAULT_SAMPLE))
        self.ready(window)
        if confirm:
            window.confirm_columns()
            self.ready(window)
        window.stack.setClean()  # closing asks nothing
        return window

    def ready(self, window) -> None:
        wait(lambda: window.is_ready() and window.state.n_rows is not None, what="the designs")
        window.mechanism.flush()

    def resize(self, window, size) -> None:
        window.resize(*size)
        wait(lambda: (window.width(), window.height()) == size, what=f"the window at {size}")
        self.ready(window)

    def save(self, widget, name: str, size=None) -> None:
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()
        image = widget.grab()
        path = self.out / name
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"screenshots: cannot write {path}")
        if size is not None and (image.width(), image.height()) != size:
            raise SystemExit(f"screenshots: {name} is {image.width()} x {image.height()}, not {size[0]} x {size[1]}")
        self.written.append(path)
        print(f"{path}  {image.width()} x {image.height()}", flush=True)

    @staticmethod
    def close(window) -> None:
        window.runner.cancel_all()
        window.runner.wait_for_done(60_000)
        window.stack.setClean()
        window.close()

    # -- the views ----------------------------------------------------------------------------------------
    def safe_start(self) -> None:
        window = self.window(confirm=False)
        self.save(window, "gui-safe-start.png", LARGE)
        self.close(window)

    def design(self) -> None:
        window = self.window()
        window.attributes.view.selectRow(1)
        self.save(window, "gui-design.png", LARGE)
        self.resize(window, SMALL)
        self.save(window, "gui-design-1024.png", SMALL)
        self.close(window)

    def design_utility(self) -> None:
        """Total-budget mode at whole-record ε 2: the predicted error ranks the designs, Utility among them."""
        window = self.window()
        window.attributes.total.setChecked(True)
        window.attributes.target.setValue(2.0)
        wait(lambda: window.controller.request.get("budget_mode"), what="budget mode")
        self.ready(window)
        self.save(window, "gui-design-utility.png", LARGE)
        self.close(window)

    def data(self) -> None:
        from optrr_gui.main_window import TAB_DATA

        window = self.window()
        window.tabs.setCurrentIndex(TAB_DATA)
        wait(lambda: bool(window.summaries), what="the column summaries")
        column = [c.name for c in window.state.columns].index(RARE_COLUMN)
        table = window.data_view.table
        table.setCurrentIndex(table.model().index(0, column))
        self.save(window, "gui-data-summary.png", LARGE)
        self.close(window)

    def compare(self) -> None:
        from optrr_gui.main_window import TAB_COMPARE

        window = self.window()
        window.tabs.setCurrentIndex(TAB_COMPARE)
        page = window.compare_view.preview
        page.set_picked(PREVIEW_COLUMNS)

        def drawn(columns: int) -> bool:
            result, graphics = page.result, page.graphics
            return (
                result is not None
                and not page.is_running()
                and len(result["frames"]) == columns
                and page._drawn_size == (graphics.width(), graphics.height())
            )

        wait(lambda: drawn(len(PREVIEW_COLUMNS)), what="the release preview")
        self.save(window, "gui-compare.png", LARGE)
        window.resize(*SMALL)
        wait(lambda: (window.width(), window.height()) == SMALL and drawn(len(PREVIEW_COLUMNS)), what="the preview")
        self.save(window, "gui-compare-1024.png", SMALL)
        self.close(window)

    def compare_designs(self) -> None:
        """Compare > Designs at your ε: every ranked design released from the sample in memory, at whole-record
        ε 3 (a budget where the 2- and 3-way tables say something at 286 rows)."""
        from optrr_gui.main_window import TAB_COMPARE

        window = self.window()
        window.tabs.setCurrentIndex(TAB_COMPARE)
        view = window.compare_view
        page = view.designs
        view.tabs.setCurrentWidget(page)
        page.target.setValue(3.0)
        page.repetitions.setValue(5)
        page.run()
        wait(lambda: page.result is not None and not page.is_running(), what="the designs comparison")
        self.save(window, "gui-compare-designs.png", LARGE)
        self.close(window)

    def release_and_analyse(self) -> None:
        """The release dialog before releasing (columns in the clear and dropped listed), then the receiver's
        side: the release opened in *Analyse a release* and a 2-way table estimated."""
        from optrr_gui.main_window import TAB_ANALYSE
        from optrr_gui.release.dialog import NEEDS_TICK, ReleaseDialog

        window = self.window()
        output = self.work / "breast_cancer_release.csv"
        dialog = ReleaseDialog(window, window)
        dialog.output.setText(str(output))
        dialog.show()
        # ready but for the tick: the sample's rare categories are published outside the ε (orange)
        wait(lambda: dialog.release_button.isEnabled() or dialog.problems() == [NEEDS_TICK], what="the release dialog")
        self.save(dialog, "gui-release-columns.png")
        dialog.accept_clear.setChecked(True)
        wait(lambda: dialog.release_button.isEnabled(), what="the release dialog, ticked")
        if not dialog.start():
            raise SystemExit(f"screenshots: the release did not start: {dialog.progress_label.text()}")
        wait(lambda: dialog.result_state != "running", what="the release")
        if dialog.result_state != "done":
            raise SystemExit(f"screenshots: the release failed: {dialog.progress_label.text()}")
        dialog.close()
        window.tabs.setCurrentIndex(TAB_ANALYSE)
        view = window.analyse_view
        view.open_release(str(output))
        wait(lambda: view.opened is not None, what="the release in Analyse")
        view.set_selected(ANALYSE_COLUMNS)
        view.estimate()
        wait(lambda: view.result is not None, what="the estimate")
        self.save(window, "gui-analyse.png", LARGE)
        self.close(window)

    def help(self) -> None:
        window = self.window()
        window.show_guide()
        help_window = window.help_window
        help_window.resize(900, 700)
        wait(lambda: help_window.isVisible(), what="the guide")
        self.save(help_window, "gui-help.png")
        help_window.close()
        self.close(window)

    def wide(self) -> None:
        """The 77-column file: the Design tab (the ε chart scrolls, one row per column) at both sizes."""
        sys.path.insert(0, str(ROOT))
        from bench.gui_stall import make_wide_csv

        window = self.window(make_wide_csv(str(self.work)))
        self.save(window, "gui-epsilon-chart-77.png", LARGE)
        self.resize(window, SMALL)
        self.save(window, "gui-design-77-1024.png", SMALL)
        self.close(window)


VIEWS = {
    "safe-start": Shots.safe_start,
    "design": Shots.design,
    "design-utility": Shots.design_utility,
    "data": Shots.data,
    "compare": Shots.compare,
    "compare-designs": Shots.compare_designs,
    "analyse": Shots.release_and_analyse,
    "help": Shots.help,
    "wide": Shots.wide,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder of the PNGs (default docs/img)")
    parser.add_argument("--only", help=f"comma-separated views of: {', '.join(VIEWS)}")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(VIEWS)
    unknown = [n for n in names if n not in VIEWS]
    if unknown:
        parser.error(f"unknown view {unknown[0]!r}; choose from {', '.join(VIEWS)}")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    work = Path(tempfile.mkdtemp(prefix="optrr-screenshots-"))
    (work / "audit").mkdir()
    os.environ["OPTRR_AUDIT_DIR"] = str(work / "audit")  # the releases' audit record stays in the scratch folder
    from optrr_gui.app import make_app

    make_app()
    shots = Shots(Path(args.out), work)
    shots.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        VIEWS[name](shots)
    print(f"{len(shots.written)} images in {shots.out}; look at each one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
