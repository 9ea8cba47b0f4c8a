"""R-squared and AAR (LOPUB/LOCOP/BRR paper), against independent computations."""

import numpy as np
import pytest
from scipy.stats import pearsonr

from optrr_engine.analysis import aar, r_squared


def test_r_squared_is_one_minus_residual_over_total_sum_of_squares():
    t = np.array([[0.1, 0.2], [0.3, 0.4]])
    e = np.array([[0.15, 0.15], [0.35, 0.35]])
    want = 1 - ((t - e) ** 2).sum() / ((t - t.mean()) ** 2).sum()
    assert r_squared(t, e) == pytest.approx(want, rel=1e-12)
    assert r_squared(t, t) == 1.0
    assert np.isnan(r_squared(np.full(4, 0.25), e.ravel()))  # uniform truth: nothing to explain


def test_aar_is_the_mean_absolute_pearson_correlation_over_pairs():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, 200)
    codes = np.stack([x, (x + rng.integers(0, 2, 200)) % 3, rng.integers(0, 4, 200), np.zeros(200, int)], axis=1)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    want = np.mean([abs(pearsonr(codes[:, i], codes[:, j])[0]) if j != 3 else 0.0 for i, j in pairs])
    assert aar(codes, [3, 3, 4, 1]) == pytest.approx(want, rel=1e-9)
