"""Long lists of log values with few distinct values are written compactly in mechanisms (manifest version 3):
``{"distinct": [...], "codes": "..."}``, exact, and read back by every reader of a mechanism."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.blocks.base import COMPACT_MIN_ENTRIES, LOG_CODE_DIGITS, decode_logs, encode_logs
from optrr_engine.blocks.pattern_table import PatternBlock
from optrr_engine.errors import InputError
from optrr_engine.mechanism import Mechanism


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(min_value=-700, max_value=0, allow_nan=False), st.just(float("-inf"))),
        min_size=1,
        max_size=40,
        unique=True,
    ),
    st.integers(min_value=1, max_value=3 * COMPACT_MIN_ENTRIES),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_round_trip_is_exact_through_json(distinct, size, seed):
    values = np.asarray(distinct)[np.random.default_rng(seed).integers(0, len(distinct), size)]
    encoded = json.loads(json.dumps(encode_logs(values)))
    compact = isinstance(encoded, dict)
    assert compact == (size >= COMPACT_MIN_ENTRIES and len(np.unique(values)) <= len(LOG_CODE_DIGITS))
    if compact:
        assert len(encoded["codes"]) == size and len(encoded["distinct"]) == len(np.unique(values))
    back = decode_logs(encoded)
    assert back.shape == (size,) and np.array_equal(back, values)  # -inf == -inf; every float bit for bit


def test_a_nineteen_attribute_auto_table_is_twenty_times_smaller_and_the_same_mechanism():
    """A threshold-shaped pattern table like the ``auto`` design of cirrhosis (19 attributes, 2^19 entries, 5
    distinct values: 10.9 MB as a plain list)."""
    sizes = [4, 3, 3, 4, 2, 3, 3, 3, 3, 4, 5, 4, 5, 5, 5, 5, 5, 4, 5]
    weight = np.array([bin(i).count("1") for i in range(1 << len(sizes))])
    log_x = np.where(weight <= 10, -23.62, np.where(weight == 11, -24.0 - 0.1 * (np.arange(weight.size) % 3), -26.6))
    mech = Mechanism.single(PatternBlock(sizes, log_x))
    plain = len(json.dumps([float(v) for v in mech.log_pattern_probs()]))
    text = json.dumps(mech.to_dict())
    assert len(text) * 15 < plain
    back = Mechanism.from_dict(json.loads(text))
    assert np.array_equal(back.log_pattern_probs(), mech.log_pattern_probs())
    assert back.overall_epsilon() == mech.overall_epsilon()


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"distinct": [-1.0], "codes": "0", "extra": 1}, 'exactly "distinct"'),
        ({"distinct": -1.0, "codes": "0"}, 'exactly "distinct"'),
        ({"distinct": [-1.0, -2.0], "codes": "012"}, "code '2' at entry 2"),
        ({"distinct": [-1.0], "codes": "0A"}, "code 'A' at entry 1"),
        ({"distinct": [-1.0], "codes": "0é"}, "digits 0-9 and letters a-z"),
    ],
)
def test_malformed_compact_lists_are_refused_by_name(bad, message):
    with pytest.raises(InputError, match=message):
        decode_logs(bad)
