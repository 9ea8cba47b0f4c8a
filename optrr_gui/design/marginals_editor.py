"""The small editor of the marginals the analysis needs (issue 13): all 1-/2-/3-way and/or named column sets.

It only emits ``edited(value)`` (the main window pushes it as one undo step, ``SetSessionValue``); it shows the
session's value whenever the session changes (undo, a project, the columns).
"""

from __future__ import annotations

from math import comb

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ..state.needed_marginals import (
    MAX_NEEDED,
    ORDERS,
    applied_error,
    describe,
    effective,
    format_sets,
    needed_summary,
    parse_sets,
    sets_error,
    single_column_note,
    unknown_names,
)

#: The field's look while its text is refused (not applied).
BAD_STYLE = "QLineEdit { border: 1px solid #cc0000; background: #fff0f0; }"


class MarginalsEditor(QWidget):
    edited = Signal(object)  # the new value for SessionState.needed_marginals (None = the default)
    SETS_TIP = (
        "Column sets you need together, by name: columns separated by commas, sets by semicolons "
        "(e.g. “age, sex; smoker, bmi”); only perturbed columns. Press Enter to apply. They are needed in addition "
        "to the tables ticked on the left (1-way, 2-way, 3-way): untick those to need only the named tables."
    )

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.label = QLabel("Needed:")
        self.label.setToolTip(
            "The tables the receiver will estimate from the release. The predicted error of every design is "
            "computed for these, the recommendation follows it, and a release is refused when one of them "
            "cannot be estimated from the design (unless you override it in the release dialog)."
        )
        self.orders = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        lay = QHBoxLayout()
        outer.addLayout(lay)
        lay.addWidget(self.label)
        for o in ORDERS:
            box = QCheckBox(f"{o}-way")
            box.setToolTip(f"All tables of {o} perturbed column{'s' if o > 1 else ''}")
            box.toggled.connect(self._orders_toggled)
            self.orders[o] = box
            lay.addWidget(box)
        self.sets = QLineEdit()
        self.sets.setPlaceholderText("plus named tables: age, sex; bmi")
        self.sets.setToolTip(self.SETS_TIP)
        self.sets.editingFinished.connect(self._sets_edited)
        self.sets.textEdited.connect(self._show_summary)
        self.sets.setMinimumWidth(60)
        lay.addWidget(self.sets, 1)
        self.default_button = QPushButton("Default")
        self.default_button.setToolTip("All 1- and 2-way tables (only 1-way when there are more than 2000 of them)")
        self.default_button.clicked.connect(lambda: self._emit(None))
        lay.addWidget(self.default_button)
        #: What is counted as needed, ticked orders and named tables together (:func:`needed_summary`), live.
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet("color: #555555")
        outer.addWidget(self.summary)
        #: Why the typed column sets were not applied (red, under the field); hidden when they were.
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #cc0000")
        self.error_label.hide()
        outer.addWidget(self.error_label)
        self.message = ""
        self.sets_message = ""
        state.subscribe(self._on_state)
        self.refresh()

    def names(self) -> list[str]:
        return [c.name for c in self.state.perturbed_columns()]

    def roles(self) -> dict[str, str]:
        return {c.name: c.role for c in self.state.columns}

    def _on_state(self, kind, _index, name) -> None:
        if kind in ("reset", "columns") or (kind == "session" and name == "needed_marginals"):
            self._show_sets_error("")  # the session's value replaces the refused text
            self.refresh()
        elif kind == "column" and name in ("role", "name"):
            self.refresh()

    def refresh(self) -> None:
        names = self.names()
        value = effective(self.state.needed_marginals, len(names))
        for o, box in self.orders.items():
            box.blockSignals(True)
            box.setChecked(o in value["orders"])
            box.blockSignals(False)
        if not self.sets.hasFocus() and not self.sets_message:  # refused text stays, to be corrected
            self.sets.setText(format_sets(value["sets"]))
        unknown = unknown_names(self.state.needed_marginals, names)
        note = f" Not perturbed, left out: {', '.join(unknown)}." if unknown else ""
        self.setToolTip(f"Needed: {describe(self.state.needed_marginals, len(names))}.{note}")
        if not self.sets_message:  # applied sets whose column stopped being perturbed: red here too, not only at
            stale = applied_error(self.state.needed_marginals, names, self.roles())  # release time
            note = "" if stale else single_column_note(self.state.needed_marginals)  # applied; maybe not as meant
            self.sets.setStyleSheet(BAD_STYLE if stale else "")
            self.error_label.setStyleSheet("color: #cc0000" if stale else "color: #8a5a00")
            self.error_label.setText(stale or note)
            self.error_label.setVisible(bool(stale or note))
            self.sets.setToolTip(stale or self.SETS_TIP)
        self._show_summary()

    def _show_summary(self, _text: str = "") -> None:
        """The line of what is counted as needed: the session's value, or while typed sets are not applied yet what
        they would make, and that Enter applies them."""
        names = self.names()
        value = self.state.needed_marginals
        applied = effective(value, len(names))
        try:
            typed = parse_sets(self.sets.text())
        except ValueError:
            typed = applied["sets"]
        if typed != applied["sets"] and not self.sets_message:  # (refused text: its reason shows, not a preview)
            preview = {"orders": list(applied["orders"]), "sets": typed}
            self.summary.setText(f"{needed_summary(preview, names)} Press Enter to apply.")
        else:
            self.summary.setText(needed_summary(value, names))

    def _show_sets_error(self, message: str) -> None:
        """Show (or clear, with "") why the typed column sets were not applied: a red field and the reason."""
        self.sets_message = message
        self.error_label.setStyleSheet("color: #cc0000")
        self.sets.setStyleSheet(BAD_STYLE if message else "")
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))
        self.sets.setToolTip(message or self.SETS_TIP)
        self._show_summary()

    def _current(self) -> dict:
        value = effective(self.state.needed_marginals, len(self.names()))
        return {"orders": list(value["orders"]), "sets": [list(s) for s in value["sets"]]}

    def _orders_toggled(self, _checked: bool) -> None:
        value = self._current()
        value["orders"] = [o for o, box in self.orders.items() if box.isChecked()]
        k = len(self.names())
        total = sum(comb(k, o) for o in value["orders"] if o <= k)
        if total > MAX_NEEDED:
            self.message = f"{total:,} tables are too many to predict (at most {MAX_NEEDED:,}): name the sets instead."
            self.refresh()
            self.setToolTip(self.message)
            return
        self._emit(value)

    def _sets_edited(self) -> None:
        error = sets_error(self.sets.text(), self.names(), self.roles())
        if error:  # not applied: no undo step, the previous sets stay in the session
            self.message = error
            self._show_sets_error(error)
            return
        self._show_sets_error("")
        sets = parse_sets(self.sets.text())
        value = self._current()
        if sets == value["sets"]:
            return
        value["sets"] = sets
        self._emit(value)

    def _emit(self, value) -> None:
        self.message = ""
        if value != self.state.needed_marginals:
            self.edited.emit(value)
        elif self.sets_message:  # e.g. Default while refused text is shown: show the session's sets again
            self._show_sets_error("")
            self.refresh()
