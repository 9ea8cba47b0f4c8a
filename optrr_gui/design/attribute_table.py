"""The attribute table: one row per column of the data with its role, type, number of categories, epsilon
(or weight in total-budget mode) and warnings. Edits go through the undo stack; the model only reads the
:class:`SessionState` and re-reads it when the state notifies a change.
"""

from __future__ import annotations

import html
import math
import re
import time

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QRadioButton,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import delete as shiboken_delete

from optrr_engine.tolerance import eps_equal

from ..common.commands import SetColumnsFields, SetColumnValue, SetSessionValue, session_text, set_roles, set_type
from ..common.widgets import text_column_width
from ..design.epsilon_editor import (
    INVALID_STYLE,
    NO_VALUE,
    SHOWN_DECIMALS,
    EpsilonEditor,
    ExactSpinBox,
    refusal_status,
    rounded_down,
)
from ..state.config_bridge import KEPT_WARNING, category_counts, unreadable
from ..state.role_fields import role_choices, settable_rows
from ..state.session import COUNT_FIELDS, ROLES, TYPES, SessionState

COL_NAME, COL_ROLE, COL_TYPE, COL_COUNT, COL_EPS, COL_WARN = range(6)
HEADERS = ("Column", "Role", "Type", "Categories", "ε (lower =\nmore private)", "Warnings")
#: The ε column's header in total-budget mode.
WEIGHT_HEADER = "Weight (share\nof the budget)"
#: The attribute table's view filters: label -> role shown (None: all).
FILTERS = {"All columns": None, "Perturbed": "perturb", "Kept (NOT private)": "keep", "Dropped": "drop"}
#: Above this many columns the epsilon editors open on demand instead of staying open on every row.
PERSISTENT_EDITOR_LIMIT = 300
#: Editors are opened in batches of at most this many seconds per turn of the event loop (a bulk role change
#: on a wide file opens dozens of them; the window stays responsive meanwhile).
EDITOR_BATCH_SECONDS = 0.008

#: The ε column's slider is at least this wide (pixels); the spin box beside it keeps its own width. (60 px left the
#: Warnings column 69 px at a 1280-px-wide window: "rare categori…"; the slider gives way, the spin box is exact.)
SLIDER_MIN_PX = 44


def epsilon_column_width(view) -> int:
    """The ε column: a compact editor's spin box and the shortest useful slider, or its (two-line) header if
    that is wider (was a fixed 230 px)."""
    probe = EpsilonEditor(None, compact=True)
    width = probe.spin.sizeHint().width() + probe.layout().spacing() + SLIDER_MIN_PX + 8
    probe.deleteLater()
    return max(width, view.horizontalHeader().sectionSizeHint(COL_EPS))


def combo_width(choices, view) -> int:
    """The width a cell needs for the combo box editor of ``choices`` (its own size hint: text, arrow, frame)."""
    # Without a parent, deleted right here: a probe left to deleteLater inside the view was shown at the view's
    # (0, 0), over its header, when the Design page appeared before it was deleted (a project opened while no
    # event loop ran, e.g. at start-up).
    probe = QComboBox()
    probe.setFont(view.font())
    probe.addItems(list(choices))
    width = probe.sizeHint().width() + 2
    shiboken_delete(probe)
    return width


ROLE_HELP = {
    "perturb": "perturb: randomized before release (private)",
    "keep": "keep: exported unchanged (NOT private) — only for columns that are not sensitive",
    "drop": "drop: not exported at all",
}
TYPE_HELP = {
    "nominal": "nominal: categories without order (e.g. blood group)",
    "ordinal": "ordinal: ordered categories (e.g. age band); the order is kept in reports",
    "numeric": "numeric: numbers grouped into bins before randomizing",
}


#: What a number looks like while it is typed (digits, a point, an exponent not yet finished).
NUMBER_START = re.compile(r"[+-]?(\d+\.?\d*|\.\d*)?([eE][+-]?\d*)?")


def warnings_tooltip(warnings) -> str:
    """The Warnings cell's tooltip: every warning in full, one paragraph each. Rich text, so that the tooltip
    wraps at a readable width (a warning runs to 330 characters: as plain text the tooltip was one line as wide
    as the screen). The cell shows what fits in its row: wrapped in full in the column's ~120 px at
    a 1400 px wide window, one row took 250 px, and the table showed two or three columns instead of ten."""
    return "".join(f"<p>⚠ {html.escape(w)}</p>" for w in warnings)


#: The start of the warning of a perturbed column with fewer than 2 categories (it cannot be randomized).
CANNOT_RANDOMIZE_START = "fewer than 2 categories"


def cell_warnings(warnings) -> list[str]:
    """The Warnings cell's order: first what blocks the release or must be approved in the release dialog (a kept
    column's warning, rare categories, too few categories to randomize), then the others, each group in its usual
    order. The cell shows the start of its text only: a GUI review saw Prothrombin's numeric-bins note in it and
    not its rare 'NA' that the release refuses until ticked. The tooltip and the side panel keep the usual order."""
    from optrr_engine.release.schema import RARE_WARNING_START

    def blocks(w: str) -> bool:
        return w == KEPT_WARNING or w.startswith((RARE_WARNING_START, CANNOT_RANDOMIZE_START))

    return sorted(warnings, key=lambda w: not blocks(w))


def budget_epsilons(state: SessionState, controller=None) -> list[float]:
    """The ε each perturbed column gets from the whole-record budget now, rounded down as an ε editor holds them
    (:func:`rounded_down`): a switch to ε per column starts the columns there (review 20). The values are those the
    Design tab's column table shows in total-budget mode ("ε from weights": the engine's split of the target by the
    weights, scale c × weight, :func:`optrr_engine.budget.distribute_budget`, in ``DesignSummary.requested``) for
    the design the release would use, else for the best ranked design that splits the budget by weights, when its
    result answers the current target and weights. Without such a result (the designs are still computing), the
    engine's split for Kronecker, the textbook construction: within the budget for every exact design."""
    from optrr_engine.budget import distribute_budget

    from ..state.design_summary import ranked

    names = [c.name for c in state.perturbed_columns()]
    if not names:
        return []
    weights = state.weights()
    values = None
    if controller is not None and controller.request.get("weights") == weights:
        try:  # the columns' category counts now: a result for other counts (a recoding just made) is not used
            sizes = [int(a) for a in controller.sizes_fn()]
        except ValueError:  # a column the codec refuses: no result answers these columns
            sizes = None
        current = controller.current()
        order = [controller.chosen(), *ranked(current, True, bool(state.accept_changed_epsilons)), *current]
        for method in order:
            s = current.get(method) if method else None
            if (
                s is not None
                and s.ok
                and s.scale is not None  # the budget split by weights (not a design choosing its own ε)
                and s.target is not None
                and eps_equal(s.target, state.target_total)
                and list(s.names) == names
                and sizes is not None
                and [int(a) for a in s.sizes] == sizes
                and len(s.requested) == len(names)
            ):
                values = list(s.requested)
                break
    if values is None:
        # (Kronecker's split, target / sum of the weights x weight, does not depend on the category counts)
        sizes = [2] * len(names)
        values = list(distribute_budget("kronecker", sizes, weights, state.target_total).design.requested_epsilons)
    return [rounded_down(v) for v in values]


class AttributeModel(QAbstractTableModel):
    def __init__(self, state: SessionState, stack, parent=None):
        super().__init__(parent)
        self.state, self.stack = state, stack
        self.counts: list[int | None] = []
        self.warnings: list[list[str]] = []
        self._recount()
        state.subscribe(self._on_state)

    # -- state changes -----------------------------------------------------------------------
    def _recount(self) -> None:
        """The shared counts of this version of the columns (computed once per data change)."""
        counts = category_counts(self.state)
        self.counts, self.warnings = counts.counts, counts.warnings

    def _on_state(self, kind, index, name) -> None:
        if kind == "reset":
            self.beginResetModel()
            self._recount()
            self.endResetModel()
        elif kind == "columns" and name in ("epsilon", "weight"):  # a bulk ε edit: that column's cells only
            self.dataChanged.emit(self.index(0, COL_EPS), self.index(self.rowCount() - 1, COL_EPS))
        elif kind == "columns":  # a bulk edit: one refresh of every row
            self._recount()
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(HEADERS) - 1))
        elif kind == "column" and name in ("epsilon", "weight"):
            # only that cell: a row-wide change would re-measure the columns sized to their contents
            self.dataChanged.emit(self.index(index, COL_EPS), self.index(index, COL_EPS))
        elif kind == "column":
            self._recount()
            self.dataChanged.emit(self.index(index, 0), self.index(index, len(HEADERS) - 1))
            if name in COUNT_FIELDS:
                n = self.rowCount() - 1
                self.dataChanged.emit(self.index(0, COL_COUNT), self.index(n, COL_WARN))
        elif kind == "session" and name == "budget_mode":
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_EPS, COL_EPS)
            for row in range(self.rowCount()):
                self.dataChanged.emit(self.index(row, COL_EPS), self.index(row, COL_EPS))

    # -- Qt model API --------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.state.columns)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(HEADERS)

    def value_field(self) -> str:
        return "weight" if self.state.budget_mode else "epsilon"

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == COL_EPS and self.state.budget_mode:
                return WEIGHT_HEADER
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return {
                COL_ROLE: "What happens to the column: perturb (private), keep (unchanged, NOT private), drop.",
                COL_TYPE: "How the values are read: nominal, ordinal (ordered) or numeric (grouped into bins).",
                COL_COUNT: "Number of categories the column is randomized over (missing may count as one).",
                COL_EPS: (
                    "Total-budget mode: relative share of the whole-record ε given to the column."
                    if self.state.budget_mode
                    else "Privacy level of the column. Lower = more private; higher = more accurate."
                ),
                COL_WARN: "Things to check before releasing (likely identifiers, too many categories...).",
            }.get(section)
        return None

    def flags(self, index):
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == COL_ROLE and len(role_choices(self.state.columns[index.row()])) < 2:
            return base  # a column the reader cannot read stays dropped
        if index.column() in (COL_ROLE, COL_TYPE):
            return base | Qt.ItemFlag.ItemIsEditable
        if index.column() == COL_EPS and self.state.columns[index.row()].role == "perturb":
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        col = self.state.columns[index.row()]
        c = index.column()
        warnings = self.warnings[index.row()] if index.row() < len(self.warnings) else []
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if c == COL_NAME:
                return col.name
            if c == COL_ROLE:
                return col.role
            if c == COL_TYPE:
                return col.type
            if c == COL_COUNT:
                n = self.counts[index.row()] if index.row() < len(self.counts) else None
                return "" if n is None else str(n)
            if c == COL_EPS:
                if col.role != "perturb":
                    return "" if role == Qt.ItemDataRole.DisplayRole else None
                v = getattr(col, self.value_field())
                return f"{v:.3g}" if role == Qt.ItemDataRole.DisplayRole else float(v)
            if c == COL_WARN:
                return "; ".join(cell_warnings(warnings))
        if role == Qt.ItemDataRole.ToolTipRole:
            if c == COL_ROLE:
                reason = unreadable(col)
                return ROLE_HELP.get(col.role) if reason is None else f"{ROLE_HELP['drop']}: {reason}"
            if c == COL_TYPE:
                return TYPE_HELP.get(col.type)
            if c == COL_WARN and warnings:
                return warnings_tooltip(warnings)
            if c == COL_NAME:
                return f"{col.name}: select to edit its categories, bins and missing values in the side panel"
        if role == Qt.ItemDataRole.ForegroundRole:
            if col.role == "drop":
                return QBrush(QColor(150, 150, 150))
            if c == COL_WARN and warnings:
                return QBrush(QColor(176, 80, 0))
            if c == COL_ROLE and col.role == "keep":
                return QBrush(QColor(176, 80, 0))
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        name = {COL_ROLE: "role", COL_TYPE: "type", COL_EPS: self.value_field()}.get(index.column())
        if name is None:
            return False
        if name in ("epsilon", "weight"):
            value = float(value)
        if self.state.column_value(index.row(), name) == value:
            return False
        if name == "role":
            if not settable_rows(self.state, [index.row()], value):
                return False  # a column the reader cannot read stays dropped: no edit to accept
            set_roles(self.stack, self.state, [index.row()], value)
        elif name == "type":
            set_type(self.stack, self.state, index.row(), value)
        else:
            self.stack.push(SetColumnValue(self.state, index.row(), name, value))
        return True

    def set_value(self, row: int, value: float, final: bool) -> None:
        """From an epsilon editor: slider drags merge into one undo step."""
        name = self.value_field()
        if self.state.column_value(row, name) != value:
            self.stack.push(SetColumnValue(self.state, row, name, float(value), mergeable=not final))


class ChoiceDelegate(QStyledItemDelegate):
    """A combo box for role or type; the choice is committed as soon as it is picked."""

    def __init__(self, choices, help_texts, parent=None):
        super().__init__(parent)
        self.choices, self.help_texts = choices, help_texts

    def createEditor(self, parent, option, index):
        box = QComboBox(parent)
        for i, c in enumerate(self.choices):
            box.addItem(c)
            box.setItemData(i, self.help_texts.get(c, ""), Qt.ItemDataRole.ToolTipRole)
        box.activated.connect(lambda _i, b=box: self.commitData.emit(b))
        return box

    def setEditorData(self, editor, index):
        editor.setCurrentText(index.data(Qt.ItemDataRole.EditRole))

    def setModelData(self, editor, model, index):
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class TableEpsilonEditor(EpsilonEditor):
    """A row's ε (or weight) editor. Text that cannot be committed turns the field red with the reason while it
    is typed; once the edit ends (Escape, focus leaving, Enter on refused text) the typed text is dropped, the
    field shows the cell's unchanged value and no red remains: the refusal's words stay in the status bar. (A
    persistent editor stays on screen after the edit: a red left there said nothing about the value shown.)"""

    def __init__(self, parent=None, kind: str = "epsilon"):
        super().__init__(parent, kind=kind, compact=True)
        self.spin.lineEdit().textEdited.connect(self._typed)
        self.spin.installEventFilter(self)
        self.spin.lineEdit().installEventFilter(self)

    def _typed(self, text: str) -> None:
        """While typing: red and the reason once no further typing can make the text valid (not a number, above
        the maximum, too many decimals); a start of a valid number ("0", "0.", "1e-") is not marked."""
        message = self.spin.problem(text)
        if message is None or self._may_become_valid(text):
            self.clear_error()
        else:
            self._mark_invalid(message)

    def _may_become_valid(self, text: str) -> bool:
        typed = self.spin._number_text(text)
        if not NUMBER_START.fullmatch(typed):
            return False
        try:
            value = float(typed)
        except ValueError:
            return True  # "", "-", ".", "1e", "1e-": a number may follow
        if value > self.spin.maximum():
            return False  # more digits only make it larger
        if value >= self.spin.minimum():
            return False  # in range, yet refused: too many decimals already
        mantissa, _, exponent = typed.lower().partition("e")
        if exponent:
            return not exponent.startswith("-")  # "1e-5": more digits only make it smaller
        # below the minimum ("0", "0.0"): more digits may reach it ("0.00" cannot reach 0.01 within 4 decimals
        # if the minimum were 0.01: its largest continuation, 0.0099, is below)
        whole, point, decimals = mantissa.partition(".")
        if not point:
            return True
        room = self.spin.decimals() - len(decimals)
        return room > 0 and float(f"{whole or 0}.{decimals}{'9' * room}") >= self.spin.minimum()

    def _refused(self, message: str) -> None:
        super()._refused(message)  # the words: status bar, tool tip, inputRefused
        self.clear_error()  # the field already shows the unchanged value again

    def drop_typed_text(self) -> None:
        """The edit ends without a commit: the field shows the value again, without red."""
        self.spin.lineEdit().setText(self.spin.prefix() + self.spin.textFromValue(self.spin.value()))
        self.clear_error()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
            self.drop_typed_text()
            self.spin.lineEdit().selectAll()
            return True
        if event.type() == QEvent.Type.FocusOut:
            self.clear_error()  # (refused text is reported by the spin box's own focus-out)
        return super().eventFilter(watched, event)


class EpsilonDelegate(QStyledItemDelegate):
    """A compact spin box + log slider in the epsilon column (persistent editors)."""

    def createEditor(self, parent, option, index):
        model = index.model()
        editor = TableEpsilonEditor(parent, kind=model.value_field())
        editor.setAutoFillBackground(True)
        pidx = QPersistentModelIndex(index)
        editor.valueEdited.connect(lambda v, final: pidx.isValid() and model.set_value(pidx.row(), v, final))
        return editor

    def setEditorData(self, editor, index):
        value = index.data(Qt.ItemDataRole.EditRole)
        if value is not None and not editor.spin.hasFocus() and not editor.slider.isSliderDown():
            editor.setValue(float(value))

    def setModelData(self, editor, model, index):
        pass  # committed live through valueEdited

    def updateEditorGeometry(self, editor, option, index):
        editor.setGeometry(option.rect.adjusted(1, 1, -1, -1))


class AttributeView(QTableView):
    """The attribute table. Tab leaves the table, from a row's ε editor too: to the control after the table in
    the window's tab order (the chosen column's panel), not to the next row's editor (the editors open one by one
    and sit at the end of the window's tab chain: Tab from the last one jumped to the tab bar); Shift+Tab from an
    editor goes back to the table. The arrow keys move between the cells."""

    def focusNextPrevChild(self, next: bool) -> bool:
        focused = QApplication.focusWidget()
        if focused is not None and focused is not self and self.viewport().isAncestorOf(focused):
            self.setFocus(Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason)
            if not next:
                return True
        return super().focusNextPrevChild(next)


class AttributePanel(QWidget):
    """Budget-mode controls above the attribute table."""

    currentColumnChanged = Signal(int)

    def __init__(self, state: SessionState, stack, parent=None):
        super().__init__(parent)
        self.state, self.stack = state, stack
        #: The Design tab's designs (optrr_gui.design.controller.DesignController, :meth:`set_controller`): the ε
        #: the budget gives each column, and the whole-record ε of the per-column values (None: Kronecker's split).
        self.controller = None
        self.model = AttributeModel(state, stack, self)
        self.view = AttributeView(self)
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.CurrentChanged
            | QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.view.verticalHeader().hide()
        row_height = max(30, self.view.fontMetrics().height() + 14)
        self.view.verticalHeader().setDefaultSectionSize(row_height)
        # at least three rows under the (two-line) header: on a small screen the side scrolls instead
        self.view.setMinimumHeight(3 * row_height + 2 * self.view.fontMetrics().height() + 24)
        self.view.setAlternatingRowColors(True)
        # Tab leaves the table (to the side panel and the mechanism); the arrow keys move between the cells
        self.view.setTabKeyNavigation(False)
        header = self.view.horizontalHeader()
        # Sized to their contents once per file (``_fit_columns``), not by ResizeToContents: that re-measured
        # every row at each layout change (showing the safe-start banner measured 77 rows x 4 columns).
        for col in (COL_NAME, COL_ROLE, COL_TYPE, COL_COUNT, COL_EPS):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(COL_EPS, epsilon_column_width(self.view))
        header.setMinimumSectionSize(40)
        header.resizeSection(COL_WARN, header.minimumSectionSize())
        header.setStretchLastSection(True)  # the warnings take what is left (elided; the full text in the tooltip)
        self.view.setItemDelegateForColumn(COL_ROLE, ChoiceDelegate(ROLES, ROLE_HELP, self.view))
        self.view.setItemDelegateForColumn(COL_TYPE, ChoiceDelegate(TYPES, TYPE_HELP, self.view))
        self.eps_delegate = EpsilonDelegate(self.view)
        self.view.setItemDelegateForColumn(COL_EPS, self.eps_delegate)
        self.view.selectionModel().currentRowChanged.connect(
            lambda cur, _prev: self.currentColumnChanged.emit(cur.row())
        )

        self.per_column = QRadioButton("ε per column")
        self.per_column.setToolTip("Set each column's ε directly; the designs report the whole-record ε they give.")
        self.total = QRadioButton("Total budget:")
        self.total.setToolTip(
            "Fix the whole-record ε (the guarantee for a complete record) and share it between the columns by "
            "weight; each design finds the largest ε per column that stays within the budget."
        )
        group = QButtonGroup(self)
        group.addButton(self.per_column)
        group.addButton(self.total)
        # typed text is kept exactly or refused in words (a plain spin box dropped keystrokes: 1e-5 became 15)
        self.target = ExactSpinBox(name="the whole-record ε")
        self.target.setPrefix("whole-record ε ")
        self.target.setSingleStep(0.1)
        self.target.setKeyboardTracking(False)
        self._target_tip = "The privacy guarantee for a complete record. Lower = more private."
        self.target.setToolTip(self._target_tip)
        self.target.inputRefused.connect(self._target_refused)
        self._update_target_range()
        self.count_label = QLabel()
        self.filter = QComboBox()
        self.filter.addItems(list(FILTERS))
        self.filter.setToolTip("Show only the columns with this role (a view filter; nothing changes)")
        self.filter.currentTextChanged.connect(lambda _t: self.apply_filter())
        # Two rows (what is shown, then the privacy mode): in one row they asked ~780 px, more than half a
        # 1280-wide window, and the design side was squeezed.
        bar = QHBoxLayout()
        bar.addWidget(QLabel("<b>Columns</b>"))
        bar.addWidget(self.count_label, 1)
        bar.addWidget(self.filter)
        mode = QHBoxLayout()
        mode.addWidget(self.per_column)
        mode.addWidget(self.total)
        mode.addWidget(self.target)
        mode.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addLayout(mode)
        lay.addWidget(self.view, 1)
        self._editor_queue: list[int] = []
        self._rows_hidden = False
        self._editor_timer = QTimer(self)
        self._editor_timer.setSingleShot(True)
        self._editor_timer.setInterval(0)
        self._editor_timer.timeout.connect(self._open_queued_editors)
        self.per_column.toggled.connect(self._mode_toggled)
        self.target.valueChanged.connect(self._target_changed)
        state.subscribe(self._on_state)
        self._sync_controls()

    def set_controller(self, controller) -> None:
        """The designs whose results the mode switch and the whole-record field use."""
        if controller is self.controller:
            return
        if self.controller is not None:
            self.controller.changed.disconnect(self._show_target)
        self.controller = controller
        if controller is not None:
            controller.changed.connect(self._show_target)
        self._show_target()

    # -- edits -------------------------------------------------------------------------------
    def _mode_toggled(self, per_column: bool) -> None:
        if self.state.budget_mode == (not per_column):
            return
        if not per_column:
            self.stack.push(SetSessionValue(self.state, "budget_mode", True))
            return
        # Each perturbed column starts at the ε the budget gives it now, in the same undo step (review 20: the
        # columns jumped to the stale ε written when the file was opened, without a word).
        epsilons = budget_epsilons(self.state, self.controller)
        changes = {
            i: {"epsilon": e}
            for i, e in zip(self.state.perturbed_indices(), epsilons, strict=True)
            if not eps_equal(e, self.state.columns[i].epsilon)
        }
        text = session_text("budget_mode", False)
        self.stack.beginMacro(text)  # the ε first (the designs of the new mode start from them), then the mode
        if changes:
            self.stack.push(SetColumnsFields(self.state, changes, text))
        self.stack.push(SetSessionValue(self.state, "budget_mode", False))
        self.stack.endMacro()

    def _update_target_range(self) -> None:
        """At most MAX_EPSILON per perturbed column: a larger whole-record target can never be used
        (optrr_engine.validation.check_target)."""
        from optrr_engine.validation import MAX_EPSILON

        perturbed = len(self.state.perturbed_indices())
        usable = MAX_EPSILON * max(1, perturbed)
        # never below the session's own target (a project may hold a larger one): the box shows what the state
        # holds, and the designs say "target above what can be used"
        self.target.blockSignals(True)
        self.target.setRange(0.01, max(usable, float(self.state.target_total or 0.0)))
        self.target.blockSignals(False)
        self._show_target()

    def per_column_total(self) -> float | None:
        """ε per column: the whole-record ε the columns' ε give, that of the design the release would use (as
        the design table shows it), once its result answers the current ε; else None (computing)."""
        c = self.controller
        if c is None or self.state.budget_mode or c.request.get("budget_mode"):
            return None
        if c.request.get("epsilons") != self.state.requested_epsilons():
            return None
        method = c.chosen()
        s = c.current().get(method) if method else None
        if s is None or not s.ok or s.target is not None or not math.isfinite(s.overall_epsilon):
            return None
        return float(s.overall_epsilon)

    def _show_target(self) -> None:
        """The whole-record field: the budget in total-budget mode; with ε per column (greyed), what the columns'
        ε give (:meth:`per_column_total`), NO_VALUE while it is computing, never the budget of the other mode
        (review 20: it read 10.000 while the designs gave 0.598)."""
        box = self.target
        box.blockSignals(True)
        if self.state.budget_mode:
            box.setSpecialValueText("")
            box.setValue(self.state.target_total)
            box.setToolTip(self._target_tip)
        else:
            total = self.per_column_total()
            box.setSpecialValueText(f"{box.prefix()}{NO_VALUE}")  # (shown at the minimum)
            if total is None:
                box.setValue(box.minimum())
            else:
                shown = max(round(total, SHOWN_DECIMALS), box.minimum() + 10**-SHOWN_DECIMALS)
                if shown > box.maximum():
                    box.setMaximum(shown)
                box.setValue(shown)
            box.setToolTip(
                "ε per column: the whole-record ε the columns' ε give (the design the release uses; — while it is "
                "computing). Choose Total budget to set it."
            )
        box.blockSignals(False)

    def _target_refused(self, message: str) -> None:
        self.target.setStyleSheet(INVALID_STYLE)
        self.target.setToolTip(f"{message}\n\n{self._target_tip}")
        status_bar = getattr(self.window(), "statusBar", None)
        if callable(status_bar):
            status_bar().showMessage(refusal_status(message), 10_000)

    def _target_changed(self, value: float) -> None:
        self.target.setStyleSheet("")
        self.target.setToolTip(self._target_tip)
        if not eps_equal(value, self.state.target_total):
            self.stack.push(SetSessionValue(self.state, "target_total", float(value), mergeable=True))

    def set_roles(self, rows, role: str) -> None:
        """One undo step giving ``role`` to the columns of ``rows`` that can take it; the status bar names the
        ones that cannot (columns the reader cannot read stay dropped)."""
        set_roles(self.stack, self.state, rows, role)
        settable = set(settable_rows(self.state, rows, role))
        refused = [self.state.columns[r] for r in rows if r not in settable]
        status_bar = getattr(self.window(), "statusBar", None)
        if refused and callable(status_bar):
            col = refused[0]
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            status_bar().showMessage(f"{col.name}{more} stays dropped: {unreadable(col)}", 10_000)

    def selected_rows(self) -> list[int]:
        rows = {i.row() for i in self.view.selectionModel().selectedRows()}
        return sorted(r for r in rows if not self.view.isRowHidden(r))  # a filter hides rows of a range

    # -- state -> controls ---------------------------------------------------------------------
    def _on_state(self, kind, index, name) -> None:
        if kind == "reset" or (kind == "session" and name in ("budget_mode", "target_total")):
            self._sync_controls()
        if kind == "reset":
            self._fit_columns()
        if kind == "reset" or (kind == "session" and name == "budget_mode"):
            self._open_editors()
        elif kind in ("column", "columns") and name == "role":
            self._open_editors(None if index is None else [index], rebuild=False)
        if kind in ("column", "columns") and name == "epsilon" and not self.state.budget_mode:
            self._show_target()  # the total shown is no longer the one of these ε (computing)
        if kind in ("reset", "column", "columns"):
            self._update_count()
            if kind == "reset" or name == "role":
                self._update_target_range()
                self.apply_filter()

    def _fit_columns(self) -> None:
        """Name, role, type and count columns fitted to this file's rows (role and type wide enough for every
        choice, so a later edit never clips them)."""
        model = self.view.model()
        for col, choices in ((COL_NAME, ()), (COL_ROLE, ROLES), (COL_TYPE, TYPES), (COL_COUNT, ())):
            texts = {model.data(model.index(row, col)) or "" for row in range(model.rowCount())}
            widest = combo_width(choices, self.view) if choices else 0
            self.view.setColumnWidth(col, max(text_column_width(self.view, col, texts), widest))

    def apply_filter(self) -> None:
        """Hide the rows whose role the filter does not show (perturbed / kept / dropped / all)."""
        role = FILTERS.get(self.filter.currentText())
        if role is None and not self._rows_hidden:
            return  # every row shown already (a bulk role change of 77 rows need not touch each)
        for row, col in enumerate(self.state.columns):
            self.view.setRowHidden(row, role is not None and col.role != role)
        self._rows_hidden = role is not None

    def _sync_controls(self) -> None:
        for w in (self.per_column, self.total, self.target):
            w.blockSignals(True)
        self.per_column.setChecked(not self.state.budget_mode)
        self.total.setChecked(self.state.budget_mode)
        self.target.setEnabled(self.state.budget_mode)
        for w in (self.per_column, self.total, self.target):
            w.blockSignals(False)
        self._show_target()
        self._update_count()

    def _update_count(self) -> None:
        n = len(self.state.columns)
        p = len(self.state.perturbed_indices())
        self.count_label.setText(f"{n} in the file, {p} perturbed")

    def _open_editors(self, rows=None, rebuild: bool = True) -> None:
        """Keep a spin box + slider open on every perturbed row (closed on the others), on ``rows`` (default:
        all). ``rebuild``: replace open editors too (a new file, or epsilon <-> weight); a role change only
        opens and closes the editors of rows whose role changed."""
        many = self.model.rowCount() > PERSISTENT_EDITOR_LIMIT
        if rows is None:
            rows = range(self.model.rowCount())
            self._editor_queue.clear()
        for row in rows:
            idx = self.model.index(row, COL_EPS)
            want = not many and self.state.columns[row].role == "perturb"
            is_open = self.view.isPersistentEditorOpen(idx)
            if is_open and (rebuild or not want):
                self.view.closePersistentEditor(idx)
                is_open = False
            if want and not is_open:
                self._editor_queue.append(row)
        if self._editor_queue:
            self._editor_timer.start()  # at the next turn of the event loop: the edit itself returns at once

    def editors_pending(self) -> bool:
        """Whether epsilon editors are still waiting to be opened."""
        return bool(self._editor_queue)

    def _open_queued_editors(self) -> None:
        deadline = time.perf_counter() + EDITOR_BATCH_SECONDS
        while self._editor_queue:
            row = self._editor_queue.pop(0)
            if row < self.model.rowCount() and self.state.columns[row].role == "perturb":
                idx = self.model.index(row, COL_EPS)
                if not self.view.isPersistentEditorOpen(idx):
                    self.view.openPersistentEditor(idx)
            if time.perf_counter() > deadline:
                break
        if self._editor_queue:
            self._editor_timer.start()
