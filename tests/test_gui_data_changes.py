"""Qt-free: the values a reopened project's message names as outside a column's categories are exactly the values
the release refuses (one rule: the engine's codec decides; the window only words it)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.errors import InputError
from optrr_engine.release.codec import ColumnCodec
from optrr_engine.release.column_stats import ColumnSummary
from optrr_engine.release.config import ColumnConfig
from optrr_gui.state.data_changes import data_changes, unknown_values
from optrr_gui.state.session import ColumnState

TEXTS = ["a", "b", "c", "d", "-9", "NA", "x"]


def refused_by_release(col: ColumnState, value: str) -> bool:
    """Does the release's encoder refuse a column holding this one value?"""
    d = col.copied_fields()
    d.update(epsilon=1.0, weight=1.0)
    codec = ColumnCodec(ColumnConfig(**d))
    try:
        codec.encode(pa.array([value], type=pa.string()))
    except InputError as exc:
        if "not among its categories" in str(exc):
            return True
        raise
    return False


@st.composite
def columns(draw):
    categories = draw(st.lists(st.sampled_from(TEXTS), min_size=2, max_size=4, unique=True))
    missing_values = draw(st.lists(st.sampled_from(TEXTS), max_size=2, unique=True))
    recode = None
    if draw(st.booleans()):
        label = draw(st.sampled_from(categories))
        sources = draw(
            st.lists(
                st.sampled_from([t for t in TEXTS if t not in categories] or ["zz"]),
                min_size=1,
                max_size=2,
                unique=True,
            )
        )
        recode = {label: sources}
    return ColumnState(
        name="col",
        categories=categories,
        missing_values=missing_values,
        recode=recode,
        missing="category" if "NA" in categories else "exclude",
    )


@settings(max_examples=150, deadline=None)
@given(col=columns(), values=st.lists(st.sampled_from(TEXTS), min_size=1, max_size=7, unique=True))
def test_the_values_named_are_the_values_the_release_refuses(col, values):
    summary = ColumnSummary("col", values, [3] * len(values), missing=0)
    try:
        expected = {v for v in values if refused_by_release(col, v)}
    except InputError:  # a configuration the release refuses for another reason: nothing named as unknown
        assert unknown_values(col, summary) == []
        return
    assert {v for v, _n in unknown_values(col, summary)} == expected


def test_recoded_and_missing_texts_are_not_named_and_the_rows_are_counted():
    col = ColumnState(
        name="age", categories=["young", "old", "NA"], missing_values=["-9"], recode={"young": ["20-29", "30-39"]}
    )
    summary = ColumnSummary("age", ["20-29", "old", "-9", "90-99", "young"], [4, 5, 6, 3, 2], missing=1)
    assert unknown_values(col, summary) == [("90-99", 3)]
    assert data_changes([col], ["age"], {"age": summary}) == [
        "age has values that are not among its categories: '90-99' (3 rows) — add them or merge them before releasing"
    ]


@pytest.mark.parametrize(
    "col",
    [
        ColumnState(name="n", type="numeric", bins={"edges": [0, 1, 2]}, categories=[]),  # numeric: released as missing
        ColumnState(name="k", role="keep", categories=["a", "b"]),  # kept: not coded
        ColumnState(name="one", categories=["a"]),  # cannot be perturbed at all: the column table says why
    ],
)
def test_columns_the_codec_does_not_refuse_values_of_name_none(col):
    summary = ColumnSummary(col.name, ["a", "zzz"], [1, 1], missing=0)
    assert unknown_values(col, summary) == []
