"""SessionState: several fields of one column in one change (a recoding), values copied so that no caller
can change the session behind its back, and the summary's rows per released category kept per recoding."""

from __future__ import annotations

import numpy as np
import pytest

from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.recode import group_rare, recode_counts
from optrr_gui.state.session import ColumnState, SessionState


def session() -> SessionState:
    s = SessionState()
    s.load_columns("x.csv", {}, [ColumnState("a", categories=["x", "y", "z"]), ColumnState("b")])
    return s


def test_several_fields_of_a_column_are_one_change():
    s = session()
    heard = []
    s.subscribe(lambda *event: heard.append(event))
    version = s.data_version
    s.set_column_fields(0, {"recode": {"xy": ["x", "y"]}, "categories": ["xy", "z"]})
    assert heard == [("column", 0, "categories")]
    assert s.columns[0].recode == {"xy": ["x", "y"]} and s.columns[0].categories == ["xy", "z"]
    assert s.data_version > version


def test_a_bad_value_among_several_fields_changes_nothing():
    s = session()
    with pytest.raises(ValueError):
        s.set_column_fields(0, {"categories": ["q"], "epsilon": -1.0})
    assert s.columns[0].categories == ["x", "y", "z"] and s.columns[0].epsilon == 1.0


def test_values_going_in_and_out_are_copies():
    s = session()
    cats, recode = ["xy", "z"], {"xy": ["x", "y"]}
    s.set_column_fields(0, {"recode": recode, "categories": cats})
    cats.append("w")
    recode["xy"].append("z")
    assert s.columns[0].categories == ["xy", "z"] and s.columns[0].recode == {"xy": ["x", "y"]}
    out = s.column_value(0, "recode")
    out["xy"].clear()
    s.column_value(0, "categories").clear()
    assert s.columns[0].categories == ["xy", "z"] and s.columns[0].recode == {"xy": ["x", "y"]}
    bins = {"method": "edges", "edges": [0, 1, 2]}
    s.set_column_value(1, "bins", bins)
    bins["edges"].append(3)
    assert s.columns[1].bins == {"method": "edges", "edges": [0, 1, 2]}


def test_rows_per_released_category_follow_each_recoding():
    rng = np.random.default_rng(5)
    values = np.array([f"v{i}" for i in range(300)], dtype=object)
    counts = rng.integers(1, 40, 300)
    summary = ColumnSummary("c", values, counts, 0)
    plain = summary.recoded(None)
    assert plain == recode_counts(summary.values, summary.counts, None)
    recode, _, _ = group_rare(None, [str(v) for v in summary.values], plain, 10, "Other")
    grouped = summary.recoded(recode)
    assert grouped == recode_counts(summary.values, summary.counts, recode)
    assert grouped["Other"] == int(counts[counts < 10].sum())
    assert summary.recoded({k: list(v) for k, v in recode.items()}) == grouped  # equal content, same answer
    assert summary.recoded(None) == plain
