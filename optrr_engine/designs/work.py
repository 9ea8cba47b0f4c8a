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
#: One two-attribute block in closed form (the paper's base case), built and checked.
PAIR = 6e-4
#: Classes optimum: fixed part and part per cell of its outer grid (about 100 evaluations of G).
CLASSES_FIXED = 0.04
CLASSES_PER_OUTER_CELL = 1.6e-5
#: One evaluation of the classes dual function G, per cell of its outer grid.
G_EVAL_PER_CELL = 1.6e-7
#: Work proportional to k done whatever the plan (heuristic, family, checks, Chernoff bound), per attribute.
PER_ATTRIBUTE = 6e-5


def lp_seconds(g: int) -> float:
    """Exact LP on g attributes (g = 1 is a closed form)."""
    return LP_FIXED * 0.1 if g <= 1 else LP_FIXED + LP_PER_CELL * g * 2.0**g


def block_seconds(g: int) -> float:
    """One block of a block product: pairs in closed form, larger groups by the exact LP."""
    return PAIR if g == 2 else lp_seconds(g)


def blocks_seconds(group_lengths) -> float:
    return float(sum(block_seconds(int(g)) for g in group_lengths))


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
