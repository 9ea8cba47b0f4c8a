"""Hypothesis property tests of the invariants every design must keep."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optrr_engine.blocks import table_math
from optrr_engine.designs import run_design
from optrr_engine.errors import InfeasibleError

cases = st.integers(2, 6).flatmap(
    lambda k: st.tuples(
        st.lists(st.integers(2, 5), min_size=k, max_size=k),
        st.lists(st.floats(0.2, 8.0, allow_nan=False), min_size=k, max_size=k),
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases, st.sampled_from(["kronecker", "optimal", "heuristic", "family"]))
def test_mass_one_and_reported_epsilons_are_recomputed(case, method):
    sizes, eps = case
    try:
        d = run_design(method, sizes, eps)
    except InfeasibleError:
        return
    sizes = np.asarray(sizes)
    lx = d.mechanism.log_pattern_probs()
    assert abs(np.expm1(table_math.log_mass(sizes, lx))) < 1e-10
    np.testing.assert_allclose(table_math.attribute_epsilons(sizes, lx), d.attribute_epsilons, atol=1e-9)
    hi, lo = table_math.log_max_min(lx)
    assert abs((hi - lo) - d.overall_epsilon) < 1e-9
    report = d.to_json_dict()
    np.testing.assert_allclose(report["attribute_epsilons"], d.mechanism.attribute_epsilons())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_optimal_le_heuristic_le_kronecker_at_the_heuristics_achieved_epsilons(case):
    sizes, eps = case
    h = run_design("heuristic", sizes, eps)
    achieved = h.attribute_epsilons
    o = run_design("optimal", sizes, achieved)
    k = run_design("kronecker", sizes, achieved)
    tol = 1e-7 * max(1.0, k.overall_epsilon)
    assert o.overall_epsilon <= h.overall_epsilon + tol
    assert o.overall_epsilon <= k.overall_epsilon + tol
    # heuristic <= Kronecker holds in almost every case but not all: see test_heuristic_vs_kronecker below
    try:
        f = run_design("family", sizes, achieved)
    except InfeasibleError:
        return
    assert o.overall_epsilon - tol <= f.overall_epsilon <= h.overall_epsilon + tol


@settings(max_examples=40, deadline=None)
@given(cases, st.data())
def test_marginals_keep_attribute_epsilons(case, data):
    sizes, eps = case
    d = run_design(data.draw(st.sampled_from(["kronecker", "optimal", "heuristic"])), sizes, eps)
    k = len(sizes)
    subset = data.draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
    marg = d.mechanism.marginal(subset)
    np.testing.assert_allclose(marg.attribute_epsilons(), d.attribute_epsilons[subset], atol=1e-9)
    assert abs(marg.log_mass()) < 1e-10
    assert marg.overall_epsilon() <= d.overall_epsilon + 1e-9  # a marginal is never less private


def test_heuristic_vs_kronecker_at_achieved_epsilons():
    """Finding: Algorithm 3 is below Kronecker in >= 99% of random cases, but not always."""
    rng = np.random.default_rng(0)
    worse = 0
    n = 400
    for _ in range(n):
        k = int(rng.integers(2, 7))
        h = run_design("heuristic", rng.integers(2, 6, k), rng.uniform(0.5, 8.0, k))
        worse += h.overall_epsilon > h.attribute_epsilons.sum() + 1e-9
    assert worse <= 0.01 * n
    # a pinned counterexample: step 8 lowers eps_3 from 3.69 to 1.2, and the result is less private
    # than Kronecker at the achieved levels (3.846 > 1.2 + 1.342 + 1.2 = 3.742)
    h = run_design("heuristic", [4, 5, 4], [1.2, 1.342, 3.69])
    achieved = h.attribute_epsilons
    assert abs(achieved[2] - 1.2) < 1e-9
    assert h.overall_epsilon > achieved.sum() + 0.1
    assert run_design("optimal", [4, 5, 4], achieved).overall_epsilon < achieved.sum()
