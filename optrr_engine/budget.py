"""Budget distribution (authors' README policy): from a target whole-record epsilon and weights w,
the largest c such that the design's eps_total(c * w) <= target, found by bisection per design.

For Kronecker eps_total = c * sum(w) exactly. For the others eps_total(c w) is increasing in c for the
exact designs; the heuristic's need not be monotone, so the bisection result is re-checked and the
returned design always satisfies eps_total <= target (up to the relative tolerance of optrr_engine.tolerance).
With w scaled to max(w) = 1, eps_total(c w) >= max_i c w_i = c, so c never exceeds the target. A design that
fails numerically (an exact LP beyond e^35) counts as not fitting: its eps_total is far above any target below 35.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .designs import Design, run_design
from .errors import Cancelled, InfeasibleError, InputError, OptRRError
from .tasks import TaskControl
from .tolerance import eps_within
from .validation import MAX_EPSILON, check_sizes, check_target, check_weights


@dataclass
class BudgetResult:
    scale: float
    design: Design
    evaluations: int


def overall_epsilon(method: str, sizes, epsilons) -> float:
    """Whole-record epsilon of the given eps_i under a design (recomputed from the designed mechanism)."""
    return run_design(method, sizes, epsilons).overall_epsilon


#: Methods whose whole-record epsilon is non-decreasing in every eps_i (exact optima; see lower_bounds.py).
MONOTONE_METHODS = ("kronecker", "optimal", "classes")


def distribute_budget(
    method: str, sizes, weights, target: float, rel_tol: float = 1e-6, progress=None, cancel=None
) -> BudgetResult:
    sizes = check_sizes(sizes)
    w = check_weights(weights, len(sizes))
    target = check_target(target)
    ctl = TaskControl(progress, cancel)
    c_max = MAX_EPSILON / float(w.max())
    evaluations = 0

    def attempt(c: float):
        nonlocal evaluations
        evaluations += 1
        ctl.check()
        try:
            return run_design(method, sizes, c * w)
        except (InputError, Cancelled):
            raise
        except OptRRError:  # infeasible, or beyond what the solver resolves: does not fit
            return None

    def fits(d) -> bool:
        return d is not None and bool(eps_within(d.overall_epsilon, target))

    if method == "kronecker":
        c = min(target / float(w.sum()), c_max)
        return BudgetResult(c, run_design(method, sizes, c * w), 1)
    hi = min(target, c_max)  # eps_total >= max eps_i = c (max w = 1)
    d_hi = attempt(hi)
    if fits(d_hi):
        return BudgetResult(hi, d_hi, evaluations)
    lo, best = 0.0, None
    if method not in MONOTONE_METHODS:
        # eps_total(c w) may jump or be infeasible on stretches (heuristic fallbacks, family feasibility):
        # scan a log grid from the top and bisect only inside the last step that still fits.
        grid = hi * np.logspace(0, -4, 49)[1:]
        prev = hi
        for step, c in enumerate(grid):
            d = attempt(c)
            ctl.report(0.5 * step / grid.size, f"scanning the budget scale: {c:.4g}")
            if fits(d):
                lo, best, hi = c, d, prev
                break
            prev = c
        if best is None:
            raise InfeasibleError(
                f"method {method} cannot meet a whole-record epsilon of {target:g} with these weights "
                f"(no feasible design at or below it for eps_i down to {grid[-1] * float(w.min()):.2g})"
            )
    for step in range(200):
        mid = 0.5 * (lo + hi)
        d = attempt(mid)
        if fits(d):
            lo, best = mid, d
        else:
            hi = mid
        ctl.report(0.5 + step / 120.0, f"bisection on the budget scale: {lo:.6g}")
        if hi - lo <= rel_tol * hi:
            break
    if best is None:
        raise InputError(f"no positive epsilons reach a whole-record epsilon of {target:g} with method {method}")
    return BudgetResult(lo, best, evaluations)


__all__ = ["MONOTONE_METHODS", "BudgetResult", "distribute_budget", "overall_epsilon"]
