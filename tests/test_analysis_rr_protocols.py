"""RR-Clusters (Algorithm 1), RR-Adjustment (Algorithm 2, Example 1), dependence measures, RR-Joint."""

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from optrr_engine.analysis import (
    abs_pearson,
    cluster_attributes,
    cluster_mechanism,
    cluster_product,
    cramers_v,
    dependence_matrix,
    plan_rr_clusters,
    product_distribution,
    rr_adjustment,
    rr_joint_mechanism,
)
from optrr_engine.errors import InputError

# --- Algorithm 1 on a constructed example ------------------------------------------------------------------


def dep_matrix():
    d = np.zeros((4, 4))
    for (i, j), v in {(0, 1): 0.9, (1, 2): 0.85, (2, 3): 0.6, (0, 3): 0.4, (0, 2): 0.1, (1, 3): 0.1}.items():
        d[i, j] = d[j, i] = v
    return d


def test_algorithm1_skips_pairs_over_tv_and_takes_the_next():
    sizes = [2, 2, 5, 2]
    res = cluster_attributes(dep_matrix(), sizes, tv=10, td=0.5)
    assert res.clusters == [[0, 1], [2, 3]]
    actions = [(t["action"], t["clusters"]) for t in res.trace]
    assert actions == [
        ("merge", [[0], [1]]),  # 0.9, 4 combinations
        ("skip", [[0, 1], [2]]),  # cluster dependence max(0.1, 0.85) = 0.85, 20 > 10 combinations
        ("merge", [[2], [3]]),  # next element 0.6, 10 combinations
        ("skip", [[0, 1], [2, 3]]),  # 0.85, 40 combinations; list exhausted
    ]
    assert res.trace[1]["dependence"] == pytest.approx(0.85)


def test_algorithm1_stops_below_td():
    sizes = [2, 2, 5, 2]
    res = cluster_attributes(dep_matrix(), sizes, tv=8, td=0.5)
    # merge {0,1}; 0.85 (20) and 0.6 (10) exceed Tv = 8; next is 0.4 < Td: stop
    assert res.clusters == [[0, 1], [2], [3]]
    assert [t["action"] for t in res.trace] == ["merge", "skip", "skip"]
    assert cluster_attributes(dep_matrix(), sizes, tv=1000, td=0.95).clusters == [[0], [1], [2], [3]]
    assert cluster_attributes(dep_matrix(), sizes, tv=1000, td=0.0).clusters == [[0, 1, 2, 3]]


# --- dependence measures -----------------------------------------------------------------------------------


def test_cramers_v_and_pearson():
    rng = np.random.default_rng(1)
    t = rng.integers(5, 50, (3, 4))
    chi2 = chi2_contingency(t, correction=False)[0]
    assert cramers_v(t) == pytest.approx(np.sqrt(chi2 / t.sum() / 2))
    x = rng.integers(0, 5, 400)
    y = (x + rng.integers(0, 3, 400)) % 5
    assert abs_pearson(x, y) == pytest.approx(abs(np.corrcoef(x, y)[0, 1]))
    codes = np.stack([x, y, rng.integers(0, 2, 400)], axis=1)
    d = dependence_matrix(codes, [5, 5, 2], measure="auto", ordinal=[True, True, False])
    assert d[0, 1] == pytest.approx(abs(np.corrcoef(x, y)[0, 1]))
    assert d[0, 2] == pytest.approx(cramers_v(np.histogram2d(x, codes[:, 2], bins=[5, 2])[0]))
    assert np.allclose(d, d.T) and np.all(np.diag(d) == 0)


# --- RR-Clusters plans ---------------------------------------------------------------------------------------


def clustered_data(n, rng):
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n))
    c = rng.integers(0, 4, n)
    d = np.where(rng.random(n) < 0.8, c % 2, rng.integers(0, 2, n))
    return np.stack([a, b, c, d], axis=1), [3, 3, 4, 2]


def test_plan_from_raw_data_says_it_is_outside_the_guarantee():
    rng = np.random.default_rng(2)
    codes, sizes = clustered_data(3000, rng)
    eps = [1.0, 1.0, 1.5, 0.5]
    plan = plan_rr_clusters(codes, sizes, eps, tv=20, td=0.2)
    assert plan.clusters == [[0, 1], [2, 3]]
    assert plan.first_round is None and "outside the epsilon guarantee" in plan.notes[0]
    assert plan.release_epsilon == pytest.approx(sum(eps))  # joint GRR with eps_C = sum of eps_i
    assert plan.total_epsilon == pytest.approx(sum(eps))


def test_plan_from_a_randomized_first_round_composes_the_budget():
    rng = np.random.default_rng(3)
    codes, sizes = clustered_data(5000, rng)
    eps = [1.0, 1.0, 1.5, 0.5]
    plan = plan_rr_clusters(
        codes, sizes, eps, tv=20, td=0.1, dependence_source="randomized", first_round_epsilons=[1.0] * 4, rng=rng
    )
    assert plan.clusters == [[0, 1], [2, 3]]
    assert plan.first_round.overall_epsilon() == pytest.approx(4.0)
    assert plan.total_epsilon == pytest.approx(4.0 + sum(eps))
    assert "sequential composition" in plan.notes[0]
    with pytest.raises(InputError):
        plan_rr_clusters(codes, sizes, eps, tv=20, td=0.1, dependence_source="randomized")


def test_optimized_design_inside_clusters_spends_the_same_cluster_budget():
    sizes, eps, clusters = [3, 3, 4, 2], [1.0, 1.0, 1.5, 0.5], [[0, 1], [2, 3]]
    grr = cluster_mechanism(sizes, eps, clusters, "joint_grr")
    opt = cluster_mechanism(sizes, eps, clusters, "optimal")
    assert opt.overall_epsilon() <= grr.overall_epsilon() + 1e-9
    assert opt.overall_epsilon() == pytest.approx(grr.overall_epsilon(), rel=1e-4)
    # the optimized cluster design splits the cluster budget in proportion to the requested eps_i
    e = opt.attribute_epsilons()
    assert e[2] / e[3] == pytest.approx(3.0, rel=1e-6) and e[0] == pytest.approx(e[1], rel=1e-9)


# --- RR-Adjustment ---------------------------------------------------------------------------------------------


def example1_records():
    return np.array([[0, 0]] * 4 + [[1, 0]] * 2 + [[1, 1]] * 4)


def test_rr_adjustment_reproduces_example_1():
    y = example1_records()
    half = np.array([0.5, 0.5])
    adj, steps = rr_adjustment(y, [2, 2], [[0], [1]], [half, half], max_iter=20000, tol=1e-4, record_sweeps=1)
    # first Adjust_weights on attribute 1: (s1, s2) = (4/10, 6/10) -> w = 1/8 (records 1-4), 1/12 (records 5-10)
    np.testing.assert_allclose(steps[0], [1 / 8] * 4 + [1 / 12] * 6)
    # side effect: the weighted marginal of attribute 2 becomes (2/3, 1/3)
    np.testing.assert_allclose([steps[0][y[:, 1] == v].sum() for v in (0, 1)], [2 / 3, 1 / 3])
    # limit: first 4 records 1/8, next 2 weight 0, last 4 records 1/8 -> joint (1/2, 0; 0, 1/2)
    joint = adj.distribution(y, [2, 2], [0, 1])
    np.testing.assert_allclose(joint, [[0.5, 0.0], [0.0, 0.5]], atol=2e-4)
    np.testing.assert_allclose(adj.weights[:4], 1 / 8, atol=1e-4)
    np.testing.assert_allclose(adj.weights[4:6], 0, atol=1e-4)
    assert adj.converged


def test_rr_adjustment_matches_targets_of_clusters():
    rng = np.random.default_rng(4)
    codes = np.stack([rng.integers(0, a, 2000) for a in (2, 3, 4)], axis=1)
    t01 = rng.dirichlet(np.ones(6)).reshape(2, 3)
    t2 = rng.dirichlet(np.ones(4))
    adj = rr_adjustment(codes, [2, 3, 4], [[0, 1], [2]], [t01, t2], tol=1e-12)
    assert adj.converged
    np.testing.assert_allclose(adj.distribution(codes, [2, 3, 4], [0, 1]), t01, atol=1e-10)
    np.testing.assert_allclose(adj.distribution(codes, [2, 3, 4], [2]), t2, atol=1e-10)
    with pytest.raises(InputError):
        rr_adjustment(codes, [2, 3, 4], [[2]], [np.array([0.5, 0.5])])


# --- products and RR-Joint ------------------------------------------------------------------------------------


def test_cluster_product_and_joint_grr():
    c01 = np.arange(6.0).reshape(2, 3) / 15
    c2 = np.array([0.25, 0.75])
    got = cluster_product([2, 1], [[0, 1], [2]], [c01, c2])
    np.testing.assert_allclose(got, np.outer(c2, c01.sum(axis=0)))
    np.testing.assert_allclose(product_distribution([c2, [0.5, 0.5]]), np.outer(c2, [0.5, 0.5]))
    mech = rr_joint_mechanism([2, 3, 2], 2.0)
    assert mech.overall_epsilon() == pytest.approx(2.0)
    lx = mech.log_pattern_probs()
    assert np.allclose(lx[1:], lx[1]) and lx[0] - lx[1] == pytest.approx(2.0)
