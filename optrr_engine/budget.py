"""Budget distribution (authors' README policy): from a target whole-record epsilon and weights w, the largest
scale c such that the design's eps_total(c * w) <= target, found per design.

Bracket. With w scaled to max(w) = 1, eps_total(c w) >= max_i c w_i = c, so c never exceeds the target (the top
of the bracket, tried first). Kronecker's eps_total is c * sum(w) exactly, and an exact optimum is never above
Kronecker's, so c0 = target / sum(w) always fits an exact design: the bottom of the bracket, without a scan.
The exact designs' eps_total(c w) is continuous and non-decreasing in c (docs/engine.md, lower_bounds.py); `auto`
is an exact optimum whenever its exact step runs (it says so in info["design"]), which depends on the sizes and
the weights' pattern, not on c. For the others (the heuristic, the family, `auto` when only its products of
blocks etc. are affordable) eps_total(c w) may jump or be infeasible on stretches, so a log grid is scanned from
the top (down to c0 when c0 fits) and the root is searched only inside the last step that still fits.

Root. Brent's method (scipy.optimize.brentq) on ln eps_total(e^u w) - ln target, u = ln c (about linear: exactly
so for Kronecker), stopped as soon as a design fits with eps_total >= target (1 - rel_tol), or when the bracket
is narrower than rel_tol in ln c. Every design returned satisfies eps_total <= target up to the relative tolerance
of optrr_engine.tolerance (the largest c that fitted is kept whatever the root finder does). A design that fails
numerically (an exact LP beyond e^35) counts as not fitting: its eps_total is far above any target below 35.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from .designs import Design, run_design
from .errors import Cancelled, InfeasibleError, InputError, OptRRError, TooLargeError
from .tasks import TaskControl
from .tolerance import REL_TOL, eps_above, eps_within
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
#: What ``auto`` names its result when it is an exact optimum (then monotone in c like the methods above).
EXACT_DESIGNS = ("optimal", "classes")
#: The search stops once a fitting design's eps_total is within this relative gap below the target.
REL_GAP = 1e-6
#: Points of the log grid scanned per decade of c for the methods that may not be monotone.
SCAN_PER_DECADE = 12
#: Decades of c scanned below the top (the scan gives up below target * 1e-4).
SCAN_DECADES = 4
#: Lower bounds tried when looking for the scale above which nothing fits, and the step beyond the extrapolation.
CUT_TRIES = 4
CUT_STEP = 0.02
#: Designs a budget search of the exact LP is planned for (6-10 measured, docs/decisions.md), and the most predicted
#: seconds (optrr_engine.designs.work) such a search may take: beyond it ``optimal`` is refused up front. k = 19
#: binary (12 s per LP) still fits; k = 20 binary (25 s) and k = 18 with a column of 50+ categories (17 s predicted,
#: 15.4 s measured per LP) do not: minutes of exact LPs, where auto answers within its budget per design.
SEARCH_DESIGNS = 10
MAX_SEARCH_SECONDS = 120.0
#: Value of the root function for a design that failed numerically (its eps_total is unknown but too high).
FAILED = 1.0


class _Close(Exception):
    """Raised inside the root function: a fitting design within the requested gap was found."""


class _Search:
    """The designs tried at scale c, and the largest c whose design fits the target."""

    def __init__(self, method, sizes, w, target, hi, rel_gap, ctl):
        self.method, self.sizes, self.w, self.target, self.ctl = method, sizes, w, target, ctl
        self.hi, self.rel_gap = hi, rel_gap
        self.evaluations = 0
        self.lo, self.best = 0.0, None
        self.tried: dict[float, tuple[float, float]] = {}  # c -> (root function value, certified lower bound)
        self.failures: dict[float, str] = {}  # every scale whose design failed -> why

    def attempt(self, c: float):
        self.evaluations += 1
        self.ctl.check()
        try:
            d = run_design(self.method, self.sizes, c * self.w)
        except (InputError, Cancelled):
            raise
        except OptRRError as exc:  # infeasible, or beyond what the solver resolves: does not fit
            d = None
            self.failures[c] = str(exc)
        value = FAILED if d is None else math.log(d.overall_epsilon / self.target)
        bound = -math.inf if d is None else float(d.info.get("lower_bound", -math.inf))
        self.tried[c] = (value, bound)
        if self.fits(d) and c > self.lo:
            self.lo, self.best = c, d
        self.ctl.report(self.evaluations / (self.evaluations + 8.0), self.progress_text())
        return d

    def progress_text(self) -> str:
        """What the search is doing, in plain words: the scales tried, and the largest that fits once one does."""
        text = f"finding the largest scale of the weights that stays within the target: {self.evaluations} tried"
        return text + (f", {self.lo:.4g} fits so far" if self.lo > 0 else "")

    def fits(self, d) -> bool:
        return d is not None and bool(eps_within(d.overall_epsilon, self.target))

    def close(self, d) -> bool:
        return self.fits(d) and d.overall_epsilon >= self.target * (1.0 - self.rel_gap)

    def root(self, lo: float, hi: float) -> None:
        """Brent's method on g(u) = ln eps_total(e^u w) - ln target in [ln lo, ln hi] (both tried, g(lo) <= 0 <
        g(hi)), stopped at a design within the gap or a bracket narrower than the gap in ln c."""
        from scipy.optimize import brentq

        if self.close(self.best):
            return
        known = {math.log(lo): self.tried[lo][0], math.log(hi): self.tried[hi][0]}

        def g(u: float) -> float:
            if u in known:
                return known[u]
            c = math.exp(u)
            d = self.attempt(c)
            if self.close(d):
                raise _Close
            return self.tried[c][0]

        try:
            brentq(g, math.log(lo), math.log(hi), xtol=self.rel_gap / 2.0, maxiter=200, full_output=True, disp=False)
        except _Close:
            pass

    def scan(self, top: float, floor: float) -> None:
        """Scan the log grid below ``top`` (nothing fits there) from the top while above ``floor`` for the first
        scale that fits, then find the root in that step. Nothing is tried at or below ``floor``."""
        grid = self.hi * np.logspace(0, -SCAN_DECADES, SCAN_PER_DECADE * SCAN_DECADES + 1)[1:]
        prev = top
        for c in grid[(grid < top) & (grid > floor)]:
            if self.fits(self.attempt(c)):
                if prev not in self.tried:
                    self.attempt(prev)  # a cut: certified not to fit; its value brackets the root
                self.root(c, prev)
                return
            prev = c

    def cut(self) -> float:
        """A scale above the root where no design fits: the optimum there has a certified lower bound above the
        target (OPT is non-decreasing in c, so nothing above fits either). Bounds are tried at the scale where
        the last bound, extrapolated in proportion to c, reaches the target (~0.1 s each); else the top."""
        from .designs.auto import BOUND_SHARE, DEFAULT_BUDGET
        from .designs.lower_bounds import best_lower_bound
        from .designs.work import WorkBudget

        cut = min([c for c, (_, bound) in self.tried.items() if eps_above(bound, self.target)] + [self.hi])
        c, bound = self.lo, self.tried[self.lo][1]
        for _ in range(CUT_TRIES):
            if not bound > 0.0:
                break
            c *= (self.target / bound) * (1.0 + CUT_STEP)
            if c >= cut:
                break
            self.ctl.check()
            bound = best_lower_bound(self.sizes, c * self.w, WorkBudget(DEFAULT_BUDGET * BOUND_SHARE))[0]
            if eps_above(bound, self.target):
                return c
        return cut


def _is_exact(method: str, d) -> bool:
    return method in MONOTONE_METHODS or (method == "auto" and d.info.get("design") in EXACT_DESIGNS)


def distribute_budget(
    method: str, sizes, weights, target: float, rel_tol: float = REL_GAP, progress=None, cancel=None
) -> BudgetResult:
    """Largest scale c (within ``rel_tol``) with eps_total(c w) <= target, and its design (see the module doc).

    ``rel_tol``: the search stops once the achieved eps_total is within this relative gap below the target
    (for a continuous eps_total; at a jump, once the scale is bracketed to this relative width).
    Without ``progress`` and ``cancel`` the result is kept for the next identical request (every design is
    deterministic; ``recommend`` and the comparisons ask for the same budget-mode design several times)."""
    sizes = check_sizes(sizes)
    w = check_weights(weights, len(sizes))
    target = check_target(target, len(sizes))
    rel_gap = max(float(rel_tol), REL_TOL)
    if method == "optimal":
        check_search_size(sizes, w)
    if progress is None and cancel is None:
        res = _remembered(method, tuple(sizes.tolist()), tuple(w.tolist()), target, rel_gap)
        return BudgetResult(res.scale, replace(res.design, info=dict(res.design.info)), res.evaluations)
    return _search(method, sizes, w, target, rel_gap, TaskControl(progress, cancel))


def check_search_size(sizes, weights=None) -> None:
    """Refuse a budget search of the exact LP whose predicted cost (SEARCH_DESIGNS LPs) exceeds MAX_SEARCH_SECONDS,
    or whose single LP is refused (optrr_engine.designs.optimal_lp.check_lp_size): TooLargeError, with the reason.
    ``weights``: every design of the search has eps_i = c w_i, so columns of one size and weight share a class of
    its LP (the LP over the classes when smaller); without them, the LP over the 2^k patterns."""
    from .designs.optimal_lp import check_lp_size

    seconds = SEARCH_DESIGNS * check_lp_size(sizes, weights)
    if seconds > MAX_SEARCH_SECONDS:
        raise TooLargeError(
            f"too large for the exact design in budget mode: about {SEARCH_DESIGNS} exact LPs over {len(sizes)} "
            f"columns, predicted {seconds:.0f} s on the reference machine (limit {MAX_SEARCH_SECONDS:.0f} s); "
            "use auto, or perturb fewer columns or bin the columns with many categories"
        )


#: Budget-mode designs kept for identical requests without progress or cancel.
REMEMBERED = 16


@lru_cache(maxsize=REMEMBERED)
def _remembered(method: str, sizes: tuple, w: tuple, target: float, rel_gap: float) -> BudgetResult:
    return _search(method, np.asarray(sizes, dtype=np.int64), np.asarray(w), target, rel_gap, TaskControl())


def forget_remembered() -> None:
    """Drop the remembered budget-mode designs (benchmarks time a fresh search with it)."""
    _remembered.cache_clear()


def _search(method: str, sizes: np.ndarray, w: np.ndarray, target: float, rel_gap: float, ctl) -> BudgetResult:
    res, s = _search_scale(method, sizes, w, target, rel_gap, ctl)
    failures = {} if s is None else s.failures
    c_max = MAX_EPSILON / float(w.max())
    short = short_of_target(res.design.overall_epsilon, target, rel_gap, res.scale, c_max, failures)
    if short:
        res.design.info["target_not_reached"] = short
    return res


def short_of_target(
    achieved: float, target: float, rel_gap: float, scale: float, c_max: float, failures: Mapping[float, str]
) -> str | None:
    """The note of a budget design below the target by more than the search's gap (None when within it): the
    per-column maximum (``scale`` at ``c_max``), else the reason of the smallest scale above ``scale`` whose design
    failed (``failures``: every failed scale -> reason: the exact LP's numeric limit, an infeasible family; a failure
    below ``scale`` says nothing, the design may be non-monotone), else that no larger scale tried fits."""
    if achieved >= target * (1.0 - max(rel_gap, 1e-3)):
        return None
    head = f"whole-record ε {achieved:.4g} of the target {target:g}: "
    if scale >= c_max * (1.0 - 1e-9):
        return head + f"the per-column ε reached its maximum of {MAX_EPSILON:g}"
    above = [c for c in failures if c > scale]
    if above:
        return head + f"with larger ε per column the design fails ({failures[min(above)]})"
    return head + "the search found no larger ε per column whose design fits the target"


def _search_scale(method, sizes, w, target, rel_gap, ctl) -> tuple[BudgetResult, _Search | None]:
    c_max = MAX_EPSILON / float(w.max())
    if method == "kronecker":
        c = min(target / float(w.sum()), c_max)
        return BudgetResult(c, run_design(method, sizes, c * w), 1), None
    hi = min(target, c_max)  # eps_total >= max eps_i = c (max w = 1)
    s = _Search(method, sizes, w, target, hi, rel_gap, ctl)
    d_hi = s.attempt(hi)
    if s.fits(d_hi):
        return BudgetResult(hi, d_hi, s.evaluations), s
    c0 = target / float(w.sum())  # Kronecker's scale: an exact design fits there
    if (method in MONOTONE_METHODS or method == "auto") and c0 < hi:
        d0 = s.attempt(c0)
        if s.fits(d0):
            s.root(c0, hi)
            if not _is_exact(method, d0):
                # auto without its exact step may jump (the family and the heuristic are among its candidates):
                # scan the grid above the root up to the lowest scale whose certified lower bound on the optimum
                # is above the target (no design fits there nor above: the optimum is non-decreasing in c)
                s.scan(s.cut(), s.lo)
            return BudgetResult(s.lo, s.best, s.evaluations), s
    # eps_total(c w) may jump or be infeasible on stretches (heuristic fallbacks, family feasibility):
    # scan a log grid from the top and search only inside the last step that still fits.
    s.scan(hi, 0.0)
    if s.best is None:
        raise InfeasibleError(
            f"method {method} cannot meet a whole-record epsilon of {target:g} with these weights "
            f"(no feasible design at or below it for eps_i down to "
            f"{hi * 10.0**-SCAN_DECADES * float(w.min()):.2g})"
        )
    return BudgetResult(s.lo, s.best, s.evaluations), s


__all__ = [
    "MONOTONE_METHODS",
    "REL_GAP",
    "BudgetResult",
    "check_search_size",
    "distribute_budget",
    "forget_remembered",
    "overall_epsilon",
]
