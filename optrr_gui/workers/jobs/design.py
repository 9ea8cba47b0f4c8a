"""Job of the mechanism panel: run one design (or its budget bisection) and summarise it."""

from __future__ import annotations

import time

from optrr_engine.budget import distribute_budget
from optrr_engine.designs import run_design
from optrr_engine.errors import Cancelled, OptRRError

from ...state.design_summary import DEGENERATE_EPSILON, DesignSummary, summarise


def compute_design(method, sizes, request: dict, n_rows, progress=None, cancel=None) -> DesignSummary:
    """Run one design for the panel's request (per-attribute epsilons, or a total budget with weights).

    Errors meant for the user (infeasible, too large) become a summary with ``ok=False``.
    """
    t0 = time.perf_counter()
    try:
        if request["budget_mode"]:
            res = distribute_budget(
                method, sizes, request["weights"], request["target_total"], progress=progress, cancel=cancel
            )
            summary = summarise(res.design, n_rows, time.perf_counter() - t0, scale=res.scale)
            if min(summary.achieved) < DEGENERATE_EPSILON:
                return DesignSummary(
                    method=method,
                    ok=False,
                    error="infeasible at useful scales of these weights (the budget search only found ε ≈ 0)",
                    seconds=summary.seconds,
                )
            return summary
        design = run_design(method, sizes, request["epsilons"], progress=progress, cancel=cancel)
        return summarise(design, n_rows, time.perf_counter() - t0)
    except Cancelled:
        raise
    except OptRRError as exc:
        return DesignSummary(method=method, ok=False, error=str(exc), seconds=time.perf_counter() - t0)
