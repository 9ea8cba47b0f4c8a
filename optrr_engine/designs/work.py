"""Predicted cost of the steps of ``auto``, in seconds of one core of the reference machine.

``auto`` plans from these predictions alone: what it tries depends only on the request and the budget, never on
the clock or on the machine's load, so identical requests give identical mechanisms. The constants were fitted
by ``bench/auto_budget.py`` (CPU seconds of one core, 2-core reference machine, November 2026); a slower
machine takes proportionally longer for the same result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Exact LP on g attributes (2^g columns, g rows): fixed part and part per column x row.
LP_FIXED = 2.5e-3
LP_PER_CELL = 1.2e-6
#: The design of an LP over the classes of identical (a_i, eps_i) (optrr_engine.designs.optimal_lp.ClassLPProblem):
#: spreading its cells over the 2^g patterns and checking the mechanism, per pattern x attribute (k = 19, sizes
#: 2-5 in 4 classes: 1.2 s of 1.3 s; its LP 0.06 s; bench/optimal_budget.py, 2026-11-27).
PATTERNS_PER_CELL = 1.2e-7
#: Columns with at least this many categories make the exact LP slower than its size alone predicts: its column
#: bounds span prod(a_i - 1) / prod(a_i), so HiGHS works harder per column. Measured (CPU s of one core, loaded
#: 2-core machine, 2026-11-26, sizes 309,309,300,150 + 2s and 3s, all eps_i 1): k = 16: 1.97 s (predicted 1.26),
#: k = 17: 4.7 s (2.67), k = 18: 15.4 s (5.7; all small: 5.2 s), k = 20: not done after 113 s CPU (25.2).
#: Sizes 50,50,50,50 + 2s and 3s, k = 18: 13.7 s; sizes 5,5,5,5 + 2s and 3s, k = 16: 1.16 s (no slowdown).
LARGE_CATEGORIES = 50
#: Factor on the LP's prediction when some column has LARGE_CATEGORIES or more (covers k <= 18 as measured).
LARGE_CATEGORY_FACTOR = 3.0
#: One two-attribute block in closed form (the paper's base case), built and checked.
PAIR = 6e-4
#: Classes optimum: fixed part and part per cell of its outer grid (about 100 evaluations of G).
CLASSES_FIXED = 0.04
CLASSES_PER_OUTER_CELL = 1.6e-5
#: One evaluation of the classes dual function G, per cell of its outer grid.
G_EVAL_PER_CELL = 1.6e-7
#: Work proportional to k done whatever the plan (heuristic, family, checks, Chernoff bound), per attribute.
PER_ATTRIBUTE = 6e-5


def lp_seconds(g: int, max_categories: int = 2, lp_cells: float | None = None) -> float:
    """Exact LP on g attributes (g = 1 is a closed form); ``max_categories``: the largest a_i among them;
    ``lp_cells``: rows x columns of the LP solved (optrr_engine.designs.optimal_lp.lp_shape: fewer than g 2^g when
    attributes share their (a_i, eps_i)), plus the work on the 2^g patterns of the design it gives."""
    if g <= 1:
        return LP_FIXED * 0.1
    factor = LARGE_CATEGORY_FACTOR if max_categories >= LARGE_CATEGORIES else 1.0
    full = g * 2.0**g
    if lp_cells is None or lp_cells >= full:
        return factor * (LP_FIXED + LP_PER_CELL * full)
    return factor * (LP_FIXED + LP_PER_CELL * lp_cells) + PATTERNS_PER_CELL * full


def block_seconds(g: int, max_categories: int = 2) -> float:
    """One block of a block product: pairs in closed form, larger groups by the exact LP (``max_categories``: the
    largest a_i of the group, as in :func:`lp_seconds`)."""
    return PAIR if g == 2 else lp_seconds(g, max_categories)


def blocks_seconds(groups) -> float:
    """Blocks given as (length, largest a_i) pairs."""
    return float(sum(block_seconds(int(g), int(a)) for g, a in groups))


def classes_seconds(outer_cells: float) -> float:
    return CLASSES_FIXED + CLASSES_PER_OUTER_CELL * outer_cells


@dataclass
class WorkBudget:
    """Predicted seconds available and spent; a step runs only if its prediction fits what is left."""

    seconds: float
    spent: float = 0.0

    @property
    def left(self) -> float:
        return max(0.0, self.seconds - self.spent)

    def affords(self, cost: float) -> bool:
        return math.isfinite(cost) and cost <= self.left

    def spend(self, cost: float) -> None:
        self.spent += cost
