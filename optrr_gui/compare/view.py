"""The Compare tab: pyqtgraph plots of the comparison harness, each exportable as PNG, SVG or CSV.

Pages: the paper's Figs. 1-4 (whole-record epsilon of the designs); AVD of k-way marginals of the loaded data
at one whole-record epsilon; one attribute's marginal (original vs raw perturbed vs estimated). Every job
runs in the background with progress and Cancel. Figs. 1-4 and the AVD plot are the engine's figure specs
(``optrr_engine.compare.output``) drawn by the one renderer (``optrr_gui.plots.figure_render``), so they look
as ``optrr compare`` writes them.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from optrr_engine import compare as harness
from optrr_engine.compare import output as figures

from ..plots.figure_render import draw_figure, export_png, export_svg
from ..state.design_summary import METHOD_LABELS
from ..workers.jobs import compare as compare_jobs


def parse_ints(text: str, lo: int, hi: int) -> list[int]:
    try:
        values = [int(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise ValueError("give whole numbers separated by commas, e.g. 3, 5, 7, 10") from None
    if not values or any(v < lo or v > hi for v in values):
        raise ValueError(f"each value must be between {lo} and {hi}")
    return sorted(set(values))


class ComparePage(QWidget):
    """Controls on top, a pyqtgraph layout below; run/cancel/progress and export shared by the pages."""

    title = ""
    channel = ""
    #: Jobs with small arguments run in a worker process; those given the loaded data stay in a thread.
    in_process = False

    def __init__(self, window, parent=None):
        super().__init__(parent)
        import pyqtgraph as pg

        self.window_ = window
        self.runner = window.runner
        self.frame = None  # the last result as a DataFrame (CSV export)
        self.started = 0.0
        self.controls = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(180)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.export_buttons = []
        exports = QHBoxLayout()
        exports.addWidget(self.status, 1)
        for kind in ("PNG", "SVG", "CSV"):
            b = QPushButton(f"Export {kind}…")
            b.setEnabled(False)
            b.setToolTip(f"Save {'the data behind the plot' if kind == 'CSV' else 'the plot'} as {kind}")
            lower = kind.lower()
            b.clicked.connect(lambda _c=False, k=lower: self.export(k))
            exports.addWidget(b)
            self.export_buttons.append(b)
        top = QHBoxLayout()
        top.addLayout(self.controls, 1)
        top.addWidget(self.run_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.progress)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.graphics, 1)
        lay.addLayout(exports)

    # -- to implement ------------------------------------------------------------------------
    def job(self):
        """(function, args) to run in the background; raise ValueError for bad input."""
        raise NotImplementedError

    def draw(self, result) -> None:
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------
    def run(self) -> bool:
        try:
            fn, args = self.job()
        except ValueError as exc:
            self.status.setText(f"<span style='color:#cc0000'>{exc}</span>")
            return False
        self.started = time.perf_counter()
        self.status.setText("Computing…")
        self.progress.setValue(0)
        self.cancel_button.setEnabled(True)
        self.runner.submit(
            self.channel,
            fn,
            *args,
            on_done=self._done,
            on_error=self._failed,
            on_progress=self._progress,
            on_cancelled=self._cancelled,
            process=self.in_process,
        )
        return True

    def is_running(self) -> bool:
        return self.runner.is_busy(self.channel)

    def cancel(self) -> None:
        self.runner.cancel(self.channel)

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.status.setText(f"{message} ({time.perf_counter() - self.started:.0f} s)")

    def _done(self, result) -> None:
        self.cancel_button.setEnabled(False)
        self.progress.setValue(1000)
        self.draw(result)
        for b in self.export_buttons:
            b.setEnabled(True)

    def _failed(self, exc) -> None:
        self.cancel_button.setEnabled(False)
        self.status.setText(f"<span style='color:#cc0000'>{exc}</span>")

    def _cancelled(self) -> None:
        self.cancel_button.setEnabled(False)
        self.status.setText("Cancelled.")

    def export(self, kind: str, path: str | None = None) -> bool:
        if path is None:
            start = self.window_.settings.last_dir("export")
            path, _ = QFileDialog.getSaveFileName(
                self, "Export", f"{start}/{self.channel.split(':')[-1]}.{kind}", f"{kind.upper()} (*.{kind})"
            )
            if not path:
                return False
        self.window_.settings.set_last_dir("export", path)
        if kind == "csv":
            if self.frame is None:
                return False
            self.frame.to_csv(path, index=False)
            return True
        if kind == "svg":
            export_svg(self.graphics.ci, path, self.title)
            return True
        export_png(self.graphics.ci, path, max(1200, int(self.graphics.width())))
        return True

    def show_figure(self, spec) -> None:
        """Replace the plots by the engine's figure ``spec`` (drawn at the widget's size)."""
        self.graphics.clear()
        draw_figure(self.graphics.ci, spec, (self.graphics.width(), self.graphics.height()))


class RatioPage(ComparePage):
    title = "Designs: whole-record ε (paper Figs. 1–4)"
    channel = "compare:ratios"
    in_process = True

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.figure = QComboBox()
        for key, (_m, _y, _x, label) in compare_jobs.FIGURES.items():
            self.figure.addItem(label, key)
        self.figure.setToolTip("The four figures of Yamamoto & Shibuya, recomputed with OptRR's designs.")
        self.ks = QLineEdit("3, 5, 7, 10")
        self.ks.setMaximumWidth(160)
        self.ks.setToolTip("Numbers of attributes k, one panel each (the exact LP is slow above about 14)")
        self.sets = QSpinBox()
        self.sets.setRange(5, 2000)
        self.sets.setValue(40)
        self.sets.setToolTip("Random requests per k (the paper uses 200)")
        for label, w in (("Figure", self.figure), ("k", self.ks), ("requests per k", self.sets)):
            self.controls.addWidget(QLabel(label))
            self.controls.addWidget(w)

    def job(self):
        ks = parse_ints(self.ks.text(), 2, 16)
        return compare_jobs.ratio_figure, (self.figure.currentData(), ks, self.sets.value())

    def draw(self, frame) -> None:
        self.frame = frame
        _mode, ycol, _xcol, label = compare_jobs.FIGURES[self.figure.currentData()]
        self.show_figure(figures.ratios_figure(frame, ycol))
        changed = frame.drop_duplicates(["k", "set"])["heuristic_changed"].mean()
        self.status.setText(
            f"{label}. {len(frame.drop_duplicates(['k', 'set']))} random requests; the heuristic changed some ε_i "
            f"in {100 * changed:.0f} % of them (all designs then use its achieved ε_i, as in the paper's code)."
        )


class DataPageBase(ComparePage):
    """Pages that work on the loaded file, prepared by the harness's rules, in a worker process."""

    in_process = True

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.target = QDoubleSpinBox()
        self.target.setRange(0.05, 500.0)
        self.target.setDecimals(2)
        self.target.setSingleStep(0.5)
        self.target.setValue(4.0)
        self.target.setPrefix("ε ")
        self.target.setToolTip("Whole-record ε every design gets (budget shared equally). Lower = more private.")
        self.controls.addWidget(QLabel("Whole-record"))
        self.controls.addWidget(self.target)

    def data_args(self) -> tuple:
        """(path, reader options, columns): the session's perturbed columns when there are two or more."""
        state = self.window_.state
        if not state.data_path:
            raise ValueError("open a data file first")
        names = [c.name for c in state.perturbed_columns()]
        return state.data_path, dict(state.reader_options), names if len(names) >= 2 else None


class AvdPage(DataPageBase):
    title = "Error on this data at a fixed ε (AVD)"
    channel = "compare:avd"

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.subsets = QSpinBox()
        self.subsets.setRange(1, 1000)
        self.subsets.setValue(20)
        self.subsets.setToolTip("Random attribute subsets per marginal size")
        self.estimator = QComboBox()
        self.estimator.addItem("clipped unbiased", "clip")
        self.estimator.addItem("EM (IBU)", "ibu")
        self.axis = QComboBox()
        self.axis.addItem("whole record", "whole_record")
        self.axis.addItem("per attribute", "per_attribute")
        self.axis.setToolTip(
            "Whole record: every method gets this ε for the whole record (OptRR's axis). Per attribute: every "
            "attribute gets this ε (the LOPUB/LOCOP/BRR paper's axis)."
        )
        self.bloom = QCheckBox("LOPUB, LOCOP, BRR")
        self.bloom.setToolTip("Also run the Bloom-filter schemes of the healthcare LDP comparison paper")
        self.controls.addWidget(QLabel("ε axis"))
        self.controls.addWidget(self.axis)
        self.controls.addWidget(QLabel("subsets"))
        self.controls.addWidget(self.subsets)
        self.controls.addWidget(QLabel("estimator"))
        self.controls.addWidget(self.estimator)
        self.controls.addWidget(self.bloom)

    def job(self):
        methods = compare_jobs.AVD_METHODS + (compare_jobs.BLOOM_METHODS if self.bloom.isChecked() else ())
        return compare_jobs.avd_on_file, (
            *self.data_args(),
            float(self.target.value()),
            (2, 3, 4, 5),
            self.subsets.value(),
            self.estimator.currentData(),
            None,
            methods,
            self.axis.currentData(),
        )

    def draw(self, result) -> None:
        rows = result["rows"]
        self.frame = rows
        self.show_figure(figures.avd_figure(rows))
        skipped = [
            f"{m} ({part['error'].iloc[0]})" for m, part in rows.groupby("method") if not part["mean_avd"].notna().any()
        ]
        note = f" Not shown: {'; '.join(skipped)}." if skipped else ""
        self.status.setText(f"Columns prepared as: {harness.rules_text()}.{note}")


class MarginalPage(DataPageBase):
    title = "Marginals: original vs perturbed vs estimated"
    channel = "compare:marginal"

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.method = QComboBox()
        from ..state.design_summary import available_methods

        for m in available_methods():
            self.method.addItem(METHOD_LABELS.get(m, m), m)
        self.attribute = QComboBox()
        self.attribute.setMinimumContentsLength(12)
        self.attribute.setToolTip("The column whose distribution is shown")
        self.controls.addWidget(QLabel("design"))
        self.controls.addWidget(self.method)
        self.controls.addWidget(QLabel("column"))
        self.controls.addWidget(self.attribute)

    def job(self):
        path, options, columns = self.data_args()
        if self.attribute.count() == 0:
            self.set_columns(columns or [c.name for c in self.window_.state.columns])
        return compare_jobs.marginal_on_file, (
            path,
            options,
            columns,
            float(self.target.value()),
            self.method.currentData(),
            self.attribute.currentText(),
        )

    def set_columns(self, names: list[str]) -> None:
        """The columns the harness kept (identifiers and one-valued columns are left out)."""
        current = self.attribute.currentText()
        if [self.attribute.itemText(i) for i in range(self.attribute.count())] != list(names):
            self.attribute.clear()
            self.attribute.addItems(list(names))
            if current in names:
                self.attribute.setCurrentText(current)

    def draw(self, result) -> None:
        self.set_columns(result["columns"])
        frame, rows = result["frame"], result["rows"]
        self.frame = frame
        self.show_figure(figures.marginal_figure(frame, METHOD_LABELS.get(frame["method"].iloc[0])))
        err = float(np.abs(frame["estimated"] - frame["original"]).sum() / 2)
        raw = float(np.abs(frame["perturbed"] - frame["original"]).sum() / 2)
        self.status.setText(
            f"Total variation distance to the original: raw perturbed {raw:.3f}, estimated {err:.3f} "
            f"({rows:,} rows). The raw perturbed shares are pulled towards uniform; the estimate corrects "
            "this. Grey = what you know, blue = what the receiver recovers."
        )


class CompareView(QWidget):
    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window_ = window
        self.pages = [RatioPage(window), AvdPage(window), MarginalPage(window)]
        self.tabs = QTabWidget()
        for p in self.pages:
            self.tabs.addTab(p, p.title)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)
        self.pages[0].run()  # a first picture at once (small: about a second in the background)

    def is_busy(self) -> bool:
        return any(p.is_running() for p in self.pages)

    def wait_until_ready(self, timeout: float = 120.0) -> bool:
        from PySide6.QtWidgets import QApplication

        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            QApplication.processEvents()
            if not self.is_busy():
                return True
            time.sleep(0.01)
        return False
