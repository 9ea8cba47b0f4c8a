"""A whole-record target that no design can use is refused in words, before any design runs: no column may exceed
the per-column maximum, so a sampling design's row (m reported columns) can use at most m x MAX_EPSILON, and a
design of k columns at most k x MAX_EPSILON (a GUI user typed 10,000; SMP then computed log(0) and reported
'whole-record epsilon 10000')."""

from __future__ import annotations

import pytest

from optrr_engine.errors import InputError
from optrr_engine.sampling import make_sampling_design
from optrr_engine.validation import MAX_EPSILON, MIN_EPSILON, check_target


def test_check_target_bounds():
    assert check_target(3.0) == 3.0 and check_target(100.0, 2) == 100.0
    with pytest.raises(InputError, match="at most 50 per column .* so at most 100 here"):
        check_target(100.001, 2)
    with pytest.raises(InputError, match="below the smallest accepted"):
        check_target(MIN_EPSILON / 2)
    with pytest.raises(InputError, match="positive"):
        check_target(-1.0)


@pytest.mark.parametrize("method,m", [("smp", None), ("rsfd", None), ("sample-m", 2)])
def test_sampling_designs_refuse_a_target_their_rows_cannot_use(method, m):
    reported = m or 1
    limit = MAX_EPSILON * reported
    design = make_sampling_design(method, [2, 3, 2], limit, m=m)
    assert design.target == limit
    with pytest.raises(InputError, match=f"each row's {reported} reported column.*at most {limit:g} here"):
        make_sampling_design(method, [2, 3, 2], 10_000.0, m=m)
