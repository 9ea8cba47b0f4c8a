"""Clip-and-rescale and the iterative Bayesian update."""

import numpy as np
import pytest

from optrr_engine.designs import run_design
from optrr_engine.estimation import StructuredOperator, clip_and_rescale, estimate_from_counts
from optrr_engine.estimation import iterative_bayesian_update as ibu

SIZES = [3, 2, 4]


def log_likelihood(op, pi, counts):
    return float(np.sum(counts * np.log(np.maximum(op.apply(pi), 1e-300))))


def test_clip_and_rescale():
    est = np.array([0.5, -0.1, 0.4, 0.2])
    out = clip_and_rescale(est)
    np.testing.assert_allclose(out, np.array([0.5, 0.0, 0.4, 0.2]) / 1.1)
    np.testing.assert_allclose(clip_and_rescale(np.array([0.25, 0.75])), [0.25, 0.75])


def test_ibu_equals_unbiased_in_the_interior():
    """If M^-1 lambda_hat is a strictly positive distribution, it is the maximum-likelihood estimate."""
    mech = run_design("optimal", SIZES, [2.0, 3.0, 2.5]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    rng = np.random.default_rng(2)
    pi = rng.dirichlet(np.full(24, 5.0)).reshape(SIZES)
    counts = np.round(op.apply(pi) * 1e6)
    unbiased = op.solve(counts / counts.sum())
    assert unbiased.min() > 0
    res = ibu(op, counts / counts.sum(), tol=1e-13, max_iter=100000)
    assert res.converged
    np.testing.assert_allclose(res.estimate, unbiased, atol=1e-7)


def test_ibu_is_a_distribution_and_beats_clip_in_likelihood():
    mech = run_design("kronecker", SIZES, [0.5, 0.7, 0.4]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    rng = np.random.default_rng(7)
    pi = np.zeros(SIZES)
    pi[0, 0, :2] = 0.5  # sparse truth: the unbiased estimate goes negative
    records = np.stack(np.unravel_index(rng.choice(24, 300, p=pi.ravel()), SIZES), axis=1)
    perturbed = mech.sample(records, rng)
    counts = np.zeros(SIZES)
    np.add.at(counts, tuple(perturbed.T), 1)
    est_ibu = estimate_from_counts(mech, counts, method="ibu", ibu_tol=1e-12, ibu_max_iter=200000)
    est_clip = estimate_from_counts(mech, counts, method="clip")
    assert est_ibu.unbiased.min() < 0
    for e in (est_ibu, est_clip):
        assert e.estimate.min() >= 0 and abs(e.estimate.sum() - 1) < 1e-12
    assert log_likelihood(op, est_ibu.estimate, counts) >= log_likelihood(op, est_clip.estimate, counts) - 1e-9
    # KKT of the multinomial MLE: gradient ratio = 1 on the support, <= 1 off it
    grad = op.apply(counts / counts.sum() / op.apply(est_ibu.estimate))
    support = est_ibu.estimate > 1e-6
    np.testing.assert_allclose(grad[support], 1.0, atol=1e-3)
    assert grad[~support].max() <= 1.0 + 1e-3
    assert est_ibu.method == "ibu" and est_ibu.info["iterations"] >= 1


def test_intervals_do_not_depend_on_the_point_method():
    mech = run_design("heuristic", SIZES, [1.0, 1.0, 1.0]).mechanism
    counts = np.arange(1, 25).reshape(SIZES) * 10
    a = estimate_from_counts(mech, counts, method="unbiased", confidence=0.9)
    b = estimate_from_counts(mech, counts, method="clip", confidence=0.9)
    np.testing.assert_allclose(a.ci_low, b.ci_low)
    np.testing.assert_allclose(a.ci_high, b.ci_high)
    assert np.all(a.ci_low <= np.clip(a.unbiased, 0, 1)) and np.all(np.clip(a.unbiased, 0, 1) <= a.ci_high)
    wider = estimate_from_counts(mech, counts, method="unbiased", confidence=0.99)
    assert np.all(wider.ci_high - wider.ci_low >= a.ci_high - a.ci_low - 1e-15)


def test_squarem_reaches_the_plain_em_optimum_with_a_certified_gap():
    mech = run_design("optimal", SIZES, [0.6, 0.8, 0.5]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    rng = np.random.default_rng(12)
    counts = rng.multinomial(5000, op.apply(rng.dirichlet(np.full(24, 0.3)).reshape(SIZES)).ravel()).reshape(SIZES)
    lam = counts / counts.sum()
    fast = ibu(op, lam, tol=1e-9)
    slow = ibu(op, lam, tol=1e-7, accelerate=False, max_iter=200000)
    assert fast.converged and slow.converged and fast.iterations < slow.iterations
    ll_fast, ll_slow = log_likelihood(op, fast.estimate, lam), log_likelihood(op, slow.estimate, lam)
    assert ll_fast >= ll_slow - 1e-7  # within the slow run's certified gap
    assert ll_fast - ll_slow <= 1e-7 + 1e-9


def test_a_negative_unbiased_share_gets_the_interval_of_zero_not_an_empty_one():
    """Binary GRR at eps 1 and 200 rows, 5 of them reported in category 1: the unbiased share is about -0.33,
    far more than z standard errors below 0; its interval is [0, z se] (it was [0, 0]: "certainly 0"), and the
    other share's, above 1, is [1 - z se, 1]."""
    mech = run_design("kronecker", [2], [1.0]).mechanism
    est = estimate_from_counts(mech, np.array([195.0, 5.0]), method="unbiased", confidence=0.95)
    u, se = est.unbiased[1], est.std_error[1]
    assert u + 1.96 * se < 0  # the truncated u +- z se would be empty
    assert est.ci_low[1] == 0.0 and est.ci_high[1] == pytest.approx(1.959964 * se, rel=1e-6)
    assert est.unbiased[0] > 1 + 1.96 * se  # the mirror case above 1: [1 - z se, 1], not [1, 1]
    assert est.ci_high[0] == 1.0 and est.ci_low[0] == pytest.approx(1 - 1.959964 * se, rel=1e-6)

