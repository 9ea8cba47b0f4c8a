"""The live mechanism panel: the whole-record epsilon of every design (recommended one highlighted), the
requested vs achieved epsilon of each column for the design shown (bars; changed columns called out), and
the expected error of each column's estimate at this dataset's size. It only displays the
:class:`DesignController`'s summaries; the designs run in worker threads.
"""

from __future__ import annotations

import html
import math
from contextlib import contextmanager

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGraphicsColorizeEffect,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.utility.identifiability import MAX_CELL_SD
from optrr_engine.utility.predicted import NO_INFORMATION as NO_INFORMATION_SHARE

from ..common.widgets import Spinner, WrappedLabel, fmt_eps, fmt_pp, fmt_seconds
from ..design.controller import DesignController
from ..plots.column_bars import ACHIEVED_COLOR, HIGHER_COLOR, LOWER_COLOR, REQUESTED_COLOR
from ..plots.column_bars import EpsilonBars as BarChart
from ..state.design_summary import (
    BUDGET_ONLY_METHODS,
    ERASED,
    METHOD_HELP,
    METHOD_LABELS,
    NO_INFORMATION,
    TOO_NOISY,
    DesignSummary,
    changes_text,
    display_order,
    joint_note,
    may_recommend,
    power_text,
    recommendation_text,
    weights_note,
)
from ..state.needed_marginals import WAY_OUT, label_index_sets
from .marginals_editor import MarginalsEditor

RECOMMENDED_BG = QColor(214, 240, 214)
#: The heading's mode with ε per column: the designs that choose each column's ε themselves are rows only with a
#: whole-record budget (design_summary.BUDGET_ONLY_METHODS).
PER_COLUMN_MODE = "per-column ε (Utility and the sampling designs need a total budget)"

DESIGN_COLUMNS = ("Design", "Whole-record ε", "Predicted AVD", "ε changed", "vs. Kronecker", "Time")
EPS_COL, AVD_COL, CHANGED_COL, KRON_COL, TIME_COL = 1, 2, 3, 4, 5
#: The headers as shown: the long ones on two lines, so that the whole table fits beside the column table.
HEADER_LINES = {
    "Whole-record ε": "Whole-\nrecord ε",
    "Predicted AVD": "Predicted\nerror",  # the AVD, explained in the tooltip
    "vs. Kronecker": "vs.\nKronecker",
}
#: The headers' tooltips (the others show the header's name in full).
HEADER_TIPS = {
    "Predicted AVD": "Predicted AVD (average variation distance, the total variation distance of statistics), the "
    "predicted error: the average distance between the estimated and the true table: half the sum "
    "of absolute differences; 0.05 ≈ 5 % of the records in the wrong cell, predicted before release from the "
    "design and the row count. Lower = more accurate.",
    "vs. Kronecker": "Compared with the Kronecker design, the textbook method (each column randomized on its own). "
    "Total budget: the predicted error against Kronecker's (−35 % error = a third less error), both predicted "
    "from the designs alone at a uniform table (on skewed real data the gap is often smaller: Compare ▸ Designs "
    "at your ε measures it on your file). ε per column: the whole-record ε against Kronecker's (−35 % ε = more "
    "private).",
}
#: The tooltip of the line under the design table that says what tests of association the shown design detects.
POWER_TIP = (
    "Before release, from the design alone: the weakest association (Cohen's w of the true 2-way table) that a "
    "test of independence on the release detects with 80 % power at the 5 % level, on the needed 2-way tables at "
    "uniform margins and the rows the predicted error is for, against the same test on the original records "
    "(optrr design prints the same line). Where even the strongest possible association is detected less than "
    "80 % of the time, a large p-value says nothing about independence."
)
#: Where a needed table is too noisy at this number of rows: what the estimate shown does there, in plain words.
TOO_NOISY_MEANS = "there the estimate shown falls back towards equal shares; the Predicted AVD includes that error"
#: The Predicted-AVD cell of a design none of whose needed tables can be estimated at this number of rows.
NO_INFORMATION_AVD = "no information"
#: The columns that give way, in this order, when the table is narrower than its contents (elided; the row's
#: tooltip says their text in full): the reasons a design is not available first; the design names never do.
SHRINKABLE = (CHANGED_COL, AVD_COL, TIME_COL)
#: A design that is not available says why in its "ε changed" cell, spanning this many columns (its "vs. Kronecker"
#: is "—"): at 1280 px the reason alone had the ε-changed column's 78 px ("cannot meet the t…").
REASON_SPAN = KRON_COL - CHANGED_COL + 1
#: The most characters of an engine error's first clause a cell shows (the full text is in the row's tooltip).
REASON_CHARS = 40
#: The design table shows at least this many rows (more scroll) and at most all of them.
MIN_VISIBLE_ROWS = 5
ATTR_COLUMNS = ("Column", "Categories", "Requested ε", "Achieved ε", "Expected error")
REQUESTED_COL, ACHIEVED_COL, ERROR_COL = 2, 3, 4
#: The column table's headers as shown. The Expected-error cells are ONE standard error ("± 5.6 pp"), not the
#: half-width of a 95 % interval as the Analyse tab shows: the header says so itself, not only its tooltip.
ATTR_HEADER_LINES = {"Expected error": "Expected error\n(± 1 s.e.)"}
#: What the column table's third column holds, by where the per-column ε come from (:func:`epsilon_source`):
#: (header, header tooltip, legend word of the chart). Per-column mode: the ε the user typed. Total-budget mode:
#: no column's ε was typed; the budget designs split the target by the weights (the largest scale c with
#: c x weight within the target), the utility and sampling designs choose each column's ε themselves.
SOURCE_HEADERS = {
    "typed": ("Requested ε", "The ε you set for this column.", "requested"),
    "weights": (
        "ε from weights",
        "Not typed by you: scale c × the column's weight, with c the largest that keeps the whole record within "
        "the target (the target shared by the weights).",
        "from weights",
    ),
    "design": (
        "ε chosen by design",
        "Not typed by you: this design chooses each column's ε itself; the whole record stays within the target.",
        "chosen by design",
    ),
}
#: The Expected-error cell of a column in words, by the engine's rules on its 1-way table
#: (:func:`~optrr_gui.state.design_summary.column_state`; the number stays in the cell's tooltip) and what each
#: word means, in one sentence.
STATE_TEXTS = {
    ERASED: "not identifiable",
    NO_INFORMATION: "no information",
    TOO_NOISY: "too noisy",
}
STATE_TIPS = {
    ERASED: "Not identifiable: ε 0 here, the released column is pure noise and no number of rows recovers its shares.",
    NO_INFORMATION: "No information: at this ε and number of rows the data remove less than "
    f"{100 * NO_INFORMATION_SHARE:g} % of the prior's uncertainty about this column's shares, so its estimate stays "
    "near equal shares whatever the data.",
    TOO_NOISY: f"Too noisy: one standard error of the unbiased estimate reaches {100 * MAX_CELL_SD:g} percentage "
    "points, so its intervals span everything and the shown estimate leans on the prior (equal shares).",
}
#: A change of the designs' states only (a new request started: results become stale; progress) is drawn after
#: this many milliseconds; a result arriving meanwhile is drawn at once, with the states.
STATUS_REDRAW_MS = 100
#: A result that arrives while a design of the same request is still computing on the quick thread waits for it
#: at most this many milliseconds: designs computed together are drawn together (one redraw per edit).
QUICK_WAIT_MS = 20
#: The shown design's column table and chart are drawn after the design table, each at its own later turn of the
#: event loop (a bulk role change of 77 columns fills 385 cells and 77 bars: in one turn with the design table,
#: a stall of ~40 ms of UI-thread CPU; split, at most ~15 ms each).
DETAIL_STEPS = ("table", "chart")
GREY = QColor(140, 140, 140)
#: How far the chart's colours turn grey while it shows the result of an older request (computing for the new one).
STALE_GREY = 0.85


def set_text(label, text: str) -> None:
    """``label.setText(text)`` unless it already shows ``text`` (a wrapped label measures its height anew)."""
    if label.text() != text:
        label.setText(text)


def cell_text_width(table: QTableWidget, item: QTableWidgetItem) -> int:
    """The width ``item``'s text asks in ``table``: its font's advance plus the cell's margins (microseconds a cell;
    the delegate's own measure, ``sizeHintForColumn``, counts a cell spanning several columns in its first)."""
    pad = 2 * table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 8
    return QFontMetrics(item.font()).horizontalAdvance(item.text()) + pad


def fit_columns(table: QTableWidget, shrinkable=(), spanning: int | None = None) -> None:
    """Each column as wide as its header and cells ask; when the viewport is narrower than the sum, the
    ``shrinkable`` columns give up the difference one after the other, each down to its header's width (below
    that the table scrolls). The last column takes whatever is left (stretched). The cells of column ``spanning``
    that span several columns ask their width of those columns together (the first one widened if need be)."""
    header = table.horizontalHeader()
    n = table.columnCount()
    floor = [header.sectionSizeHint(c) for c in range(n)]
    widths = [max(table.sizeHintForColumn(c), floor[c]) for c in range(n)]
    if spanning is not None:
        own, spans = floor[spanning], []
        for r in range(table.rowCount()):
            item = table.item(r, spanning)
            if item is None:
                continue
            span = table.columnSpan(r, spanning)
            if span > 1:
                spans.append((span, cell_text_width(table, item)))
            else:
                own = max(own, cell_text_width(table, item))
        widths[spanning] = own
        for span, need in spans:
            widths[spanning] += max(0, need - sum(widths[spanning : spanning + span]))
    over = sum(widths) - table.viewport().width()
    for c in shrinkable:
        give = min(max(over, 0), widths[c] - floor[c])
        widths[c] -= give
        over -= give
    for c in range(n):  # (the last one too: stretching only ever widens it)
        if table.columnWidth(c) != widths[c]:
            table.setColumnWidth(c, widths[c])


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


def epsilon_source(method: str | None, s: DesignSummary | None) -> str:
    """Where a design's per-column "requested" ε come from: "typed" (ε per column), "weights" (total budget:
    a budget design's scale c × weight, ``s.scale``) or "design" (total budget: the utility and sampling designs
    choose them; their requested ε are their achieved ones)."""
    if method in BUDGET_ONLY_METHODS:
        return "design"
    if s is not None and s.scale is not None:
        return "weights"
    return "typed"


def error_cell(se: float, state: str = "") -> tuple[str, str]:
    """(text, tooltip) of the Expected-error cell of one column: "± 5.6 pp", or the engine's word for its 1-way
    table (``state``: :func:`~optrr_gui.state.design_summary.column_state`) with its meaning and the number in
    the tooltip."""
    if state not in STATE_TEXTS:
        return fmt_pp(se), ""
    number = "" if se is None or not math.isfinite(se) else f" One standard error: {fmt_pp(se)}."
    return STATE_TEXTS[state], STATE_TIPS[state] + number


def fmt_avd(value: float) -> str:
    """A predicted AVD with 3 significant digits, trailing zeros kept (0.200 beside 0.204, not 0.2)."""
    text = f"{value:#.3g}"
    return text[:-1] if text.endswith(".") else text


def avd_text(s: DesignSummary) -> str:
    """The predicted-error cell: the mean expected AVD, "not identifiable" when the design erases a needed table,
    "no information" when every needed table is too noisy at this number of rows (the estimates shown would be
    the prior's equal shares: the AVD, moderate under the uniform prior, is in the row's tooltip), the AVD with
    "⚠" when some are (the estimate shown falls back towards equal shares there; the AVD includes that error)."""
    if s.predicted_avd is None:
        return "—"
    if s.erased:
        return "not identifiable"
    if s.no_information:
        return NO_INFORMATION_AVD
    if s.non_identifiable:
        return f"{fmt_avd(s.predicted_avd)} ⚠"
    return fmt_avd(s.predicted_avd)


def fmt_sig(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, trailing zeros kept (0.000950, 0.0500)."""
    text = f"{value:#.{digits}g}"
    return text[:-1] if text.endswith(".") else text


def fmt_column_eps(value: float) -> str:
    """A column's ε in the column table: as everywhere (3 decimals) from 0.01 on; smaller ones, which 3 decimals
    would show as 0.001 or 0.000, with 3 significant digits (0.000691)."""
    if value is None or not math.isfinite(value) or value == 0 or abs(value) >= 0.01:
        return fmt_eps(value)
    return fmt_sig(value)


def fmt_change(before: float, after: float) -> tuple[str, str]:
    """(before, after) of a changed ε, with as many significant digits (at least 3) as it takes for the two texts
    to differ: 0.000691 → 0.000955, never 0.001 → 0.001."""
    x, y = fmt_column_eps(before), fmt_column_eps(after)
    digits = 3
    while x == y and digits <= 8:
        x, y = fmt_sig(before, digits), fmt_sig(after, digits)
        digits += 1
    return x, y


def first_clause(text: str, limit: int = REASON_CHARS) -> str:
    """``text`` up to its first clause break (" (", ":", ";", " — ", ", "), at most ``limit`` characters (cut at a
    word, "…")."""
    cut = len(text)
    for mark in (" (", ":", ";", " — ", ", "):
        at = text.find(mark)
        if 0 < at < cut:
            cut = at
    clause = text[:cut].rstrip(" .")
    if len(clause) <= limit:
        return clause
    words = clause[: limit - 1].rsplit(" ", 1)[0]
    return (words if words else clause[: limit - 1]) + "…"


def short_reason(error: str) -> str:
    """A few words of an engine error for a table cell (the full text is in the tooltip): a known reason in
    the GUI's words, else the error's first clause."""
    text = error.lower()
    if "infeasible" in text:
        return "infeasible for these ε"
    if "cannot meet a whole-record" in text:  # budget.distribute_budget: no scale of the weights fits the target
        return "cannot meet the target ε"
    if "named tables over" in text:
        return "needed tables span too many columns"
    if "cannot be used with" in text:  # validation.check_target: above columns x the per-column maximum
        return "target above what can be used"
    if "categories" in text and "too large for the exact design" in text:  # designs/optimal_lp.check_lp_size
        return "too many categories"
    if "at most" in text or "too large" in text or "handles" in text:
        return "too many columns"
    if "total-budget mode" in text:  # controller: a design with ε per column only (Clusters)
        return "needs ε per column"
    return first_clause(error)


class MechanismPanel(QWidget):
    """Shows the controller's designs; emits ``useDesign(method)`` when the user picks one for the release."""

    useDesign = Signal(str)
    #: The user edited the needed marginals (value for SessionState.needed_marginals) ...
    neededEdited = Signal(object)
    #: ... or whether designs that change the ε typed in may be recommended.
    acceptChangedEdited = Signal(bool)
    #: The panel was drawn anew (once per batch of the controller's changes).
    redrawn = Signal()
    #: The shown design's column table and chart were drawn anew (once per newly shown result).
    detailsDrawn = Signal()

    def __init__(self, controller: DesignController, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.shown_method: str | None = None
        self.picked: str | None = None  # the row the user clicked; otherwise the chosen design is shown
        self._rows: list[str] = []

        self.title = WrappedLabel("Mechanism")
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

        self.needed = MarginalsEditor(controller.state, self)
        self.needed.edited.connect(self.neededEdited)
        self.accept_changed = QCheckBox("Recommend designs that lower some columns' ε")
        self.accept_changed.setToolTip(
            "Off (default): the ★ recommendation only goes to designs that give every column exactly the ε you typed. "
            "On: a design that LOWERS some columns' ε (more private, less accurate) may be recommended too. A "
            "design that raises an ε is never recommended."
        )
        self.accept_changed.toggled.connect(self.acceptChangedEdited)
        self.status_line = WrappedLabel()
        self.status_line.setWordWrap(True)
        self.status_line.setTextFormat(Qt.TextFormat.RichText)
        #: under the design table, for the design shown: what tests of association on the needed 2-way tables will
        #: detect (the engine's sentence, computed in the design worker with the predicted error)
        self.power_line = WrappedLabel()
        self.power_line.setWordWrap(True)
        self.power_line.setTextFormat(Qt.TextFormat.PlainText)
        self.power_line.setToolTip(POWER_TIP)
        self.power_line.setVisible(False)
        self._warning_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)

        self.designs = QTableWidget(0, len(DESIGN_COLUMNS))
        self.designs.setHorizontalHeaderLabels([HEADER_LINES.get(c, c) for c in DESIGN_COLUMNS])
        for col, name in enumerate(DESIGN_COLUMNS):
            self.designs.horizontalHeaderItem(col).setToolTip(HEADER_TIPS.get(name, name))
        self.designs.verticalHeader().hide()
        self.designs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.designs.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.designs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.designs.setWordWrap(False)
        self.designs.setTabKeyNavigation(False)  # Tab goes on to "Use for release"; the arrow keys pick a row
        header = self.designs.horizontalHeader()
        # Sized by fit_columns (contents first, then the shrinkable columns give way), again when the viewport's
        # width changes; the user may still drag a border.
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setMinimumSectionSize(40)
        self._fitted_width = -1  # the design table's viewport width its columns were fitted to
        self.designs.viewport().installEventFilter(self)
        self.designs.setToolTip(
            "Each row is one way to build the randomization. Whole-record ε is the privacy guarantee for a "
            "complete record: lower = more private. ★ marks the recommended design; ● the one the release uses. "
            "Click a row to see its columns below; double-click to use it for the release."
        )
        self._row_height = self.designs.fontMetrics().height() + 8
        self.designs.verticalHeader().setDefaultSectionSize(self._row_height)
        self.designs.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.designs.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.designs.cellClicked.connect(self._row_clicked)
        self.designs.cellDoubleClicked.connect(lambda row, _c: self._use_row(row))
        self.use_button = QPushButton("Use for release")
        self.use_button.setToolTip("Release with the design selected above instead of the recommended one.")
        self.use_button.clicked.connect(lambda: self._use_row(self.designs.currentRow()))
        self.recommended_button = QPushButton("Follow recommendation")
        self.recommended_button.setToolTip("Release with whichever design is recommended when you release.")
        self.recommended_button.clicked.connect(lambda: self.useDesign.emit("recommended"))
        self.choice_label = WrappedLabel()
        self.choice_label.setWordWrap(True)
        use_row = QHBoxLayout()
        use_row.addWidget(self.choice_label, 1)
        use_row.addWidget(self.use_button)
        use_row.addWidget(self.recommended_button)

        self.chart = BarChart(self)
        self.chart.setMinimumHeight(140)
        #: the chart greyed while it shows the result of an older request (:meth:`_mark_stale`)
        self._chart_fade = QGraphicsColorizeEffect(self.chart)
        self._chart_fade.setColor(GREY)
        self._chart_fade.setStrength(STALE_GREY)
        self._chart_fade.setEnabled(False)
        self.chart.setGraphicsEffect(self._chart_fade)
        self._stale_marked = False
        self.changes = WrappedLabel()
        self.changes.setWordWrap(True)
        self.changes.setTextFormat(Qt.TextFormat.RichText)

        self.attributes = QTableWidget(0, len(ATTR_COLUMNS))
        self.attributes.setHorizontalHeaderLabels([ATTR_HEADER_LINES.get(c, c) for c in ATTR_COLUMNS])
        self.attributes.verticalHeader().hide()
        self.attributes.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.attributes.setTabKeyNavigation(False)
        self.attributes.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.attributes.horizontalHeader().setStretchLastSection(True)
        self.attributes.horizontalHeaderItem(REQUESTED_COL).setToolTip(SOURCE_HEADERS["typed"][1])
        self.attributes.horizontalHeaderItem(ERROR_COL).setToolTip(
            "How far the receiver's estimate of a category's share is expected to be from the truth "
            "(± one standard error, in percentage points; not the half-width of a 95 % interval as on the "
            "Analyse tab) for a category holding 1/a of the rows, with this file's number of rows. Lower ε or "
            "fewer rows = larger error. It reads "
            + " or ".join(f'"{STATE_TEXTS[s]}"' for s in (NO_INFORMATION, TOO_NOISY))
            + " when the engine's rules say so (the cell's tooltip says what it means, with the number)."
        )

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addLayout(head)
        tl.addWidget(self.needed)
        tl.addWidget(self.designs)
        tl.addWidget(self.power_line)
        tl.addWidget(self.status_line)
        tl.addLayout(use_row)
        tl.addWidget(self.accept_changed)
        middle = QWidget()
        ml = QVBoxLayout(middle)
        ml.setContentsMargins(0, 0, 0, 0)
        self.shown_label = WrappedLabel()
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
        split.setSizes([380, 220, 180])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        # Results arrive one per design, and states change in between: redraw once per batch (_changed).
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.timeout.connect(self.refresh)
        self._results_waiting = False
        self._drawn_results: tuple | None = None
        self._row_looks: list = []  # what each row of the design table shows (rows are redrawn when it changes)
        self._attribute_rows: list = []  # ... and of the column table
        self._details_key: tuple | None = None
        self._details: tuple = (None, [], [])  # (shown summary, names, sizes): the summary kept, so its id stays unique
        #: what is left to draw of the shown design (DETAIL_STEPS), one step per turn of the event loop
        self._detail_steps: list[str] = []
        self._details_timer = QTimer(self)
        self._details_timer.setSingleShot(True)
        self._details_timer.setInterval(0)
        self._details_timer.timeout.connect(self._draw_detail_step)
        controller.changed.connect(self._changed)
        self.refresh()

    def _results_key(self) -> tuple:
        """What a redraw shows besides the designs' states: their results, the user's choices, the message."""
        c = self.controller
        results = tuple((m, id(s)) for m, s in c.summaries.items())
        return results, c.state.method, bool(c.state.accept_changed_epsilons), c.message, c.key is None

    def _changed(self) -> None:
        """The controller changed: redraw at the next turn of the event loop for a new result or choice (after
        the quick designs still computing for the same request, at most QUICK_WAIT_MS), after STATUS_REDRAW_MS
        for a change of states only; never more than once for changes arriving together."""
        timer = self._refresh_timer
        if self._results_key() == self._drawn_results and not self._results_waiting:
            if not timer.isActive():
                timer.start(STATUS_REDRAW_MS)
            return
        self._results_waiting = True
        wait = QUICK_WAIT_MS if self.controller.quick_running() else 0
        if not timer.isActive() or timer.remainingTime() > wait:
            timer.start(wait)

    def redraw_pending(self) -> bool:
        """Whether new results wait for the next redraw (or the shown design's columns and chart for theirs)."""
        return (self._refresh_timer.isActive() and self._results_waiting) or bool(self._detail_steps)

    def drawing_pending(self) -> bool:
        """Whether anything at all waits to be drawn (a pending redraw of any kind, or the details)."""
        return self._refresh_timer.isActive() or bool(self._detail_steps)

    def flush(self) -> None:
        """Redraw now if a redraw is pending, and draw the shown design's details at once (tests, screenshots)."""
        if self._refresh_timer.isActive():
            self._refresh_timer.stop()
            self.refresh()
        while self._detail_steps:
            self._draw_detail_step()

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
        self._refresh_timer.stop()
        self._results_waiting, self._drawn_results = False, self._results_key()
        running = c.running()
        if running:
            self.spinner.start()
        else:
            self.spinner.stop()
        self.cancel_button.setEnabled(bool(running))
        k = len(c.sizes)
        n = c.state.n_rows
        # per-column ε: a newcomer's review saw Utility and the sampling rows go without a word
        mode = "total budget" if c.request.get("budget_mode") else PER_COLUMN_MODE
        rows_text = f"{n:,} rows" if n else "rows not counted yet"
        set_text(self.title, f"Mechanism — {k} perturbed columns, {rows_text}, {mode}" if k else "Mechanism")
        recommended = c.recommended()
        chosen = c.chosen()
        kron = c.summaries.get("kronecker")
        kron_eps = kron.overall_epsilon if kron and kron.ok and not c.is_stale("kronecker") else None
        budget_mode = bool(c.request.get("budget_mode"))
        accept = bool(c.state.accept_changed_epsilons)
        self._rows = display_order(c.methods, c.current(), budget_mode, accept) if k else []
        self.accept_changed.blockSignals(True)
        self.accept_changed.setChecked(accept)
        self.accept_changed.blockSignals(False)
        self.accept_changed.setVisible(not budget_mode)
        self.designs.blockSignals(True)
        self._fill_designs(c, recommended, chosen, kron_eps)
        if self.picked in self._rows:
            self.shown_method = self.picked
        elif chosen is None and running and self.shown_method in self._rows:
            pass  # no current result chosen yet: the design shown stays (greyed) until the new results arrive
        else:
            self.shown_method = chosen if chosen in self._rows else (self._rows[0] if self._rows else None)
        if self.shown_method in self._rows:
            self.designs.selectRow(self._rows.index(self.shown_method))
        self.designs.blockSignals(False)
        if c.message:
            choice = c.message
        elif c.state.method == "recommended":
            rec = METHOD_LABELS.get(recommended, recommended) if recommended else "none yet"
            choice = f"Release uses the recommended design ({rec})."
        else:
            choice = f"Release uses {METHOD_LABELS.get(c.state.method, c.state.method)} (your pick)."
        set_text(self.choice_label, choice)
        for button in (self.use_button, self.recommended_button):  # nothing to use without designs (a one-row file)
            button.setEnabled(bool(self._rows))
        status = self.status_text(recommended, chosen)
        set_text(self.status_line, status)
        if self.status_line.isVisible() != bool(status):
            self.status_line.setVisible(bool(status))
        self._refresh_details()
        self.redrawn.emit()

    def status_text(self, recommended, chosen) -> str:
        """Under the table: why the recommended design is not one before it or with a smaller predicted error
        (:func:`recommendation_text`), a recommended design without information (every design lacks it), the needed
        marginals the release's design cannot estimate (and the way out), and the designs kept from the
        recommendation because they changed the ε typed in."""
        c = self.controller
        names = c.request.get("names", [])
        budget_mode = bool(c.request.get("budget_mode"))
        why = recommendation_text(c.current(), recommended, c.methods, budget_mode, name_no_information=False)
        lines = [html.escape(why)] if why else []
        method = chosen or recommended
        s = c.current().get(method) if method else None
        if s is not None and s.ok and s.no_information and method == recommended:
            lines.append(
                f"<span style='color:#8a5a00'>⚠ No design computed has information at this number of rows: the "
                f"best of them, {html.escape(METHOD_LABELS.get(method, method))}, is recommended, but its estimates "
                f"would be the prior's equal shares. For more: {WAY_OUT}.</span>"
            )
        elif s is not None and s.ok and s.no_information:
            lines.append(
                f"<span style='color:#8a5a00'>⚠ {html.escape(METHOD_LABELS.get(method, method))} (your pick) has no "
                f"information at this number of rows: its estimates would be the prior's equal shares. Follow the "
                f"recommendation or pick another design; for more: {WAY_OUT}.</span>"
            )
        if s is not None and s.ok and s.non_identifiable:
            label = METHOD_LABELS.get(method, method)
            if s.erased:
                shown = html.escape(label_index_sets(s.erased, names, 6))
                lines.append(
                    f"<span style='color:#b00000'>⚠ {label}: the needed table(s) {shown} can never be estimated "
                    f"from this design. The way out: {WAY_OUT}.</span>"
                )
            else:
                shown = html.escape(label_index_sets(s.too_noisy, names, 6))
                lines.append(
                    f"<span style='color:#8a5a00'>⚠ {label}: at this number of rows the needed table(s) {shown} "
                    f"are so noisy that their confidence intervals span everything; {TOO_NOISY_MEANS}. "
                    f"For more: {WAY_OUT}.</span>"
                )
        note = weights_note(method, c.request.get("weights"), budget_mode)
        if note:
            lines.append(f"<span style='color:#8a5a00'>{html.escape(note)}</span>")
        held = [
            m
            for m, x in c.current().items()
            if x.ok
            and x.releasable
            and x.changes
            and not budget_mode
            and not may_recommend(x, budget_mode, bool(c.state.accept_changed_epsilons))
            and not x.exceeds_request
            and not x.no_information
        ]
        if held:
            shown = ", ".join(METHOD_LABELS.get(m, m) for m in held)
            lines.append(f"Not recommended because they lower some of your ε: {shown} (tick the box below to allow).")
        running = c.running()
        if running and recommended:
            lines.append(
                f"Still computing: {', '.join(METHOD_LABELS.get(m, m) for m in running)}. You can release now with "
                f"the best design available ({METHOD_LABELS.get(recommended, recommended)}) or wait."
            )
        return "<br>".join(lines)

    def _fill_designs(self, c, recommended, chosen, kron_eps) -> None:
        looks = [self._row_look(c, method, recommended, chosen, kron_eps) for method in self._rows]
        changed = [r for r, look in enumerate(looks) if r >= len(self._row_looks) or self._row_looks[r] != look]
        if changed or len(looks) != len(self._row_looks):
            with bulk_update(self.designs):  # only rows that show something new are touched (no re-measuring)
                self.designs.setRowCount(len(looks))
                for r in changed:
                    self._set_row(r, looks[r])
        self._row_looks = looks
        if changed or self._fitted_width != self.designs.viewport().width():
            self._fit_designs()
        bar = self.designs.horizontalScrollBar()
        rows_height = (
            self._row_height * max(len(self._rows), 1)
            + self.designs.horizontalHeader().height()
            + 4
            + (bar.sizeHint().height() if bar.isVisible() else 0)
        )
        header = self.designs.horizontalHeader().height() + 4
        self.designs.setMinimumHeight(self._row_height * min(MIN_VISIBLE_ROWS, max(len(self._rows), 1)) + header)
        self.designs.setMaximumHeight(rows_height)

    def _fit_designs(self) -> None:
        self._fitted_width = self.designs.viewport().width()
        fit_columns(self.designs, SHRINKABLE, spanning=CHANGED_COL)

    def eventFilter(self, watched, event) -> bool:
        """The design table's viewport changed width (the panel, or its vertical scroll bar): fit the columns."""
        if event.type() == QEvent.Type.Resize and watched is self.designs.viewport():
            if self._fitted_width != self.designs.viewport().width():
                self._fit_designs()
        return super().eventFilter(watched, event)

    def _row_look(self, c, method: str, recommended, chosen, kron_eps) -> tuple:
        """What a row of the design table shows: (texts, tooltip, highlighted, greyed, warning icon, the reason
        the design is not available spans the next columns)."""
        s = c.summaries.get(method)
        stale = c.is_stale(method)
        status = c.status.get(method, "")
        marks = ("★ " if method == recommended else "") + ("● " if method == chosen else "")
        cells = [marks + METHOD_LABELS.get(method, method), "—", "—", "—", "—", ""]
        if s is not None and s.ok:
            cells[EPS_COL] = fmt_eps(s.overall_epsilon)
            cells[KRON_COL] = self.versus_kronecker(c, method, s, kron_eps)
            cells[CHANGED_COL] = changes_text(s)
            cells[AVD_COL] = avd_text(s)
            if s.no_information and c.request.get("budget_mode"):
                cells[KRON_COL] = "—"  # an error "vs. Kronecker" of estimates that say nothing (in the tooltip)
        elif s is not None:
            cells[EPS_COL] = "not available"
            cells[CHANGED_COL] = short_reason(s.error)  # (from the engine's words; in full in the tooltip)
        if status == "running":
            frac, _msg = c.progress.get(method, (0.0, ""))
            cells[TIME_COL] = "computing…" + (f" {100 * frac:.0f} %" if frac > 0 else "")
        elif status == "cancelled":
            cells[TIME_COL] = "cancelled"
        elif s is not None:
            cells[TIME_COL] = fmt_seconds(s.seconds)
        return (
            tuple(cells),
            self.row_tooltip(method, s, c),
            method == recommended and not stale,
            stale or (s is not None and (not s.ok or s.no_information)),
            s is not None and s.ok and bool(s.erased or s.no_information),
            s is not None and not s.ok,
        )

    def _set_row(self, r: int, look: tuple) -> None:
        """Show ``look`` (texts, tooltip, highlighted, greyed, warning, spanned reason) in row r's items (made once,
        then reused). Every cell's tooltip is the row's: a design's reason in full among it."""
        cells, tip, highlighted, greyed, warning, spanned = look
        span = REASON_SPAN if spanned else 1
        if self.designs.columnSpan(r, CHANGED_COL) != span:
            self.designs.setSpan(r, CHANGED_COL, 1, span)
        bold = QFont(self.designs.font())
        bold.setBold(highlighted)
        for col, text in enumerate(cells):
            item = self.designs.item(r, col)
            if item is None:
                item = QTableWidgetItem()
                if col in (EPS_COL, AVD_COL, KRON_COL):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.designs.setItem(r, col, item)
            item.setText(text)
            item.setToolTip(tip)
            if col == AVD_COL:
                item.setIcon(self._warning_icon if warning else QIcon())
            item.setData(Qt.ItemDataRole.BackgroundRole, QBrush(RECOMMENDED_BG) if highlighted else None)
            item.setFont(bold)
            item.setData(Qt.ItemDataRole.ForegroundRole, QBrush(GREY) if greyed else None)

    @staticmethod
    def versus_kronecker(c, method: str, s: DesignSummary, kron_eps) -> str:
        """Per-column mode: the whole-record ε against Kronecker's. Budget mode (every design has the same
        whole-record ε): the predicted error against Kronecker's, "−35 % error"."""
        if method == "kronecker":
            return "—"
        if c.request.get("budget_mode"):
            kron = c.current().get("kronecker")
            x, y = s.predicted_avd, kron.predicted_avd if kron is not None and kron.ok else None
            if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)) or y <= 0:
                return "—"
            change = 100 * (x / y - 1)
            return "same error" if abs(change) < 0.5 else f"{change:+.0f} % error"
        if not kron_eps:
            return "—"
        change = 100 * (s.overall_epsilon / kron_eps - 1)
        return "same" if abs(change) < 0.5 else f"{change:+.0f} % ε"

    def row_tooltip(self, method: str, s: DesignSummary | None, c) -> str:
        """What the design is and what its numbers mean (every row has one)."""
        names = c.request.get("names", [])
        lines = [f"{METHOD_LABELS.get(method, method)}: {METHOD_HELP.get(method, '')}"]
        if s is None:
            lines.append("Not computed yet.")
            return "\n".join(lines)
        if not s.ok:
            lines.append(f"Not available for this request: {s.error}")
            return "\n".join(lines)
        lines.append(
            f"Whole-record ε {fmt_eps(s.overall_epsilon)}: the privacy of a complete record, recomputed from the "
            "design itself (lower = more private)."
        )
        if s.suppression:
            lines.append(f"Suppresses columns: {s.suppression}.")
        if s.changes and s.scale is not None:
            lines.append(
                f"ε changed: {len(s.changes)} column(s) do not get their ε from weights (scale c × weight): "
                f"{changes_text(s)}; nothing was typed per column, and the whole record stays within the target "
                "(a column above its share is less private, one below more private and less accurate)."
            )
        elif s.changes:
            lines.append(
                f"ε changed: this design {changes_text(s)} of the per-column ε you typed"
                + (
                    " (RAISED = less private; never recommended)."
                    if s.exceeds_request
                    else " (more private, less accurate)."
                )
            )
        rows = c.state.n_rows or "10,000"
        if s.no_information:
            versus = self.versus_kronecker(c, method, s, kron_eps=None) if c.request.get("budget_mode") else "—"
            lines.append(
                f"⚠ No information: at {rows} rows the data would move none of the {s.needed_tables} needed "
                f"table(s) off the prior's equal shares (they remove less than {100 * NO_INFORMATION_SHARE:g} % of the "
                "prior's spread from each): "
                "the estimates shown would be those equal shares, which the uniform prior scores well. Predicted "
                f"AVD {'—' if s.predicted_avd is None else fmt_avd(s.predicted_avd)}"
                + (f" ({versus} vs. Kronecker)" if versus != "—" else "")
                + ". Recommended only when no design computed has information (then the best of them)."
            )
        if s.predicted_avd is not None:
            by = ", ".join(
                f"{o}-way {'not identifiable' if v is None else fmt_avd(v)}" for o, v in s.predicted_by_order.items()
            )
            lines.append(
                f"Predicted AVD {fmt_avd(s.predicted_avd) + ' ⚠' if s.no_information else avd_text(s)}: the "
                f"expected mean distance 1/2 Σ|estimate − truth| of the needed tables ({s.predicted_orders}) from "
                f"{rows} rows, as shown by default (smoothed estimate), predicted for columns whose shares are "
                "spread as if drawn at random; lower = more accurate. On nine real files the recommended design's "
                "measured error was 0.7 to 1.15 times this in 8 cases of 10 (0.45 to 1.35 at the extremes: joint "
                "tables of files whose columns are nearly uniform, and a very skewed file)."
                + (f" By order: {by}." if by else "")
            )
        if s.erased:
            lines.append(
                f"⚠ Cannot be estimated from this design: {label_index_sets(s.erased, names, 8)}. "
                f"The way out: {WAY_OUT}."
            )
        if s.too_noisy:
            lines.append(
                f"⚠ Too noisy at {rows} rows for confidence intervals ({len(s.too_noisy)}): "
                f"{label_index_sets(s.too_noisy, names, 8)}. "
                f"{TOO_NOISY_MEANS[0].upper()}{TOO_NOISY_MEANS[1:]}."
            )
        return "\n".join(lines)

    def _refresh_details(self) -> None:
        """The shown design's caption, chart, change list and column table, all from ONE summary (the one
        shown, with the columns and target of the request it answers: ``DesignSummary.names/sizes/target``).
        A result of an older request stays shown greyed, marked as computing for the new one, until its
        replacement arrives. When the shown result is new, the table and chart are drawn at later turns of the
        event loop (``DETAIL_STEPS``) and the caption and change list with the last of them (the table is not
        repainted in between), so nothing of two designs is ever shown together; ``detailsDrawn`` then."""
        c = self.controller
        method = self.shown_method
        s: DesignSummary | None = c.summaries.get(method) if method else None
        names = list(s.names) if s is not None and s.names else list(c.request.get("names", []))
        sizes = list(s.sizes) if s is not None and s.sizes else list(c.sizes)
        # The chart and the column table change only with the shown summary (a new result), not when the
        # results merely become stale after an edit: keep the summary itself so that its id stays unique.
        key = (method, id(s), tuple(names), tuple(sizes))
        same = key == self._details_key
        self._details_key, self._details = key, (s, names, sizes)
        if same and not self._detail_steps:
            self._show_heading()  # the same result: only whether it is stale (and the target asked) changed
            return
        if not same:
            self._detail_steps = list(DETAIL_STEPS)
            self._details_timer.start()

    def stale_text(self) -> str:
        """Above the chart while the shown result answers an older request: what is computing, and for what the
        result shown (greyed) was computed; "" when the shown result is current."""
        c = self.controller
        method = self.shown_method
        s = self._details[0]
        if method is None or s is None or not c.is_stale(method):
            return ""
        target = c.request.get("target_total") if c.request.get("budget_mode") else None
        state = "computing" if c.status.get(method) == "running" else "not computed (cancelled)"
        if target is not None and s.target is not None and s.target != target:
            return f"{state} for the new target ε = {target:g}… (greyed: the result for target ε = {s.target:g})"
        return f"{state} for the new settings… (greyed: the result for the previous settings)"

    def _show_heading(self) -> None:
        """The caption and the change list of the summary the chart and table show, and the stale marks."""
        s, names, _sizes = self._details
        method = self.shown_method
        stale = self.stale_text()
        if s is None or not s.ok or len(s.achieved) != len(names):
            set_text(self.shown_label, METHOD_LABELS.get(method, "") if method else "")
            set_text(self.changes, html.escape(s.error) if s is not None and not s.ok else "")
        else:
            set_text(self.shown_label, self._caption(method, s, stale))
            weights = self.controller.request.get("weights")
            text = self._changes_text(method, s, names, s.target, weights)
            set_text(self.changes, text + html.escape(joint_note(s.achieved, s.overall_epsilon), quote=False))
        self._show_power(method, s, bool(stale))
        self._mark_stale(bool(stale))

    def _show_power(self, method: str | None, s: DesignSummary | None, stale: bool) -> None:
        """The line under the design table: what the shown design's tests of association on the needed 2-way tables
        detect (:func:`power_text`), in red with ⚠ when some of those tables detect no association at all, grey
        while the result shown answers an older request; hidden when there is nothing to say."""
        text = power_text(s, METHOD_LABELS.get(method, method) if method else "")
        none = bool(text) and s is not None and bool(s.test_power and s.test_power["no_power"])
        color = f"rgb{GREY.getRgb()[:3]}" if stale else "#b00000" if none else ""
        style = f"color: {color};" if color else ""
        if self.power_line.styleSheet() != style:
            self.power_line.setStyleSheet(style)
        set_text(self.power_line, f"⚠ {text}" if none else text)
        if self.power_line.isHidden() == bool(text):
            self.power_line.setVisible(bool(text))

    def _mark_stale(self, stale: bool) -> None:
        """Grey the chart, the change list and the column table while they show the result of an older request."""
        if self._stale_marked == stale:
            return
        self._stale_marked = stale
        self._chart_fade.setEnabled(stale)
        grey = f"color: rgb{GREY.getRgb()[:3]};" if stale else ""
        self.attributes.setStyleSheet(f"QTableWidget {{ {grey} }}" if stale else "")
        self.changes.setStyleSheet(grey)

    def _caption(self, method: str, s: DesignSummary, stale: str = "") -> str:
        """The line above the chart: the design, its whole-record ε and the chart's legend; ``stale``
        (:meth:`stale_text`) first, in grey, while the result shown answers an older request."""
        budget = f", scale c = {s.scale:.4g}" if s.scale is not None else ""
        if s.lower_bound is not None and s.lower_bound > 0:
            budget += f" (with these per-column ε no mechanism can go below {fmt_eps(s.lower_bound)})"
        requested = SOURCE_HEADERS[epsilon_source(method, s)][2]
        marker = f"<span style='color:rgb{GREY.getRgb()[:3]}'><i>⟳ {html.escape(stale)}</i></span><br>" if stale else ""
        shown = (
            f"{marker}<b>{METHOD_LABELS.get(method, method)}: whole-record ε = {fmt_eps(s.overall_epsilon)}</b>"
            f"{budget}"
            f"&nbsp;&nbsp;<span style='color:rgb{REQUESTED_COLOR}'>■</span> {requested} "
            f"<span style='color:rgb{ACHIEVED_COLOR}'>■</span> achieved "
            f"<span style='color:rgb{HIGHER_COLOR}'>■</span> higher than asked "
            f"<span style='color:rgb{LOWER_COLOR}'>■</span> lower"
        )
        if s.note:
            shown += f"<br><i>{html.escape(s.note)}</i>"
        if s.suppression:
            shown += f"<br><b>Suppresses columns:</b> {s.suppression}"
        return shown

    def _draw_detail_step(self) -> None:
        """Draw the next of DETAIL_STEPS for the shown design; the next waits for the next turn. The column
        table drawn first is not repainted until the last step has drawn the chart and the caption."""
        if not self._detail_steps:
            return
        step = self._detail_steps.pop(0)
        s, names, sizes = self._details
        shown = s is not None and s.ok and len(s.achieved) == len(names)
        if step == "table":
            if shown:
                self._fill_attributes(sizes, s, names)
            else:
                self.attributes.setRowCount(0)
                self._attribute_rows = []
            self.attributes.setUpdatesEnabled(False)  # shown with the caption and chart of the same design
        elif shown:
            self.chart.set_data(names, s.requested, s.achieved)
        else:
            self.chart.set_data([], [], [])
        if self._detail_steps:
            self._details_timer.start()
        else:
            self._show_heading()
            self.attributes.setUpdatesEnabled(True)
            self.detailsDrawn.emit()

    @staticmethod
    def _changes_text(
        method: str, s: DesignSummary, names: list[str], target: float | None = None, weights=None
    ) -> str:
        """Under the chart: the columns whose ε the design changed, or that it changed none; in total-budget mode
        what the per-column ε are (no column's ε was typed: they come from the weights, changes are against
        those; ``target`` is the whole-record target the design answers). Changed ε are printed with the digits
        it takes to see the change (:func:`fmt_change`)."""
        source = epsilon_source(method, s)
        within = f" ε = {target:g}" if target else ""
        if source == "design":
            return f"The design chooses each column's ε; the whole record stays within the target{within}."
        share = "its weight"  # the engine's weights are shares: divided by the largest (validation.check_weights)
        if weights and len({float(w) for w in weights}) > 1:
            share = f"its weight ÷ the largest weight ({max(float(w) for w in weights):g})"
        if source == "weights" and not s.changes:
            return (
                f"No column's ε was typed: each gets scale c = {s.scale:.4g} × {share}, the largest c that keeps "
                f"the whole record within the target{within}."
            )
        if not s.changes:
            return "Every column gets exactly the ε requested."
        weights = source == "weights"
        parts = []
        for ch in s.changes:
            i = int(ch["attribute"])
            higher = ch["achieved"] > ch["requested"]
            color = "#cc0000" if higher else "#b36b00"
            if weights:
                word = "above the weights' share: less private" if higher else "below: more private, less accurate"
            else:
                word = "less private" if higher else "more private, less accurate"
            before, after = fmt_change(ch["requested"], ch["achieved"])
            parts.append(
                f"<span style='color:{color}'><b>{html.escape(names[i])}</b> {before} → {after} ({word})</span>"
            )
        label = METHOD_LABELS.get(method, method)
        if weights:
            return (
                f"{label} moved {len(s.changes)} column(s) away from the ε from weights (scale c = {s.scale:.4g} × "
                f"{share}; the whole record stays within the target{within}): " + "; ".join(parts)
            )
        return f"{label} changed: " + "; ".join(parts)

    def _fill_attributes(self, sizes, s, names) -> None:
        """One row per column; only the cells whose text or mark changed are touched (an edit changes one
        column's ε and error: the table is then neither re-measured nor repainted as a whole)."""
        changed_attributes = s.changed_attributes
        header, tip, _legend = SOURCE_HEADERS[epsilon_source(self.shown_method, s)]
        head = self.attributes.horizontalHeaderItem(REQUESTED_COL)
        if head.text() != header:
            head.setText(header)
            head.setToolTip(tip)
        rows = []
        for i, name in enumerate(names):
            se = s.standard_errors[i] if i < len(s.standard_errors) else math.nan
            error, error_tip = error_cell(se, s.column_states[i] if i < len(s.column_states) else "")
            mark = i in changed_attributes
            requested, achieved = (
                fmt_change(s.requested[i], s.achieved[i])
                if mark
                else (fmt_column_eps(s.requested[i]), fmt_column_eps(s.achieved[i]))
            )
            cells = [name, str(sizes[i]), requested, achieved, error]
            rows.append((cells, mark, error_tip))
        table, shown = self.attributes, self._attribute_rows
        new = [i for i, row in enumerate(rows) if i >= len(shown) or shown[i] != row]
        self._attribute_rows = rows
        if not new and len(shown) == len(rows):
            return
        with bulk_update(table):
            table.setRowCount(len(rows))
            for i in new:
                cells, mark, error_tip = rows[i]
                for col, text in enumerate(cells):
                    item = table.item(i, col)  # reused: only the texts change from one result to the next
                    if item is None:
                        item = QTableWidgetItem()
                        if col > 0:
                            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                        table.setItem(i, col, item)
                    if item.text() != text:
                        item.setText(text)
                item = table.item(i, ACHIEVED_COL)
                item.setData(Qt.ItemDataRole.ForegroundRole, QBrush(QColor(*HIGHER_COLOR)) if mark else None)
                item.setToolTip("This design changed the ε of this column." if mark else "")
                table.item(i, ERROR_COL).setToolTip(error_tip)
