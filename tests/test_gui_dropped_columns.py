"""A column the schema dropped can be brought back (review of 2026-12: a 300-category column set to perturb listed
no categories, so Merge and Group rare had nothing to work on and the GUI said "run optrr schema"), and the
warnings follow the column's current role (a kept identifier said "dropped").

The file: ``patient_id`` (an identifier by its name), ``code`` (120 codes: too many, dropped; 30 of them rare;
6 empty cells) and ``sex``. The summaries are read as the window reads them (DataStore + summarize_store).
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from optrr_engine.errors import InputError
from optrr_engine.io.readers import ReaderOptions
from optrr_engine.release.config import ColumnConfig, ReleaseConfig
from optrr_engine.release.schema import infer_schema, warning_for_role
from optrr_gui.common.commands import set_roles
from optrr_gui.design.column_panel import ColumnPanel
from optrr_gui.state.config_bridge import category_counts, set_summaries
from optrr_gui.state.data_store import DataStore, load_rows
from optrr_gui.state.session import ROLES, ColumnState, SessionState
from optrr_gui.workers.jobs.summaries import summarize_store

CODES = [f"C{i:03d}" for i in range(120)]
RARE = CODES[:30]  # 2 rows each; the others 6 rows each
PID, CODE, SEX = 0, 1, 2


def write_file(path) -> str:
    rows = [c for c in CODES for _ in range(2 if c in RARE else 6)] + [""] * 6
    lines = ["patient_id,code,sex"] + [f"P{i:05d},{c},{'FM'[i % 2]}" for i, c in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def read_summaries(path: str, names: list[str]) -> dict:
    store = DataStore(names)
    load_rows(path, ReaderOptions.from_dict({}), store)
    return summarize_store(store)


@pytest.fixture
def panel(qtbot, tmp_path):
    """(panel, state, stack, summaries): the schema's columns, nothing summarised yet."""
    path = write_file(tmp_path / "codes.csv")
    state = SessionState()
    state.load_columns(path, {}, [ColumnState.from_config(c) for c in infer_schema(path).columns])
    assert [c.role for c in state.columns] == ["drop", "drop", "perturb"]
    assert state.columns[CODE].categories is None and state.columns[PID].categories is None
    stack = QUndoStack()
    widget = ColumnPanel(state, stack)
    qtbot.addWidget(widget)
    return widget, state, stack, read_summaries(path, [c.name for c in state.columns])


def arrive(widget, summaries) -> None:
    """The summaries of the rows read, given as the window gives them (the state's first, then the panel's)."""
    set_summaries(widget.state, summaries)
    widget.set_summaries(summaries)


def pick_role(widget, row: int, role: str) -> None:
    """The user picks ``role`` in the side panel's Role box of column ``row``."""
    widget.show_column(row)
    widget.role.setCurrentIndex(ROLES.index(role))
    widget.role.activated.emit(ROLES.index(role))


def test_a_column_dropped_for_its_many_categories_gets_them_back_with_perturb(panel):
    widget, state, stack, summaries = panel
    arrive(widget, summaries)
    assert stack.count() == 0  # nothing perturbed or kept lacks categories: no step of its own
    pick_role(widget, CODE, "perturb")
    assert state.columns[CODE].categories == [*CODES, "NA"]  # alphabetical, as the schema lists them
    assert widget.title.text() == "code — 121 categories" and widget.categories.count() == 121
    shown = widget.warnings.text()
    assert "121 categories: too many to randomize usefully; merge or group rare ones (buttons below)" in shown
    assert "dropped" not in shown and "rare categories (fewer than 5 rows): 'C000' (2)" in shown
    assert category_counts(state).error is None
    assert set(RARE) <= set(widget.group_rare_categories(5))  # Group rare now has categories to merge
    n = len(state.columns[CODE].categories)
    assert 50 < n <= 100  # few enough: the warning says so no more
    many = f"{n} categories: estimates need many rows; consider merging or binning"
    assert category_counts(state).warnings[CODE] == (many,)
    stack.undo()
    stack.undo()  # one step for the role and its categories
    assert state.columns[CODE].role == "drop" and state.columns[CODE].categories is None
    stack.redo()
    assert state.columns[CODE].role == "perturb" and state.columns[CODE].categories == [*CODES, "NA"]


def test_a_role_changed_before_the_rows_are_read_gets_the_categories_when_they_arrive(panel):
    widget, state, stack, summaries = panel
    pick_role(widget, CODE, "perturb")
    assert state.columns[CODE].categories is None
    error = category_counts(state).error
    assert "filled in from the data once its rows are read" in error and "optrr schema" not in error
    assert "120 categories: too many to randomize usefully: its categories are listed" in widget.warnings.text()
    arrive(widget, summaries)
    assert state.columns[CODE].categories == [*CODES, "NA"] and stack.count() == 2
    assert widget.categories.count() == 121
    stack.undo()  # the categories listed, then the role
    assert state.columns[CODE].role == "perturb" and state.columns[CODE].categories is None


def test_a_column_that_stays_or_returns_to_drop_exports_no_categories(panel):
    widget, state, stack, summaries = panel
    arrive(widget, summaries)
    set_roles(stack, state, [PID, CODE], "perturb")
    assert stack.count() == 1 and len(state.columns[PID].categories) == 606
    set_roles(stack, state, [CODE], "drop")
    config = state.to_release_config()
    assert config.columns[CODE].role == "drop" and "categories" not in config.columns[CODE].to_dict()
    stack.undo()
    stack.undo()
    arrive(widget, summaries)  # summaries arriving again leave the dropped columns alone
    assert [c.categories for c in state.columns[:2]] == [None, None] and stack.count() == 2


def test_the_warnings_follow_the_role(panel):
    _widget, state, stack, _ = panel
    dropped = "likely identifier (its name); dropped - set role to perturb only if it is not identifying"
    assert state.columns[PID].warnings == [dropped]
    assert warning_for_role(dropped, "drop") == dropped  # the schema's own text (optrr schema) is unchanged
    shown = {}
    for role in ("keep", "perturb", "drop"):
        set_roles(stack, state, [PID], role)
        shown[role] = category_counts(state).warnings[PID]
    assert shown["keep"] == (
        "kept unchanged: this column is exported as is, NOT privatised",
        "likely identifier (its name): exported IN THE CLEAR",
    )
    assert shown["perturb"][0] == "likely identifier (its name)"
    assert shown["drop"] == (dropped,)


def test_engine_refusals_name_no_command_line_step(tmp_path):
    state = SessionState()
    state.load_columns(None, {}, [ColumnState("age", type="numeric"), ColumnState("sex", categories=["F", "M"])])
    error = category_counts(state).error
    assert "type its bin edges in the side panel" in error and "optrr schema" not in error
    from optrr_gui.workers.jobs.release import run_release

    data = tmp_path / "d.csv"
    data.write_text("a\nx\ny\nz\n", encoding="utf-8")
    config = ReleaseConfig(method="kronecker", columns=[ColumnConfig("a", "perturb", categories=["x", "y"], epsilon=1)])
    (tmp_path / "audit").mkdir()
    with pytest.raises(InputError) as refused:
        run_release(str(data), config, str(tmp_path / "out.csv"), {"audit_dir": str(tmp_path / "audit")})
    assert "add them to its categories" in str(refused.value) and "optrr schema" not in str(refused.value)


def test_the_window_designs_for_a_column_brought_back_from_drop(qtbot, tmp_path):
    """The reviewer's steps: open the file, set the dropped column to perturb (before or after the rows are
    summarised), and every design is computed for its categories."""
    from tests.test_gui_support import WAIT_MS, close_window, open_window, wait_ready

    window = open_window(qtbot, tmp_path, write_file(tmp_path / "codes.csv"))
    try:
        window.attributes.set_roles([CODE], "perturb")
        qtbot.waitUntil(lambda: bool(window.summaries), timeout=WAIT_MS)
        wait_ready(qtbot, window)
        assert window.state.columns[CODE].categories == [*CODES, "NA"]
        assert window.controller.sizes == [121, 2]
        window.attributes.view.selectRow(CODE)
        assert "merge or group rare ones (buttons below)" in window.column_panel.warnings.text()
    finally:
        close_window(window)


def test_every_command_line_step_the_gui_rewords_is_still_in_the_engine():
    """gui_wording replaces engine phrases by text: a phrase the engine no longer says would stop being replaced
    silently (and a new "run optrr schema" would reach the window)."""
    import ast
    from pathlib import Path

    import optrr_engine
    from optrr_gui.state.config_bridge import _GUI_STEPS

    texts = []  # every string literal of the engine, adjacent literals joined as Python joins them
    for path in Path(optrr_engine.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
            elif isinstance(node, ast.JoinedStr):
                texts.append("{}".join(v.value for v in node.values if isinstance(v, ast.Constant)))
    phrasings = [cli for clis, _gui in _GUI_STEPS for cli in clis]
    assert len(phrasings) == len(set(phrasings))  # each phrasing in one rule only
    for cli in phrasings:
        assert any(cli in t for t in texts), cli


def test_a_schema_warning_names_the_button_not_the_configuration_key():
    from optrr_gui.state.config_bridge import column_warnings

    col = ColumnState("caps", categories=["?", "no", "yes"], warnings=[
        "values that look like missing-value markers ('?') are kept as categories; list them in missing_values to "
        "treat them as missing"
    ])
    (text,) = column_warnings(col, 3)
    assert "press Treat as missing" in text and "missing_values" not in text
