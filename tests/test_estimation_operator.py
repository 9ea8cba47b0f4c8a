"""The structured inverse and covariance (docs/math.md §6) against dense matrices on small domains."""

import numpy as np
import pytest

from optrr_engine.dense import dense_matrix
from optrr_engine.designs import METHODS, run_design
from optrr_engine.designs.product import grouped_design, joint_grr_clusters
from optrr_engine.errors import InfeasibleError, InputError
from optrr_engine.estimation import StructuredOperator, estimate_from_counts
from optrr_engine.estimation.covariance import covariance_matrix, linear_variance, variance
from optrr_engine.estimation.operator import merge_components, split_components
from optrr_engine.estimation.spectrum import eigenvalues_from_patterns, patterns_from_eigenvalues

SIZES = [3, 2, 4]
EPS = [1.0, 2.0, 0.7]


def mechanisms():
    out = {}
    for m in METHODS:
        try:
            out[m] = run_design(m, SIZES, EPS).mechanism
        except InfeasibleError:
            pass
    out["clusters"] = joint_grr_clusters(SIZES, [3.0, 0.7], [[0, 1], [2]])
    out["grouped_optimal"] = grouped_design("optimal", SIZES, EPS, [[0, 2], [1]])
    big = run_design("optimal", [2, 3, 2, 2, 3], [0.5, 1.0, 1.5, 0.8, 2.0]).mechanism
    out["five_attribute_marginal"] = big.marginal([4, 1, 2])
    return out


MECHS = mechanisms()


def as_f(table):
    """Table (axis i = attribute i) to the dense matrices' record order (attribute 0 fastest)."""
    return table.ravel(order="F")


@pytest.mark.parametrize("name", sorted(MECHS))
def test_apply_and_solve_match_dense(name):
    mech = MECHS[name]
    sizes = tuple(int(a) for a in mech.sizes)
    dense = dense_matrix(mech)
    op = StructuredOperator.from_mechanism(mech)
    rng = np.random.default_rng(3)
    x = rng.random(sizes)
    np.testing.assert_allclose(as_f(op.apply(x)), dense @ as_f(x), atol=1e-13)
    np.testing.assert_allclose(as_f(op.solve(x)), np.linalg.solve(dense, as_f(x)), atol=1e-10)
    eig_dense = np.sort(np.linalg.eigvalsh(dense))
    # every dense eigenvalue is one of the lambda_T, with multiplicity prod_{i in T}(a_i - 1)
    mult = [int(np.prod([sizes[i] - 1 for i in range(len(sizes)) if (t >> i) & 1])) for t in range(1 << len(sizes))]
    np.testing.assert_allclose(np.sort(np.repeat(op.eigenvalues, mult)), eig_dense, atol=1e-12)


@pytest.mark.parametrize("name", sorted(MECHS))
def test_inverse_pattern_coefficients_and_squares(name):
    mech = MECHS[name]
    dense = dense_matrix(mech)
    op = StructuredOperator.from_mechanism(mech)
    inv = np.linalg.inv(dense)
    x = np.random.default_rng(4).random(op.sizes)
    np.testing.assert_allclose(
        as_f(op.apply_spectrum(x, op.squared_inverse_spectrum())), (inv * inv) @ as_f(x), rtol=1e-9, atol=1e-10
    )


@pytest.mark.parametrize("name", sorted(MECHS))
def test_covariance_matches_dense(name):
    mech = MECHS[name]
    sizes = tuple(int(a) for a in mech.sizes)
    dense = dense_matrix(mech)
    inv = np.linalg.inv(dense)
    rng = np.random.default_rng(5)
    counts = rng.integers(50, 400, sizes)
    n = counts.sum()
    lam = counts / n
    op = StructuredOperator.from_mechanism(mech)
    pi = op.solve(lam)
    pi_f = inv @ as_f(lam)
    cov_dense = (inv @ np.diag(as_f(lam)) @ inv - np.outer(pi_f, pi_f)) / n
    order = np.arange(pi.size).reshape(sizes, order="F").ravel()  # C-order cell -> dense index
    np.testing.assert_allclose(covariance_matrix(op, lam, pi, n), cov_dense[np.ix_(order, order)], atol=1e-14)
    np.testing.assert_allclose(as_f(variance(op, lam, pi, n)), np.diag(cov_dense), rtol=1e-8, atol=1e-16)
    w = rng.random(sizes)
    np.testing.assert_allclose(linear_variance(op, lam, pi, n, w), as_f(w) @ cov_dense @ as_f(w), rtol=1e-8)


def test_eigen_transform_round_trip_and_grr():
    sizes = [4]
    p, q = 0.7, 0.1  # GRR on 4 values: lambda_const = 1, lambda_contrast = p - q
    lam = eigenvalues_from_patterns(sizes, np.array([p, q]))
    np.testing.assert_allclose(lam, [1.0, p - q])
    np.testing.assert_allclose(patterns_from_eigenvalues(sizes, lam), [p, q])


def test_split_merge_round_trip_with_batch_axes():
    x = np.random.default_rng(1).random((3, 2, 4, 5))
    np.testing.assert_allclose(merge_components(split_components(x, 3), 3), x)


def test_singular_marginal_refuses_inversion_but_ibu_works():
    # eigenvalue 0 on the contrast of attribute 0: P(y | x) does not depend on x_0 there
    from optrr_engine.blocks import PatternBlock
    from optrr_engine.mechanism import Mechanism

    a = 3
    block = PatternBlock([a, 2], np.log(np.array([0.3, 0.3, 0.2, 0.2]) / 1.0), normalize=True)
    mech = Mechanism.single(block)
    op = StructuredOperator.from_mechanism(mech)
    assert np.min(np.abs(op.eigenvalues)) < 1e-12
    counts = np.array([[10, 20], [15, 5], [7, 9]])
    with pytest.raises(InputError):
        estimate_from_counts(mech, counts, method="unbiased")
    est = estimate_from_counts(mech, counts, method="ibu")
    assert abs(est.estimate.sum() - 1) < 1e-12 and est.estimate.min() >= 0
    assert est.info["unbiased_available"] is False
