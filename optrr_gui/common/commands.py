"""Undo commands: every edit of the session goes through a ``QUndoStack`` (glue-style command stack).

A command stores the old and the new value and calls the Qt-free setters of :class:`SessionState`.
Consecutive edits of one value from a dragged slider or a spinning box merge into one undo step.
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from ..state.session import SessionState

_MERGE_COLUMN = 1001
_MERGE_SESSION = 1002


def _describe(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return f"{len(value)} items"
    return str(value)


_FIELD_WORDS = {"epsilon": "ε", "weight": "weight", "role": "role", "type": "type", "missing": "missing values"}


def column_text(column: str, name: str, value) -> str:
    """An undo step as a sentence: "set ε of age to 0.5", "recode diagnosis"; a name with spaces at its ends in
    quotes ("set role of “ALLERGY ” to drop"), so that they show."""
    if column != column.strip():
        column = f"“{column}”"
    if name == "categories":
        return f"change the categories of {column}"
    if name == "recode":
        return f"recode {column}"
    if name == "bins":
        return f"change the bins of {column}"
    if name == "missing_values":
        return f"change the missing-value codes of {column}"
    return f"set {_FIELD_WORDS.get(name, name.replace('_', ' '))} of {column} to {_describe(value)}"


def session_text(name: str, value) -> str:
    """A session edit as a sentence: "switch to a whole-record budget", "use the Kronecker design"."""
    if name == "budget_mode":
        return "switch to a whole-record budget" if value else "switch to ε per column"
    if name == "target_total":
        return f"set the whole-record budget to {_describe(float(value))}"
    if name == "method":
        from ..state.design_summary import METHOD_LABELS

        return f"use the {METHOD_LABELS.get(value, value)} design"
    if name == "accept_changed_epsilons":
        return "recommend designs that change ε" if value else "recommend only designs that keep every ε"
    if name == "needed_marginals":
        from ..state.needed_marginals import describe

        return f"need {describe(value, 0)}" if value is not None else "need the default marginals"
    if name == "columns_chosen":
        return "confirm the columns to share" if value else "reopen the choice of columns"
    return f"set {name.replace('_', ' ')} to {_describe(value)}"


class SetColumnValue(QUndoCommand):
    """Set one field of one column (role, type, epsilon, weight, categories, bins, missing)."""

    def __init__(self, state: SessionState, index: int, name: str, value, mergeable: bool = False):
        col = state.columns[index].name
        super().__init__(column_text(col, name, value))
        self.state, self.index, self.name = state, index, name
        self.old = state.column_value(index, name)
        self.new = value
        self.mergeable = mergeable

    def redo(self) -> None:
        self.state.set_column_value(self.index, self.name, self.new)

    def undo(self) -> None:
        self.state.set_column_value(self.index, self.name, self.old)

    def id(self) -> int:
        return _MERGE_COLUMN if self.mergeable else -1

    def mergeWith(self, other) -> bool:
        if not (isinstance(other, SetColumnValue) and other.mergeable and self.mergeable):
            return False
        if (other.index, other.name) != (self.index, self.name):
            return False
        self.new = other.new
        self.setText(other.text())
        return True


class SetColumnsFields(QUndoCommand):
    """Set fields of several columns at once (``{index: {field: value}}``: e.g. roles with the categories a
    column brought back from "drop" needs): one undo step, one state change."""

    def __init__(self, state: SessionState, changes: dict, text: str):
        super().__init__(text)
        self.state = state
        self.new = {i: dict(values) for i, values in changes.items()}
        self.old = {i: {name: state.column_value(i, name) for name in values} for i, values in changes.items()}

    def redo(self) -> None:
        self.state.set_columns_fields(self.new)

    def undo(self) -> None:
        self.state.set_columns_fields(self.old)


class SetColumnFields(SetColumnsFields):
    """Set several fields of one column at once (a recoding: ``recode`` and ``categories``): one undo step,
    one state change (one redraw)."""

    def __init__(self, state: SessionState, index: int, values: dict, text: str):
        super().__init__(state, {index: values}, text)


class SetSessionValue(QUndoCommand):
    """Set a session field (method, budget mode, whole-record target, accept changed epsilons)."""

    def __init__(self, state: SessionState, name: str, value, mergeable: bool = False):
        super().__init__(session_text(name, value))
        self.state, self.name = state, name
        self.old = state.session_value(name)
        self.new = value
        self.mergeable = mergeable

    def redo(self) -> None:
        self.state.set_session_value(self.name, self.new)

    def undo(self) -> None:
        self.state.set_session_value(self.name, self.old)

    def id(self) -> int:
        return _MERGE_SESSION if self.mergeable else -1

    def mergeWith(self, other) -> bool:
        if not (isinstance(other, SetSessionValue) and other.mergeable and self.mergeable):
            return False
        if other.name != self.name:
            return False
        self.new = other.new
        self.setText(other.text())
        return True


class SetColumnValues(QUndoCommand):
    """Set one field of several columns to one value: one undo step, one state change (one redraw)."""

    def __init__(self, state: SessionState, indices, name: str, value, text: str | None = None):
        self.indices = list(indices)
        super().__init__(text or column_text(f"{len(self.indices)} columns", name, value))
        self.state, self.name = state, name
        self.old = [state.column_value(i, name) for i in self.indices]
        self.new = value

    def redo(self) -> None:
        self.state.set_column_values(self.indices, self.name, [self.new] * len(self.indices))

    def undo(self) -> None:
        self.state.set_column_values(self.indices, self.name, self.old)


def set_many(stack, state: SessionState, indices, name: str, value, text: str | None = None) -> None:
    """One undo step that sets the same field on several columns (e.g. role of a selection)."""
    indices = [i for i in indices if state.column_value(i, name) != value]
    if not indices:
        return
    if len(indices) == 1:
        stack.push(SetColumnValue(state, indices[0], name, value))
        return
    stack.push(SetColumnValues(state, indices, name, value, text))


def set_type(stack, state: SessionState, index: int, type_: str) -> None:
    """One undo step that sets the type of column ``index``, with the categories a numeric column made nominal or
    ordinal gets from the rows read (optrr_gui.state.role_fields.type_fields)."""
    from ..state.role_fields import type_fields

    if state.columns[index].type == type_:
        return
    column = state.columns[index].name
    stack.push(SetColumnsFields(state, {index: type_fields(state, index, type_)}, column_text(column, "type", type_)))


def set_roles(stack, state: SessionState, indices, role: str, text: str | None = None) -> None:
    """One undo step that sets the role of several columns, with the categories a column brought back from
    "drop" gets from the rows read (and loses on its return: optrr_gui.state.role_fields.role_fields); a column
    that cannot take ``role`` (one the reader cannot read stays dropped: ``settable_rows``) is left as it is."""
    from ..state.role_fields import role_fields, settable_rows

    indices = [i for i in settable_rows(state, indices, role) if state.columns[i].role != role]
    if not indices:
        return
    column = state.columns[indices[0]].name if len(indices) == 1 else f"{len(indices)} columns"
    changes = {i: role_fields(state, i, role) for i in indices}
    stack.push(SetColumnsFields(state, changes, text or column_text(column, "role", role)))
