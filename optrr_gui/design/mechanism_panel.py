"""The live mechanism panel: the whole-record epsilon of every design (recommended one highlighted), the
requested vs achieved epsilon of each column for the design shown (bars; changed columns called out), and
the expected error of each column's estimate at this dataset's size. It only displays the
:class:`DesignController`'s summaries; the designs run in worker threads.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..common.widgets import Spinner, fmt_eps, fmt_pp, fmt_seconds
from ..design.controller import DesignController
from ..plots.column_bars import ACHIEVED_COLOR, HIGHER_COLOR, LOWER_COLOR, REQUESTED_COLOR
from ..plots.column_bars import EpsilonBars as BarChart
from ..state.design_summary import METHOD_HELP, METHOD_LABELS, DesignSummary, display_order

RECOMMENDED_BG = QColor(214, 240, 214)

DESIGN_COLUMNS = ("Design", "Whole-record ε", "vs. Kronecker", "ε changed", "Predicted AVD", "Time")
ATTR_COLUMNS = ("Column", "Categories", "Requested ε", "Achieved ε", "Expected error")


@contextmanager
def bulk_update(table: QTableWidget):
    """Fill a table with its columns' sizing switched off, then size once (a resize-to-contents header
    otherwise re-measures the whole table after every single cell)."""
    header = table.horizontalHeader()
    modes = [header.sectionResizeMode(i) for i in range(header.count())]
    for i in range(header.count()):
        header.setSectionResizeMode(i, QHeaderView.ResizeMode.Fixed)
    table.setUpdatesEnabled(False)
    try:
        yield
    finally:
        for i, mode in enumerate(modes[: header.count()]):
            header.setSectionResizeMode(i, mode)
        table.setUpdatesEnabled(True)


def short_reason(error: str) -> str:
    """A few words of an engine error for a table cell (the full text is in the tooltip)."""
    text = error.lower()
    if "infeasible" in text:
        return "infeasible for these ε"
    if "groups of identical" in text:
        return "too many different columns"
    if "at most" in text or "too large" in text or "handles" in text:
        return "too many columns"
    return error if len(error) <= 32 else error[:30] + "…"


class MechanismPanel(QWidget):
    """Shows the controller's designs; emits ``useDesign(method)`` when the user picks one for the release."""

    useDesign = Signal(str)

    def __init__(self, controller: DesignController, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.shown_method: str | None = None
        self.picked: str | None = None  # the row the user clicked; otherwise the chosen design is shown
        self._rows: list[str] = []

        self.title = QLabel("Mechanism")
        self.title.setStyleSheet("font-weight: bold;")
        self.title.setWordWrap(True)
        self.spinner = Spinner(self)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the designs that are still computing (their old results stay greyed).")
        self.cancel_button.clicked.connect(lambda: self.controller.cancel())
        self.cancel_button.setEnabled(False)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.spinner)
        head.addWidget(self.cancel_button)

        self.designs = QTableWidget(0, len(DESIGN_COLUMNS))
        self.designs.setHorizontalHeaderLabels(DESIGN_COLUMNS)
        self.designs.verticalHeader().hide()
        self.designs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.designs.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.designs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.designs.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(40)
        self.designs.setToolTip(
            "Each row is one way to build the randomization. Whole-record ε is the privacy guarantee for a "
            "complete record: lower = more private. ★ marks the recommended design; ● the one the release uses. "
            "Click a row to see its columns below; double-click to use it for the release."
        )
        self._row_height = self.designs.fontMetrics().height() + 8
        self.designs.verticalHeader().setDefaultSectionSize(self._row_height)
        self.designs.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.designs.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.designs.cellClicked.connect(self._row_clicked)
        self.designs.cellDoubleClicked.connect(lambda row, _c: self._use_row(row))
        self.use_button = QPushButton("Use for release")
        self.use_button.setToolTip("Release with the design selected above instead of the recommended one.")
        self.use_button.clicked.connect(lambda: self._use_row(self.designs.currentRow()))
        self.recommended_button = QPushButton("Follow recommendation")
        self.recommended_button.setToolTip("Release with whichever design is recommended when you release.")
        self.recommended_button.clicked.connect(lambda: self.useDesign.emit("recommended"))
        self.choice_label = QLabel()
        self.choice_label.setWordWrap(True)
        use_row = QHBoxLayout()
        use_row.addWidget(self.choice_label, 1)
        use_row.addWidget(self.use_button)
        use_row.addWidget(self.recommended_button)

        self.chart = BarChart(self)
        self.chart.setMinimumHeight(140)
        self.changes = QLabel()
        self.changes.setWordWrap(True)
        self.changes.setTextFormat(Qt.TextFormat.RichText)

        self.attributes = QTableWidget(0, len(ATTR_COLUMNS))
        self.attributes.setHorizontalHeaderLabels(ATTR_COLUMNS)
        self.attributes.verticalHeader().hide()
        self.attributes.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.attributes.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.attributes.horizontalHeader().setStretchLastSection(True)
        self.attributes.horizontalHeaderItem(4).setToolTip(
            "How far the receiver's estimate of a category's share is expected to be from the truth "
            "(one standard error, in percentage points) for a category holding 1/a of the rows, with this "
            "file's number of rows. Lower ε or fewer rows = larger error."
        )

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addLayout(head)
        tl.addWidget(self.designs)
        tl.addLayout(use_row)
        middle = QWidget()
        ml = QVBoxLayout(middle)
        ml.setContentsMargins(0, 0, 0, 0)
        self.shown_label = QLabel()
        self.shown_label.setWordWrap(True)
        ml.addWidget(self.shown_label)
        ml.addWidget(self.chart, 1)
        ml.addWidget(self.changes)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(middle)
        split.addWidget(self.attributes)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        split.setChildrenCollapsible(False)
        self.splitter = split
        split.setSizes([220, 260, 220])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        # Many results can arrive in one turn of the event loop (one per design): redraw once for all of them.
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)
        self._details_key: tuple | None = None
        self._details_summary: DesignSummary | None = None
        controller.changed.connect(self._refresh_timer.start)
        self.refresh()

    def redraw_pending(self) -> bool:
        """Whether new results wait for the next redraw."""
        return self._refresh_timer.isActive()

    def flush(self) -> None:
        """Redraw now if a redraw is pending (tests, screenshots)."""
        if self._refresh_timer.isActive():
            self._refresh_timer.stop()
            self.refresh()

    # -- user actions ------------------------------------------------------------------------
    def _use_row(self, row: int) -> None:
        if 0 <= row < len(self._rows):
            s = self.controller.summaries.get(self._rows[row])
            if s is not None and not s.releasable:
                self.choice_label.setText(s.note or "This design is shown for comparison only.")
                return
            self.useDesign.emit(self._rows[row])

    def _row_clicked(self, row: int, _column: int = 0) -> None:
        if 0 <= row < len(self._rows):
            self.picked = self.shown_method = self._rows[row]
            self._refresh_details()

    def show_design(self, method: str | None) -> None:
        """Show a design's columns below (None: follow the design the release will use)."""
        self.picked = method
        self.refresh()

    # -- display -----------------------------------------------------------------------------
    def refresh(self) -> None:
        c = self.controller
        running = c.running()
        if running:
            self.spinner.start()
        else:
            self.spinner.stop()
        self.cancel_button.setEnabled(bool(running))
        k = len(c.sizes)
        n = c.state.n_rows
        mode = "total budget" if c.request.get("budget_mode") else "per-column ε"
        rows_text = f"{n:,} rows" if n else "rows not counted yet"
        self.title.setText(f"Mechanism — {k} perturbed columns, {rows_text}, {mode}" if k else "Mechanism")
        recommended = c.recommended()
        chosen = c.chosen()
        kron = c.summaries.get("kronecker")
        kron_eps = kron.overall_epsilon if kron and kron.ok and not c.is_stale("kronecker") else None
        self._rows = display_order(c.methods, c.current(), bool(c.request.get("budget_mode"))) if k else []
        self.designs.blockSignals(True)
        with bulk_update(self.designs):
            self._fill_designs(c, recommended, chosen, kron_eps)
        if self.picked in self._rows:
            self.shown_method = self.picked
        else:
            self.shown_method = chosen if chosen in self._rows else (self._rows[0] if self._rows else None)
        if self.shown_method in self._rows:
            self.designs.selectRow(self._rows.index(self.shown_method))
        self.designs.blockSignals(False)
        if c.state.method == "recommended":
            rec = METHOD_LABELS.get(recommended, recommended) if recommended else "none yet"
            self.choice_label.setText(f"Release uses the recommended design ({rec}).")
        else:
            self.choice_label.setText(f"Release uses {METHOD_LABELS.get(c.state.method, c.state.method)} (your pick).")
        if c.message:
            self.choice_label.setText(c.message)
        self._refresh_details()

    def _fill_designs(self, c, recommended, chosen, kron_eps) -> None:
        self.designs.setRowCount(len(self._rows))
        rows_height = self._row_height * max(len(c.methods), 1) + self.designs.horizontalHeader().height() + 4
        self.designs.setFixedHeight(rows_height)
        bold = QFont(self.designs.font())
        bold.setBold(True)
        for r, method in enumerate(self._rows):
            s = c.summaries.get(method)
            stale = c.is_stale(method)
            status = c.status.get(method, "")
            marks = ("★ " if method == recommended else "") + ("● " if method == chosen else "")
            cells = [marks + METHOD_LABELS.get(method, method), "—", "—", "—", "—", ""]
            if s is not None and s.ok:
                cells[1] = fmt_eps(s.overall_epsilon)
                if kron_eps and method != "kronecker":
                    change = 100 * (s.overall_epsilon / kron_eps - 1)
                    cells[2] = "same" if abs(change) < 0.5 else f"{change:+.0f} %"
                cells[3] = str(len(s.changes)) if s.changes else "none"
                if s.predicted_avd is not None:
                    cells[4] = "not identifiable" if s.non_identifiable else f"{s.predicted_avd:.3g}"
            elif s is not None:
                cells[1] = "not available"
                cells[3] = short_reason(s.error)
            if status == "running":
                frac, msg = c.progress.get(method, (0.0, ""))
                cells[5] = "computing…" + (f" {100 * frac:.0f} %" if frac > 0 else "")
            elif status == "cancelled":
                cells[5] = "cancelled"
            elif s is not None:
                cells[5] = fmt_seconds(s.seconds)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                tip = METHOD_HELP.get(method, "")
                if s is not None and not s.ok:
                    tip += f"\n\nNot available for this request: {s.error}"
                if s is not None and s.ok and s.exceeds_request:
                    tip += "\n\nGives some columns MORE ε than requested (less private); not recommended."
                if col == 4 and s is not None and s.ok and s.predicted_avd is not None:
                    tip = (
                        f"Predicted mean AVD (1/2 sum |estimate - truth|) of the {s.predicted_orders} tables from "
                        "this many rows (unbiased estimator, uniform prior); lower = more accurate."
                    )
                    if s.non_identifiable:
                        shown = "; ".join(",".join(map(str, a)) for a in s.non_identifiable[:8])
                        tip += (
                            f"\n\nCannot be estimated at all from this design (columns {shown}): use more ε, "
                            "other weights or another design."
                        )
                item.setToolTip(tip.strip())
                if method == recommended and not stale:
                    item.setBackground(QBrush(RECOMMENDED_BG))
                    item.setFont(bold)
                if stale or (s is not None and not s.ok):
                    item.setForeground(QBrush(QColor(140, 140, 140)))
                if col in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.designs.setItem(r, col, item)

    def _refresh_details(self) -> None:
        c = self.controller
        method = self.shown_method
        s: DesignSummary | None = c.summaries.get(method) if method else None
        names = c.request.get("names", [])
        # The chart and the column table change only with the shown summary (a new result), not when the
        # results merely become stale after an edit: keep the summary itself so that its id stays unique.
        key = (method, id(s), tuple(names), tuple(c.sizes))
        same = key == self._details_key
        self._details_key, self._details_summary = key, s
        if s is None or not s.ok or len(s.achieved) != len(names):
            self.shown_label.setText(METHOD_LABELS.get(method, "") if method else "")
            self.chart.set_data([], [], [])
            self.changes.setText(s.error if s is not None and not s.ok else "")
            self.attributes.setRowCount(0)
            return
        stale = " (updating…)" if c.is_stale(method) else ""
        budget = f", scale c = {s.scale:.4g}" if s.scale is not None else ""
        if s.lower_bound is not None and s.lower_bound > 0:
            budget += f" (no mechanism can go below {fmt_eps(s.lower_bound)})"
        self.shown_label.setText(
            f"<b>{METHOD_LABELS.get(method, method)}: whole-record ε = {fmt_eps(s.overall_epsilon)}</b>{budget}{stale}"
            f"&nbsp;&nbsp;<span style='color:rgb{REQUESTED_COLOR}'>■</span> requested "
            f"<span style='color:rgb{ACHIEVED_COLOR}'>■</span> achieved "
            f"<span style='color:rgb{HIGHER_COLOR}'>■</span> higher than asked "
            f"<span style='color:rgb{LOWER_COLOR}'>■</span> lower"
        )
        if s.note:
            self.shown_label.setText(self.shown_label.text() + f"<br><i>{s.note}</i>")
        if same:
            return
        self.chart.set_data(names, s.requested, s.achieved)
        if s.changes:
            parts = []
            for ch in s.changes:
                i = int(ch["attribute"])
                color = "#cc0000" if ch["achieved"] > ch["requested"] else "#b36b00"
                word = "less private" if ch["achieved"] > ch["requested"] else "more private, less accurate"
                parts.append(
                    f"<span style='color:{color}'><b>{names[i]}</b> {fmt_eps(ch['requested'])} → "
                    f"{fmt_eps(ch['achieved'])} ({word})</span>"
                )
            self.changes.setText(f"{METHOD_LABELS.get(method, method)} changed: " + "; ".join(parts))
        else:
            self.changes.setText("Every column gets exactly the ε requested.")
        with bulk_update(self.attributes):
            self._fill_attributes(c, s, names)

    def _fill_attributes(self, c, s, names) -> None:
        self.attributes.setRowCount(len(names))
        for i, name in enumerate(names):
            se = s.standard_errors[i] if i < len(s.standard_errors) else math.nan
            cells = [name, str(c.sizes[i]), fmt_eps(s.requested[i]), fmt_eps(s.achieved[i]), fmt_pp(se)]
            for col, text in enumerate(cells):
                item = self.attributes.item(i, col)  # reused: only the texts change from one result to the next
                if item is None:
                    item = QTableWidgetItem()
                    if col > 0:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.attributes.setItem(i, col, item)
                item.setText(text)
                if col == 3:
                    changed = i in s.changed_attributes
                    item.setData(Qt.ItemDataRole.ForegroundRole, QBrush(QColor(*HIGHER_COLOR)) if changed else None)
                    item.setToolTip("This design changed the ε of this column." if changed else "")
