"""The maximum-likelihood estimator (method "ibu", SQUAREM-accelerated EM): certified convergence on hard cases,
a proper distribution, consistency in simulation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.designs import run_design
from optrr_engine.estimation import DEFAULT_METHOD, METHODS, StructuredOperator, estimate_from_counts
from optrr_engine.estimation import iterative_bayesian_update as ibu
from optrr_engine.estimation.nonnegative import _state, certified_gap


def loglik(op, pi, lam):
    z = op.apply(pi)
    return float(np.sum(lam[lam > 0] * np.log(z[lam > 0])))


def sample_counts(mech, pi, n, rng):
    sizes = tuple(int(a) for a in mech.sizes)
    records = np.stack(np.unravel_index(rng.choice(pi.size, n, p=pi.ravel()), sizes), axis=1)
    out = mech.sample(records, rng)
    counts = np.zeros(sizes)
    np.add.at(counts, tuple(out.T), 1)
    return counts


def test_default_is_smoothed_and_maximum_likelihood_stays_available():
    assert DEFAULT_METHOD == "map" and "ibu" in METHODS


@pytest.mark.parametrize(
    ("method", "sizes", "eps"),
    [
        ("kronecker", [4, 3, 5], [0.1, 0.1, 0.1]),  # near-singular: smallest eigenvalue ~ 1e-5
        ("kronecker", [2, 2, 2, 2, 2], [0.2] * 5),
        ("optimal", [3, 3, 3], [0.3, 0.3, 0.3]),
    ],
)
def test_converges_with_a_true_certificate_on_hard_cases(method, sizes, eps):
    """Sparse truth (most cells 0) under weak mechanisms: the iteration converges, and the certified gap
    really bounds the distance to the maximum (checked against a run to a 1000x tighter tolerance)."""
    mech = run_design(method, sizes, eps).mechanism
    op = StructuredOperator.from_mechanism(mech)
    rng = np.random.default_rng(3)
    pi = np.zeros(sizes)
    pi.flat[rng.choice(pi.size, 3, replace=False)] = [0.5, 0.3, 0.2]
    counts = sample_counts(mech, pi, 2000, rng)
    lam = counts / counts.sum()
    assert np.min(np.abs(op.eigenvalues)) < 0.05
    res = ibu(op, lam, tol=1e-6, max_iter=20000)
    assert res.converged and res.gap <= 1e-6
    best = ibu(op, lam, tol=1e-9, max_iter=200000, start=res.estimate)
    assert best.converged
    assert 0.0 <= loglik(op, best.estimate, lam) - loglik(op, res.estimate, lam) <= res.gap + 1e-12
    assert res.estimate.min() >= 0 and res.estimate.sum() == pytest.approx(1.0, abs=1e-12)


def test_zero_cells_and_empty_observed_cells():
    """Observed cells with count 0 and a truth concentrated on one cell."""
    mech = run_design("optimal", [3, 4], [1.0, 1.0]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    counts = np.zeros((3, 4))
    counts[0, 0] = 50
    counts[1, 2] = 3
    est = estimate_from_counts(mech, counts, method="ibu")
    assert est.method == "ibu" and est.info["converged"]
    assert est.estimate.min() >= 0 and est.estimate.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.info["log_likelihood_gap_bound"] <= est.info["log_likelihood_gap_tolerance"]
    # KKT: the gradient ratio is <= 1 everywhere (up to the certified gap)
    _, g, _ = _state(op, est.estimate, counts / counts.sum())
    assert g.max() <= 1.0 + 1e-3


def test_certificate_is_zero_at_the_interior_optimum_and_positive_away():
    mech = run_design("optimal", [3, 2, 4], [2.0, 3.0, 2.5]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    pi = np.random.default_rng(2).dirichlet(np.full(24, 5.0)).reshape(3, 2, 4)
    lam = op.apply(pi)
    z, g, _ = _state(op, pi, lam)
    assert certified_gap(op, lam, z, g) <= 1e-12
    uniform = np.full(pi.shape, 1 / 24)
    z, g, ll = _state(op, uniform, lam)
    gap = certified_gap(op, lam, z, g)
    assert gap >= loglik(op, pi, lam) - ll - 1e-12 and gap > 0


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    eps=st.floats(0.05, 3.0),
    n=st.integers(1, 400),
)
def test_always_a_distribution(seed, eps, n):
    rng = np.random.default_rng(seed)
    mech = run_design("kronecker", [3, 4], [eps, eps]).mechanism
    counts = rng.multinomial(n, rng.dirichlet(np.ones(12))).reshape(3, 4)
    est = estimate_from_counts(mech, counts, method="ibu", ibu_max_iter=300)
    assert np.all(np.isfinite(est.estimate)) and est.estimate.min() >= 0
    assert est.estimate.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.info["converged"] == (est.info["log_likelihood_gap_bound"] <= est.info["log_likelihood_gap_tolerance"])


def test_consistent_in_simulation():
    """The L1 error to the truth shrinks towards 0 as n grows (about 1/sqrt(n)), including zero cells."""
    mech = run_design("optimal", [3, 4], [1.0, 1.5]).mechanism
    truth = np.array([[0.3, 0.1, 0.0, 0.05], [0.0, 0.2, 0.1, 0.0], [0.15, 0.0, 0.0, 0.1]])
    rng = np.random.default_rng(11)
    errors = {}
    for n in (1000, 100_000):
        errs = []
        for _ in range(5):
            est = estimate_from_counts(mech, sample_counts(mech, truth, n, rng), method="ibu")
            assert est.info["converged"]
            errs.append(np.abs(est.estimate - truth).sum())
        errors[n] = float(np.mean(errs))
    assert errors[100_000] < errors[1000] / 4
    assert errors[100_000] < 0.03
