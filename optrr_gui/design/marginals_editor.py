"""The small editor of the marginals the analysis needs (issue 13): all 1-/2-/3-way and/or named column sets.

It only emits ``edited(value)`` (the main window pushes it as one undo step, ``SetSessionValue``); it shows the
session's value whenever the session changes (undo, a project, the columns).
"""

from __future__ import annotations

from math import comb

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from ..state.needed_marginals import MAX_NEEDED, ORDERS, describe, effective, format_sets, parse_sets, unknown_names


class MarginalsEditor(QWidget):
    edited = Signal(object)  # the new value for SessionState.needed_marginals (None = the default)

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
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        for o in ORDERS:
            box = QCheckBox(f"{o}-way")
            box.setToolTip(f"All tables of {o} perturbed column{'s' if o > 1 else ''}")
            box.toggled.connect(self._orders_toggled)
            self.orders[o] = box
            lay.addWidget(box)
        self.sets = QLineEdit()
        self.sets.setPlaceholderText("and column sets: age, sex; bmi")
        self.sets.setToolTip(
            "Column sets you need together, by name: columns separated by commas, sets by semicolons "
            "(e.g. “age, sex; smoker, bmi”). Press Enter to apply."
        )
        self.sets.editingFinished.connect(self._sets_edited)
        self.sets.setMinimumWidth(60)
        lay.addWidget(self.sets, 1)
        self.default_button = QPushButton("Default")
        self.default_button.setToolTip("All 1- and 2-way tables (only 1-way when there are more than 2000 of them)")
        self.default_button.clicked.connect(lambda: self._emit(None))
        lay.addWidget(self.default_button)
        self.message = ""
        state.subscribe(self._on_state)
        self.refresh()

    def names(self) -> list[str]:
        return [c.name for c in self.state.perturbed_columns()]

    def _on_state(self, kind, _index, name) -> None:
        if kind in ("reset", "columns") or (kind == "session" and name == "needed_marginals"):
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
        if not self.sets.hasFocus():
            self.sets.setText(format_sets(value["sets"]))
        unknown = unknown_names(self.state.needed_marginals, names)
        note = f" Not perturbed, left out: {', '.join(unknown)}." if unknown else ""
        self.setToolTip(f"Needed: {describe(self.state.needed_marginals, len(names))}.{note}")

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
        try:
            sets = parse_sets(self.sets.text())
        except ValueError as exc:
            self.message = str(exc)
            self.sets.setToolTip(self.message)
            return
        value = self._current()
        if sets == value["sets"]:
            return
        value["sets"] = sets
        self._emit(value)

    def _emit(self, value) -> None:
        self.message = ""
        if value != self.state.needed_marginals:
            self.edited.emit(value)
