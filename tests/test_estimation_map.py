"""The default estimator (method "map": the posterior mode under a uniform Dirichlet prior worth
prior_records(cells, n) records) against an independent brute-force reference, and its invariants.

Reference: the dense transition matrix D (optrr_engine.dense) and scipy.optimize (SLSQP) on the simplex,
maximising sum_y lam_y log (D p)_y + sum_x beta_x log p_x with beta = prior_records / (cells n).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from optrr_engine.dense import dense_matrix
from optrr_engine.designs import run_design
from optrr_engine.estimation import DEFAULT_METHOD, StructuredOperator, estimate_from_counts
from optrr_engine.estimation.estimate import prior_records
from tests.test_estimation_mle import sample_counts
from tests.test_estimation_mle_reference import CASES, as_f, sparse_case


def objective(dense, p, lam, beta):
    z = dense @ p
    pos = lam > 0
    return float(np.sum(lam[pos] * np.log(z[pos])) + np.sum(beta * np.log(p)))


def reference_map(dense, lam, beta):
    """max sum lam log(D p) + sum beta log p over the simplex by SLSQP, from the uniform distribution."""
    cells = dense.shape[1]
    pos = lam > 0

    def negative(p):
        p = np.maximum(p, 1e-300)
        z = dense @ p
        value = np.sum(lam[pos] * np.log(z[pos])) + np.sum(beta * np.log(p))
        return -float(value), -(dense[pos].T @ (lam[pos] / z[pos]) + beta / p)

    res = minimize(
        negative,
        np.full(cells, 1.0 / cells),
        jac=True,
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * cells,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones_like(p)}],
        options={"ftol": 1e-15, "maxiter": 3000},
    )
    assert res.success, res.message
    return res.x / res.x.sum()


def test_the_default_is_the_smoothed_estimate():
    assert DEFAULT_METHOD == "map"


@pytest.mark.parametrize(("method", "sizes", "eps", "n"), CASES)
def test_agrees_with_the_brute_force_reference(method, sizes, eps, n):
    """Sparse truths: the same maximiser as SLSQP on the dense problem (whose own first-order conditions
    are checked: the gradient is constant over the cells, all positive), and the certified gap at the
    default tolerance bounds the distance to the reference's objective."""
    mech, dense, counts, lam = sparse_case(method, sizes, eps, n)
    cells = int(np.prod(sizes))
    beta = np.full(cells, prior_records(cells, n) / (cells * n))
    ref = reference_map(dense, lam, beta)
    grad = dense.T @ (lam / (dense @ ref)) + beta / ref
    assert np.ptp(grad) <= 1e-4 * grad.mean()  # interior maximum: the gradient is constant

    tight = estimate_from_counts(mech, counts, ibu_tol=1e-14, ibu_max_iter=200000)
    assert tight.method == "map" and tight.info["converged"] and tight.info["objective"].startswith("log-posterior")
    p = as_f(tight.estimate)
    assert objective(dense, p, lam, beta) >= objective(dense, ref, lam, beta) - 1e-10
    np.testing.assert_allclose(p, ref, atol=2e-4)

    default = estimate_from_counts(mech, counts)
    gap = n * (objective(dense, ref, lam, beta) - objective(dense, as_f(default.estimate), lam, beta))
    assert default.info["converged"] and gap <= default.info["log_likelihood_gap_bound"] + 1e-7


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(2, 4), min_size=1, max_size=3),
    eps=st.floats(0.05, 4.0),
    n=st.integers(1, 5000),
    seed=st.integers(0, 2**31 - 1),
)
def test_a_positive_distribution_that_converges(sizes, eps, n, seed):
    mech = run_design("kronecker", sizes, [eps] * len(sizes)).mechanism
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, rng.dirichlet(np.ones(int(np.prod(sizes))))).reshape(sizes)
    est = estimate_from_counts(mech, counts)
    assert est.info["converged"]
    assert est.estimate.min() > 0.0 and est.estimate.sum() == pytest.approx(1.0, abs=1e-12)


def test_consistent_as_rows_grow():
    """Exact expected counts n * M pi of a sparse truth: the estimate tends to pi (the prior's weight
    prior_records / n = 1 / sqrt(n) here vanishes), and its error shrinks with n."""
    sizes = [3, 4, 2]
    mech = run_design("optimal", sizes, [1.0, 1.5, 0.8]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    truth = np.zeros(sizes)
    truth.flat[[0, 5, 11, 17]] = [0.4, 0.3, 0.2, 0.1]
    errors = []
    for n in (1e3, 1e5, 1e7, 1e9):
        est = estimate_from_counts(mech, n * op.apply(truth), ibu_max_iter=100000)
        assert est.info["converged"]
        errors.append(float(np.abs(est.estimate - truth).sum()))
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-3


def test_prior_weight_is_one_record_per_cell_at_most_sqrt_n():
    assert prior_records(12, 10_000) == 12.0
    assert prior_records(1000, 10_000) == pytest.approx(100.0)


def test_pooled_sampling_channel_and_release_default_to_it():
    """estimate_from_counts on a bare operator (sampling designs pass their pooled channel) uses the default."""
    op = StructuredOperator((3,), np.array([1.0, 0.4]))
    est = estimate_from_counts(op, np.array([50, 30, 20]))
    assert est.method == "map" and est.info["converged"] and est.estimate.min() > 0


@pytest.mark.parametrize(("method", "sizes", "eps", "n"), CASES)
def test_certificate_bounds_the_true_gap_away_from_the_maximum(method, sizes, eps, n):
    """At iterates cut short (1-40 iterations), the dual certificate is at least the true gap to the brute-force
    maximum and at most the Frank-Wolfe gap."""
    from optrr_engine.estimation.nonnegative import _state, iterative_bayesian_update, penalised_gap

    mech = run_design(method, sizes, eps).mechanism
    op = StructuredOperator.from_mechanism(mech)
    dense = dense_matrix(mech)
    rng = np.random.default_rng(11 * n)
    truth = rng.dirichlet(np.full(int(np.prod(sizes)), 0.3)).reshape(sizes)
    counts = sample_counts(mech, truth, n, rng)
    lam = counts / counts.sum()
    cells = truth.size
    beta = np.full(sizes, prior_records(cells, n) / (cells * n))
    ref = reference_map(dense, as_f(lam), as_f(beta))
    best = objective(dense, ref, as_f(lam), as_f(beta))
    for iterations in (1, 3, 10, 40):
        pi = iterative_bayesian_update(op, lam, max_iter=iterations, tol=0.0, pseudo=beta).estimate
        z, g, _ = _state(op, pi, lam, beta)
        bound = penalised_gap(op, lam, z, pi, g, beta)
        true_gap = best - objective(dense, as_f(pi), as_f(lam), as_f(beta))
        frank_wolfe = float(np.max(g + beta / pi)) - 1.0 - float(beta.sum())
        assert true_gap - 1e-12 <= bound <= frank_wolfe + 1e-15
