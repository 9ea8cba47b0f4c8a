"""What a column holds, at a glance: rows, missing cells, every value with its count and share (a bar per
value), rare values highlighted and named; for numeric columns a histogram with the release's bin edges.

The table is a model over the summary's arrays (no item per value), so a 70,000-value column shows at once.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.release.codec import BIN_AT_RELEASE as BIN_AT_RELEASE  # "Released as" of a number, bins pending
from optrr_engine.release.column_stats import is_number_text
from optrr_engine.release.schema import RARE_COUNT, is_rare, rare_categories

from ..common.widgets import ElidedTipDelegate, WrappedLabel
from ..state.config_bridge import NOT_RELEASED as NOT_RELEASED  # "Released as" of a dropped column
from ..state.config_bridge import not_read_text, released_rows, value_labels

RARE_BACKGROUND = QColor(255, 228, 196)
BAR_COLOR = QColor(70, 130, 180)
COL_VALUE, COL_ROWS, COL_SHARE, COL_RELEASED = range(4)
HEADERS = ("Value", "Rows", "Share", "Released as")
HEADER_TIPS = (
    "The value exactly as it appears in the file",
    "Rows holding the value (missing cells are counted apart)",
    "Share of the non-missing rows, with a bar",
    "The category the value is released as (after merging or renaming; a number of a numeric column: its bin)",
)


def percent(x: float) -> str:
    return f"{100 * x:.2g}%" if 0 < x < 0.1 else f"{100 * x:.0f}%"


def missing_part(summary, marked: int = 0, treated=()) -> str:
    """The title's missing count: the empty cells plus the ``marked`` cells whose text is treated as missing; then
    the cells holding a text that looks like a missing-value marker (schema.MISSING_MARKERS: 'N/A', '?') not among
    those ``treated`` as missing, named: they are values until treated as missing (a reviewer read "no missing
    cells" beside 201 'N/A')."""
    s, total = summary, summary.missing + marked
    markers = [(text, n) for text, n in marker_cells(s) if text not in set(treated)]
    named = ", ".join(f"{n:,} '{text}'" for text, n in markers)
    untreated = f"{named}: a missing-value marker? (Treat as missing in the Design tab's side panel)"
    if not total:
        return f"no empty cells, but {untreated}" if markers else "no missing cells"
    text = f"{total:,} missing ({percent(total / s.rows) if s.rows else '0%'}"
    if marked:
        text += f": {s.missing:,} empty, {marked:,} treated as missing" if s.missing else ": treated as missing"
    return text + ")" + (f"; and {untreated}" if markers else "")


def marker_cells(summary) -> list[tuple[str, int]]:
    """(text, cells) of the values of ``summary`` that are missing-value markers (schema.MISSING_MARKERS), most
    frequent first."""
    import numpy as np

    from optrr_engine.release.schema import MISSING_MARKERS

    hit = np.flatnonzero(np.isin(summary.values, MISSING_MARKERS))
    found = [(str(summary.values[i]), int(summary.counts[i])) for i in hit]
    return sorted(found, key=lambda mn: -mn[1])


def bin_shares_base(numbers: int) -> str:
    """What the release bins' percentages are out of: the rows holding a number, not the missing or other cells."""
    return f"Percentages of the {numbers:,} rows with a number (not of all rows)."


def texts_released_as_missing(summary, column, labels: list[str] | None = None) -> dict[str, int]:
    """{text: cells} of the texts that the perturbed ``column`` releases as missing, as "Released as" shows it
    (:func:`..state.config_bridge.value_labels`: its missing-value category, or a row left out): its missing values,
    and in a numeric column the texts neither numbers nor listed. None for a kept column (copied as it is) or a
    dropped one (not released). ``labels``: :func:`value_labels` already computed."""
    if column is None or column.role != "perturb":
        return {}
    from optrr_engine.release.codec import ROW_LEFT_OUT
    from optrr_engine.release.recode import released_label

    missing = {released_label(column.missing_label, column.recode), ROW_LEFT_OUT}
    labels = value_labels(column, summary) if labels is None else labels
    pairs = zip(summary.values.tolist(), labels, summary.counts.tolist(), strict=True)
    return {str(text): int(n) for text, label, n in pairs if label in missing}


def summary_line(summary, released_count: int | None = None, recode=None, listed=None, rows=None,
                 marked: int = 0, dropped: bool = False, treated=()) -> str:
    """One sentence: rows, missing (empty cells plus the ``marked`` cells treated as missing), distinct values,
    rare values named with their counts (after ``recode``, the released categories: a value merged into a frequent
    category is no longer rare; with ``rows``, the rows per category the column releases now). For a numeric
    column, whose numbers are published as bins (never as they are) and whose other texts are missing unless
    listed, ``listed`` are its categories: only those can be rare. A ``dropped`` column is never released: the
    sentence says so, with no advice about rare values."""
    s = summary
    parts = [f"{s.rows:,} rows", missing_part(s, marked, treated), f"{s.distinct:,} distinct values"]
    if released_count is not None and released_count != s.distinct and not dropped:
        parts.append(f"released as {released_count:,} categories")
    text = ", ".join(parts)
    if dropped:
        return text + ". Not released: the column is dropped (set its role to perturb or keep to release it)."
    if rows is not None:
        rare = rare_categories(rows)
        what = "Rare after recoding" if recode else "Rare"
    elif recode:
        rare, what = rare_categories(s.recoded(recode)), "Rare after recoding"
    else:
        rare, what = s.rare(numbers=listed is None), "Rare"
    if listed is not None:
        rare = [(v, c) for v, c in rare if v in listed and not is_number_text(str(v), s.decimal)]
    if rare:
        named = ", ".join(f"'{v}' ({c})" for v, c in rare[:5])
        more = f" and {len(rare) - 5:,} more" if len(rare) > 5 else ""
        text += f". {what} (fewer than {RARE_COUNT} rows): {named}{more} — merge them to avoid disclosing them."
    elif recode and any(listed is None or v in listed for v, _ in s.rare(numbers=listed is None)):
        text += f". No rare category after recoding (fewer than {RARE_COUNT} rows)."
    return text


class SummaryModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = None
        self.released: dict = {}
        self.released_rows: dict | None = None
        #: per value (summary order): the label it is released as (:func:`value_labels`), with a column state
        self.labels: list[str] | None = None

    def set_summary(self, summary, recode=None, column=None, labels: list[str] | None = None) -> None:
        """Show ``summary``; with the ``column`` state, "Released as" is what the release makes of each value
        (``labels``: :func:`..state.config_bridge.value_labels` already computed)."""
        self.beginResetModel()
        self.summary = summary
        self.released = {s: label for label, sources in (recode or {}).items() for s in sources}
        #: rows per released category, when recoded (a value is rare when the category it is released as is)
        self.released_rows = summary.recoded(recode) if summary is not None and recode else None
        if summary is not None and column is not None and labels is None:
            labels = value_labels(column, summary)
        self.labels = labels if summary is not None and column is not None else None
        self.endResetModel()

    def released_as(self, row: int, value: str) -> str:
        """The label ``value`` (the summary's value at ``row``) is released as: the engine's rule
        (:func:`value_labels`) with a column state, else its recode label or the text itself."""
        if self.labels is not None:
            return self.labels[row]
        return self.released.get(value, value)

    def rare_rows(self, value: str, count: int, row: int | None = None) -> int | None:
        """The rows of the category ``value`` is released as, when rare (:func:`is_rare`); else None (also
        for a number of a numeric column, released as its bin, and for a text it releases as missing)."""
        if self.labels is not None and row is not None and self.labels[row] == NOT_RELEASED:
            return None  # a dropped column discloses nothing
        if self.labels is not None and row is not None and value not in self.released:
            if self.released_as(row, value) != value:
                return None
        rows = count if self.released_rows is None else self.released_rows.get(self.released.get(value, value), 0)
        return rows if is_rare(rows) else None

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() or self.summary is None else self.summary.distinct

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.summary is None:
            return None
        s, r, c = self.summary, index.row(), index.column()
        value, count = str(s.values[r]), int(s.counts[r])
        if role == Qt.ItemDataRole.DisplayRole:
            if c == COL_VALUE:
                return value
            if c == COL_ROWS:
                return f"{count:,}"
            if c == COL_SHARE:
                return percent(count / s.present) if s.present else ""
            if c == COL_RELEASED:
                return self.released_as(r, value)
        if role == Qt.ItemDataRole.UserRole and c == COL_SHARE:
            top = int(s.counts[0]) if s.distinct else 1
            return count / top if top else 0.0
        if role in (Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ToolTipRole):
            rare = self.rare_rows(value, count, r)
            if rare is None:
                return None
            if role == Qt.ItemDataRole.BackgroundRole:
                return QBrush(RARE_BACKGROUND)
            label = self.released.get(value, value)
            if label != value:
                return f"'{value}' is released as '{label}', which has only {rare} rows: consider merging it further"
            return f"'{value}' occurs in only {count} rows: its existence is disclosed; consider merging it"
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (COL_ROWS, COL_SHARE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class BarDelegate(QStyledItemDelegate):
    """The share as text over a bar whose length is the count relative to the most frequent value."""

    def paint(self, painter: QPainter, option, index) -> None:
        fraction = index.data(Qt.ItemDataRole.UserRole) or 0.0
        rect = option.rect.adjusted(2, 4, -2, -4)
        painter.save()
        bar = QRectF(rect.x(), rect.y(), rect.width() * float(fraction), rect.height())
        painter.fillRect(bar, BAR_COLOR.lighter(150))
        painter.restore()
        super().paint(painter, option, index)


class ColumnSummaryView(QWidget):
    """Summary of one column; ``show_summary(summary, column_state)``."""

    def __init__(self, parent=None, compact: bool = False):
        super().__init__(parent)
        self.title = WrappedLabel("Select a column to see its values")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.model = SummaryModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        # a value or released label wider than its column shows in full as the cell's tooltip
        self.table.setItemDelegate(ElidedTipDelegate(self.table))
        self.table.setItemDelegateForColumn(COL_SHARE, BarDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(COL_VALUE, QHeaderView.ResizeMode.Stretch)
        for c in (COL_ROWS, COL_SHARE, COL_RELEASED):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(COL_ROWS, 80)
        header.resizeSection(COL_SHARE, 110)
        header.resizeSection(COL_RELEASED, 120)
        self.table.setColumnHidden(COL_RELEASED, compact)
        self.histogram = None
        self.bins_text = WrappedLabel()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.bins_text)
        lay.addWidget(self.table, 1)
        self.summary = None

    def _plot(self):
        if self.histogram is None:
            import pyqtgraph as pg

            self.histogram = pg.PlotWidget(background="w")
            self.histogram.setMinimumHeight(140)
            self.histogram.setMaximumHeight(220)
            self.histogram.setLabel("left", "rows")
            self.histogram.setMouseEnabled(x=False, y=False)
            self.histogram.hideButtons()
            # A tick label is centred on its tick: the one at the top of the view reaches half a line above the
            # axis, which started at the widget's edge and cut the largest count ("400") in half. Room for it:
            half_line = math.ceil(QFontMetrics(self.histogram.font()).height() / 2) + 2
            self.histogram.getPlotItem().layout.setContentsMargins(1, half_line, 1, 1)
            self.layout().insertWidget(2, self.histogram)
        return self.histogram

    def show_summary(self, summary, column=None) -> None:
        """``summary`` (a ColumnSummary, None until the rows are read) of the ``column`` state; a column the reader
        cannot read has no values to show: the title says why it is not released."""
        unread = column.unreadable if column is not None else None  # the reader's reason (ColumnState)
        self.summary = None if unread is not None else summary
        if unread is not None or summary is None:
            waiting = "The values appear here once the rows are read"
            self.title.setText(waiting if unread is None else not_read_text(column.name, unread))
            self.model.set_summary(None)
            self.bins_text.setText("")
            if self.histogram is not None:
                self.histogram.hide()
            return
        recode = getattr(column, "recode", None)
        released = None
        # a kept column is copied with its recoding only (never binned), as "Released as" says; a dropped one never
        binned = column is not None and column.type == "numeric" and column.role == "perturb"
        if not binned and column is not None and column.categories is not None:
            released = len(column.categories)
        listed = set(column.categories or []) if binned else None
        labels = value_labels(column, summary) if column is not None else None  # once: the codec's labels
        rows = released_rows(column, summary, labels) if column is not None else None
        line = summary_line(summary, released, recode, listed, **self._state_of(summary, column, labels, rows))
        self.title.setText(f"{summary.name}: {line}")
        self.model.set_summary(summary, recode, column, labels)
        numeric = binned and summary.numeric_rows > 0
        if not numeric:
            self.bins_text.setText("")
            if self.histogram is not None:
                self.histogram.hide()
            return
        self._draw_histogram(summary, column, rows or {})

    @staticmethod
    def _state_of(summary, column, labels, rows) -> dict:
        """What :func:`summary_line` needs of the ``column`` state (its ``labels`` and released ``rows``): rows per
        released category, cells treated as missing, dropped."""
        if column is None:
            return {}
        dropped = column.role == "drop"
        treated = texts_released_as_missing(summary, column, labels)
        marked = sum(treated.values())
        return {"rows": None if dropped else rows, "marked": marked, "dropped": dropped, "treated": tuple(treated)}

    def _draw_histogram(self, summary, column, rows: dict) -> None:
        """The numbers' histogram with the release bins; ``rows``: rows per released category (the bins line)."""
        import pyqtgraph as pg

        from ..state.config_bridge import bin_edges

        plot = self._plot()
        plot.clear()
        plot.show()
        counts, edges = summary.histogram()
        plot.addItem(pg.BarGraphItem(x0=edges[:-1], x1=edges[1:], height=counts, brush=BAR_COLOR.lighter(140),
                                     pen=BAR_COLOR))
        release_edges = bin_edges(column.bins)
        if not release_edges:
            self.bins_text.setText("Bins: computed from the data at release time")
            return
        edges_f = [float(e) for e in release_edges]
        for e in edges_f:
            if math.isfinite(e):
                plot.addItem(pg.InfiniteLine(pos=e, angle=90, pen=pg.mkPen(QColor(200, 60, 0), width=2)))
        from optrr_engine.release.bins import bin_labels
        from optrr_engine.release.column_stats import OUTSIDE_BINS

        # rows per bin as the release counts them ("Released as": missing-value and recoded numbers are not binned)
        labels = bin_labels(edges_f)
        outside = rows.get(OUTSIDE_BINS, 0)
        numbers = sum(rows.get(label, 0) for label in labels) + outside
        total = max(1, numbers)
        text = "; ".join(f"{label}: {rows.get(label, 0):,} ({percent(rows.get(label, 0) / total)})" for label in labels)
        if outside:
            text += f"; {outside:,} numbers outside the edges (the release would stop: widen them)"
        self.bins_text.setText(f"Release bins (red lines): {text}. {bin_shares_base(numbers)}")
