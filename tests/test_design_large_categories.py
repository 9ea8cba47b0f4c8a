"""Exact designs refuse up front, with the reason, what their size rule predicts would compute for minutes (20 columns,
four with 150-309 categories, all epsilons different); auto stays within its work budget there and meets every eps_i.
With equal epsilons the exact LP is over the classes of identical columns, small: computed exactly."""

from __future__ import annotations

import numpy as np
import pytest

from optrr_engine.budget import MAX_SEARCH_SECONDS, SEARCH_DESIGNS, distribute_budget
from optrr_engine.designs import run_design
from optrr_engine.designs import work as cost
from optrr_engine.designs.auto import BOUND_SHARE, DEFAULT_BUDGET
from optrr_engine.designs.optimal_lp import MAX_LP_SECONDS, check_lp_size
from optrr_engine.errors import TooLargeError

LARGE = [309, 309, 300, 150, 2, 2, 3, 2, 2, 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2]
#: Epsilons (or budget weights) all different: no two columns share (a_i, eps_i), so the exact LP is over the 2^k
#: patterns (with shared ones it is over their classes, and small: test_equal_epsilons_make_the_large_request_exact).
DISTINCT = [1.0 + 0.01 * i for i in range(len(LARGE))]


def test_large_categories_raise_the_predicted_lp_cost():
    assert cost.lp_seconds(20, 309) > MAX_LP_SECONDS >= cost.lp_seconds(20, 2)
    assert cost.lp_seconds(18, 309) == pytest.approx(cost.LARGE_CATEGORY_FACTOR * cost.lp_seconds(18))


def test_optimal_refuses_with_the_reason():
    with pytest.raises(TooLargeError, match="too large for the exact design.*bin the columns"):
        run_design("optimal", LARGE, DISTINCT)
    with pytest.raises(TooLargeError, match="columns 1, 2, 3, 4 have 50"):
        check_lp_size(LARGE)
    with pytest.raises(TooLargeError, match="columns 1, 2, 3, 4 have 50"):
        check_lp_size(LARGE, DISTINCT)


def test_optimal_budget_search_refuses_up_front():
    with pytest.raises(TooLargeError, match="too large for the exact design"):
        distribute_budget("optimal", LARGE, DISTINCT, 3.0)
    # k = 18 with a large column: one LP is allowed, a search of them is not
    sizes = LARGE[:18]
    assert check_lp_size(sizes) <= MAX_LP_SECONDS
    assert SEARCH_DESIGNS * check_lp_size(sizes) > MAX_SEARCH_SECONDS
    with pytest.raises(TooLargeError, match="budget mode"):
        distribute_budget("optimal", sizes, DISTINCT[:18], 3.0)


def test_small_exact_requests_are_still_allowed():
    assert check_lp_size([2] * 20) <= MAX_LP_SECONDS
    assert SEARCH_DESIGNS * check_lp_size([2] * 19) <= MAX_SEARCH_SECONDS
    d = run_design("optimal", [309, 2, 3], [1.0, 1.0, 1.0])
    assert d.info["certified_gap"] < 1e-6


def test_auto_skips_the_exact_lp_it_cannot_afford_with_large_categories():
    sizes = LARGE[:17]  # LP predicted 2.7 s without the factor (fits), 8 s with it (measured 4.7 s)
    design = run_design("auto", sizes, DISTINCT[:17])
    names = [c["design"] for c in design.info["candidates"]]
    assert "optimal" not in names
    assert cost.lp_seconds(17, 309) > DEFAULT_BUDGET * (1.0 - BOUND_SHARE)


def test_equal_epsilons_make_the_large_request_exact():
    """With equal epsilons (or budget weights) the 20 columns fall into 5 classes of identical (a_i, eps_i): the
    exact LP is over their 540 count vectors, predicted within the limits, and auto reaches the exact optimum with
    its dual certificate; the budget search of the exact design is allowed."""
    from optrr_engine.designs.optimal_lp import lp_shape

    eps = [1.0] * len(LARGE)
    assert lp_shape(LARGE, eps) == (5, 540)
    assert check_lp_size(LARGE, eps) <= MAX_LP_SECONDS
    exact = run_design("optimal", LARGE, eps)
    assert exact.info["certified_gap"] < 1e-6
    auto = run_design("auto", LARGE, eps)
    assert auto.info["design"] == "optimal"
    assert auto.overall_epsilon <= exact.overall_epsilon * (1 + 1e-9)
    found = distribute_budget("optimal", LARGE, eps, 3.0)
    assert found.design.mechanism.overall_epsilon() <= 3.0 * (1 + 1e-9)


def test_auto_meets_every_epsilon_on_the_large_request():
    eps = np.ones(len(LARGE))
    design = run_design("auto", LARGE, eps)
    achieved = design.mechanism.attribute_epsilons()
    assert np.all(achieved <= eps)
    assert np.allclose(achieved, eps, rtol=1e-9)
    assert all(c.get("predicted_seconds", 0.0) <= DEFAULT_BUDGET for c in design.info["candidates"])


def test_block_plans_and_the_lower_bound_count_the_large_categories_too():
    """auto's block products and its subset lower bound predict their LPs with the same slowdown as the exact LP
    (one cost rule; a reviewer found 1.26 s predicted for a 16-column block of 309 categories, 3.78 s by lp_seconds)."""
    from optrr_engine.designs import work

    assert work.block_seconds(16, 309) == work.lp_seconds(16, 309) > work.block_seconds(16)
    assert work.blocks_seconds([(16, 309), (2, 309)]) == work.lp_seconds(16, 309) + work.PAIR
