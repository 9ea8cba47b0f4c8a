"""Chi-square statistics: the paper's 2x2 formula and Pearson r x c against scipy; the Wald test on estimates."""

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from optrr_engine.analysis import chi2_2x2, pearson_chi2, wald_independence
from optrr_engine.designs import run_design
from optrr_engine.estimation import StructuredOperator
from optrr_engine.estimation.counts import count_replicates
from optrr_engine.estimation.covariance import covariance_matrix


def test_2x2_formula_matches_scipy_on_unperturbed_tables():
    rng = np.random.default_rng(0)
    n2 = 2000
    a = rng.binomial(n2, 1 / 3, 50)
    b = rng.binomial(n2 - a, 1 / 3)
    c = rng.binomial(n2 - a - b, 2 / 5)
    d = n2 - a - b - c
    ours = chi2_2x2(a, b, c, d)
    for i in range(50):
        ref = chi2_contingency(np.array([[a[i], b[i]], [c[i], d[i]]]), correction=False)[0]
        assert ours[i] == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("shape", [(2, 2), (3, 4), (5, 2), (4, 6)])
def test_pearson_matches_scipy(shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(10):
        t = rng.integers(1, 60, shape)
        ref = chi2_contingency(t, correction=False)
        res = pearson_chi2(t)
        assert res.statistic == pytest.approx(ref[0], rel=1e-10)
        assert res.dof == ref[2]
        assert res.p_value == pytest.approx(ref[1], rel=1e-8, abs=1e-300)


def _wald_replicates(mech, pi, n, reps, rng):
    sizes = pi.shape
    flat = rng.choice(pi.size, size=(reps * n), p=pi.ravel())
    records = np.stack(np.unravel_index(flat, sizes), axis=1)
    counts = count_replicates(mech.sample(records, rng), sizes, np.repeat(np.arange(reps), n), reps)
    op = StructuredOperator.from_mechanism(mech)
    pvals = []
    for r in range(reps):
        lam = counts[r] / n
        est = op.solve(lam)
        pvals.append(wald_independence(est, covariance_matrix(op, lam, est, n)).p_value)
    return np.array(pvals), counts


def test_wald_test_is_calibrated_under_independence_and_has_power():
    """H0 true: about 5% rejections at 5% even though the optimal design correlates the perturbed values."""
    mech = run_design("optimal", [3, 3], [1.0, 1.5]).mechanism
    rng = np.random.default_rng(8)
    pi0 = np.outer([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    pvals, counts = _wald_replicates(mech, pi0, 2000, 300, rng)
    rate = np.mean(pvals < 0.05)
    assert 0.02 <= rate <= 0.09, f"type I error {rate:.3f}"
    # the naive Pearson test on the raw perturbed counts over-rejects for this (non-product) design
    naive = np.mean([pearson_chi2(c).p_value < 0.05 for c in counts])
    assert naive > rate
    pi1 = 0.7 * pi0 + 0.3 * np.diag([1 / 3, 1 / 3, 1 / 3])
    pvals1, _ = _wald_replicates(mech, pi1, 2000, 100, rng)
    assert np.mean(pvals1 < 0.05) > 0.9


def test_wald_close_to_pearson_without_perturbation():
    rng = np.random.default_rng(3)
    t = rng.integers(50, 300, (3, 4)).astype(float)
    n = t.sum()
    p = t / n
    cov = (np.diag(p.ravel()) - np.outer(p.ravel(), p.ravel())) / n
    w = wald_independence(p, cov)
    assert w.dof == 6
    assert w.statistic == pytest.approx(pearson_chi2(t).statistic, rel=0.25)


def test_perturbed_table_of_independent_truth_is_dependent_for_non_product_designs():
    """Why the raw perturbed counts cannot be tested directly: M (p q^T) is a product only for product designs."""
    pi0 = np.outer([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    for method, dependent in (("kronecker", False), ("optimal", True)):
        lam = StructuredOperator.from_mechanism(run_design(method, [3, 3], [1.0, 1.5]).mechanism).apply(pi0)
        gap = np.abs(lam - np.outer(lam.sum(axis=1), lam.sum(axis=0))).max()
        assert (gap > 1e-3) if dependent else (gap < 1e-15)


def test_strict_p_values_never_give_a_p_below_printing_precision_as_a_number():
    """A review: the JSON gave "p_value": 0.0 beside "p_value_text": "< 1e-16"; below 1e-16 (or underflowed to 0)
    a p-value is null with the bound beside it, for the chi-square approximation's p too."""
    from optrr_engine.analysis.chi_square import SMALLEST_SHOWN_P, Chi2Result, strict_p_values

    tiny = Chi2Result(9e3, 1, 0.0, "t", "a", {"p_value_chi2_approximation": 1e-300, "valid": True}).to_json_dict()
    out = strict_p_values(tiny)
    assert out["p_value"] is None and out["p_value_below"] == SMALLEST_SHOWN_P == 1e-16
    assert out["p_value_text"] == "< 1e-16" and out["valid"] is True and out["statistic"] == 9e3
    assert out["p_value_chi2_approximation"] is None and out["p_value_chi2_approximation_below"] == 1e-16
    kept = strict_p_values(Chi2Result(3.0, 1, 0.08, "t", "a", {"p_value_chi2_approximation": 1e-16}).to_json_dict())
    assert kept["p_value"] == 0.08 and kept["p_value_chi2_approximation"] == 1e-16
    assert "p_value_below" not in kept and "p_value_chi2_approximation_below" not in kept
    none = strict_p_values(Chi2Result(None, 2, None, "t", "a").to_json_dict())
    assert none["p_value"] is None and "p_value_below" not in none  # no p at all: no bound
