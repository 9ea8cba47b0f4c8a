"""Classes optimum (exact, certified) and the auto design (exact eps_i, never above, certified bound)."""

import numpy as np
import pytest

from optrr_engine.dense import dense_epsilons, dense_matrix
from optrr_engine.designs import run_design
from optrr_engine.designs.classes import ClassProblem
from optrr_engine.designs.lower_bounds import classes_rounding_bound
from optrr_engine.mechanism import Mechanism

CLASS_CASES = [
    ([3] * 6, [1.0] * 6),
    ([2] * 10, [0.7] * 10),
    ([3] * 3 + [2] * 4, [1.0] * 3 + [2.0] * 4),
    ([2] * 4 + [4] * 3 + [3] * 3, [0.8] * 4 + [1.5] * 3 + [3.0] * 3),
    ([2, 2, 5, 5, 5], [4.0, 4.0, 0.5, 0.5, 0.5]),
    ([3] * 5 + [3] * 5, [1.0] * 5 + [3.0] * 5),
]


@pytest.mark.parametrize("sizes,eps", CLASS_CASES)
def test_classes_equals_full_lp_and_is_certified(sizes, eps):
    c = run_design("classes", sizes, eps)
    o = run_design("optimal", sizes, eps)
    assert abs(c.overall_epsilon - o.overall_epsilon) < 1e-8
    np.testing.assert_allclose(c.attribute_epsilons, eps, atol=1e-9)
    assert c.info["lower_bound"] <= c.overall_epsilon + 1e-9
    assert c.overall_epsilon - c.info["lower_bound"] < 1e-8
    assert c.mechanism.self_check().ok


def test_classes_block_matches_dense_and_marginals():
    sizes, eps = [2, 2, 3, 3, 3], [1.5, 1.5, 0.8, 0.8, 0.8]
    mech = run_design("classes", sizes, eps).mechanism
    overall, per = dense_epsilons(dense_matrix(mech), sizes)
    assert abs(overall - mech.overall_epsilon()) < 1e-9
    np.testing.assert_allclose(per, mech.attribute_epsilons(), atol=1e-9)
    table = mech.log_pattern_probs()
    # every ordered pair and a few triples: marginals of positions of the same classes share one computation
    # (ClassBlock keeps them by the positions' classes), and each must still be its own positions' marginal
    import itertools

    subsets = [[0], *(list(p) for p in itertools.permutations(range(5), 2)), [4, 1, 3], [3, 2, 4], [0, 1, 2]]
    ((positions, block),) = mech.parts
    assert list(positions) == list(range(5)) and type(block).__name__ == "ClassBlock"
    for subset in subsets:
        got = block.marginal(subset).log_pattern_probs()
        from optrr_engine.blocks import PatternBlock

        want = PatternBlock(np.asarray(sizes), table, normalize=False).marginal(subset).log_pattern_probs()
        np.testing.assert_allclose(got, want, atol=1e-10)
    # serialisation round trip rebuilds exactly
    again = Mechanism.from_dict(mech.to_dict())
    np.testing.assert_allclose(again.log_pattern_probs(), table, atol=1e-12)


def test_classes_sampler_goodness_of_fit():
    from scipy.stats import chisquare

    sizes, eps = [2, 2, 3, 3], [1.0, 1.0, 2.0, 2.0]
    mech = run_design("classes", sizes, eps).mechanism
    rng = np.random.default_rng(12)
    n = 200_000
    x = np.array([[1, 0, 2, 1]] * n)
    y = mech.sample(x, rng)
    radix = np.array([1, 2, 4, 12])
    idx = (y * radix).sum(axis=1)
    observed = np.bincount(idx, minlength=36)
    from optrr_engine.dense import enumerate_records

    rec = enumerate_records(sizes)
    col = int(np.flatnonzero((rec == [1, 0, 2, 1]).all(axis=1))[0])
    expected = dense_matrix(mech)[:, col] * n
    assert chisquare(observed, expected).pvalue > 1e-3


def test_large_classes_are_exact_and_finite():
    c = run_design("classes", [3] * 10_000, [1.0] * 10_000)
    assert np.isfinite(c.overall_epsilon)
    np.testing.assert_allclose(c.attribute_epsilons, 1.0, atol=1e-9)
    assert c.overall_epsilon - c.info["lower_bound"] < 1e-8
    c3 = run_design("classes", [2] * 60 + [3] * 50 + [5] * 40, [1.0] * 60 + [2.0] * 50 + [0.7] * 40)
    np.testing.assert_allclose(c3.attribute_epsilons, [1.0] * 60 + [2.0] * 50 + [0.7] * 40, atol=1e-9)
    assert c3.overall_epsilon - c3.info["lower_bound"] < 1e-7 * c3.overall_epsilon


def test_dual_bound_never_exceeds_the_optimum():
    rng = np.random.default_rng(3)
    prob = ClassProblem([2, 3], [1.0, 2.5], [6, 5])
    opt = run_design("classes", [2] * 6 + [3] * 5, [1.0] * 6 + [2.5] * 5).overall_epsilon
    for _ in range(50):
        lam = rng.normal(size=2)
        assert prob.lower_bound(lam) <= opt + 1e-9


@pytest.mark.parametrize("k", [5, 14, 30, 100])
def test_auto_meets_every_epsilon_and_is_never_above(k):
    rng = np.random.default_rng(k)
    sizes, eps = rng.integers(2, 6, k), rng.uniform(1.0, 8.0, k)
    d = run_design("auto", sizes, eps)
    ach = d.attribute_epsilons
    assert np.all(np.abs(ach - eps) <= 1e-9) and np.all(ach <= eps)
    assert not d.exceeds_request()
    assert d.info["lower_bound"] <= d.overall_epsilon + 1e-9
    assert d.overall_epsilon <= eps.sum()  # never worse than Kronecker
    if k <= 16:
        assert d.info["design"] == "optimal" and d.overall_epsilon - d.info["lower_bound"] < 1e-8


@pytest.mark.parametrize("k", [30, 100])
def test_auto_never_above_the_heuristic_at_its_achieved_epsilons(k):
    rng = np.random.default_rng(1000 + k)
    sizes, eps = rng.integers(2, 6, k), rng.uniform(1.0, 8.0, k)
    h = run_design("heuristic", sizes, eps)
    d = run_design("auto", sizes, h.attribute_epsilons)
    assert d.overall_epsilon <= h.overall_epsilon + 1e-9


def test_rounding_bound_is_below_a_known_optimum():
    rng = np.random.default_rng(5)
    sizes, eps = rng.integers(2, 4, 12), rng.uniform(1.0, 4.0, 12)
    opt = run_design("optimal", sizes, eps).overall_epsilon
    bound, how = classes_rounding_bound(sizes, eps)  # unlimited work
    assert 0 < bound <= opt + 1e-9 and how


def test_chernoff_dual_bound_is_valid_and_strong_at_large_k():
    from optrr_engine.designs.lower_bounds import chernoff_dual_bound

    rng = np.random.default_rng(21)
    for k in (2, 5, 9, 13):
        sizes, eps = rng.integers(2, 6, k), rng.uniform(0.5, 8.0, k)
        opt = run_design("optimal", sizes, eps).overall_epsilon
        bound, _ = chernoff_dual_bound(sizes, eps)
        assert 0 < bound <= opt + 1e-9
    sizes, eps = rng.integers(2, 6, 1000), rng.uniform(1.0, 8.0, 1000)
    bound, _ = chernoff_dual_bound(sizes, eps)
    assert bound > 0.75 * run_design("heuristic", sizes, eps).overall_epsilon  # far above any subset bound


def test_extreme_epsilons_give_clear_errors_and_auto_still_designs():
    from optrr_engine.errors import OptRRError

    sizes, eps = [2, 2, 5, 5, 5], [49.0] * 5
    for method in ("optimal", "classes"):
        with pytest.raises(OptRRError, match="numerically"):
            run_design(method, sizes, eps)
    d = run_design("auto", sizes, eps)
    assert np.all(np.abs(d.attribute_epsilons - 49.0) <= 1e-9) and np.isfinite(d.overall_epsilon)


def test_budget_for_non_monotone_or_infeasible_methods():
    from optrr_engine.budget import distribute_budget
    from optrr_engine.errors import InfeasibleError

    sizes = [2, 6, 3, 11, 7, 3, 3, 2, 5, 2]
    with pytest.raises(InfeasibleError, match="cannot meet"):
        distribute_budget("family", sizes, [1] * 10, 10.0)  # family is infeasible below eps_i ~ 2.7 here
    r = distribute_budget("heuristic", sizes, [1] * 10, 10.0)  # non-monotone in the scale
    assert 9.99 <= r.design.overall_epsilon <= 10.0


def test_overall_epsilon_of_given_epsilons_per_design():
    from optrr_engine.budget import overall_epsilon

    sizes, eps = [3, 4, 2], [1.0, 2.0, 0.5]
    assert abs(overall_epsilon("kronecker", sizes, eps) - 3.5) < 1e-12
    assert overall_epsilon("optimal", sizes, eps) < overall_epsilon("kronecker", sizes, eps)


def test_auto_takes_the_cheaper_exact_optimum_first():
    """Identical attributes beyond ~15: the classes design (predicted 0.04 s) before the LP (its LP over the one
    class is small, but its design is a table of 2^k patterns: 0.57 s at k = 18), which is then not run; both are
    the exact optimum, so the whole-record epsilon is the LP's."""
    from optrr_engine.tolerance import eps_equal

    sizes, eps = [3] * 18, [0.5] * 18
    d = run_design("auto", sizes, eps)
    assert d.info["design"] == "classes"
    assert "optimal" not in [c["design"] for c in d.info["candidates"]]
    assert eps_equal(d.overall_epsilon, run_design("optimal", sizes, eps).overall_epsilon)
    assert d.overall_epsilon - d.info["lower_bound"] < 1e-8
    small = run_design("auto", [3] * 6, [0.5] * 6)  # the LP is the cheaper one here: run first, classes skipped
    assert small.info["design"] == "optimal"
    assert "classes" not in [c["design"] for c in small.info["candidates"]]
