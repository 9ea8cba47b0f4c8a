"""The maximum-likelihood estimator (method "ibu") against an independent brute-force maximum-likelihood reference.

Reference: the dense transition matrix D (optrr_engine.dense, small domains) and scipy.optimize (SLSQP) on
the simplex, maximising sum_y lam_y log (D p)_y; its own KKT conditions are checked before it is used. Also:
the KKT conditions at the estimator's answer (dense), invariants under hypothesis (a distribution whose
log-likelihood is at least that of plain EM run for a fixed number of iterations, minus the certified gap),
the unbiased estimate returned when it is already a distribution, and a non-converged run reported as such.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from optrr_engine.cli.estimate_cmd import convergence_line
from optrr_engine.dense import dense_matrix
from optrr_engine.designs import run_design
from optrr_engine.estimation import StructuredOperator, estimate_from_counts
from optrr_engine.estimation import iterative_bayesian_update as ibu
from tests.test_estimation_mle import sample_counts


def as_f(table):
    """Table (axis i = attribute i) to the dense matrix's record order (attribute 0 fastest)."""
    return np.asarray(table).ravel(order="F")


def dense_loglik(dense, p, lam):
    z = dense @ p
    pos = lam > 0
    return float(np.sum(lam[pos] * np.log(z[pos])))


def kkt_ratio(dense, p, lam):
    """g = D^T (lam / D p): 1 on the support of the maximiser, <= 1 off it."""
    return dense.T @ (lam / (dense @ p))


def reference_mle(dense, lam):
    """max sum lam log(D p) over the simplex by SLSQP, from the uniform distribution."""
    n = dense.shape[1]
    pos = lam > 0

    def negative(p):
        z = dense @ p
        return -float(np.sum(lam[pos] * np.log(np.maximum(z[pos], 1e-300)))), -(dense[pos].T @ (lam[pos] / z[pos]))

    res = minimize(
        negative,
        np.full(n, 1.0 / n),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones_like(p)}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    assert res.success, res.message
    p = np.clip(res.x, 0.0, None)
    return p / p.sum()


CASES = [
    ("optimal", [3, 4], [1.0, 1.5], 400),
    ("kronecker", [2, 3, 2], [1.0, 0.8, 1.2], 300),
    ("optimal", [3, 2, 3], [1.5, 1.0, 2.0], 2000),
    ("heuristic", [4, 3], [2.0, 1.0], 150),
]


def sparse_case(method, sizes, eps, n):
    """(mechanism, its dense matrix, counts of n records drawn from a 3-cell truth, observed shares as
    fractions): a case whose unbiased estimate has negative cells."""
    mech = run_design(method, sizes, eps).mechanism
    dense = dense_matrix(mech)
    rng = np.random.default_rng(sum(sizes) + n)
    truth = np.zeros(sizes)
    truth.flat[rng.choice(truth.size, 3, replace=False)] = [0.6, 0.3, 0.1]
    counts = sample_counts(mech, truth, n, rng)
    return mech, dense, counts, as_f(counts / counts.sum())


@pytest.mark.parametrize(("method", "sizes", "eps", "n"), CASES)
def test_agrees_with_the_brute_force_reference(method, sizes, eps, n):
    """Sparse truths (the unbiased estimate has negative cells): same maximiser, same log-likelihood."""
    mech, dense, counts, lam_f = sparse_case(method, sizes, eps, n)
    ref = reference_mle(dense, lam_f)
    g_ref = kkt_ratio(dense, ref, lam_f)
    assert g_ref.max() <= 1.0 + 1e-5 and np.all(np.abs(g_ref[ref > 1e-6] - 1.0) <= 1e-5)  # the reference is right

    est = estimate_from_counts(mech, counts, method="ibu", ibu_tol=1e-14, ibu_max_iter=200000)
    assert est.info["converged"] and est.negative_cells > 0
    p = as_f(est.estimate)
    assert dense_loglik(dense, p, lam_f) >= dense_loglik(dense, ref, lam_f) - 1e-10
    np.testing.assert_allclose(p, ref, atol=2e-4)


@pytest.mark.parametrize(("method", "sizes", "eps", "n"), CASES)
def test_kkt_conditions_hold_at_the_default_answer(method, sizes, eps, n):
    """At the default tolerance: g <= 1 everywhere and g = 1 on the support, within what the certified gap
    allows, and the certified gap really bounds the distance to the reference's log-likelihood."""
    mech = run_design(method, sizes, eps).mechanism
    dense = dense_matrix(mech)
    rng = np.random.default_rng(7 * n)
    truth = rng.dirichlet(np.full(int(np.prod(sizes)), 0.3)).reshape(sizes)
    counts = sample_counts(mech, truth, n, rng)
    lam_f = as_f(counts / counts.sum())
    est = estimate_from_counts(mech, counts, method="ibu")
    p = as_f(est.estimate)
    assert est.info["converged"]
    g = kkt_ratio(dense, p, lam_f)
    assert g.max() <= 1.0 + 1e-3
    assert np.all(np.abs(g[p > 1e-3] - 1.0) <= 1e-3)
    ref = reference_mle(dense, lam_f)
    gap = n * (dense_loglik(dense, ref, lam_f) - dense_loglik(dense, p, lam_f))
    assert gap <= est.info["log_likelihood_gap_bound"] + 1e-7


def plain_em(dense, lam, iterations):
    """The textbook EM (iterative Bayesian update) on the dense matrix, from the uniform distribution."""
    p = np.full(dense.shape[1], 1.0 / dense.shape[1])
    for _ in range(iterations):
        p = p * (dense.T @ (lam / (dense @ p)))
        p /= p.sum()
    return p


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["kronecker", "optimal"]),
    sizes=st.sampled_from([[2, 3], [3, 3], [2, 2, 2], [4, 2]]),
    eps=st.floats(0.2, 2.5),
    n=st.integers(1, 3000),
    concentration=st.sampled_from([0.1, 1.0, 10.0]),
)
def test_a_distribution_at_least_as_likely_as_plain_em(seed, method, sizes, eps, n, concentration):
    rng = np.random.default_rng(seed)
    mech = run_design(method, sizes, [eps] * len(sizes)).mechanism
    dense = dense_matrix(mech)
    truth = rng.dirichlet(np.full(int(np.prod(sizes)), concentration)).reshape(sizes)
    counts = sample_counts(mech, truth, n, rng)
    est = estimate_from_counts(mech, counts, method="ibu")
    assert np.all(np.isfinite(est.estimate)) and est.estimate.min() >= 0
    assert est.estimate.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.info["converged"]
    lam_f = as_f(counts / counts.sum())
    old = plain_em(dense, lam_f, 500)
    slack = est.info["log_likelihood_gap_bound"] / n
    assert dense_loglik(dense, as_f(est.estimate), lam_f) >= dense_loglik(dense, old, lam_f) - slack - 1e-12


def test_unbiased_estimate_is_returned_when_it_is_a_distribution():
    """M^{-1} lambda >= 0 is the unconstrained maximum of the likelihood, hence the ML estimate: 0 iterations."""
    mech = run_design("optimal", [3, 2, 4], [2.0, 3.0, 2.5]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    pi = np.random.default_rng(2).dirichlet(np.full(24, 5.0)).reshape(3, 2, 4)
    counts = np.round(op.apply(pi) * 1e6)
    est = estimate_from_counts(mech, counts, method="ibu")
    assert est.unbiased.min() > 0
    assert est.info["converged"] and est.info["iterations"] == 0
    np.testing.assert_allclose(est.estimate, est.unbiased, rtol=1e-12, atol=1e-15)
    dense = dense_matrix(mech)
    lam_f = as_f(counts / counts.sum())
    np.testing.assert_allclose(kkt_ratio(dense, as_f(est.estimate), lam_f), 1.0, atol=1e-9)
    assert "already a distribution" in convergence_line(est.info)


def test_not_converged_is_reported():
    """Too few iterations on a weak mechanism: the result says so, with a gap above the tolerance, the
    estimate is still a distribution, and the CLI line is a warning."""
    mech = run_design("kronecker", [4, 3, 5], [0.1, 0.1, 0.1]).mechanism
    rng = np.random.default_rng(3)
    pi = np.zeros((4, 3, 5))
    pi.flat[rng.choice(pi.size, 3, replace=False)] = [0.5, 0.3, 0.2]
    counts = sample_counts(mech, pi, 2000, rng)
    est = estimate_from_counts(mech, counts, method="ibu", ibu_max_iter=3)
    info = est.info
    assert not info["converged"] and info["iterations"] == 3
    assert info["log_likelihood_gap_bound"] > info["log_likelihood_gap_tolerance"]
    assert est.estimate.min() >= 0 and est.estimate.sum() == pytest.approx(1.0, abs=1e-12)
    assert "NOT converged" in convergence_line(info)
    res = ibu(StructuredOperator.from_mechanism(mech), counts / counts.sum(), max_iter=3, tol=1e-9)
    assert not res.converged and res.gap > 1e-9
