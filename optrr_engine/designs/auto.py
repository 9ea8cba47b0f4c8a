"""``auto``: a design meeting every requested eps_i exactly, with the lowest whole-record epsilon found
within a work budget, and a certified lower bound on the optimum (so the gap is known).

Candidates (each meets eps_i exactly by construction and is checked after the fact):
- the exact optimum: by the classes design (at most 3 groups of identical (a_i, eps_i)) or the exact LP (while
  its predicted cost fits the budget: k <= 17 at the default 5 s, up to 20), whichever is predicted cheaper
  first, the other only if the first failed (k = 17 identical binary attributes: classes 0.4 s, the LP 5-7 s);
- the exact optimum of the heuristic's family (any k, when feasible);
- products of exact blocks: groups of identical attributes solved as classes, and contiguous groups of
  attributes (sorted by eps_i - ln a_i) solved exactly, for the largest group sizes the budget affords;
- the heuristic itself when it happens to keep every eps_i.

Deterministic: the budget is in predicted seconds (:mod:`.work`), never measured on the clock, so identical
requests give identical mechanisms. Every candidate is designed for eps_i (1 - MARGIN) and accepted when its
epsilons equal that within the relative tolerance of :mod:`optrr_engine.tolerance` and none is above the
request; candidates within that tolerance of the best count as tied and an exact optimum wins the tie.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InfeasibleError, OptRRError
from ..mechanism import Mechanism
from ..tolerance import REL_TOL, eps_equal, eps_within
from ..validation import check_seconds
from . import work as cost
from .work import WorkBudget

#: Relative safety margin taken off every request, so that rounding never pushes an epsilon above it.
MARGIN = 1e-11
#: Default budget of auto, in predicted seconds (see :mod:`.work`).
DEFAULT_BUDGET = 5.0
#: Share of the budget kept for the certified lower bound.
BOUND_SHARE = 0.2
#: Group sizes of the block products, largest first; at most MAX_BLOCK_CANDIDATES of them are tried.
GROUP_SIZES = (16, 14, 13, 12, 10, 8, 6, 4, 2)
MAX_BLOCK_CANDIDATES = 3
#: Largest k for the exact LP inside auto (its 2^k x k matrix is 160 MB at k = 20).
MAX_AUTO_LP_K = 20
#: Designs that return a certified optimum.
EXACT = ("optimal", "classes")


def _meets(mech: Mechanism, target: np.ndarray, requested: np.ndarray) -> bool:
    ach = mech.attribute_epsilons()
    return bool(np.all(eps_equal(ach, target)) and np.all(eps_within(ach, requested)))


def _solve_group(sizes: np.ndarray, eps: np.ndarray) -> Mechanism:
    """Exact optimum of one group: classes for one class, closed form for pairs, else the LP."""
    from .classes import classes_design
    from .heuristic import heuristic
    from .optimal_lp import optimal

    if len(set(zip(sizes.tolist(), eps.tolist(), strict=True))) == 1 and (sizes.size > 12 or sizes.size == 1):
        return classes_design(sizes, eps)[0]
    if sizes.size == 2:
        return heuristic(sizes, eps)[0]  # the paper's base case: the exact two-attribute optimum
    return optimal(sizes, eps)[0]


def _block_product(sizes, eps, groups, ctl) -> tuple[Mechanism, dict]:
    from .product import product_of

    mechs = []
    for g in groups:
        if ctl is not None:
            ctl.check()
        mechs.append(_solve_group(sizes[g], eps[g]))
    return product_of(sizes, groups, mechs), {}


def _group_cost(group, sizes) -> float:
    n = len(group)
    return cost.classes_seconds(1.0) if (n > 12 or n == 1) else cost.block_seconds(n, int(sizes[group].max()))


def _block_plans(eps, sizes, member, n_classes, work: WorkBudget) -> list[tuple[str, list, float]]:
    """(name, groups, predicted seconds) of the block products to try, within ``work``."""
    k = sizes.size
    plans = []
    if n_classes < k:
        groups = [np.flatnonzero(member == c).tolist() for c in range(n_classes)]
        seconds = float(sum(_group_cost(g, sizes) for g in groups))
        if work.affords(seconds):
            plans.append(("blocks: classes", groups, seconds))
    # contiguous groups along eps_i - ln a_i (measured ~1% better than eps_i alone, ~10% better than random)
    order = np.argsort(-(eps - np.log(sizes)), kind="stable")
    left = work.left - sum(p[2] for p in plans)
    chosen = 0
    for g in GROUP_SIZES:
        if g >= k or chosen == MAX_BLOCK_CANDIDATES:
            continue
        chunks = [order[i : i + g].tolist() for i in range(0, k, g)]
        seconds = cost.blocks_seconds((len(c), int(sizes[c].max())) for c in chunks)
        if seconds <= left:
            plans.append((f"blocks of {g} (by eps - ln a)", chunks, seconds))
            left -= seconds
            chosen += 1
    return plans


def _best(candidates):
    """Lowest whole-record epsilon; within the relative tolerance of it an exact optimum wins the tie."""
    lowest = min(c[0] for c in candidates)
    tied = [c for c in candidates if c[0] <= lowest * (1.0 + REL_TOL)]
    return next((c for c in tied if c[1] in EXACT), min(tied, key=lambda c: c[0]))


def auto(sizes, epsilons, ctl=None, budget: float = DEFAULT_BUDGET) -> tuple[Mechanism, dict]:
    from .classes import MAX_CLASSES, MAX_GRID_CELLS, classes_design, detect_classes, grid_size
    from .family_lp import family
    from .heuristic import heuristic
    from .lower_bounds import best_lower_bound
    from .optimal_lp import lp_shape, optimal

    budget = check_seconds(budget, "the budget of auto")
    sizes = np.asarray(sizes, dtype=np.int64)
    requested = np.asarray(epsilons, dtype=float)
    eps = requested * (1.0 - MARGIN)
    k = sizes.size
    work = WorkBudget(budget * (1.0 - BOUND_SHARE) - cost.PER_ATTRIBUTE * k)
    candidates: list[tuple[float, str, Mechanism, dict]] = []
    tried = []

    def consider(name, fn, seconds: float = 0.0):
        if ctl is not None:
            ctl.check()
        work.spend(seconds)
        try:
            mech, info = fn()
        except (InfeasibleError, OptRRError) as exc:
            tried.append({"design": name, "result": f"not available: {exc}"})
            return
        ok = _meets(mech, eps, requested)
        total = mech.overall_epsilon()
        tried.append({"design": name, "overall_epsilon": total, "predicted_seconds": seconds, "exact_eps": ok})
        if ok:
            candidates.append((total, name, mech, info))

    class_sizes, _, member = detect_classes(sizes, eps)
    n_classes = class_sizes.size
    counts = np.bincount(member)
    classes_fit = n_classes <= MAX_CLASSES and grid_size(counts) <= MAX_GRID_CELLS
    classes_s = cost.classes_seconds(grid_size(counts) / (counts.max() + 1)) if classes_fit else math.inf
    lp_cells = float(np.prod(lp_shape(sizes, eps), dtype=float))  # the LP over the classes when smaller
    lp_s = cost.lp_seconds(k, int(sizes.max()), lp_cells) if k <= MAX_AUTO_LP_K else math.inf
    # both are the exact optimum with a dual bound: the one predicted cheaper first, the other only if it failed
    exact_steps = [
        ("classes", lambda: classes_design(sizes, eps, ctl), classes_s),
        ("optimal", lambda: optimal(sizes, eps, ctl), lp_s),
    ]
    for name, fn, seconds in sorted(exact_steps, key=lambda step: step[2]):
        if any(c[1] in EXACT for c in candidates):
            break  # the exact optimum is known
        if math.isfinite(seconds) and work.affords(seconds):
            consider(name, fn, seconds)
    consider("family", lambda: family(sizes, eps))
    h_mech, h_info = heuristic(sizes, eps)
    if _meets(h_mech, eps, requested):
        consider("heuristic", lambda: (h_mech, h_info))
    if k > 1 and not any(c[1] in EXACT for c in candidates):
        for name, groups, seconds in _block_plans(eps, sizes, member, n_classes, work):
            consider(name, lambda groups=groups: _block_product(sizes, eps, groups, ctl), seconds)
    if not candidates:
        from .kronecker import kronecker

        consider("kronecker", lambda: kronecker(sizes, eps))
    if not candidates:
        raise OptRRError("no design meets these epsilons to floating-point precision; use larger epsilons")
    total, name, mech, info = _best(candidates)
    if ctl is not None:
        ctl.report(0.8, "certifying a lower bound")
    exact = [(c[1], c[3]) for c in candidates if c[1] in EXACT and "lower_bound" in c[3]]
    if exact:  # an exact optimum was computed: its dual bound holds whichever candidate won the tie
        lower, how = max((float(i["lower_bound"]), f"dual bound of the exact {n} optimum") for n, i in exact)
    else:
        lower, how = best_lower_bound(sizes, eps, WorkBudget(budget * BOUND_SHARE + work.left))
    return mech, {
        "design": name,
        "lower_bound": lower,
        "lower_bound_from": how,
        "gap": total - lower,
        "candidates": tried,
        "margin": MARGIN,
        "budget_seconds": budget,
    }
