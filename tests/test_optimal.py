"""The exact LP: equal to the paper's own LP, meets requests, certified by its dual bound."""

import numpy as np
import pytest

from optrr_engine.designs import run_design
from optrr_engine.errors import TooLargeError
from tests.reference import paper_lp


@pytest.mark.parametrize("seed", range(10))
def test_equals_independent_paper_lp(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(2, 6))
    sizes = rng.integers(2, 6, k)
    eps = rng.uniform(0.5, 8.0, k)
    d = run_design("optimal", sizes, eps)
    ref = paper_lp(sizes, eps)
    assert abs(d.overall_epsilon - ref) <= 1e-7 * max(1.0, ref)
    np.testing.assert_allclose(d.attribute_epsilons, eps, atol=1e-9)


def test_certificate_and_residuals():
    rng = np.random.default_rng(9)
    sizes = rng.integers(2, 6, 10)
    eps = rng.uniform(0.5, 8.0, 10)
    d = run_design("optimal", sizes, eps)
    assert d.info["residual"] < 1e-10
    assert d.info["lower_bound"] <= d.overall_epsilon + 1e-9
    assert d.overall_epsilon - d.info["lower_bound"] < 1e-6 * d.overall_epsilon
    assert d.info["solver_status"] == "Optimal"


def test_too_many_attributes_is_a_clear_error():
    with pytest.raises(TooLargeError, match="at most k = 20"):
        run_design("optimal", [2] * 25, [1.0] * 25)
