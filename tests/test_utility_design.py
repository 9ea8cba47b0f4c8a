"""Utility-optimal design: exact accounting from the mechanism, optimality against an independent cvxpy
formulation over the full pattern table, symmetric reduction equal to the general problem."""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pytest

from optrr_engine.budget import distribute_budget
from optrr_engine.dense import dense_epsilons, dense_matrix
from optrr_engine.utility import predicted_error
from optrr_engine.utility.optimal_design import utility_design


def _cvxpy_optimum(sizes, target, sets, caps=None):
    """Independent formulation (cvxpy, a test dependency): variables X_S over all 2^k patterns,
    c <= X_S <= c e^E, sum t_S X_S = 1, objective sum_A (1/N_A) sum_{T subset A} d_T lambda_T^-2 / #sets with
    lambda = dense eigen-transform; a cap on attribute i bounds both ratios of P(y_i = x_i) = sum_{S without i}
    t_S X_S and P(y_i = one given other value) = sum_{S with i} t_S X_S / (a_i - 1) by e^cap."""
    import cvxpy as cp
    k = len(sizes)
    masks = np.arange(1 << k)
    bits = (masks[:, None] >> np.arange(k)) & 1
    a = np.asarray(sizes, float)
    t = np.prod(np.where(bits, a - 1, 1), axis=1)
    x = cp.Variable(1 << k)
    c = cp.Variable()
    terms = []
    for A in sets:
        n_a = np.prod(a[list(A)])
        for r in range(1, len(A) + 1):
            for T in combinations(A, r):
                in_t = np.isin(np.arange(k), T)
                coef = np.prod(np.where(bits, np.where(in_t, -1.0, a - 1), 1.0), axis=1)
                d = np.prod(a[list(T)] - 1)
                terms.append(d / n_a * cp.power(coef @ x, -2))
    rows = [x >= c, x <= np.exp(target) * c, t @ x == 1]
    for i, cap in enumerate(caps or []):
        if cap is not None:
            same, other = (t * (bits[:, i] == 0)) @ x, (t * (bits[:, i] == 1)) @ x / (a[i] - 1)
            rows += [same <= np.exp(cap) * other, other <= np.exp(cap) * same]
    prob = cp.Problem(cp.Minimize(sum(terms) / len(sets)), rows)
    prob.solve(solver="CLARABEL")
    return prob.value


def assert_exact_accounting_and_objective(mech, info, sizes, target, spec):
    """Epsilons equal a brute-force dense matrix (within the target), and the design's objective is n times the mean
    predicted squared error of the needed marginals, computed from the mechanism itself (uniform prior)."""
    total, eps = dense_epsilons(dense_matrix(mech), sizes)
    assert total <= target * (1 + 1e-9)
    assert total == pytest.approx(mech.overall_epsilon(), rel=1e-9)
    assert np.allclose(eps, mech.attribute_epsilons(), rtol=1e-9)
    pe = predicted_error(mech, 1000, spec)
    mean_sq = np.mean([m.expected_squared_error for m in pe.marginals])
    assert mean_sq * 1000 == pytest.approx(info["objective"], rel=1e-6)


@pytest.mark.parametrize(("sizes", "target"), [([2, 2, 2], 1.0), ([2, 3, 4], 2.0), ([3, 2, 2, 3], 1.5)])
def test_matches_independent_formulation_and_dense_accounting(sizes, target):
    sets = [(i,) for i in range(len(sizes))] + list(combinations(range(len(sizes)), 2))
    mech, info = utility_design(sizes, target, {"sets": sets})
    ref = _cvxpy_optimum(sizes, target, sets)
    assert info["objective"] == pytest.approx(ref, rel=1e-5)
    assert info["dual_bound"] <= info["objective"] * (1 + 1e-12)
    assert_exact_accounting_and_objective(mech, info, sizes, target, {"sets": sets})


def test_symmetric_reduction_equals_general_problem():
    sizes = [2, 3, 2, 3, 2]
    sets = [(i,) for i in range(5)] + list(combinations(range(5), 2))
    _, general = utility_design(sizes, 2.0, {"sets": sets})
    _, classes = utility_design(sizes, 2.0, {"orders": [1, 2]})
    assert classes["grid_cells"] < general["grid_cells"]
    assert classes["objective"] == pytest.approx(general["objective"], rel=1e-5)


@pytest.mark.parametrize(("k", "target"), [(3, 1.5), (5, 1.0)])
def test_odd_binary_pairs_identifiable_and_better_than_other_designs(k, target):
    mech, _ = utility_design([2] * k, target, {"orders": [1, 2]})
    ours = predicted_error(mech, 10_000, {"orders": [1, 2]})
    assert ours.non_identifiable == []
    kron = distribute_budget("kronecker", [2] * k, [1.0] * k, target).design.mechanism
    theirs = predicted_error(kron, 10_000, {"orders": [1, 2]})
    assert ours.score() < theirs.score()  # the default estimate's predicted error
    assert ours.unbiased_score() < theirs.unbiased_score()  # the criterion the design minimises


def test_caps_are_respected_and_recomputed():
    caps = [0.3, None, None, 0.2]
    mech, info = utility_design([2, 3, 4, 3], 2.0, {"orders": [1, 2]}, caps=caps)
    eps = mech.attribute_epsilons()
    assert eps[0] <= 0.3 * (1 + 1e-6) and eps[3] <= 0.2 * (1 + 1e-6)
    assert mech.overall_epsilon() <= 2.0
    assert info["relative_gap"] < 1e-3


def test_large_k_by_classes_block():
    mech, info = utility_design([2] * 20 + [3] * 5, 2.0, {"orders": [1, 2]})
    assert mech.parts[0][1].kind == "classes"
    assert mech.overall_epsilon() <= 2.0 * (1 + 1e-12)
    assert info["relative_gap"] < 1e-4
    res = predicted_error(mech, 10_000, {"orders": [1]})
    assert res.non_identifiable == []


def _enumerated_order_weights(sizes, orders):
    """w_T of "all marginals of these orders" by listing every needed set A and every T inside it (the
    definition in optrr_engine.utility.objective), summed by the class composition of T."""
    sizes = np.asarray(sizes)
    classes = list(dict.fromkeys(sizes.tolist()))  # detect_structure numbers the classes by first appearance
    k = len(sizes)
    needed = [A for o in orders for A in combinations(range(k), o)]
    acc: dict = {}
    for A in needed:
        n_a = float(np.prod(sizes[list(A)]))
        for r in range(1, len(A) + 1):
            for T in combinations(A, r):
                tau = tuple(int(np.sum(sizes[list(T)] == c)) for c in classes)
                acc[tau] = acc.get(tau, 0.0) + float(np.prod(sizes[list(T)] - 1.0)) / n_a / len(needed)
    return acc


@pytest.mark.parametrize(
    ("sizes", "orders"),
    [([2, 3, 2, 4, 3, 2], [1, 2]), ([2, 2, 3, 3, 3, 5, 2], [1, 2, 3]), ([4, 2, 4, 2, 3], [2, 3]), ([3] * 6, [3])],
)
def test_order_weights_equal_the_enumerated_sum_over_needed_sets(sizes, orders):
    from optrr_engine.utility.objective import detect_structure, order_weights

    cs = detect_structure(sizes, np.full(len(sizes), np.inf), True)
    types, weights = order_weights(cs, orders)
    expected = _enumerated_order_weights(sizes, orders)
    got = {tuple(int(x) for x in t): w for t, w in zip(types, weights, strict=True) if w > 0}
    assert set(got) == set(expected)
    for tau, w in expected.items():
        assert got[tau] == pytest.approx(w, rel=1e-12)


def test_named_tables_over_too_many_columns_are_refused_before_any_work(monkeypatch):
    """Named tables over 24 of 40 columns need one class per column they span, 2^24 grid cells: refused at once
    with the reason and the way out, before any grid is built."""
    from optrr_engine.errors import TooLargeError
    from optrr_engine.utility import objective

    def never(*_args, **_kwargs):
        raise AssertionError("the refusal must come before a grid is built")

    monkeypatch.setattr(objective.ClassStructure, "grid", property(never))
    sets = [(i, i + 1) for i in range(0, 24, 2)]
    with pytest.raises(TooLargeError, match=r"named tables over at most 22 columns; these span 24 .* whole orders"):
        utility_design([2] * 40, 3.0, {"sets": sets})


def test_named_tables_release_the_other_columns_as_noise():
    """Columns no needed table uses are released as uniform noise (eps 0), and the tables get the optimum over
    their own columns: equal to the independent formulation over all 2^6 patterns (nothing is lost), within every
    cap, including caps on the unused columns (they failed before); among 23 columns as on the 4 used ones alone."""
    sizes, sets, target = [2, 3, 2, 2, 3, 2], [(0, 1), (2,)], 1.5
    caps = [0.9, None, None, 0.01, 1e-3, None]
    mech, info = utility_design(sizes, target, {"sets": sets}, caps=caps)
    assert info["noise_columns"] == 3
    assert info["objective"] == pytest.approx(_cvxpy_optimum(sizes, target, sets, caps), rel=1e-5)
    assert_exact_accounting_and_objective(mech, info, sizes, target, {"sets": sets})
    eps = mech.attribute_epsilons()
    assert np.all(eps[3:] == 0.0) and eps[0] <= 0.9 * (1 + 1e-6)

    wide, wide_info = utility_design([2] * 23, 2.0, {"sets": [(0, 1), (20, 22)]})
    _, alone = utility_design([2] * 4, 2.0, {"sets": [(0, 1), (2, 3)]})
    assert wide_info["noise_columns"] == 19 and wide_info["grid_cells"] == 16
    assert wide_info["objective"] == pytest.approx(alone["objective"], rel=1e-9)
    assert wide.overall_epsilon() <= 2.0


def test_pooled_structure_with_one_class_per_pool_is_the_exact_reduction():
    from optrr_engine.utility.objective import detect_structure, order_weights
    from optrr_engine.utility.pooled import PooledStructure

    cs = detect_structure([2, 3, 2, 4, 3, 2, 4], np.full(7, np.inf), True)
    types, _ = order_weights(cs, [1, 2, 3])
    pooled = PooledStructure(cs, np.arange(cs.class_sizes.size))
    assert np.array_equal(pooled.grid, cs.grid)
    assert np.allclose(pooled.grid_probabilities(pooled.grid), cs.grid_probabilities(cs.grid), rtol=1e-12, atol=0)
    assert np.allclose(pooled.eigen_rows(types, pooled.grid), cs.eigen_rows(types, cs.grid), rtol=0, atol=1e-13)


@pytest.mark.parametrize(("orders", "target"), [([1], 1.0), ([1, 2], 2.0), ([1, 2], 6.0)])
def test_pooled_design_is_a_valid_restriction_close_to_the_exact_optimum(monkeypatch, orders, target):
    """Forced to pool (as 77 columns of 11 sizes must be), the design is a pooled block whose accounting equals
    the dense matrix, whose objective is what the mechanism's own predicted error gives, and which is no better
    than the exact optimum (a restriction) and close to it."""
    from optrr_engine.utility import optimal_design, pooled

    sizes = [2, 2, 3, 3, 4, 4, 2]
    _, exact = utility_design(sizes, target, {"orders": orders})
    monkeypatch.setattr(optimal_design, "POOLING_ENTRIES", 0)
    monkeypatch.setattr(optimal_design, "MAX_GRID_CELLS", 1 << 5)  # one class per column only up to 5 columns
    monkeypatch.setattr(pooled, "POOLED_CELLS", 30)  # classes of 3, 2, 2 columns: pools (the 2s) and (the 3s and 4s)
    mech, info = utility_design(sizes, target, {"orders": orders})
    assert mech.parts[0][1].kind == "pooled" and info["pools"] == 2 and sum(info["pool_columns"]) == 7
    assert_exact_accounting_and_objective(mech, info, sizes, target, {"orders": orders})
    assert info["objective"] >= exact["objective"] * (1 - 1e-6)
    assert info["objective"] <= exact["objective"] * 1.25
    assert info["relative_gap"] <= 1e-4


def test_many_columns_of_many_sizes_are_pooled():
    """77 survey columns of 2-12 categories (the GUI's wide-file benchmark) would need a grid of 4e9 cells (it used
    to run for hours, then was refused): solved over pools of neighbouring sizes, exactly at the target."""
    sizes = np.random.default_rng(77).integers(2, 13, 77)
    mech, info = utility_design(sizes, 3.0, {"orders": [1]})
    assert mech.parts[0][1].kind == "pooled" and info["full_grid_cells"] > 1e9
    assert 2 <= info["pools"] <= 11 and sum(info["pool_columns"]) == 77
    assert 3.0 * (1 - 1e-6) <= mech.overall_epsilon() <= 3.0
    assert info["relative_gap"] <= 1e-4 and "pools of neighbouring sizes" in info["solver_status"]
    ours = predicted_error(mech, 10_000, {"orders": [1]})
    assert np.mean([m.expected_squared_error for m in ours.marginals]) * 10_000 == pytest.approx(
        info["objective"], rel=1e-6
    )
    kron = distribute_budget("kronecker", sizes, [1.0] * 77, 3.0).design.mechanism
    assert ours.unbiased_score() < 0.2 * predicted_error(kron, 10_000, {"orders": [1]}).unbiased_score()


def test_whole_orders_up_to_22_columns_fall_back_to_one_class_per_column_not_pools(monkeypatch):
    """When the classes' grid would not fit but the columns are few enough for one class per column (per-axis
    transforms), that exact problem is solved rather than a pooled restriction (16 columns of 16 sizes, 3-way
    tables: pooled, the solver stalled at a certified gap of 390)."""
    from optrr_engine.utility import optimal_design

    sizes, spec = [2, 3, 2, 4, 3, 2, 4], {"orders": [1, 2]}
    _, exact = utility_design(sizes, 2.0, spec)
    monkeypatch.setattr(optimal_design, "POOLING_ENTRIES", 0)  # the classes' grid "does not fit"
    mech, info = utility_design(sizes, 2.0, spec)
    assert mech.parts[0][1].kind != "pooled" and "pools" not in info
    assert info["grid_cells"] == 1 << 7
    assert info["objective"] == pytest.approx(exact["objective"], rel=1e-5)


def test_the_solve_stops_at_counted_work_not_at_a_clock(monkeypatch):
    """The decomposition's stop is a count of work, so a slow or loaded machine gets the same design: with the
    clock running a thousand times faster (every reading an hour later), the result is identical."""
    from optrr_engine.utility import optimal_design

    sizes = list(range(2, 14))  # one class per column, 4,096 cells: decomposition from the Kronecker start
    budget = 0.05
    monkeypatch.setattr(optimal_design, "WORK_BUDGET", budget)
    calm_mech, calm = optimal_design.utility_design(sizes, 2.0, {"orders": [1, 2]})
    assert calm["solver_work"] > budget and "its work budget of 0.05 reference seconds" in calm["solver_status"]
    assert "stopped before the tolerance" in calm["solver_status"] and calm["solver_iterations"] >= 2
    hours = iter(range(10**9))
    monkeypatch.setattr(optimal_design.time, "perf_counter", lambda: 3600.0 * next(hours))
    slow_mech, slow = optimal_design.utility_design(sizes, 2.0, {"orders": [1, 2]})
    assert slow["solver_iterations"] == calm["solver_iterations"] and slow["objective"] == calm["objective"]
    assert slow_mech.overall_epsilon() == calm_mech.overall_epsilon() <= 2.0
    assert np.array_equal(slow_mech.attribute_epsilons(), calm_mech.attribute_epsilons())


def test_the_solve_reports_its_gap_and_can_be_cancelled_between_steps():
    from optrr_engine.errors import Cancelled
    from optrr_engine.tasks import TaskControl

    heard: list = []

    def progress(fraction, message):
        heard.append((fraction, message))

    def cancel():
        return any("certified gap" in m for _, m in heard[-1:]) and len(heard) > 3

    with pytest.raises(Cancelled):
        utility_design(list(range(2, 14)), 2.0, {"orders": [1, 2]}, ctl=TaskControl(progress, cancel))
    steps = [(f, m) for f, m in heard if "certified gap" in m]
    assert len(steps) >= 3 and all(0.1 <= f <= 0.95 for f, _ in steps)  # within the solve's share of the task
    assert all(re.search(r"certified gap \d\.\de[-+]\d+ after \d+ steps", m) for _, m in steps)


def test_cancelling_recommend_during_the_utility_solve_stops_it_and_is_not_a_failed_candidate():
    """Cancelled is an engine error too: recommend must pass it on, not rank the utility design as failed."""
    from optrr_engine.errors import Cancelled
    from optrr_engine.tasks import TaskControl
    from optrr_engine.utility.recommend import recommend

    heard: list = []
    with pytest.raises(Cancelled):
        recommend(
            list(range(2, 14)),
            2.0,
            include_sampling=False,
            ctl=TaskControl(lambda f, m: heard.append(m), lambda: any("certified gap" in m for m in heard)),
        )
    assert heard[-1].startswith("convex solve: certified gap")
