"""The column side panel always shows the selected column's own categories, and "Treat as missing" edits only
that column (issue 11: a stale list showed another column's categories and the action edited the wrong one)."""

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QUndoStack

from optrr_gui.design.column_panel import ColumnPanel
from optrr_gui.state.session import ColumnState, SessionState


@pytest.fixture
def panel(qtbot):
    state = SessionState()
    state.load_columns(
        None,
        {},
        [
            ColumnState("smoker", categories=["no", "yes", "?"]),
            ColumnState("age", type="numeric", bins={"method": "edges", "edges": [0, 40, 120]}, categories=["-9"]),
            ColumnState("site", categories=["north", "south", "east", "west"]),
        ],
    )
    stack = QUndoStack()
    widget = ColumnPanel(state, stack)
    qtbot.addWidget(widget)
    return widget, state, stack


def shown(widget) -> list[str]:
    return [widget.categories.text(i) for i in range(widget.categories.count())]


def select(widget, text) -> None:
    view = widget.categories
    for i in range(view.count()):
        if view.text(i) == text:
            view.selectionModel().select(view.model().index(i), QItemSelectionModel.SelectionFlag.Select)


def test_every_column_shows_its_own_categories(panel):
    widget, state, _ = panel
    for row in (0, 1, 2, 1, 0):
        widget.show_column(row)
        assert shown(widget) == state.columns[row].categories  # a numeric column's extra values too


def test_treat_as_missing_after_switching_columns_edits_nothing_of_another_column(panel):
    widget, state, stack = panel
    widget.show_column(0)
    select(widget, "?")
    widget.show_column(1)  # numeric: the list used to keep smoker's categories and selection
    widget.remove.click()
    assert state.columns[0].categories == ["no", "yes", "?"] and state.columns[0].missing_values == []
    assert state.columns[1].categories == ["-9"] and state.columns[1].missing_values == []
    widget.show_column(2)  # same row index as before in the list, other column
    widget.remove.click()
    assert state.columns[2].missing_values == [] and stack.count() == 0


def test_treat_as_missing_moves_the_selected_values_of_the_shown_column(panel):
    widget, state, stack = panel
    widget.show_column(1)
    select(widget, "-9")
    widget.remove.click()
    assert state.columns[1].missing_values == ["-9"]
    assert "-9" not in state.columns[1].categories
    assert state.columns[0].missing_values == [] and state.columns[2].missing_values == []
    stack.undo()
    assert state.columns[1].categories == ["-9"] and state.columns[1].missing_values == []


def test_the_selection_survives_an_edit_of_the_same_column_only(panel):
    widget, state, _ = panel
    widget.show_column(2)
    select(widget, "south")
    widget.down.click()  # moves "south" after "east"; the panel is refreshed by the state
    assert state.columns[2].categories == ["north", "east", "south", "west"]
    assert [widget.categories.text(r) for r in widget.categories.selected_rows()] == ["south"]
    widget.show_column(0)
    assert widget.categories.selected_rows() == []
