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


class SetColumnValue(QUndoCommand):
    """Set one field of one column (role, type, epsilon, weight, categories, bins, missing)."""

    def __init__(self, state: SessionState, index: int, name: str, value, mergeable: bool = False):
        col = state.columns[index].name
        super().__init__(f"{name} of {col} → {_describe(value)}")
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


class SetSessionValue(QUndoCommand):
    """Set a session field (method, budget mode, whole-record target, accept changed epsilons)."""

    def __init__(self, state: SessionState, name: str, value, mergeable: bool = False):
        super().__init__(f"{name.replace('_', ' ')} → {_describe(value)}")
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
        super().__init__(text or f"{name} of {len(self.indices)} columns → {_describe(value)}")
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
