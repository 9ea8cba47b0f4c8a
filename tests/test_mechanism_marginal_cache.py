"""Mechanism.marginal keeps its 1- and 2-way results: the kept ones are exactly what a fresh mechanism (rebuilt
from its parameters) computes, for every design family the GUI summarises."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optrr_engine.designs import run_design
from optrr_engine.mechanism import Mechanism


@pytest.mark.parametrize(
    "method, sizes, eps",
    [
        ("kronecker", [2, 3, 4, 2, 5], [0.8, 1.1, 0.6, 1.4, 0.9]),
        ("heuristic", [2, 3, 4, 2, 5], [0.8, 1.1, 0.6, 1.4, 0.9]),
        ("optimal", [2, 3, 4, 2, 5], [0.8, 1.1, 0.6, 1.4, 0.9]),
        ("classes", [2, 3, 2, 2, 3], [0.8, 0.6, 0.8, 0.8, 0.6]),
    ],
)
def test_kept_marginals_equal_fresh_ones(method, sizes, eps):
    mech = run_design(method, sizes, eps).mechanism
    subsets = [*([i] for i in range(5)), *(list(p) for p in itertools.permutations(range(5), 2)), [0, 2, 4]]
    for attrs in subsets:
        first = mech.marginal(attrs)
        again = mech.marginal(attrs)
        fresh = Mechanism.from_dict(mech.to_dict()).marginal(attrs)
        assert (again is first) == (len(attrs) <= 2)
        np.testing.assert_allclose(first.log_pattern_probs(), fresh.log_pattern_probs(), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(first.sizes, np.asarray(sizes)[attrs])
