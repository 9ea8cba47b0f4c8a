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

RARE_BACKGROUND = QColor(255, 228, 196)
BAR_COLOR = QColor(70, 130, 180)
COL_VALUE, COL_ROWS, COL_SHARE, COL_RELEASED = range(4)
HEADERS = ("Value", "Rows", "Share", "Released as")
HEADER_TIPS = (
    "The value exactly as it appears in the file",
    "Rows holding the value (missing cells are counted apart)",
    "Share of the non-missing rows, with a bar",
    "The category the value is released as (after merging or renaming)",
)


def percent(x: float) -> str:
    return f"{100 * x:.2g}%" if 0 < x < 0.1 else f"{100 * x:.0f}%"


def summary_line(summary, released_count: int | None = None, recode=None) -> str:
    """One sentence: rows, missing, distinct values, rare values named with their counts (after ``recode``, the
    released categories: a value merged into a frequent category is no longer rare)."""
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
        rare, what = s.rare(), "Rare"
    if rare:
        named = ", ".join(f"'{v}' ({c})" for v, c in rare[:5])
        more = f" and {len(rare) - 5:,} more" if len(rare) > 5 else ""
        text += f". {what} (fewer than {s.rare_below} rows): {named}{more} — merge them to avoid disclosing them."
    elif recode and s.rare():
        text += f". No rare category after recoding (fewer than {s.rare_below} rows)."
    return text


class SummaryModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = None
        self.released: dict = {}
        self.released_rows: dict | None = None

    def set_summary(self, summary, recode=None) -> None:
        self.beginResetModel()
        self.summary = summary
        self.released = {s: label for label, sources in (recode or {}).items() for s in sources}
        #: rows per released category, when recoded (a value is rare when the category it is released as is)
        self.released_rows = summary.recoded(recode) if summary is not None and recode else None
        self.endResetModel()

    def rare_rows(self, value: str, count: int) -> int | None:
        """The rows of the category ``value`` is released as, when fewer than the rare threshold; else None."""
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
                return self.released.get(value, value)
        if role == Qt.ItemDataRole.UserRole and c == COL_SHARE:
            top = int(s.counts[0]) if s.distinct else 1
            return count / top if top else 0.0
        if role in (Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ToolTipRole):
            rare = self.rare_rows(value, count)
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
        if column is not None and column.type != "numeric" and column.categories is not None:
            released = len(column.categories)
        self.title.setText(f"{summary.name}: {summary_line(summary, released, recode)}")
        self.model.set_summary(summary, recode)
        numeric = column is not None and column.type == "numeric" and summary.numeric_rows > 0
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
