"""The column panel's list of a column's categories with their rows, as a model over the labels: a row's text,
colour and tooltip are made only when the view paints that row, so a 70,000-category column is shown (or
shown again after an undo) at once, where one widget item per category took about a second."""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QItemSelection, QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QListView

from optrr_engine.release.schema import RARE_COUNT, is_rare

from ..common.widgets import ElidedTipDelegate

RARE_BACKGROUND = QColor(255, 228, 196)
#: Rows laid out per event-loop turn.
LAYOUT_BATCH = 2000


class CategoryModel(QAbstractListModel):
    """Labels in release order; with the rows read, each label's rows after recoding and its share."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.labels: list = []
        self.counts: dict | None = None
        self.total = 1

    def set_labels(self, labels: list, counts: dict | None = None, total: int = 1) -> None:
        self.beginResetModel()
        self.labels, self.counts, self.total = list(labels), counts, max(1, total)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.labels)

    def text(self, row: int) -> str:
        label = self.labels[row]
        if self.counts is None:
            return str(label)
        n = self.counts.get(label, 0)
        return f"{label}   ({n:,} rows, {100 * n / self.total:.1f}%)"

    def is_rare(self, row: int) -> bool:
        """Whether the label at ``row`` is rare with its rows (the engine's rule, :func:`is_rare`: none is without
        the rows read, or when it has no rows)."""
        return self.counts is not None and is_rare(self.counts.get(self.labels[row], 0))

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row)
        if role == Qt.ItemDataRole.BackgroundRole and self.is_rare(row):
            return QBrush(RARE_BACKGROUND)
        if role == Qt.ItemDataRole.ToolTipRole and self.is_rare(row):
            return f"{self.labels[row]!r} is rare (fewer than {RARE_COUNT} rows): consider merging it"
        return None


class CategoryList(QListView):
    """The list view, with the few conveniences the panel needs (rows by position)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = CategoryModel(self)
        self.setModel(self.model_)
        self.setUniformItemSizes(True)
        # The view lays its rows out asking the model about every row (~3 us each through Python): in batches
        # over several event-loop turns, so 70,000 categories never hold the window up.
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(LAYOUT_BATCH)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # (uniform sizes: every row is as wide as the first; a longer label is elided, in full as its tooltip)
        self.setItemDelegate(ElidedTipDelegate(self))

    def show_labels(self, labels: list, counts: dict | None, total: int, keep=(), current=None):
        """Show ``labels``; the labels in ``keep`` stay selected and ``current`` stays the current one."""
        self.model_.set_labels(labels, counts, total)
        if not keep and current is None:
            return
        position = {label: i for i, label in enumerate(labels)}
        selection = QItemSelection()
        for label in keep:
            if label in position:
                index = self.model_.index(position[label])
                selection.select(index, index)
        flags = QItemSelectionModel.SelectionFlag
        if current in position:
            self.selectionModel().setCurrentIndex(self.model_.index(position[current]), flags.NoUpdate)
        self.selectionModel().select(selection, flags.ClearAndSelect)

    def count(self) -> int:
        return self.model_.rowCount()

    def text(self, row: int) -> str:
        return self.model_.text(row)

    def selected_rows(self) -> list[int]:
        return sorted(i.row() for i in self.selectionModel().selectedIndexes())

    def selected_labels(self) -> list:
        return [self.model_.labels[r] for r in self.selected_rows()]

    def current_label(self):
        index = self.currentIndex()
        return self.model_.labels[index.row()] if index.isValid() else None

    def setCurrentRow(self, row: int) -> None:  # the name QListWidget uses
        """Make ``row`` the current row, selected alone (as a click does)."""
        self.setCurrentIndex(self.model_.index(row))
