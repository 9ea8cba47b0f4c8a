"""The Compare tab: the release preview, and the papers' figures under their own heading; every plot
exportable as PNG, SVG or CSV.

*Release preview* (first): for the perturbed columns the user picks, their categories as the release encodes
them (the Design tab's recoding, bins and missing values) and the design the release would use (the one
marked ● on the Design tab): original vs expected perturbed vs estimated shares with intervals. It follows
every design or recoding change (recomputed in a worker process; a superseded computation is cancelled).
*Paper figures*: the paper's Figs. 1-4 (whole-record epsilon of the designs) and AVD of k-way marginals of the
loaded data at one whole-record epsilon (the harness's own preparation rules and epsilon). Every job runs in
the background with progress and Cancel. The figures are the engine's figure specs
(``optrr_engine.compare.output``) drawn by the one renderer (``optrr_gui.plots.figure_render``), so they look
as ``optrr compare`` writes them.
"""

from __future__ import annotations

import time
from html import escape

import pandas as pd
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from optrr_engine import compare as harness
from optrr_engine.analysis.avd import avd
from optrr_engine.compare import output as figures

from ..common.widgets import fmt_eps
from ..plots.figure_render import DrawnFigure, clear_figure, export_png, export_svg, figure_steps, update_figure
from ..state.design_summary import METHOD_LABELS
from ..workers.jobs import compare as compare_jobs

#: The receiver's estimators (optrr_engine.estimation.METHODS), the engine's default first.
ESTIMATORS = {"map": "smoothed ML", "ibu": "IBU (ML)", "clip": "clipped unbiased", "unbiased": "unbiased"}


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
        self._spec, self._drawn_size = None, (0, 0)
        self._drawn: DrawnFigure | None = None  # the figure's items, for an update in place
        self._steps = None  # the figure being built, one panel per turn
        self._steps_size = (0, 0)
        self._step_timer = QTimer(self)
        self._step_timer.setSingleShot(True)
        self._step_timer.setInterval(0)
        self._step_timer.timeout.connect(self._draw_step)
        self._resize_timer = QTimer(self)  # (children of the page: they never fire after it is deleted)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(100)
        self._resize_timer.timeout.connect(self._redraw)
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
        #: the plots, with room on their left for a page's own side widget
        self.body = QHBoxLayout()
        self.body.addWidget(self.graphics, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(self.body, 1)
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
        """Computing, or drawing the result."""
        return self.runner.is_busy(self.channel) or self.drawing()

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
        self.finish_drawing()
        if kind == "csv":
            if self.frame is None:
                return False
            from optrr_engine.io.atomic import write_atomic

            frame = self.frame
            write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False))  # a failed write leaves no half file
            return True
        if kind == "svg":
            export_svg(self.graphics.ci, path, self.title)
            return True
        export_png(self.graphics.ci, path, max(1200, int(self.graphics.width())))
        return True

    def show_figure(self, spec) -> None:
        """Show the engine's figure ``spec`` (drawn at the widget's size; a callable ``spec(width_px)`` is called
        again when the widget is resized). A spec of the shape already shown only updates the items' data
        (plot_render.update_figure); another is built one panel per turn of the event loop, the old picture
        staying on screen until the new one is complete (no UI stall from building the axes)."""
        self._spec = spec
        size = (self.graphics.width(), self.graphics.height())
        figure = spec(size[0]) if callable(spec) else spec
        if self._steps is None and self._drawn is not None and update_figure(self._drawn, figure, size):
            self._drawn_size = size
            return
        self._drawn = None
        self.graphics.setUpdatesEnabled(False)
        self._steps, self._steps_size = self._build(figure, size), size
        self._step_timer.start()

    def _build(self, figure, size):
        """The steps of drawing ``figure``: remove the old one, then figure_steps (one panel per step)."""
        clear_figure(self.graphics.ci)
        yield
        return (yield from figure_steps(self.graphics.ci, figure, size))

    def _draw_step(self) -> None:
        """One step of the figure being built (the step timer, a child of the page, calls it once per turn of the
        event loop: it dies with the page, so no step ever runs on a deleted layout)."""
        if self._steps is None:
            return
        try:
            next(self._steps)
        except StopIteration as done:
            self._steps, self._drawn, self._drawn_size = None, done.value, self._steps_size
            self.graphics.setUpdatesEnabled(True)
            self._redraw()  # resized while it was built: laid out again at the new size
            return
        self._step_timer.start()

    def drawing(self) -> bool:
        """Whether a figure is being built (panel by panel)."""
        return self._steps is not None

    def finish_drawing(self) -> None:
        """Build the rest of the figure now (before an export)."""
        self._step_timer.stop()
        while self._steps is not None:
            self._draw_step()

    def clear_plots(self) -> None:
        """Remove the figure (and stop building one)."""
        self._steps = self._drawn = self._spec = None
        self._step_timer.stop()
        clear_figure(self.graphics.ci)
        self.graphics.setUpdatesEnabled(True)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "_spec", None) is not None:
            self._resize_timer.start()

    def _redraw(self) -> None:
        """Lay the last figure out again at the new size (legends and tick labels depend on it)."""
        size = (self.graphics.width(), self.graphics.height())
        if self._spec is not None and size != self._drawn_size and self._steps is None:
            self.show_figure(self._spec)


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
        self.estimator.addItem("smoothed ML", "map")
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


class PreviewPage(ComparePage):
    """The release, previewed: the Design tab's perturbed columns (pick them on the left), their categories
    after recoding and the design marked ● (exactly the mechanism the release would use)."""

    title = "Release preview"
    channel = "compare:preview"
    in_process = True
    #: At most this many columns are drawn at once (the panels stay readable).
    MAX_SHOWN = 6
    #: Changes within this many milliseconds of the first are previewed once.
    DEBOUNCE_MS = 150

    def __init__(self, window, parent=None):
        super().__init__(window, parent)
        self.controller = window.controller
        self.estimator = QComboBox()
        for key, label in ESTIMATORS.items():
            self.estimator.addItem(label, key)
        self.estimator.setToolTip("How the receiver estimates the shares from the perturbed release")
        self.estimator.currentIndexChanged.connect(lambda _i: self.schedule())
        self.design_label = QLabel()
        self.design_label.setWordWrap(True)
        self.design_label.setTextFormat(Qt.TextFormat.RichText)
        self.controls.addWidget(self.design_label, 1)
        self.controls.addWidget(QLabel("estimator"))
        self.controls.addWidget(self.estimator)
        self.run_button.setText("Refresh")
        self.run_button.setToolTip("The preview follows every change on its own; this recomputes it now")
        self.columns = QListWidget()
        self.columns.setToolTip(f"Tick the perturbed columns to preview (at most {self.MAX_SHOWN} are drawn)")
        self.columns.setMaximumWidth(220)
        #: the ticks are the user's (a tick changed, or ``set_picked``): kept when the perturbed columns change;
        #: until then the first three perturbed columns of the current state are ticked
        self.user_ticked = False
        self.columns.itemChanged.connect(self._tick_changed)
        side = QVBoxLayout()
        side.addWidget(QLabel("Columns (perturbed)"))
        side.addWidget(self.columns, 1)
        self.body.insertLayout(0, side)
        self.result = None
        self.requested_key = None
        self.dirty = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh)
        window.state.subscribe(self._on_state)
        self.controller.changed.connect(self.schedule)
        self.fill_columns()
        self.schedule()

    # -- following the Design tab ---------------------------------------------------------------
    def _on_state(self, kind, _index, _name) -> None:
        if kind != "rows":
            self.fill_columns()
            self.schedule()

    def schedule(self) -> None:
        """Preview again within DEBOUNCE_MS (while the page is visible; otherwise when it is shown). A pending
        preview is not postponed, so a stream of changes (a slow design's progress) never starves it."""
        self.dirty = True
        if self.isVisible() and not self._timer.isActive():
            self._timer.start()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.dirty:
            self._timer.start()

    def _tick_changed(self, _item) -> None:
        self.user_ticked = True
        self.schedule()

    def fill_columns(self) -> None:
        """The perturbed columns of the session. The first three are ticked until the user ticks columns (again
        when the roles change: a column set to perturb and dropped again leaves three ticked, not two); then the
        user's ticks are kept, or the first three once none of them is perturbed any more."""
        names = [c.name for c in self.window_.state.perturbed_columns()]
        current = [self.columns.item(i).text() for i in range(self.columns.count())]
        if names == current:
            return
        kept = set(self.picked()) & set(names) if self.user_ticked else set()
        self.user_ticked = bool(kept)
        ticked = kept or set(names[:3])
        self.columns.blockSignals(True)
        self.columns.clear()
        for name in names:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in ticked else Qt.CheckState.Unchecked)
            self.columns.addItem(item)
        self.columns.blockSignals(False)

    def picked(self) -> list[str]:
        items = [self.columns.item(i) for i in range(self.columns.count())]
        return [it.text() for it in items if it.checkState() == Qt.CheckState.Checked]

    def set_picked(self, names) -> None:
        """Tick exactly ``names`` (one preview), as the user would."""
        wanted = set(names)
        self.user_ticked = True
        self.columns.blockSignals(True)
        for i in range(self.columns.count()):
            item = self.columns.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked)
        self.columns.blockSignals(False)
        self.schedule()

    def design(self):
        """(method, summary) of the design the release would use, or (method, None) while it is computed."""
        method = self.controller.chosen()
        summary = self.controller.current().get(method) if method else None
        if summary is None or not summary.ok or summary.design is None:
            return method, None
        return method, summary

    def refresh(self) -> None:
        """Start the preview of the current design and columns unless it is already shown or running."""
        self._timer.stop()
        self.dirty = False
        method, summary = self.design()
        if summary is None:
            self.requested_key = None
            self.cancel()
            self.design_label.setText("Waiting for the design on the Design tab…" if method else
                                      "No design yet: choose the columns to perturb on the Design tab.")
            return
        self.design_label.setText(
            f"Design ● {METHOD_LABELS.get(method, method)}: whole-record ε {fmt_eps(summary.overall_epsilon)} — "
            "the mechanism the release would use, on the categories after recoding"
        )
        key = (self.controller.key, id(summary.design), tuple(self.picked()[: self.MAX_SHOWN]),
               self.estimator.currentData())
        if key == self.requested_key:
            return
        self.requested_key = key
        self.run()

    def job(self):
        state = self.window_.state
        if not state.data_path:
            raise ValueError("open a data file first")
        _method, summary = self.design()
        if summary is None:
            raise ValueError("the design is being computed on the Design tab; the preview follows it")
        picked = self.picked()[: self.MAX_SHOWN]
        if not picked:
            raise ValueError("tick at least one column on the left")
        if not hasattr(summary.design.mechanism, "marginal"):  # smp / sample-m / rs+fd (issue 13)
            raise ValueError("the preview shows mechanism designs; a sampling design reports only some columns per row")
        # the configuration gives the preview its columns' coding only (the mechanism is passed as it is)
        config = state.to_release_config(method="auto").to_dict()
        return compare_jobs.release_preview, (
            state.data_path,
            dict(state.reader_options),
            config,
            summary.design.mechanism,
            picked,
            self.estimator.currentData(),
        )

    def is_running(self) -> bool:
        """Computing, or about to (an edit waits for the debounce or for its design)."""
        waiting = self.dirty and self.isVisible() and not self.controller.is_idle()
        return super().is_running() or self._timer.isActive() or waiting

    def _failed(self, exc) -> None:
        super()._failed(exc)
        self.requested_key = None  # a later change tries again

    def draw(self, result) -> None:
        self.result = result
        frames = result["frames"]
        self.frame = pd.concat(frames, ignore_index=True)
        label = ESTIMATORS[frames[0]["estimator"].iat[0]]
        self.show_figure(lambda width: preview_figure(frames, label, width))
        lines = []
        for f in frames:
            tv_raw = avd(f["perturbed"], f["original"])
            tv_est = avd(f["estimated"], f["original"])
            half = float(((f["ci_high"] - f["ci_low"]) / 2).mean())
            lines.append(
                f"<b>{escape(str(f['attribute'].iat[0]))}</b> estimate {tv_est:.3f} (interval ± {100 * half:.1f} "
                f"points; the perturbed shares read as they are: {tv_raw:.3f} expected)"
            )
        more = len(self.picked()) - len(frames)
        note = f" Only the first {len(frames)} ticked columns are drawn ({more} more ticked)." if more > 0 else ""
        note += prior_note(frames)
        self.status.setText(
            f"{result['rows']:,} rows as the release encodes them; the estimate is from one simulated release "
            "(seeded). Error, as the total variation distance to the original (the estimate's with that release's "
            "noise; the perturbed shares' without noise, their expected value: the two are not alike): "
            + "; ".join(lines)
            + "."
            + note
        )


def prior_note(frames) -> str:
    """Said under the preview when the simulated release's own spread lowered the smoothed estimate's prior on some
    of the drawn columns (estimation.pooled_prior), as it would in a recipient's estimate of the release."""
    lowered = [f for f in frames if "prior_lowered" in f and bool(f["prior_lowered"].iat[0])]
    if not lowered:
        return ""
    names = ", ".join(f"<b>{escape(str(f['attribute'].iat[0]))}</b>" for f in lowered)
    weight = float(lowered[0]["prior_records"].iat[0])  # the release's one bound (lowered: below the default)
    return (
        f" The smoothed estimate's uniform prior is lowered to {weight:.3g} pseudo-records on {names}: the simulated "
        "release, over all its columns, is further from uniform than the default prior assumes (a recipient's "
        "estimate of the release does the same)."
    )


#: Room taken from the figure's width by the preview's legend, and from each panel's by its y axis, in pixels.
LEGEND_PX = 230
AXIS_PX = 80


def fit_label(text: str, room_px: float) -> str:
    """``text`` shortened (…) to ``room_px`` pixels of the figures' 9 pt tick font."""
    from PySide6.QtGui import QFontMetrics

    from ..plots.figure_render import points_font

    metrics = QFontMetrics(points_font(9))
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(int(room_px), 12))


#: At most every this many bars carries its category's name when the names are too wide for one bar each.
MAX_LABEL_STEP = 3


def tick_labels(texts, room_px: float) -> tuple[str, ...]:
    """The category names under bars ``room_px`` apart: each in full when the widest fits; else every k-th one in
    the room of k bars, the others blank (k the fewest that fits the widest, at most MAX_LABEL_STEP; beyond that the
    names shown are shortened, ``fit_label``). Shortening every name to one bar's room made "10-14" a "1…"."""
    import math

    from PySide6.QtGui import QFontMetrics

    from ..plots.figure_render import points_font

    texts = [str(t) for t in texts]
    metrics = QFontMetrics(points_font(9))
    widest = max((metrics.horizontalAdvance(t) for t in texts), default=0)
    room = max(float(room_px), 1.0)
    step = 1 if widest <= room else min(MAX_LABEL_STEP, max(1, len(texts)), math.ceil(widest / room))
    return tuple(fit_label(t, room * step) if i % step == 0 else "" for i, t in enumerate(texts))


def preview_figure(frames, estimator_label: str, width_px: float = 1200):
    """One panel per column (the engine's marginal panel, with the preview's legend), two or three per row;
    category names fitted to the room under their bars at ``width_px`` (:func:`tick_labels`)."""
    from optrr_engine.compare.figures import FigureSpec

    labels = {
        "original": "original data",
        "perturbed": "expected perturbed",
        "estimated": (
            f"estimated ({estimator_label});<br>bars: 95 % interval from<br>the unbiased estimator's<br>covariance"
        ),
    }
    panels = []
    for f in frames:  # column lookups: a row of mixed types costs a pandas index engine per call
        title = f"{f['attribute'].iat[0]} (ε {f['attribute_epsilon'].iat[0]:.3g})"
        panel = figures.marginal_figure(f, labels=labels, title=title).panels[0]
        panel.legend = None  # one legend for the figure, right of the panels
        panels.append(panel)
    columns = 1 if len(panels) == 1 else (2 if len(panels) <= 4 else 3)
    panel_px = (max(width_px, 400) - LEGEND_PX) / columns - AXIS_PX
    for panel, f in zip(panels, frames, strict=True):
        room = panel_px / len(f) - 6  # a little space between neighbours
        panel.xtick_labels = tick_labels(f["category"], room)
    return FigureSpec(panels, columns=columns, width_px=1200, height_px=700, legend="right")


class CompareView(QWidget):
    """*Release preview* first, *Designs at your ε* second, then *Paper figures* (``pages``: Figs. 1-4, AVD at a
    fixed ε)."""

    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window_ = window
        from .designs_page import DesignsPage

        self.preview = PreviewPage(window)
        self.designs = DesignsPage(window)
        self.pages = [RatioPage(window), AvdPage(window)]
        self.papers = QTabWidget()
        for p in self.pages:
            self.papers.addTab(p, p.title)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.preview, "Release preview")
        self.tabs.setTabToolTip(0, "What the release will look like: the Design tab's columns, categories and design")
        self.tabs.addTab(self.designs, self.designs.title)
        self.tabs.setTabToolTip(
            1, "Every design at one whole-record ε, released from your data in memory: measured vs predicted error"
        )
        self.tabs.addTab(self.papers, "Paper figures")
        self.tabs.setTabToolTip(2, "The research figures of the papers, with their own ε and preparation rules")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)
        self.pages[0].run()  # a first picture at once (small: about a second in the background)

    def is_busy(self) -> bool:
        pages = [self.preview, self.designs, *self.pages]
        return any(p.is_running() for p in pages)

    def wait_until_ready(self, timeout: float = 120.0) -> bool:
        from PySide6.QtWidgets import QApplication

        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            QApplication.processEvents()
            if not self.is_busy():
                return True
            time.sleep(0.01)
        return False
