"""Every design checked against brute-force dense matrices on small domains."""

import numpy as np
import pytest

from optrr_engine.dense import dense_epsilons, dense_matrix
from optrr_engine.designs import METHODS, run_design
from optrr_engine.errors import InfeasibleError, TooLargeError


def random_cases(seed, count, kmax=4, classes=False):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        k = int(rng.integers(1, kmax + 1))
        sizes = rng.integers(2, 5, k)
        while np.prod(sizes) > 400:
            sizes = rng.integers(2, 4, k)
        eps = rng.uniform(0.3, 5.0, k)
        if classes:  # at most three templates of (a, eps)
            templates = rng.integers(0, 3, k)
            sizes, eps = sizes[templates % k], eps[templates % k]
        yield sizes, eps


@pytest.mark.parametrize("method", METHODS)
def test_design_matches_dense_brute_force(method):
    checked = 0
    seed = sum(map(ord, method))  # stable across processes (str hash is randomised)
    for sizes, eps in random_cases(seed, 25, classes=(method == "classes")):
        try:
            d = run_design(method, sizes, eps)
        except InfeasibleError:
            assert method == "family"
            continue
        m = dense_matrix(d.mechanism)
        np.testing.assert_allclose(m.sum(axis=0), 1.0, atol=1e-12)  # columns: P(. | x) sums to 1
        overall, per = dense_epsilons(m, sizes)
        assert abs(overall - d.overall_epsilon) < 1e-9
        np.testing.assert_allclose(per, d.attribute_epsilons, atol=1e-9)
        assert d.mechanism.self_check().ok
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("method", ["kronecker", "optimal", "family"])
def test_exact_designs_meet_requested_epsilons(method):
    for sizes, eps in random_cases(7, 20):
        try:
            d = run_design(method, sizes, eps)
        except InfeasibleError:
            continue
        np.testing.assert_allclose(d.attribute_epsilons, eps, rtol=1e-9, atol=1e-9)
        assert not d.exceeds_request()


def test_dense_refuses_large_domains():
    d = run_design("kronecker", [10] * 4, [1.0] * 4)
    with pytest.raises(TooLargeError):
        dense_matrix(d.mechanism)


def test_marginal_matches_dense_marginal():
    sizes = np.array([2, 3, 2, 3])
    for method in ("optimal", "heuristic", "kronecker"):
        d = run_design(method, sizes, [1.0, 2.0, 0.7, 1.5])
        full = dense_matrix(d.mechanism)
        from optrr_engine.dense import enumerate_records

        rec = enumerate_records(sizes)
        for subset in ([1], [0, 2], [3, 1], [0, 1, 2]):
            marg = d.mechanism.marginal(subset)
            m_small = dense_matrix(marg)
            sub_rec = enumerate_records(sizes[subset])
            # P(y_A | x) summed over y outside A, for x with a fixed rest (x_rest = 0)
            for xi, x_sub in enumerate(sub_rec):
                x_full = np.zeros(len(sizes), dtype=int)
                x_full[subset] = x_sub
                col = int(np.flatnonzero((rec == x_full).all(axis=1))[0])
                for yi, y_sub in enumerate(sub_rec):
                    rows = (rec[:, subset] == y_sub).all(axis=1)
                    assert abs(full[rows, col].sum() - m_small[yi, xi]) < 1e-12


def test_products_match_dense():
    from optrr_engine.designs.product import grouped_design, joint_grr_clusters

    sizes = np.array([2, 3, 2, 3, 2])
    eps = np.array([1.0, 0.5, 2.0, 1.2, 0.8])
    groups = [[0, 3], [1, 2, 4]]
    for mech in (grouped_design("optimal", sizes, eps, groups), grouped_design("heuristic", sizes, eps, groups)):
        overall, per = dense_epsilons(dense_matrix(mech), sizes)
        assert abs(overall - mech.overall_epsilon()) < 1e-9
        np.testing.assert_allclose(per, mech.attribute_epsilons(), atol=1e-9)
    clusters = joint_grr_clusters(sizes, [1.5, 2.0], groups)
    overall, per = dense_epsilons(dense_matrix(clusters), sizes)
    assert abs(overall - 3.5) < 1e-9 and abs(clusters.overall_epsilon() - 3.5) < 1e-9
    np.testing.assert_allclose(per, clusters.attribute_epsilons(), atol=1e-9)
