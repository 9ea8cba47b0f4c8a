"""Every design at the same whole-record epsilon (the authors' budget policy, docs/math.md §9).

For each method, ``distribute_budget(method, sizes, weights, target)`` finds the largest scale c with
eps_total(c * w) <= target; Kronecker gets eps_i = target * w_i / sum(w). A method that cannot serve the
request (too many attributes for the exact LP, infeasible family, ...) is reported with its reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import Cancelled, OptRRError
from ..mechanism import Mechanism

#: The exact LP is skipped above this many attributes in comparisons (it is slow there).
OPTIMAL_MAX_K = 16
#: A budgeted design with an attribute epsilon below this carries no information about that attribute.
DEGENERATE_EPSILON = 1e-6


@dataclass
class BudgetedDesign:
    method: str
    mechanism: Mechanism | None
    seconds: float
    error: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.mechanism is not None

    def summary(self) -> dict:
        mech = self.mechanism
        if mech is None:
            return {"method": self.method, "error": self.error}
        eps = mech.attribute_epsilons()
        return {
            "method": self.method,
            "overall_epsilon": mech.overall_epsilon(),
            "mean_attribute_epsilon": float(np.mean(eps)),
            "min_attribute_epsilon": float(np.min(eps)),
            "max_attribute_epsilon": float(np.max(eps)),
            "seconds": self.seconds,
            **({"note": self.note} if self.note else {}),
        }


def budgeted_design(method: str, sizes, weights, target: float, ctl=None) -> BudgetedDesign:
    from ..budget import distribute_budget

    sizes = np.asarray(sizes)
    if method == "optimal" and sizes.size > OPTIMAL_MAX_K:
        return BudgetedDesign(method, None, 0.0, f"skipped: the exact LP is slow above {OPTIMAL_MAX_K} attributes")
    t0 = time.perf_counter()
    try:
        res = distribute_budget(method, sizes, weights, target, cancel=None if ctl is None else ctl.cancel)
    except Cancelled:
        raise
    except OptRRError as exc:
        return BudgetedDesign(method, None, time.perf_counter() - t0, str(exc))
    mech = res.design.mechanism
    if mech.overall_epsilon() > target * (1 + 1e-6):
        return BudgetedDesign(method, None, time.perf_counter() - t0, "exceeds the whole-record budget")
    if float(np.min(mech.attribute_epsilons())) < DEGENERATE_EPSILON:
        return BudgetedDesign(
            method,
            None,
            time.perf_counter() - t0,
            f"the budget search only found a degenerate design (some eps_i < {DEGENERATE_EPSILON:g}): the method "
            "is infeasible at useful scales of these weights",
        )
    return BudgetedDesign(method, mech, time.perf_counter() - t0)


def designs_at_budget(sizes, weights, target: float, methods, ctl=None) -> dict[str, BudgetedDesign]:
    out = {}
    for i, m in enumerate(methods):
        if ctl is not None:
            ctl.check()
            ctl.report(i / max(1, len(methods)), f"designing {m} at whole-record epsilon {target:g}")
        out[m] = budgeted_design(m, sizes, weights, target, ctl)
    return out
