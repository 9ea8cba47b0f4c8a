"""Budget mode's search for the scale c (optrr_engine.budget): every design returned fits the whole-record
target (recomputed from the mechanism), exact designs land within the stated gap below it with few design
evaluations, the scale agrees with a plain bisection, and jumps of non-monotone designs are still found."""

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optrr_engine.budget as budget
from optrr_engine.budget import REL_GAP, distribute_budget
from optrr_engine.designs import run_design
from optrr_engine.errors import InfeasibleError
from optrr_engine.tolerance import eps_within


def bisection_scale(method, sizes, weights, target, rel=1e-10):
    """Reference: plain bisection of the largest c in (0, target] with eps_total(c w) <= target (max w = 1)."""
    w = np.asarray(weights, dtype=float) / max(weights)
    lo, hi = 0.0, float(target)
    while hi - lo > rel * hi:
        mid = 0.5 * (lo + hi)
        if run_design(method, sizes, mid * w).overall_epsilon <= target:
            lo = mid
        else:
            hi = mid
    return lo


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(2, 4), min_size=2, max_size=4),
    data=st.data(),
    target=st.floats(0.3, 9.0),
    method=st.sampled_from(["optimal", "auto", "heuristic"]),
)
def test_result_fits_the_target_and_exact_designs_reach_it_within_the_gap(sizes, data, target, method):
    weights = data.draw(st.lists(st.floats(0.2, 3.0), min_size=len(sizes), max_size=len(sizes)))
    r = distribute_budget(method, sizes, weights, target)
    total = r.design.mechanism.overall_epsilon()  # recomputed from the mechanism itself
    assert eps_within(total, target)
    if method != "heuristic":  # continuous and non-decreasing in c: the search reaches the gap
        assert total >= target * (1 - REL_GAP)
        np.testing.assert_allclose(
            r.design.mechanism.attribute_epsilons(), r.scale * np.asarray(weights) / max(weights), rtol=1e-8
        )


@pytest.mark.parametrize(
    "method,sizes,weights,target",
    [
        ("optimal", [3, 2, 5], [0.99, 0.95, 2.37], 4.0),
        ("optimal", [2, 2, 2, 3], [1.0, 1.0, 1.0, 1.0], 1.0),
        ("auto", [4, 3, 2], [1.0, 0.5, 2.0], 2.5),
        ("classes", [2] * 5 + [3] * 4, [1.0] * 9, 2.0),
    ],
)
def test_exact_methods_agree_with_bisection_in_few_evaluations(method, sizes, weights, target):
    budget._remembered.cache_clear()
    r = distribute_budget(method, sizes, weights, target)
    ref = bisection_scale(method, sizes, weights, target)
    # a relative gap of 1e-6 in eps_total is at most ~1e-6 in ln c (d ln eps_total / d ln c >= ~1 here)
    assert abs(r.scale - ref) <= 2 * REL_GAP * ref
    assert r.evaluations <= 10  # the bisection to 1e-6 in c took 22-28 designs


def test_house_votes_shape_with_auto_is_an_exact_search():
    """17 columns of 2-3 categories, equal weights: auto is the classes optimum, so no scan (was 28 designs)."""
    sizes = [2] + [3] * 16
    for target in (1.0, 8.0):
        r = distribute_budget("auto", sizes, [1.0] * 17, target)
        assert r.design.info["design"] in budget.EXACT_DESIGNS
        assert eps_within(r.design.mechanism.overall_epsilon(), target)
        assert r.design.mechanism.overall_epsilon() >= target * (1 - REL_GAP)
        assert r.evaluations <= 10


@dataclass
class FakeDesign:
    """What the search reads of a design: its whole-record epsilon and info."""

    overall_epsilon: float
    info: dict = field(default_factory=dict)


def fake_designs(monkeypatch, total, info=lambda c: {}):
    """run_design of the budget module replaced by eps_total(c) = total(c), c = max eps_i (max w = 1)."""
    calls = []

    def run(method, sizes, eps, **_):
        c = float(np.max(eps))
        calls.append(c)
        return FakeDesign(total(c), info(c))

    monkeypatch.setattr(budget, "run_design", run)
    budget._remembered.cache_clear()
    return calls


def test_a_fitting_stretch_above_the_first_crossing_is_found_by_the_scan(monkeypatch):
    """Non-monotone (like the heuristic): 3c, except 0.9 on [0.45, 0.48]. The largest c that fits is 0.48."""
    fake_designs(monkeypatch, lambda c: 0.9 if 0.45 <= c <= 0.48 else 3 * c)
    r = distribute_budget("heuristic", [2, 2, 2, 2], [1.0] * 4, 1.0)
    assert r.design.overall_epsilon <= 1.0
    assert abs(r.scale - 0.48) <= 1e-5


def test_auto_without_its_exact_optimum_scans_up_to_the_certified_cut(monkeypatch):
    """auto's non-exact result may jump: after the root at 1/3 the grid is scanned up to the scale where a
    certified lower bound (here 1.8 c <= eps_total everywhere) exceeds the target, and the stretch that fits
    at [0.45, 0.48] is found; nothing is tried where the bound already excludes a fit."""
    total = lambda c: 0.9 if 0.45 <= c <= 0.48 else 3 * c  # noqa: E731
    calls = fake_designs(monkeypatch, total, lambda c: {"design": "blocks of 2", "lower_bound": 1.8 * c})
    monkeypatch.setattr(
        "optrr_engine.designs.lower_bounds.best_lower_bound", lambda sizes, eps, work: (1.8 * max(eps), "test")
    )
    r = distribute_budget("auto", [2, 2, 2, 2], [1.0] * 4, 1.0)
    assert abs(r.scale - 0.48) <= 1e-5 and r.design.overall_epsilon <= 1.0
    assert not [c for c in calls if 0.6 < c < 1.0]  # the grid points 0.68 and 0.83 lie above the cut (~0.57)
    # the same design kind with a monotone total: the root is the answer, the scan tries at most the grid points
    # between it and the cut (two here), not the 12-per-decade grid from the top
    calls = fake_designs(monkeypatch, lambda c: 3 * c, lambda c: {"design": "blocks of 2", "lower_bound": 2.9 * c})
    monkeypatch.setattr(
        "optrr_engine.designs.lower_bounds.best_lower_bound", lambda sizes, eps, work: (2.9 * max(eps), "test")
    )
    r = distribute_budget("auto", [2, 2, 2, 2], [1.0] * 4, 1.0)
    assert abs(r.scale - 1 / 3) <= 1e-6 * (1 / 3)
    assert len(calls) == r.evaluations <= 8


def test_the_heuristic_on_a_real_non_monotone_case_still_fits():
    sizes = [2, 6, 3, 11, 7, 3, 3, 2, 5, 2]
    r = distribute_budget("heuristic", sizes, [1] * 10, 10.0)
    assert 10.0 * (1 - 1e-3) <= r.design.mechanism.overall_epsilon() <= 10.0


def test_identical_requests_reuse_the_search_and_interactive_ones_do_not(monkeypatch):
    calls = fake_designs(monkeypatch, lambda c: 3 * c, lambda c: {"design": "optimal"})
    first = distribute_budget("optimal", [2, 3], [1.0, 0.5], 1.0)
    n = len(calls)
    first.design.info["changed by a caller"] = True
    again = distribute_budget("optimal", [2, 3], [1.0, 0.5], 1.0)
    assert len(calls) == n and again.scale == first.scale and "changed by a caller" not in again.design.info
    seen = []
    distribute_budget("optimal", [2, 3], [1.0, 0.5], 1.0, progress=lambda f, m: seen.append(f))
    assert len(calls) > n and seen and all(0.0 <= f <= 1.0 for f in seen)


def test_a_target_the_design_cannot_reach_is_said_with_the_reason():
    """Optimal's exact LP cannot resolve probability ratios above about e^35: at target 40 on ten columns it stops
    at whole-record 31.06, and says so (the GUI reviewer saw it silently below Auto's); at the per-column maximum
    of 50 the note names it; a reached target has no note."""
    sizes, ones = [3, 4, 2, 2, 2, 5, 4, 4, 4, 2], [1.0] * 10
    short = distribute_budget("optimal", sizes, ones, 40.0).design
    assert short.overall_epsilon < 32
    note = short.info["target_not_reached"]
    assert note.startswith(f"whole-record ε {short.overall_epsilon:.4g} of the target 40: with larger ε per column")
    assert "cannot resolve this request numerically" in note
    capped = distribute_budget("auto", sizes, ones, 500.0).design
    assert capped.info["target_not_reached"].endswith("the per-column ε reached its maximum of 50")
    assert "target_not_reached" not in distribute_budget("optimal", sizes, ones, 20.0).design.info


def failing_designs(monkeypatch, total, info=lambda c: {}):
    """fake_designs where ``total(c)`` None is a design that fails (InfeasibleError naming c)."""
    calls = []

    def run(method, sizes, eps, **_):
        c = float(np.max(eps))
        calls.append(c)
        value = total(c)
        if value is None:
            raise InfeasibleError(f"infeasible at {c:.6g}")
        return FakeDesign(value, info(c))

    monkeypatch.setattr(budget, "run_design", run)
    budget._remembered.cache_clear()
    return calls


def test_a_failure_below_the_result_does_not_hide_the_failure_above_it(monkeypatch):
    """Non-monotone (infeasible on stretches, like the family): auto's design fails at the top, its root search
    meets failures on [0.3, 0.45) below the stretch [0.45, 0.48] that fits at 0.9, which the scan then finds. The
    result (0.48) is below the target by more than the gap and the note gives the reason of the smallest failed
    scale above it (before, only the smallest failure was kept: below the result, so no note)."""

    def total(c):
        if c < 0.3:
            return 2 * c
        return 0.9 if 0.45 <= c <= 0.48 else None

    calls = failing_designs(monkeypatch, total, lambda c: {"design": "blocks of 2", "lower_bound": 0.0})
    r = distribute_budget("auto", [2, 2, 2, 2], [1.0] * 4, 1.0)
    assert abs(r.scale - 0.48) <= 1e-5 and r.design.overall_epsilon == 0.9
    assert [c for c in calls if 0.3 <= c < 0.45]  # failures below the result were met
    above = min(c for c in calls if c > r.scale)
    reason = f"with larger ε per column the design fails (infeasible at {above:.6g})"
    assert r.design.info["target_not_reached"] == f"whole-record ε 0.9 of the target 1: {reason}"


def test_a_result_below_the_target_without_a_known_reason_still_says_so(monkeypatch):
    """The heuristic fits at 0.9 on [0.45, 0.48] and is above the target (3c) elsewhere: no design failed, yet the
    result is below the target by more than the gap, and the note says so (before: no note)."""
    fake_designs(monkeypatch, lambda c: 0.9 if 0.45 <= c <= 0.48 else 3 * c)
    r = distribute_budget("heuristic", [2, 2, 2, 2], [1.0] * 4, 1.0)
    assert abs(r.scale - 0.48) <= 1e-5
    assert r.design.info["target_not_reached"] == (
        "whole-record ε 0.9 of the target 1: the search found no larger ε per column whose design fits the target"
    )
