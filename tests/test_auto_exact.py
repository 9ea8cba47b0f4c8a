"""auto: deterministic (work budget, not the clock), never discards a verified optimum, relative tolerances."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optrr_engine.designs import run_design
from optrr_engine.errors import InputError
from optrr_engine.tolerance import REL_TOL

# issue 11: the exact optimum landed 1.2e-12 above auto's reduced target and was discarded (18.70 vs 15.79)
ISSUE_SIZES = [5, 2, 6, 6, 2, 2, 2, 4]
ISSUE_EPS = [
    4.672959894312338,
    1.9065769966208999,
    0.5539930353349793,
    4.5332111557743335,
    1.0987088697210772,
    5.300130608163945,
    9.557626409477416,
    9.728668454433253,
]


def test_auto_keeps_the_verified_optimum_of_the_issue_case():
    auto = run_design("auto", ISSUE_SIZES, ISSUE_EPS)
    opt = run_design("optimal", ISSUE_SIZES, ISSUE_EPS)
    assert opt.overall_epsilon == pytest.approx(15.787661, abs=1e-6)
    assert auto.overall_epsilon <= opt.overall_epsilon * (1 + 1e-9)
    assert np.all(auto.attribute_epsilons <= np.asarray(ISSUE_EPS) * (1 + REL_TOL))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 8).flatmap(
        lambda k: st.tuples(
            st.lists(st.integers(2, 6), min_size=k, max_size=k),
            st.lists(st.floats(0.05, 10.0), min_size=k, max_size=k),
        )
    )
)
def test_auto_is_never_worse_than_optimal_for_small_k(case):
    sizes, eps = case
    auto = run_design("auto", sizes, eps)
    opt = run_design("optimal", sizes, eps)
    assert auto.overall_epsilon <= opt.overall_epsilon * (1 + 1e-9)
    assert np.all(auto.attribute_epsilons <= np.asarray(eps) * (1 + REL_TOL))
    assert not auto.exceeds_request()


@pytest.mark.parametrize("k", [40, 400])
def test_auto_is_deterministic(k):
    rng = np.random.default_rng(k)
    sizes, eps = rng.integers(2, 6, k), rng.uniform(0.5, 8.0, k)
    first = run_design("auto", sizes, eps)
    again = run_design("auto", sizes, eps)
    assert json.dumps(first.mechanism.to_dict()) == json.dumps(again.mechanism.to_dict())
    assert first.info["design"] == again.info["design"]
    assert first.info["lower_bound"] == again.info["lower_bound"]


def test_a_larger_budget_never_gives_a_worse_design():
    rng = np.random.default_rng(7)
    sizes, eps = rng.integers(2, 6, 60), rng.uniform(0.5, 8.0, 60)
    small = run_design("auto", sizes, eps, budget=0.5)
    default = run_design("auto", sizes, eps)
    assert default.overall_epsilon <= small.overall_epsilon * (1 + 1e-9)


@pytest.mark.parametrize("budget", [-5.0, 0.0, float("nan"), float("inf")])
def test_auto_refuses_a_bad_budget(budget):
    with pytest.raises(InputError, match="finite positive"):
        run_design("auto", [3, 4], [1.0, 1.0], budget=budget)


def test_tiny_heuristic_raise_is_reported():
    """1.8e-10 raised to 4.9e-10: an absolute tolerance of 1e-9 used to hide it."""
    sizes, eps = [3, 3, 4], [1.0413386698646026e-10, 2.1302696630122098e-10, 1.8072149698289174e-10]
    d = run_design("heuristic", sizes, eps)
    assert d.attribute_epsilons[2] > 2 * eps[2]  # the raise, recomputed from the mechanism
    assert d.exceeds_request()
    assert [c["attribute"] for c in d.epsilon_changes() if c["achieved"] > c["requested"]] == [2]


@pytest.mark.parametrize("method", ["auto", "optimal", "kronecker", "heuristic", "classes"])
def test_smallest_accepted_epsilon_designs_and_below_is_refused(method):
    """At 1e-10 a method gives a correct design or says in one line that it cannot resolve it."""
    from optrr_engine.errors import OptRRError

    try:
        d = run_design(method, [3, 4], [1e-10, 1.0])
    except OptRRError as exc:
        assert method in ("optimal", "classes") and "numerically" in str(exc) and "\n" not in str(exc)
    else:
        assert abs(d.attribute_epsilons[0] - 1e-10) <= 1e-13 and not d.exceeds_request()
    with pytest.raises(InputError, match="smallest accepted is 1e-10"):
        run_design(method, [3, 4], [1e-11, 1.0])


def test_budget_mode_with_optimal_reaches_a_reachable_target():
    from optrr_engine.budget import distribute_budget

    target = 9.15056931124669
    weights = [0.9915980994303093, 0.9507188521077379, 2.367150964124595]
    r = distribute_budget("optimal", [3, 2, 5], weights, target)
    assert r.design.overall_epsilon <= target * (1 + REL_TOL)
    assert r.design.overall_epsilon >= target * (1 - 1e-5)  # the bisection's own relative tolerance
    # independent check: the eps_i found are in the ratio of the weights, the largest weight at the scale
    eps = r.design.requested_epsilons
    np.testing.assert_allclose(eps / eps.max(), np.asarray(weights) / max(weights), rtol=1e-12)
