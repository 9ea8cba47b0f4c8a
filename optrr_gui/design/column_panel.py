"""Side panel for the selected column: role, type, missing values, the epsilon (or weight) editor with its
"lower = more private" wording, and the categories (nominal / ordinal) or bin edges (numeric).
Every change is one undo command.
"""

from __future__ import annotations

import math
import operator

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from optrr_engine.release.recode import recode_key
from optrr_engine.release.schema import RARE_COUNT, missing_category

from ..common.commands import SetColumnFields, SetColumnsFields, SetColumnValue, set_roles, set_type
from ..common.widgets import WrappedLabel
from ..design.attribute_table import ROLE_HELP, TYPE_HELP
from ..design.category_list import CategoryList
from ..design.epsilon_editor import EpsilonEditor
from ..state.config_bridge import category_counts, released_rows, remember_codec_size, unreadable
from ..state.role_fields import missing_categories
from ..state.session import MISSING, ROLES, TYPES, ColumnState, SessionState
from ..workers.jobs.recode import RecodeResult, recode_column, released_counts

#: From this many categories on, a recoding from the buttons runs on a worker thread (a 70,000-category
#: column takes a few hundred milliseconds); below, it is applied at once.
RECODE_WORKER_MIN = 2000
RECODE_CHANNEL = "recode"
#: Column states whose rows per category the panel keeps (the one shown, the one before it and a recoding's
#: result before it is shown: an undo or redo of the last step counts nothing again).
ROWS_KEPT = 3
#: The Role box's tooltip (a column the reader cannot read says why it stays dropped instead).
ROLE_TIP = "perturb = randomized (private); keep = exported unchanged (NOT private); drop = left out"
MISSING_TEXT = {"category": "are a category of their own", "exclude": "leave their row out of the release"}


def parse_bins(text: str) -> list[float]:
    """Bin edges typed as "0, 18, 40, 65, inf": at least two, strictly increasing."""
    parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        edges = [float(p) for p in parts]
    except ValueError:
        raise ValueError("bin edges must be numbers separated by commas, e.g. 0, 18, 40, 65, inf") from None
    if len(edges) < 3 or any(not b > a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError("give at least three bin edges (two bins) in increasing order")
    if any(math.isnan(e) for e in edges):
        raise ValueError("bin edges cannot be NaN")
    return edges


def format_bins(bins) -> str:
    from ..state.config_bridge import bin_edges

    edges = bin_edges(bins)
    if edges is None:
        return ""
    return ", ".join(str(b) if isinstance(b, str) else f"{b:g}" for b in edges)


def rows_key(col, recode, summary) -> tuple:
    """An exact key of what :func:`released_counts` of ``col`` with ``recode`` reads (the column's name and missing
    values, the recode's content, the ColumnSummary itself), for :meth:`ColumnPanel.category_rows`."""
    return (col.name, col.missing, col.missing_label, tuple(col.missing_values), recode_key(recode), summary)


def nothing_grouped(col, summary, params: dict) -> str:
    """Why Group rare (``params``: min_rows, label; label None for an ordinal column, whose rare categories merge
    with their neighbours) merged nothing in ``col`` and what to do: its group is already the only rare category,
    only the missing-value category is rare, merging would leave one category, or no category is rare."""
    label, min_rows = params["label"], int(params["min_rows"])
    counts = released_rows(col, summary) if summary is not None else {}
    rows = counts.get(label)
    if label in (col.categories or []) and rows is not None and 0 < rows < min_rows:
        return (
            f"Nothing grouped: {label!r} ({rows:,} row{'s' if rows != 1 else ''}) is already the group of rare "
            f"values and is still rare (fewer than {min_rows:,} rows). Merge it into another category (select both "
            "under Categories, then Merge…), or treat it as missing."
        )
    missing = missing_category(col)
    missing_rows = counts.get(missing) if missing else None
    if missing_rows is not None and 0 < missing_rows < min_rows:
        return (
            f"Nothing grouped: only {missing!r}, the missing-value category ({missing_rows:,} row"
            f"{'s' if missing_rows != 1 else ''}), is rare, and a missing value is not merged with values. Allow it "
            "at release (the tick under the orange list), or drop the column."
        )
    rare = [c for c, n in counts.items() if c != missing and 0 < n < min_rows]
    if label is None and rare:  # ordinal: merged with neighbours, but the engine keeps two categories
        return (
            f"Nothing grouped: {', '.join(repr(c) for c in rare[:3])} {'is' if len(rare) == 1 else 'are'} rare, but "
            "merging with a neighbour would leave one category besides the missing one. Drop the column, or treat "
            "the rare values as missing."
        )
    return f"Nothing grouped: no category has fewer than {min_rows:,} row{'s' if min_rows != 1 else ''}."


def ordinal_group_text(name: str) -> str:
    """What Group rare does to ordinal column ``name`` (the engine's rule, ``optrr schema --merge-rare``)."""
    return (
        f"{name} is ordinal: its rare categories (seen in fewer than {RARE_COUNT} rows, which the release refuses) are "
        "not grouped into 'Other', which would put the lowest and highest values together after the highest and "
        "break the order. Instead the rarest category merges with its neighbour of fewer rows, again until none is "
        "rare; numbers become ranges such as '20-29', or open ranges such as '80+' at an end.\n\nTo group them into "
        "'Other' anyway, set the type to nominal first."
    )


def category_title(col, n: int | None) -> str:
    """The side panel's title after the column's name: its number of categories (of a kept column: of the values it
    copies), or in words why there is none.
    A dropped column lists no categories (nothing of it is released; they are read from the rows once it is
    randomized or kept); any other column without a count has none listed yet (its rows not summarised)."""
    if n is not None:
        return f"{n} values, copied as they are" if col.role == "keep" else f"{n} categories"
    if col.role == "drop":
        return "dropped, categories not listed"
    return "categories not counted yet"


class ColumnPanel(QWidget):
    #: A recoding from :meth:`start_recode` was applied (the labels merged, a list; [] when nothing was rare).
    #: Declared ``object``: a ``list`` signal converts every element to a QVariant (69,501 labels: 50 ms).
    recodeFinished = Signal(object)
    #: A recoding from :meth:`start_recode` was cancelled, refused or outdated: the session is unchanged.
    recodeCancelled = Signal()

    def __init__(self, state: SessionState, stack, parent=None):
        super().__init__(parent)
        self.state, self.stack = state, stack
        #: The window's TaskRunner (recodings of many categories run on it); None: everything at once.
        self.runner = None
        self.row: int | None = None
        self._shown: tuple | None = None  # (row, column name) whose categories the list shows
        self._list_source: tuple | None = None  # what the list was built from (rebuilt only when it changes)
        #: rows per category (:func:`released_counts`) by :func:`rows_key`, of the last ROWS_KEPT column states
        self._rows: dict = {}

        self.title = QLabel("Select a column")
        self.title.setStyleSheet("font-weight: bold;")
        self.role = QComboBox()
        for i, r in enumerate(ROLES):
            self.role.addItem(r)
            self.role.setItemData(i, ROLE_HELP[r], Qt.ItemDataRole.ToolTipRole)
        self.role.setToolTip(ROLE_TIP)
        self.type = QComboBox()
        for i, t in enumerate(TYPES):
            self.type.addItem(t)
            self.type.setItemData(i, TYPE_HELP[t], Qt.ItemDataRole.ToolTipRole)
        self.type.setToolTip("nominal = no order; ordinal = ordered categories; numeric = numbers grouped into bins")
        self.missing = QComboBox()
        for m in MISSING:
            self.missing.addItem(f"missing values {MISSING_TEXT[m]}", m)
        self.missing.setToolTip(
            "Missing values (empty cells, '?', NA) either form one more category that is randomized like the "
            "others, or leave the whole row out of the release. Left-out rows are not protected by epsilon: "
            "whether a person's record appears shows that this value is recorded for them."
        )
        self.epsilon = EpsilonEditor(self, kind="epsilon")
        self.weight = EpsilonEditor(self, kind="weight")
        self.risk = WrappedLabel()  # wraps, and asks the height its lines need (never cut off)
        self.risk.setToolTip("Recomputed from the design the release will use; see Help ▸ How strong is this epsilon?")
        #: Callable (row) -> text of the risk beside the ε, set by the window (it knows the designs).
        self.risk_source = None
        self._risk_timer = QTimer(self)
        self._risk_timer.setSingleShot(True)
        self._risk_timer.setInterval(0)
        self._risk_timer.timeout.connect(self.update_risk)
        self.warnings = WrappedLabel()
        self.warnings.setStyleSheet("color: #b05000;")

        form = QFormLayout()
        form.addRow("Role", self.role)
        form.addRow("Type", self.type)
        form.addRow("Missing", self.missing)
        form.addRow("ε", self.epsilon)
        form.addRow("Weight", self.weight)
        self._form = form

        self.categories = CategoryList()
        self.categories.setToolTip(
            "The categories the column is randomized over, in order (the order matters for ordinal columns). "
            "Every value in the data must be one of them, or be treated as missing."
        )
        self.summaries: dict = {}
        self.merge = QPushButton("Merge…")
        self.merge.setToolTip("Release the selected categories as one (e.g. rare ones as 'Other'); one undo step")
        self.rename = QPushButton("Rename…")
        self.rename.setToolTip("Release the selected category under another name")
        self.group_rare = QPushButton("Group rare…")
        self.group_rare.setToolTip(
            "Nominal: merge every category seen in fewer than n rows into 'Other'. Ordinal: merge each rare category "
            "with its neighbour, keeping the order (ranges such as '20-29', '80+')"
        )
        self.up = QPushButton("Up")
        self.down = QPushButton("Down")
        self.remove = QPushButton("Treat as missing")
        self.add = QPushButton("Add…")
        self.up.setToolTip("Move the selected category earlier (ordinal order)")
        self.down.setToolTip("Move the selected category later (ordinal order)")
        self.remove.setToolTip(
            "The selected values are missing-value codes (such as '?' or -9): handle them like empty cells"
        )
        self.add.setToolTip("Add a category that may appear in the data (it is then possible in the output too)")
        self.missing_list = QLabel()
        self.missing_list.setWordWrap(True)
        self.restore = QPushButton("Restore")
        self.restore.setToolTip("Make the values treated as missing ordinary categories again")
        buttons = QHBoxLayout()
        for b in (self.up, self.down, self.remove, self.add):
            buttons.addWidget(b)
        recode_buttons = QHBoxLayout()
        for b in (self.merge, self.rename, self.group_rare):
            recode_buttons.addWidget(b)
        recode_buttons.addStretch(1)
        self.recode_status = QLabel()
        self.recode_cancel = QPushButton("Cancel")
        self.recode_cancel.setToolTip("Stop the recoding; the categories stay as they are")
        self.recode_cancel.clicked.connect(self.cancel_recode)
        self.recode_status.hide()
        self.recode_cancel.hide()
        recode_buttons.addWidget(self.recode_status)
        recode_buttons.addWidget(self.recode_cancel)
        missing_row = QHBoxLayout()
        missing_row.addWidget(self.missing_list, 1)
        missing_row.addWidget(self.restore)
        self.bins = QLineEdit()
        self.bins.setPlaceholderText("bin edges, e.g. 0, 18, 40, 65, inf")
        self.bins.setToolTip(
            "Numbers are grouped into the bins between consecutive edges (applied on Enter or on leaving the field)."
        )
        self.bins_error = QLabel()
        self.bins_error.setStyleSheet("color: #cc0000;")
        self.cat_box = QGroupBox("Categories")
        cl = QVBoxLayout(self.cat_box)
        self.bins_label = QLabel("Bin edges (Enter or leaving the field applies them):")
        cl.addWidget(self.bins_label)
        cl.addWidget(self.bins)
        cl.addWidget(self.bins_error)
        self.others_label = QLabel("Other values kept as categories:")
        cl.addWidget(self.others_label)
        cl.addWidget(self.categories, 1)
        cl.addLayout(buttons)
        cl.addLayout(recode_buttons)
        #: why the last Group rare changed nothing (hidden once something is recoded or another column is shown)
        self.recode_note = WrappedLabel()
        self.recode_note.setStyleSheet("color: #b05000;")
        self.recode_note.hide()
        cl.addWidget(self.recode_note)
        cl.addLayout(missing_row)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addLayout(form)
        lay.addWidget(self.risk)
        lay.addWidget(self.warnings)
        lay.addWidget(self.cat_box, 1)

        self.role.activated.connect(lambda i: self._set_role(ROLES[i]))
        self.type.activated.connect(lambda i: self._set_type(TYPES[i]))
        self.missing.activated.connect(lambda i: self._set("missing", MISSING[i]))
        self.epsilon.valueEdited.connect(lambda v, final: self._set("epsilon", v, mergeable=not final))
        self.weight.valueEdited.connect(lambda v, final: self._set("weight", v, mergeable=not final))
        self.up.clicked.connect(lambda: self._move(-1))
        self.down.clicked.connect(lambda: self._move(1))
        self.remove.clicked.connect(self._treat_as_missing)
        self.restore.clicked.connect(self._restore_missing)
        self.add.clicked.connect(self._add)
        self.merge.clicked.connect(self._merge)
        self.rename.clicked.connect(self._rename)
        self.group_rare.clicked.connect(self._group_rare)
        # Enter, and leaving the field (another column, a button, Ctrl+S all take the focus or commit it first)
        self.bins.returnPressed.connect(self._apply_bins)
        self.bins.editingFinished.connect(self._apply_bins)  # a second apply of the same edges changes nothing
        self._bins_note = ""  # why edges typed for a column left meanwhile were not applied (shown until the next)
        state.subscribe(self._on_state)
        self.show_column(None)

    # -- edits -------------------------------------------------------------------------------
    def _set(self, name: str, value, mergeable: bool = False) -> None:
        if self.row is None or self.state.column_value(self.row, name) == value:
            return
        self.stack.push(SetColumnValue(self.state, self.row, name, value, mergeable=mergeable))

    def _set_role(self, role: str) -> None:
        """The role of the column shown, with the categories it needs when brought back from "drop" (none other
        than "drop" for a column the reader cannot read)."""
        if self.row is not None:
            set_roles(self.stack, self.state, [self.row], role)

    def _set_type(self, type_: str) -> None:
        """The type of the column shown, with the categories read from the rows when a numeric column becomes
        nominal or ordinal (one undo step)."""
        if self.row is not None:
            set_type(self.stack, self.state, self.row, type_)

    def list_read_categories(self) -> None:
        """One undo step giving every perturbed column that lists no categories (its role changed before the
        rows were summarised) the categories read from the rows."""
        changes = missing_categories(self.state)
        if changes:
            names = ", ".join(self.state.columns[i].name for i in changes)
            self.stack.push(SetColumnsFields(self.state, changes, f"list the categories of {names} from the data"))

    def current_categories(self) -> list:
        return list(self.state.columns[self.row].categories or []) if self.row is not None else []

    def _move(self, step: int) -> None:
        cats = self.current_categories()
        picked = self.selected_categories()
        if len(picked) != 1:
            return
        i = cats.index(picked[0])
        j = i + step
        if not 0 <= j < len(cats):
            return
        cats[i], cats[j] = cats[j], cats[i]
        self._set("categories", cats)
        self.categories.setCurrentRow(j)

    def selected_categories(self) -> list:
        """The current column's categories selected in the list (by value, so never another column's)."""
        if self.row is None or self._shown != (self.row, self.state.columns[self.row].name):
            return []
        cats = self.current_categories()
        rows = self.categories.selected_rows()
        return [cats[r] for r in rows if r < len(cats)]  # rows show counts too: map by position

    def _treat_as_missing(self) -> None:
        """Move the selected categories into the column's missing-value codes (one undo step)."""
        moved = self.selected_categories()
        if not moved:
            return
        col = self.state.columns[self.row]
        kept = [c for c in self.current_categories() if c not in moved]
        if col.missing == "category" and col.missing_label not in kept:
            kept.append(col.missing_label)  # the missing values need their category
        self.stack.beginMacro(f"treat {', '.join(map(str, moved))} of {col.name} as missing")
        self._set("categories", kept)
        self._set("missing_values", [*col.missing_values, *[m for m in moved if m not in col.missing_values]])
        self.stack.endMacro()

    def _restore_missing(self) -> None:
        if self.row is None:
            return
        col = self.state.columns[self.row]
        if not col.missing_values:
            return
        cats = self.current_categories()
        self.stack.beginMacro(f"restore the missing-value codes of {col.name}")
        self._set("categories", [*cats, *[m for m in col.missing_values if m not in cats]])
        self._set("missing_values", [])
        self.stack.endMacro()

    def _add(self) -> None:
        text, ok = QInputDialog.getText(self, "Add a category", "Category (exactly as it appears in the data):")
        if ok and text and text not in self.current_categories():
            self._set("categories", [*self.current_categories(), text])

    # -- recoding (optrr_engine.release.recode): one undo step each ------------------------------------
    def apply_recode(self, recode, categories, text: str, size: int | None = None) -> None:
        """One undo step and ONE state change for the recode and the categories (``size``: the codec's count
        of the recoded column when a worker computed it, so the UI thread does not)."""
        if self.row is None:
            return
        values = {"recode": recode or None, "categories": categories}
        col = self.state.columns[self.row]
        if all(self.state.column_value(self.row, k) == v for k, v in values.items()):
            return
        if size is not None:
            remember_codec_size(self.state, ColumnState(**{**col.copied_fields(), **values}), size)
        self.stack.push(SetColumnFields(self.state, self.row, values, text))

    def _apply_result(self, col, kind: str, params: dict, result: RecodeResult) -> None:
        summary = self.summaries.get(col.name)
        if result.counts is not None and summary is not None:
            summary.remember_recoded(result.recode, result.counts)  # the list and warnings read them
        if result.rows is not None and summary is not None:
            self.remember_rows(rows_key(col, result.recode, summary), result.rows)  # the list shows them
        note = ""
        if kind == "group_rare" and not result.merged:
            note = nothing_grouped(col, summary, params)
        elif kind == "merge_rare" and not result.merged:
            note = nothing_grouped(col, summary, {"min_rows": RARE_COUNT, "label": None})
        self.recode_note.setText(note)
        self.recode_note.setVisible(bool(note))
        if result.merged:
            text = self._recode_text(col, kind, params, result)
            self.apply_recode(result.recode, result.categories, text, result.size)

    def _recode_text(self, col, kind: str, params: dict, result: RecodeResult) -> str:
        if kind == "group_rare":
            return f"group {len(result.merged)} rare categories of {col.name} into {params['label']!r}"
        if kind == "merge_rare":
            new = [c for c in result.categories if c not in (col.categories or [])]
            shown = ", ".join(repr(x) for x in new[:3]) + (f" and {len(new) - 3} more" if len(new) > 3 else "")
            return f"merge rare categories of {col.name} with their neighbours into {shown}"
        labels = params["labels"]
        shown = ", ".join(repr(x) for x in labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
        verb = "rename" if len(labels) == 1 else "merge"
        return f"{verb} {shown} of {col.name} to {params['new_label']!r}"

    def _recode_now(self, kind: str, params: dict) -> RecodeResult | None:
        """Run a recoding on this thread and apply it (one undo step); None if the engine refuses it."""
        from optrr_engine.errors import InputError

        col = self.state.columns[self.row]
        try:
            result = recode_column(col, self.summaries.get(col.name), kind, params)
        except InputError as exc:
            self._recode_failed(exc)
            return None
        self._apply_result(col, kind, params, result)
        return result

    def merge_categories(self, labels: list[str], new_label: str) -> None:
        """Release ``labels`` as ``new_label`` (merge; a rename for one label), at once."""
        self._recode_now("merge", {"labels": list(labels), "new_label": new_label})

    def group_rare_categories(self, min_rows: int, label: str = "Other") -> list[str]:
        """Merge every category seen in fewer than ``min_rows`` rows into ``label``, at once; returns the labels
        merged."""
        col = self.state.columns[self.row]
        if self.summaries.get(col.name) is None:
            return []
        result = self._recode_now("group_rare", {"min_rows": int(min_rows), "label": label})
        return result.merged if result is not None else []

    def start_recode(self, kind: str, params: dict) -> None:
        """A recoding from the buttons: at once for a column with few categories; for one with at least
        RECODE_WORKER_MIN categories on a worker thread (progress and Cancel beside the buttons), applied when
        it arrives if the column is still as it was. Emits ``recodeFinished(merged labels)`` or
        ``recodeCancelled()``."""
        if self.row is None:
            return
        col = self.state.columns[self.row]
        if kind in ("group_rare", "merge_rare") and self.summaries.get(col.name) is None:
            return
        if self.runner is None or len(col.categories or []) < RECODE_WORKER_MIN:
            result = self._recode_now(kind, params)
            if result is None:
                self.recodeCancelled.emit()
            else:
                self.recodeFinished.emit(list(result.merged))
            return
        start = (self.row, col.name, col.recode, col.categories)
        self.recode_status.setText("Recoding…")
        self.recode_status.show()
        self.recode_cancel.show()
        self.runner.submit(
            RECODE_CHANNEL,
            recode_column,
            ColumnState(**col.copied_fields()),
            self.summaries.get(col.name),
            kind,
            dict(params),
            on_done=lambda result: self._recode_arrived(start, kind, params, result),
            on_error=self._recode_failed,
            on_progress=lambda _f, msg: self.recode_status.setText(f"Recoding: {msg}…"),
            on_cancelled=self._recode_stopped,
            process="data",
        )

    def recode_running(self) -> bool:
        return self.runner is not None and self.runner.is_busy(RECODE_CHANNEL)

    def cancel_recode(self) -> None:
        """Stop a recoding in the background; the session stays as it was."""
        if self.runner is not None:
            self.runner.cancel(RECODE_CHANNEL)

    def _recode_idle(self) -> None:
        self.recode_status.hide()
        self.recode_cancel.hide()

    def _recode_arrived(self, start: tuple, kind: str, params: dict, result: RecodeResult) -> None:
        self._recode_idle()
        row, name, recode, categories = start
        col = self.state.columns[row] if row < len(self.state.columns) else None
        if col is None or col.name != name or col.recode is not recode or col.categories is not categories:
            self.recode_status.setText("The categories changed meanwhile: nothing was recoded; try again.")
            self.recode_status.show()
            self.recodeCancelled.emit()
            return
        self.row = row
        self._apply_result(col, kind, params, result)
        self.recodeFinished.emit(list(result.merged))

    def _recode_failed(self, exc: BaseException) -> None:
        self._recode_idle()
        self.bins_error.setVisible(True)
        self.bins_error.setText(str(exc))

    def _recode_stopped(self) -> None:
        self._recode_idle()
        self.recodeCancelled.emit()

    def _merge(self) -> None:
        labels = self.selected_categories()
        if not labels:
            return
        name, ok = QInputDialog.getText(self, "Merge categories", f"Release {len(labels)} categories as:", text="Other")
        if ok and name.strip():
            self.start_recode("merge", {"labels": labels, "new_label": name.strip()})

    def _rename(self) -> None:
        labels = self.selected_categories()
        if len(labels) != 1:
            return
        name, ok = QInputDialog.getText(self, "Rename category", f"Release {labels[0]!r} as:", text=labels[0])
        if ok and name.strip() and name.strip() != labels[0]:
            self.start_recode("merge", {"labels": labels, "new_label": name.strip()})

    def _group_rare(self) -> None:
        """Group rare…: a nominal column's rare categories into 'Other' (below a number of rows the user gives); an
        ordinal column's merged with their neighbours by the engine's rule (``optrr schema --merge-rare``), so the
        order is kept: 'Other' would put the lowest and highest values together after the highest."""
        if self.row is None:
            return
        col = self.state.columns[self.row]
        if col.type == "ordinal":
            answer = QMessageBox.question(
                self,
                "Group rare categories",
                ordinal_group_text(col.name),
                QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Ok,
            )
            if answer == QMessageBox.StandardButton.Ok:
                self.start_recode("merge_rare", {})
            return
        n, ok = QInputDialog.getInt(self, "Group rare categories", "Merge into 'Other' every category seen in fewer "
                                    "than this many rows:", 5, 1, 1_000_000)
        if ok:
            self.start_recode("group_rare", {"min_rows": int(n), "label": "Other"})

    def update_risk(self) -> None:
        """The risk in words of the column shown, from the design the release would use."""
        text = self.risk_source(self.row) if self.risk_source is not None and self.row is not None else None
        if self.risk.text() != (text or ""):
            self.risk.setText(text or "")
        if self.risk.isVisibleTo(self) != bool(text):
            self.risk.setVisible(bool(text))

    def schedule_risk(self) -> None:
        """:meth:`update_risk` at the next turn of the event loop, once for changes arriving together (the
        designs' results and states)."""
        self._risk_timer.start()

    def set_summaries(self, summaries: dict) -> None:
        """The column summaries of the rows read (the state's too: config_bridge.set_summaries comes first);
        columns brought back from "drop" before they were ready get their categories now."""
        self.summaries = summaries or {}
        self.list_read_categories()
        if self.row is not None:
            self.show_column(self.row)

    def _apply_bins(self) -> bool:
        """The edges typed in the field to the column shown (one undo step); False, with the reason shown
        beside the field, when the text is not valid edges (the text stays as typed)."""
        if self.row is None or self.state.columns[self.row].type != "numeric":
            return True
        try:
            edges = parse_bins(self.bins.text())
        except ValueError as exc:
            self.bins_error.setText(str(exc))
            return False
        self._bins_note = ""
        self.bins_error.setText("")
        self._set("bins", {"method": "edges", "edges": edges})
        return True

    def apply_typed_bins(self) -> bool:
        """Apply the typed bin edges now (before a save or a release); False, with the reason shown, when invalid."""
        ok = self._apply_bins()
        if ok:
            self.bins.setModified(False)
        return ok

    def _leave_typed_bins(self) -> None:
        """Before another column is shown: edges typed but not applied go to the column they were typed for; an
        invalid text is not lost without a word (the reason stays shown)."""
        if not self.bins.isModified():
            return
        name = self.state.columns[self.row].name if self.row is not None and self.row < len(self.state.columns) else ""
        typed = self.bins.text()
        if not self._apply_bins():
            self._bins_note = f"The bin edges typed for {name} ({typed}) were not applied: {self.bins_error.text()}"
        self.bins.setModified(False)

    # -- display -----------------------------------------------------------------------------
    def _on_state(self, kind, index, name) -> None:
        if kind == "reset":
            self.show_column(None if not self.state.columns else min(self.row or 0, len(self.state.columns) - 1))
        elif self.row is None:
            return
        elif kind == "column" and index != self.row:
            return  # another column: nothing shown here depends on it (the risk follows the designs)
        elif name in ("epsilon", "weight") and kind in ("column", "columns"):
            self._show_values(self.state.columns[self.row])
        elif kind in ("column", "columns", "session"):
            self.show_column(self.row)

    def _show_values(self, col) -> None:
        """The column's epsilon and weight in their editors (not while the user is editing them)."""
        if not self.epsilon.spin.hasFocus() and not self.epsilon.slider.isSliderDown():
            self.epsilon.setValue(col.epsilon)
        if not self.weight.spin.hasFocus() and not self.weight.slider.isSliderDown():
            self.weight.setValue(col.weight)

    def show_column(self, row: int | None) -> None:
        row = row if row is not None and 0 <= row < len(self.state.columns) else None
        changed = row != self.row
        if changed:
            self.recode_note.hide()
            self._bins_note = ""
            self._leave_typed_bins()
            self.bins_error.setText(self._bins_note)  # an error of the text typed for the column left is its own
            for editor in (self.epsilon, self.weight):  # so is a refused ε or weight typed for it
                editor.clear_error()
        self.row = row
        enabled = self.row is not None
        for w in (self.role, self.type, self.missing, self.epsilon, self.weight, self.cat_box):
            w.setEnabled(enabled)
        if not enabled:
            self.title.setText("Select a column in the table")
            self.categories.show_labels([], None, 1)
            self._shown = self._list_source = None
            self.warnings.setText("")
            return
        col = self.state.columns[self.row]
        counts = category_counts(self.state)
        n = counts.counts[self.row]
        self.title.setText(f"{col.name} — {category_title(col, n)}")
        for box, value in ((self.role, col.role), (self.type, col.type)):
            box.blockSignals(True)
            box.setCurrentText(value)
            box.blockSignals(False)
        fixed = unreadable(col)  # a column the reader cannot read stays dropped
        self.role.setEnabled(fixed is None)
        self.role.setToolTip(ROLE_TIP if fixed is None else f"{col.name} stays dropped: {fixed}")
        self.missing.setCurrentIndex(MISSING.index(col.missing))
        budget = self.state.budget_mode
        perturb = col.role == "perturb"
        self._form.setRowVisible(self.epsilon, not budget)
        self._form.setRowVisible(self.weight, budget)
        self.epsilon.setEnabled(perturb)
        self.weight.setEnabled(perturb)
        self._show_values(col)
        self.warnings.setText("\n".join(f"⚠ {w}" for w in counts.warnings[self.row]))
        self.update_risk()
        numeric = col.type == "numeric"
        for b in (self.merge, self.rename, self.group_rare):
            b.setVisible(not numeric)
        self.group_rare.setEnabled(col.name in self.summaries)
        self.up.setVisible(not numeric)
        self.down.setVisible(not numeric)
        if col.missing_values:
            self.missing_list.setText("Treated as missing: " + ", ".join(map(str, col.missing_values)))
        else:
            self.missing_list.setText("")
        self.restore.setVisible(bool(col.missing_values))
        binned = numeric and col.role != "keep"  # a kept column's numbers are copied as they are, never binned
        for w in (self.bins, self.bins_label, self.others_label):
            w.setVisible(binned)
        self.bins_error.setVisible(binned or bool(self._bins_note))
        self.cat_box.setTitle("Bins (and other values)" if numeric else "Categories")
        if numeric and (changed or not self.bins.hasFocus()):
            self.bins.setText(format_bins(col.bins))
        self._show_categories(col)

    def _show_categories(self, col) -> None:
        """Always this column's categories (a numeric column's extra values too); the selection is kept only
        while the same column stays shown, so an action never applies to another column's categories. The
        model is reset only when what it shows changed."""
        shown = (self.row, col.name)
        same = shown == self._shown
        summary = self.summaries.get(col.name)
        # the missing values count in the missing-value category's rows: a change of them alone shows new counts
        source = (self.row, col.name, col.type, col.missing, col.categories, col.recode, col.missing_values, summary)
        old = self._list_source
        if same and old is not None and source[:4] == old[:4] and all(map(operator.is_, source[4:], old[4:])):
            return
        self._list_source = source
        keep = set(self.categories.selected_labels()) if same else set()
        current = self.categories.current_label() if same else None
        labels = list(col.categories or [])
        if summary is None:
            self.categories.show_labels(labels, None, 1, keep, current)
        else:
            counts = self.category_rows(col, summary)  # the missing-value category with its empty cells
            total = summary.rows if col.missing == "category" else summary.present
            self.categories.show_labels(labels, counts, total, keep, current)
        self._shown = shown

    def category_rows(self, col, summary) -> dict[str, int]:
        """Rows per category of ``col`` as the list shows them (:func:`released_counts` from ``summary``): counted
        once per column state (the last ROWS_KEPT kept; a recoding's, counted by its worker: :meth:`remember_rows`).
        The dict returned is shared: read it, never modify it."""
        key = rows_key(col, col.recode, summary)
        rows = self._rows.get(key)
        if rows is None:
            rows = released_counts(col, summary, col.recode)
        self.remember_rows(key, rows)
        return rows

    def remember_rows(self, key: tuple, rows: dict[str, int]) -> None:
        """Keep ``rows`` as :meth:`category_rows`' result for the column state of ``key`` (:func:`rows_key`), the
        latest of the ROWS_KEPT kept."""
        self._rows.pop(key, None)
        self._rows[key] = rows
        while len(self._rows) > ROWS_KEPT:
            self._rows.pop(next(iter(self._rows)))
