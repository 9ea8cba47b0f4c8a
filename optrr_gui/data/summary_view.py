"""What a column holds, at a glance: rows, missing cells, every value with its count and share (a bar per
value), rare values highlighted and named; for numeric columns a histogram with the release's bin edges.

The table is a model over the summary's arrays (no item per value), so a 70,000-value column shows at once.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.release.column_stats import is_number_text

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
#: "Released as" of a number while the column's bins are computed from the data at release time.
BIN_AT_RELEASE = "a bin (computed at release)"


def percent(x: float) -> str:
    return f"{100 * x:.2g}%" if 0 < x < 0.1 else f"{100 * x:.0f}%"


def summary_line(summary, released_count: int | None = None, recode=None, listed=None) -> str:
    """One sentence: rows, missing, distinct values, rare values named with their counts (after ``recode``, the
    released categories: a value merged into a frequent category is no longer rare). For a numeric column, whose
    numbers are published as bins (never as they are) and whose other texts are missing unless listed, ``listed``
    are its categories: only those can be rare."""
    s = summary
    parts = [f"{s.rows:,} rows"]
    if s.missing:
        parts.append(f"{s.missing:,} missing ({percent(s.missing / s.rows)})")
    parts.append(f"{s.distinct:,} distinct values")
    if released_count is not None and released_count != s.distinct:
        parts.append(f"released as {released_count:,} categories")
    text = ", ".join(parts)
    if recode:
        rare = sorted(((v, c) for v, c in s.recoded(recode).items() if c < s.rare_below), key=lambda vc: vc[1])
        what = "Rare after recoding"
    else:
        rare, what = s.rare(numbers=listed is None), "Rare"
    if listed is not None:
        rare = [(v, c) for v, c in rare if v in listed and not is_number_text(str(v), s.decimal)]
    if rare:
        named = ", ".join(f"'{v}' ({c})" for v, c in rare[:5])
        more = f" and {len(rare) - 5:,} more" if len(rare) > 5 else ""
        text += f". {what} (fewer than {s.rare_below} rows): {named}{more} — merge them to avoid disclosing them."
    elif recode and any(listed is None or v in listed for v, _ in s.rare(numbers=listed is None)):
        text += f". No rare category after recoding (fewer than {s.rare_below} rows)."
    return text


class SummaryModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = None
        self.released: dict = {}
        self.released_rows: dict | None = None
        #: per value of a binned (numeric) column: the bin its number is released in (None: a text); else None
        self.bins: list | None = None
        self.missing_texts: set = set()
        self.listed: set = set()
        self.missing_as = ""

    def set_summary(self, summary, recode=None, column=None) -> None:
        """Show ``summary``; with the ``column`` state of a numeric column, its numbers are released as bins."""
        self.beginResetModel()
        self.summary = summary
        self.released = {s: label for label, sources in (recode or {}).items() for s in sources}
        #: rows per released category, when recoded (a value is rare when the category it is released as is)
        self.released_rows = summary.recoded(recode) if summary is not None and recode else None
        self.bins = None
        if summary is not None and column is not None and column.type == "numeric":
            self.bins = released_bins(summary, column)
            self.missing_texts = set(column.missing_values or [])
            self.listed = set(column.categories or [])
            self.missing_as = column.missing_label if column.missing == "category" else "(row left out)"
        self.endResetModel()

    def released_as(self, row: int, value: str) -> str:
        """The label ``value`` is released as, in the release's order: a missing-value text, a recoded text, a
        number's bin (numeric column), else the text itself (in a numeric column, a text that is not listed among
        its categories is released as missing)."""
        if self.bins is not None and value in self.missing_texts:
            return self.missing_as
        if value in self.released:
            return self.released[value]
        if self.bins is not None:
            if self.bins[row] is not None:
                return self.bins[row]
            if value not in self.listed:
                return self.missing_as
        return value

    def rare_rows(self, value: str, count: int, row: int | None = None) -> int | None:
        """The rows of the category ``value`` is released as, when fewer than the rare threshold; else None (also
        for a number of a numeric column, released as its bin, and for a text it releases as missing)."""
        if self.bins is not None and row is not None and value not in self.released:
            if self.released_as(row, value) != value:
                return None
        rows = count if self.released_rows is None else self.released_rows.get(self.released.get(value, value), 0)
        return rows if rows < self.summary.rare_below else None

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


def released_bins(summary, column) -> list:
    """Per value of a numeric column's ``summary``: the label of the release bin its number falls in (the engine's
    :meth:`ColumnSummary.released_bins`), or BIN_AT_RELEASE while the edges are computed at release time; None for
    a text that is not a number."""
    from ..state.config_bridge import bin_edges

    edges = bin_edges(column.bins)
    if edges:
        return summary.released_bins(edges)
    return [BIN_AT_RELEASE if n else None for n in summary.is_number.tolist()]


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
        self.title = QLabel("Select a column to see its values")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.model = SummaryModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
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
        self.bins_text = QLabel()
        self.bins_text.setWordWrap(True)
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
            self.layout().insertWidget(2, self.histogram)
        return self.histogram

    def show_summary(self, summary, column=None) -> None:
        self.summary = summary
        if summary is None:
            self.title.setText("The values appear here once the rows are read")
            self.model.set_summary(None)
            self.bins_text.setText("")
            if self.histogram is not None:
                self.histogram.hide()
            return
        recode = getattr(column, "recode", None)
        released = None
        binned = column is not None and column.type == "numeric"
        if not binned and column is not None and column.categories is not None:
            released = len(column.categories)
        listed = set(column.categories or []) if binned else None
        self.title.setText(f"{summary.name}: {summary_line(summary, released, recode, listed)}")
        self.model.set_summary(summary, recode, column if binned else None)
        numeric = binned and summary.numeric_rows > 0
        if not numeric:
            self.bins_text.setText("")
            if self.histogram is not None:
                self.histogram.hide()
            return
        self._draw_histogram(summary, column)

    def _draw_histogram(self, summary, column) -> None:
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

        per_bin, _ = summary.histogram(edges_f)
        total = max(1, summary.numeric_rows)
        text = "; ".join(f"{label}: {n:,} ({percent(n / total)})" for label, n in
                         zip(bin_labels(edges_f), per_bin.tolist(), strict=True))
        outside = summary.numeric_rows - int(np.sum(per_bin))
        if outside:
            text += f"; {outside:,} numbers outside the edges (the release would stop: widen them)"
        self.bins_text.setText(f"Release bins (red lines): {text}")
