"""The data view: a lazy ``QAbstractTableModel`` over a :class:`DataStore` (Spyder's DataFrame editor style).

The file is read in a worker thread chunk by chunk; the model exposes rows in steps through
``canFetchMore`` / ``fetchMore`` (asked by the view when it scrolls near the end) and polls the store while
the reader is still running. ``data()`` formats one cell from the chunk's codes, so painting costs the same at
row 10 and at row 1,000,000; rows have a fixed height so the view never measures them.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from ..common.widgets import ElidedTipDelegate, text_column_width
from ..state.config_bridge import not_read_text
from ..state.data_store import DataStore

#: What a cell of a column the reader cannot read shows (grey; its tooltip and its header's say why).
NOT_READ = "(not read)"
UNREAD_COLOR = QBrush(QColor(150, 150, 150))
UNREAD_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole)
#: Rows exposed per fetch; large so that dragging the scroll bar stays meaningful.
ROWS_PER_FETCH = 200_000
POLL_MS = 100


class LazyDataModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.store: DataStore | None = None
        self._shown = 0
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def set_store(self, store: DataStore | None) -> None:
        self.beginResetModel()
        self.store = store
        self._shown = 0
        self.endResetModel()
        if store is not None:
            self._timer.start()
            self._poll()
        else:
            self._timer.stop()

    def _poll(self) -> None:
        """While the reader runs: show the first page as soon as rows arrive; stop when the file is read."""
        if self.store is None:
            self._timer.stop()
            return
        first_page = min(self.store.rows, ROWS_PER_FETCH)
        if self._shown < first_page:
            self._expose(first_page)
        if self.store.complete or self.store.stopped:
            self._timer.stop()

    # -- Spyder-style lazy rows -------------------------------------------------------------------
    def canFetchMore(self, parent=QModelIndex()) -> bool:  # noqa: B008 - Qt API
        return not parent.isValid() and self.store is not None and self._shown < self.store.rows

    def fetchMore(self, parent=QModelIndex()) -> None:  # noqa: B008 - Qt API
        if not self.canFetchMore(parent):
            return
        self._expose(min(self.store.rows, self._shown + ROWS_PER_FETCH))

    def _expose(self, target: int) -> None:
        if target <= self._shown:
            return
        self.beginInsertRows(QModelIndex(), self._shown, target - 1)
        self._shown = target
        self.endInsertRows()

    def fetch_all(self) -> None:
        while self.canFetchMore():
            self.fetchMore()

    # -- Qt model API --------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() or self.store is None else len(self.store.columns)

    def unread_reason(self, column: int) -> str | None:
        """Why column ``column`` of the file is not read (the reader cannot give it as text), or None."""
        if self.store is None or not self.store.unreadable:
            return None
        name = self.store.columns[column]
        reason = self.store.unreadable.get(name)
        return None if reason is None else not_read_text(name, reason)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.store is None:
            return None
        if self.store.unreadable and role in UNREAD_ROLES:
            reason = self.unread_reason(index.column())
            if reason is not None and role == Qt.ItemDataRole.DisplayRole:
                return NOT_READ
            if reason is not None:
                return reason if role == Qt.ItemDataRole.ToolTipRole else UNREAD_COLOR
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return self.store.cell(index.row(), index.column())

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return self.unread_reason(section)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.store.columns[section] if self.store is not None else None
        return str(section + 1)


class DataView(QWidget):
    """The data tab: the lazy table and a line saying how many rows are loaded."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = LazyDataModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setToolTip("The file as read (original values). Only the rows you scroll to are formatted.")
        # a value wider than its column (they start at most MAX_WIDTH wide) shows in full as the cell's tooltip
        self.table.setItemDelegate(ElidedTipDelegate(self.table))
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setDefaultSectionSize(110)
        self.status = QLabel("No data")
        self._sized = False
        self.model.modelReset.connect(self._reset)
        self.model.rowsInserted.connect(self._first_rows)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)

    def _reset(self) -> None:
        self._sized = False

    #: Rows looked at when the columns are fitted, and the widest a column starts.
    FIT_ROWS = 40
    MAX_WIDTH = 260

    def _first_rows(self, *_args) -> None:
        """Fit the columns to the first rows once per file."""
        if not self._sized:
            self._sized = True
            self._fit_columns()

    def _fit_columns(self) -> None:
        """Width of a column = what its header and the distinct values of its first FIT_ROWS rows need
        (:func:`text_column_width`), capped at MAX_WIDTH."""
        store = self.model.store
        if store is None:
            return
        rows = min(self.FIT_ROWS, self.model.rowCount())
        header = self.table.horizontalHeader()
        for c in range(len(store.columns)):
            values = {NOT_READ} if self.model.unread_reason(c) is not None else store.head_values(c, rows)
            width = text_column_width(self.table, c, values)
            header.resizeSection(c, min(width, self.MAX_WIDTH))
