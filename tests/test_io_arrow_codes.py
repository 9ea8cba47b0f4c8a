"""One dictionary encoding of Arrow columns (io.arrow_codes) behind the release codec, the estimation's reader of a
release and the GUI's column counts; expectations built with plain Python over the cells."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.errors import InputError
from optrr_engine.estimation.release_source import encode_arrow
from optrr_engine.io.arrow_codes import dictionary_codes

cells = st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "", "c d", "é"])), max_size=30)


@settings(max_examples=60, deadline=None)
@given(st.lists(cells, max_size=4))
def test_codes_point_at_each_cells_text_and_minus_one_at_missing(chunks):
    column = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks], type=pa.string())
    flat = [v for c in chunks for v in c]
    index, distinct = dictionary_codes(column)
    values = distinct.to_pylist()
    assert values == list(dict.fromkeys(v for v in flat if v is not None))  # distinct, in order of first occurrence
    assert [None if i < 0 else values[i] for i in index] == flat
    plain_index, plain_distinct = dictionary_codes(pa.array(flat, type=pa.string()))
    assert np.array_equal(plain_index, index) and plain_distinct.to_pylist() == values


def test_a_release_column_maps_labels_the_marker_and_empty_cells():
    column = pa.chunked_array([["y", None, "x"], ["?", "y"]], type=pa.string())
    codes = encode_arrow(column, ["x", "y", ""], "sex", not_reported="?")
    assert codes.tolist() == [1, 2, 0, -1, 1]  # empty cell -> the category "", the marker -> -1
    with pytest.raises(InputError, match="value '\\?' in column 'sex' is not one of the manifest's categories"):
        encode_arrow(column, ["x", "y", ""], "sex")
    with pytest.raises(InputError, match="column 'sex' has empty cells"):
        encode_arrow(column, ["x", "y"], "sex", not_reported="?")
