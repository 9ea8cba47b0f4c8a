"""The vectorised 1-way predicted error (optrr_engine.utility.predicted.one_way_errors) and the mechanism's
1-way channels (Mechanism.one_way_log_probs): equal to the per-marginal computation and to a brute-force dense
computation (the whole joint channel matrix summed down to one attribute, inverted with numpy)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrr_engine.blocks import IndependentBlock
from optrr_engine.dense import dense_matrix, enumerate_records
from optrr_engine.designs import run_design
from optrr_engine.mechanism import Mechanism
from optrr_engine.utility import IndependentPrior, TablePrior, UniformPrior, predicted_error_with_coverage
from optrr_engine.utility.predicted import error_of_marginal, marginal_eigenvalues

METHODS = ["kronecker", "optimal", "heuristic", "family", "classes"]
SIZES, EPS = [2, 3, 4, 3], [0.5, 1.0, 1.5, 1.0]


def dense_one_way(mech, i: int) -> np.ndarray:
    """M_i[y_i, x_i]: the joint channel matrix summed over the other attributes' outputs, for the input record
    of all zeros elsewhere (brute force over every record)."""
    m = dense_matrix(mech)  # M[y, x], rows and columns in enumerate_records order
    records = enumerate_records(mech.sizes)
    a = int(mech.sizes[i])
    out = np.zeros((a, a))
    for x in range(a):
        col = np.flatnonzero((records[:, i] == x) & (np.delete(records, i, axis=1) == 0).all(axis=1))[0]
        for y in range(a):
            out[y, x] = m[records[:, i] == y, col].sum()
    return out


def dense_error(channel: np.ndarray, pi: np.ndarray, n: float, data_rows=None) -> tuple[float, float, float]:
    """(expected squared error, expected AVD, max cell sd) of the unbiased estimate, by dense linear algebra."""
    lam = channel @ pi
    inv = np.linalg.inv(channel)
    cov = inv @ (np.diag(lam) - np.outer(lam, lam)) @ inv.T / n
    var = np.diag(cov).copy()
    if data_rows is not None:
        var = np.clip(var - pi * (1 - pi) / data_rows, 0.0, None)
    sd = np.sqrt(var)
    return float(var.sum()), float(0.5 * np.sqrt(2 / np.pi) * sd.sum()), float(sd.max())


@pytest.mark.parametrize("method", METHODS)
def test_one_way_channels_match_the_dense_matrix(method):
    mech = run_design(method, SIZES, EPS).mechanism
    logs = mech.one_way_log_probs()
    assert logs.shape == (len(SIZES), 2)
    for i, a in enumerate(SIZES):
        channel = dense_one_way(mech, i)
        p, q = np.exp(logs[i])
        expected = np.full((a, a), q) + np.eye(a) * (p - q)
        np.testing.assert_allclose(channel, expected, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(logs[i], mech.marginal([i]).log_pattern_probs(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["kronecker", "heuristic"])
def test_one_way_channels_of_a_wide_mechanism_match_the_marginals(method):
    """k = 77 (the survey-sized file): every attribute's channel equals its induced marginal's, and a rebuilt
    mechanism gives the same (the kept value is not a stale one)."""
    rng = np.random.default_rng(77)
    sizes = [int(a) for a in rng.integers(2, 13, 77)]
    eps = [float(e) for e in rng.uniform(0.02, 2.0, 77)]
    mech = run_design(method, sizes, eps).mechanism
    logs = mech.one_way_log_probs()
    fresh = Mechanism.from_dict(mech.to_dict())
    for i in range(77):
        np.testing.assert_allclose(logs[i], fresh.marginal([i]).log_pattern_probs(), rtol=1e-12, atol=1e-12)
    logs[0] = 0.0  # a copy: the mechanism's kept channels are not changed through it
    np.testing.assert_allclose(mech.one_way_log_probs()[0], fresh.marginal([0]).log_pattern_probs(), rtol=1e-12)


def _priors(sizes):
    rng = np.random.default_rng(3)
    one_way = [rng.dirichlet(np.ones(a)) for a in sizes]
    tables = {(1,): rng.dirichlet(np.ones(sizes[1]))}
    return [UniformPrior(), IndependentPrior(one_way), TablePrior(tables, len(sizes))]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("given_data", [False, True])
def test_vectorised_equals_per_marginal_and_dense(method, given_data):
    mech = run_design(method, SIZES, EPS).mechanism
    n = 4000
    for prior in _priors(SIZES):
        res = predicted_error_with_coverage(mech, n, {"orders": [1, 2]}, prior, given_data=given_data)
        one = [m for m in res.marginals if len(m.attributes) == 1]
        assert [m.attributes for m in one] == [(i,) for i in range(len(SIZES))]
        for me in one:
            (i,) = me.attributes
            pi = prior.marginal(mech.sizes, (i,))
            old = error_of_marginal(
                mech.sizes, (i,), marginal_eigenvalues(mech, (i,), None), pi, n, n if given_data else None
            )
            for field in (
                "expected_avd", "expected_avd_default", "expected_squared_error", "max_cell_sd", "min_abs_eigenvalue",
                "rows",
            ):
                assert getattr(me, field) == pytest.approx(getattr(old, field), rel=1e-9, abs=1e-15)
            assert (me.cells, me.identifiable, me.reason) == (old.cells, old.identifiable, old.reason)
            sq, avd, top = dense_error(dense_one_way(mech, i), pi, n, n if given_data else None)
            assert me.expected_squared_error == pytest.approx(sq, rel=1e-8, abs=1e-15)
            assert me.expected_avd == pytest.approx(avd, rel=1e-8, abs=1e-15)
            assert me.max_cell_sd == pytest.approx(top, rel=1e-8, abs=1e-15)


def test_erased_and_never_reported_one_way_marginals():
    """An attribute at epsilon 0 is erased (its contrast eigenvalue is 0); coverage 0 means never reported; the
    other attributes are unaffected (their values equal those of a mechanism without the bad attribute)."""
    block = IndependentBlock.from_epsilons([3, 2, 4], [1.0, 1.0, 0.7])
    block.log_keep[1] = block.log_move[1] = np.log(0.5)  # a coin flip: the output says nothing about the input
    mech = Mechanism.single(block)
    coverage = {(0,): 1.0, (1,): 1.0, (2,): 0.0}
    res = predicted_error_with_coverage(mech, 1000, {"orders": [1]}, coverage=lambda a: coverage[tuple(a)])
    first, erased, never = res.marginals
    assert first.identifiable and np.isfinite(first.expected_avd)
    assert not erased.identifiable and erased.reason.startswith("zero eigenvalue") and erased.rows == 1000
    assert not never.identifiable and never.reason == "never reported" and never.rows == 0.0
    # the default estimate of an erased marginal is the prior's guess (finite); one never reported has none
    assert np.isfinite(erased.expected_avd_default) and erased.expected_avd_default > first.expected_avd_default
    assert never.expected_avd_default == np.inf
    alone = run_design("kronecker", [3], [1.0]).mechanism
    (ref,) = predicted_error_with_coverage(alone, 1000, {"orders": [1]}).marginals
    assert first.expected_avd == pytest.approx(ref.expected_avd, rel=1e-12)


def test_too_few_rows_is_named_as_before():
    mech = run_design("kronecker", [5, 5], [0.01, 0.01]).mechanism
    res = predicted_error_with_coverage(mech, 3, {"orders": [1]})
    old = error_of_marginal(mech.sizes, (0,), marginal_eigenvalues(mech, (0,), None), np.full(5, 0.2), 3)
    assert not old.identifiable
    assert (res.marginals[0].identifiable, res.marginals[0].reason) == (False, old.reason)


def test_order_of_mixed_marginals_is_kept():
    mech = run_design("heuristic", SIZES, EPS).mechanism
    sets = [(2, 3), (1,), (0, 1, 2), (3,), (0,)]
    res = predicted_error_with_coverage(mech, 500, {"sets": sets})
    assert [m.attributes for m in res.marginals] == sets


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(2, 7), st.floats(0.05, 4.0)), min_size=2, max_size=6),
    method=st.sampled_from(["kronecker", "heuristic"]),
    n=st.integers(1, 100_000),
)
def test_random_designs_match_the_per_marginal_computation(data, method, n):
    sizes, eps = [a for a, _ in data], [e for _, e in data]
    mech = run_design(method, sizes, eps).mechanism
    res = predicted_error_with_coverage(mech, n, {"orders": [1]})
    for me in res.marginals:
        (i,) = me.attributes
        old = error_of_marginal(
            mech.sizes, (i,), marginal_eigenvalues(mech, (i,), None), np.full(sizes[i], 1 / sizes[i]), n
        )
        assert me.expected_squared_error == pytest.approx(old.expected_squared_error, rel=1e-9)
        assert me.expected_avd == pytest.approx(old.expected_avd, rel=1e-9)
        assert me.identifiable == old.identifiable
