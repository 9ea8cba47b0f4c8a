"""Job of the mechanism panel: run one design (or its budget bisection) and summarise it, with the predicted
error of the needed marginals (``request["needed"]``). Besides the engine's design methods, in budget mode:
``utility`` (least predicted error of the unbiased estimates of the needed marginals at the whole-record
target) and the sampling designs
``smp``, ``sample-2``, ``sample-3`` and ``rsfd`` (optrr_engine.sampling)."""

from __future__ import annotations

import time

from optrr_engine.budget import distribute_budget
from optrr_engine.designs import Design, run_design
from optrr_engine.errors import Cancelled, OptRRError

from ...state.design_summary import (
    BUDGET_ONLY_METHODS,
    DEGENERATE_EPSILON,
    DesignSummary,
    design_wording,
    needed_spec,
    sampling_parameters,
    summarise,
    summarise_sampling,
    with_prediction,
)


def _utility(sizes, request: dict, n_rows, t0: float, progress, cancel) -> DesignSummary:
    from optrr_engine.tasks import TaskControl
    from optrr_engine.utility.optimal_design import utility_design

    spec, _ = needed_spec(request, len(sizes))
    mech, info = utility_design(sizes, request["target_total"], spec, ctl=TaskControl(progress, cancel))
    eps = mech.attribute_epsilons()
    design = Design("utility", mech, eps, time.perf_counter() - t0, info)
    return summarise(design, n_rows, time.perf_counter() - t0, request=request)


def _sampling(method, sizes, request: dict, n_rows, t0: float) -> DesignSummary:
    from optrr_engine.sampling import make_sampling_design

    engine_method, m = sampling_parameters(method)
    weights = request["weights"] if engine_method in ("smp", "rsfd") else None
    if m is not None and m >= len(sizes):
        raise OptRRError(f"each row would carry all {len(sizes)} columns: not a sampling design here")
    sampling = make_sampling_design(engine_method, sizes, request["target_total"], m=m, weights=weights)
    return summarise_sampling(method, sampling, n_rows, time.perf_counter() - t0, request)


def compute_design(method, sizes, request: dict, n_rows, progress=None, cancel=None) -> DesignSummary:
    """Run one design for the panel's request (per-attribute epsilons, or a total budget with weights).

    Errors meant for the user (infeasible, too large) become a summary with ``ok=False``.
    """
    t0 = time.perf_counter()
    try:
        if method in BUDGET_ONLY_METHODS:
            if not request["budget_mode"]:
                raise OptRRError("only with a whole-record budget (switch to total-budget mode)")
            if method == "utility":
                return _utility(sizes, request, n_rows, t0, progress, cancel)
            return _sampling(method, sizes, request, n_rows, t0)
        if request["budget_mode"]:
            res = distribute_budget(
                method, sizes, request["weights"], request["target_total"], progress=progress, cancel=cancel
            )
            summary = summarise(res.design, n_rows, time.perf_counter() - t0, scale=res.scale, request=request)
            short = res.design.info.get("target_not_reached")  # why it stays below the target (engine's words)
            if short:
                summary.note = " ".join(x for x in (summary.note, f"Below the target: {short}.") if x)
            if min(summary.achieved) < DEGENERATE_EPSILON:
                return DesignSummary(
                    method=method,
                    ok=False,
                    error="infeasible at useful scales of these weights (the budget search only found ε ≈ 0)",
                    seconds=summary.seconds,
                )
            return summary
        design = run_design(method, sizes, request["epsilons"], progress=progress, cancel=cancel)
        return summarise(design, n_rows, time.perf_counter() - t0, request=request)
    except Cancelled:
        raise
    except OptRRError as exc:
        # in the window's words once, here (design names, no command-line options): every reader shows it as it is
        error = design_wording(str(exc))
        return DesignSummary(method=method, ok=False, error=error, seconds=time.perf_counter() - t0)


def repredict(summary: DesignSummary, n_rows, request: dict, progress=None, cancel=None) -> DesignSummary:
    """The same design with the predicted error of other needed marginals or another number of rows (the design
    itself is not recomputed: an edit of the needed tables never restarts a slow exact solve)."""
    from dataclasses import replace

    mech = summary.design.mechanism
    out = replace(
        summary,
        predicted_avd=None,
        predicted_rank=None,
        predicted_orders="",
        predicted_by_order={},
        non_identifiable=[],
        erased=[],
        no_information=False,
        test_power=None,
    )
    return with_prediction(out, mech, n_rows, request)
