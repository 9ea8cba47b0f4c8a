"""The Qt-free session state, its project JSON, and the undo commands over it."""

import json

import pytest
from PySide6.QtGui import QUndoStack

from optrr_gui.common.commands import SetColumnValue, SetSessionValue, set_many
from optrr_gui.state.session import ColumnState, SessionState


def make_state():
    s = SessionState()
    cols = [
        ColumnState("sex", categories=["f", "m"], epsilon=1.0),
        ColumnState("age", type="ordinal", categories=["young", "mid", "old"], epsilon=2.0, weight=2.0),
        ColumnState("id", role="drop", warnings=["likely identifier"]),
        ColumnState("site", role="keep", categories=["a", "b"]),
    ]
    s.load_columns("/data/x.csv", {"delimiter": ";"}, cols, n_rows=100)
    return s


def test_design_request_lists_only_perturbed_columns():
    s = make_state()
    req = s.design_request()
    assert req["names"] == ["sex", "age"]
    assert req["epsilons"] == [1.0, 2.0]
    assert req["weights"] == [1.0, 2.0]
    assert req["budget_mode"] is False


def test_project_round_trip(tmp_path):
    s = make_state()
    s.set_session_value("budget_mode", True)
    s.set_session_value("target_total", 2.5)
    s.set_column_value(1, "epsilon", 0.3)
    path = tmp_path / "p.optrr"
    s.save_project(path)
    d = json.loads(path.read_text())
    assert d["format"] == "optrr-project"
    t = SessionState()
    t.load_project(path)
    assert t.to_project_dict(path) == s.to_project_dict(path)
    assert t.columns[1].epsilon == 0.3 and t.budget_mode and t.target_total == 2.5
    assert t.reader_options == {"delimiter": ";"}
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves no temp file


def test_project_data_path_is_found_relative_to_the_project(tmp_path):
    data = tmp_path / "d" / "x.csv"
    data.parent.mkdir()
    data.write_text("a\n1\n")
    s = make_state()
    s.data_path = str(data)
    s.save_project(tmp_path / "d" / "p.optrr")
    moved = tmp_path / "moved"
    (tmp_path / "d").rename(moved)
    t = SessionState()
    t.load_project(moved / "p.optrr")
    assert t.data_path == str((moved / "x.csv").resolve())


def test_invalid_values_are_rejected():
    s = make_state()
    for field, value in (("epsilon", 0), ("epsilon", -1), ("epsilon", 51), ("weight", 0), ("role", "publish")):
        with pytest.raises(ValueError):
            s.set_column_value(0, field, value)
    with pytest.raises(ValueError):
        SessionState().restore_project_dict({"format": "something else"})


def test_listeners_hear_every_change():
    s = make_state()
    heard = []
    s.subscribe(lambda *e: heard.append(e))
    s.set_column_value(0, "role", "drop")
    s.set_session_value("method", "kronecker")
    assert heard == [("column", 0, "role"), ("session", None, "method")]


def test_undo_redo_of_every_kind_of_edit(qapp):
    s = make_state()
    stack = QUndoStack()
    stack.push(SetColumnValue(s, 0, "epsilon", 0.5))
    stack.push(SetColumnValue(s, 1, "categories", ["old", "mid", "young"]))
    stack.push(SetSessionValue(s, "budget_mode", True))
    set_many(stack, s, [0, 1, 3], "role", "drop")
    assert [c.role for c in s.columns] == ["drop"] * 4
    stack.undo()  # the macro over three columns is one step
    assert [c.role for c in s.columns] == ["perturb", "perturb", "drop", "keep"]
    stack.undo()
    assert s.budget_mode is False
    stack.undo()
    assert s.columns[1].categories == ["young", "mid", "old"]
    stack.undo()
    assert s.columns[0].epsilon == 1.0
    for _ in range(4):
        stack.redo()
    assert s.columns[0].epsilon == 0.5 and s.budget_mode and s.columns[3].role == "drop"


def test_slider_drags_merge_into_one_undo_step(qapp):
    s = make_state()
    stack = QUndoStack()
    for v in (1.1, 1.2, 1.3, 1.4):
        stack.push(SetColumnValue(s, 0, "epsilon", v, mergeable=True))
    stack.push(SetColumnValue(s, 0, "epsilon", 1.5))  # the release of the slider is final
    assert s.columns[0].epsilon == 1.5
    assert stack.count() == 2
    stack.undo()
    assert s.columns[0].epsilon == 1.4
    stack.undo()
    assert s.columns[0].epsilon == 1.0
    # A drag of another column does not merge into this one.
    stack.push(SetColumnValue(s, 0, "epsilon", 2.0, mergeable=True))
    stack.push(SetColumnValue(s, 1, "epsilon", 3.0, mergeable=True))
    assert stack.count() == 2


def test_copied_fields_equal_to_dict_and_share_nothing_mutable():
    s = make_state()
    s.set_column_value(1, "bins", {"method": "edges", "edges": [0.0, 1.0, 2.0]})
    for col in s.columns:
        fast = col.copied_fields()
        assert fast == col.to_dict()
        for key in ("categories", "warnings", "missing_values", "bins"):
            if getattr(col, key) is not None:
                assert fast[key] is not getattr(col, key)
    assert s.columns[1].copied_fields()["bins"]["edges"] is not s.columns[1].bins["edges"]
