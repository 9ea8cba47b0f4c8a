"""Predicted error of the default estimate (optrr_engine.utility.default_error): its components against a
dense brute force, its limits, and simulation of the default estimator under the prior it assumes."""

from __future__ import annotations

import numpy as np
import pytest

from optrr_engine.dense import dense_matrix
from optrr_engine.designs import run_design
from optrr_engine.estimation import estimate_marginal
from optrr_engine.estimation.estimate import prior_records
from optrr_engine.utility import predicted_error
from optrr_engine.utility.default_error import component_dimensions, prior_spread
from optrr_engine.utility.predicted import marginal_eigenvalues


def test_components_add_up_to_the_dense_unbiased_variance():
    """sum_T D_T / (d n lambda_T^2) is the trace of M^-1 (diag(lambda) - lambda lambda^T) M^-T / n at the
    uniform table, computed here from the dense matrix of the marginal mechanism."""
    mech = run_design("optimal", [2, 3, 4], [1.0, 1.5, 0.8]).mechanism
    n = 700
    for attrs in [(0,), (1, 2), (0, 1, 2)]:
        m = dense_matrix(mech.marginal(list(attrs)))
        d = m.shape[0]
        pi = np.full(d, 1.0 / d)
        lam = m @ pi
        minv = np.linalg.inv(m)
        trace = np.trace(minv @ (np.diag(lam) - np.outer(lam, lam)) @ minv.T) / n
        eig = marginal_eigenvalues(mech, attrs, None)
        dims = component_dimensions([mech.sizes[a] for a in attrs])
        assert dims.sum() == d  # the components split the table's d dimensions
        assert np.sum(dims[1:] / (d * n * eig[1:] ** 2)) == pytest.approx(trace, rel=1e-9)


def test_prior_spread_is_the_dirichlet_variance_of_a_contrast():
    """Var of the contrast (e_0 - e_1) / sqrt(2) of a Dirichlet(alpha) table, drawn by numpy."""
    d, n = 6, 400
    alpha = 1.0 + prior_records(d, n) / d
    draws = np.random.default_rng(3).dirichlet(np.full(d, alpha), size=200_000)
    contrast = (draws[:, 0] - draws[:, 1]) / np.sqrt(2.0)
    assert prior_spread(d, n) == pytest.approx(contrast.var(), rel=0.02)


CASES = [
    ("kronecker", [5], [1.0], 200, (0,)),
    ("kronecker", [5], [4.0], 2000, (0,)),
    ("kronecker", [5], [0.3], 100, (0,)),
    ("kronecker", [3, 4], [0.5, 0.5], 500, (0, 1)),
    ("kronecker", [3, 4], [2.0, 2.0], 2000, (0, 1)),
    ("optimal", [2, 3, 2], [0.5, 0.5, 0.5], 300, (0, 1, 2)),
    ("optimal", [2, 3, 2], [1.5, 1.5, 1.5], 3000, (0, 1)),
    ("optimal", [2, 2, 2], [0.5, 0.5, 0.5], 1000, (0, 1)),  # the pair's association is erased (eigenvalue 0)
]


@pytest.mark.parametrize(("method", "sizes", "eps", "n", "attrs"), CASES)
def test_prediction_matches_the_default_estimator_under_its_prior(method, sizes, eps, n, attrs):
    """Truth drawn from the default estimate's own Dirichlet prior, n rows released through the marginal
    mechanism (dense), estimated by the default estimator: the mean AVD over 300 draws is within 12 % of the
    prediction (the prediction's Gaussian shrinkage measured 0.999-1.11 times the simulation in these cases;
    the simulation's standard error is 1-3 %)."""
    mech = run_design(method, sizes, eps).mechanism
    m = dense_matrix(mech.marginal(list(attrs)))
    d = m.shape[0]
    alpha = 1.0 + prior_records(d, n) / d
    rng = np.random.default_rng(1)
    shape = tuple(int(sizes[a]) for a in attrs)
    avds = []
    for _ in range(300):
        truth = rng.dirichlet(np.full(d, alpha))
        counts = rng.multinomial(n, m @ truth)
        est = estimate_marginal(mech, list(attrs), counts.reshape(shape, order="F")).estimate
        avds.append(0.5 * np.abs(est.reshape(-1, order="F") - truth).sum())
    (pred,) = predicted_error(mech, n, {"sets": [tuple(attrs)]}).marginals
    assert pred.expected_avd_default == pytest.approx(np.mean(avds), rel=0.12)


def test_many_rows_give_the_unbiased_prediction_and_erased_components_the_prior_spread():
    mech = run_design("optimal", [2, 3, 2], [1.5, 1.5, 1.5]).mechanism
    for me in predicted_error(mech, 10**12, {"orders": [1, 2, 3]}).marginals:
        assert me.expected_avd_default == pytest.approx(me.expected_avd, rel=1e-4)
    # three binary attributes at a low whole-record epsilon: every pair's association is erased
    erased = run_design("optimal", [2, 2, 2], [0.5, 0.5, 0.5]).mechanism
    (pair,) = predicted_error(erased, 10**12, {"sets": [(0, 1)]}).marginals
    assert not pair.identifiable and pair.expected_avd == np.inf
    # only the association (D = 1) is left unknown; Dirichlet(2) on 4 cells: tau^2 = 1 / (4 * 9)
    assert pair.expected_avd_default == pytest.approx(0.5 * np.sqrt(2 / np.pi) * np.sqrt(4 / 36), rel=1e-4)
