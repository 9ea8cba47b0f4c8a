"""Estimate the joint distribution of attributes A from the counts of their perturbed marginal.

Only the induced mechanism ``mechanism.marginal(A)`` is used (docs/math.md §5), through its eigenvalues
(docs/math.md §6), so this works for every design family and never builds a prod(a) x prod(a) matrix.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..tasks import TaskControl
from .covariance import interval_variance
from .nonnegative import clip_and_rescale, iterative_bayesian_update
from .operator import StructuredOperator
from .result import MarginalEstimate

METHODS = ("map", "ibu", "unbiased", "clip")
#: The default point estimate (shown and exported): the posterior mode under a uniform Dirichlet prior worth
#: :func:`prior_records` records (smoothed maximum likelihood), a proper distribution; consistent (the prior's
#: weight / n vanishes as n grows). docs/estimation.md §1.
DEFAULT_METHOD = "map"
#: The methods computed by the (accelerated) EM iteration, with their objectives.
ITERATIVE = {"ibu": "log-likelihood", "map": "log-posterior (log-likelihood + a uniform prior of prior_records)"}
#: IBU stops once its total log-likelihood is certified within this of the maximum (per-record tolerance
#: IBU_TOTAL_GAP / n, kept within [1e-10, 1e-6]). To second order, a total gap delta puts every linear
#: functional of the estimate (a cell, a margin, a sum of cells) within sqrt(2 delta) = 0.45 of its standard
#: error from the exact maximiser.
IBU_TOTAL_GAP = 0.1
STOPPING_RULE = {
    "ibu": "certified bound (weak duality) on the total log-likelihood gap to the maximum <= tolerance; 0 "
    "iterations when the unbiased estimate is already a distribution (then it is the maximum)",
    "map": "certified bound (Frank-Wolfe gap of the concave log-posterior) on the total gap to the maximum <= "
    "tolerance",
}

#: Said with every estimate of a table the release cannot answer (an eigenvalue of its mechanism is 0, e.g. a column
#: the utility design released as uniform noise): shown by the CLI and the Analyse tab, never silently.
NOT_IDENTIFIABLE = (
    "this table cannot be estimated from the release: part of it never reaches the released values (an eigenvalue "
    "of its mechanism is 0), so the estimate there is the prior's guess and has no confidence interval"
)
#: Records per cell below which a table is flagged: its point estimate rests on too few records (the default one
#: leans on its prior) and its intervals and tests on a normal approximation that does not hold (the textbook five
#: per cell; randomization only adds noise).
MIN_ROWS_PER_CELL = 5
#: What too few records do to the point estimate of each method (the sentence of :func:`few_rows`).
FEW_ROWS_EFFECT = {
    "map": "the estimate leans on its prior (pulled towards uniform)",
    "ibu": "the maximum-likelihood estimate follows the noise of a handful of randomized records",
    "unbiased": "the unbiased estimate (no prior) is mostly randomization noise and may have cells far below 0 or "
    "above 1",
    "clip": "the clipped unbiased estimate (no prior) is mostly randomization noise",
}


def too_few_rows(rows: float, cells: int) -> bool:
    """Fewer than MIN_ROWS_PER_CELL records per cell: the rule of :func:`few_rows` and of :func:`intervals`."""
    return rows < MIN_ROWS_PER_CELL * cells


def intervals(unbiased: np.ndarray, se: np.ndarray, z: float, few: bool) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of every cell (result.INTERVAL_NOTE): u +- z se of the unbiased estimate u, cut to [0, 1]; a u
    outside [0, 1] first moved to the nearest bound, so [0, z se] or [1 - z se, 1], never the "certainly 0" [0, 0]
    the cut u +- z se would be. With too few records for the normal approximation (``few``: :func:`too_few_rows`)
    every interval is the whole [0, 1]: unknown. NaN where u is (a table the release cannot answer)."""
    if few:
        unknown = np.isnan(unbiased) | np.isnan(se)
        return np.where(unknown, np.nan, 0.0), np.where(unknown, np.nan, 1.0)
    centre = np.clip(unbiased, 0.0, 1.0)
    return np.clip(centre - z * se, 0.0, 1.0), np.clip(centre + z * se, 0.0, 1.0)


def few_rows_head(rows: float, cells: int) -> str:
    """The count of :func:`few_rows`: "only 1 record reports this table for 4 cells (fewer than 5 per cell)" (the
    records that do report it, counted in the release)."""
    n = int(round(rows))
    counted = f"{n:,} record reports" if n == 1 else f"{n:,} records report"
    return (
        f"only {counted} this table for {cells:,} cell{'s' if cells != 1 else ''} (fewer than {MIN_ROWS_PER_CELL} "
        "per cell)"
    )


def few_rows(rows: float, cells: int, method: str | None = DEFAULT_METHOD) -> str | None:
    """The warning for a table of ``cells`` cells estimated from ``rows`` records by ``method`` (its effect on the
    point estimate; None: no point estimate named, only the intervals and tests), or None when there are enough
    records. One rule for ``optrr estimate``, the Analyse tab and ``optrr analyze`` (which reads the estimate's
    ``info["few_rows"]``)."""
    if not too_few_rows(rows, cells):
        return None
    head = few_rows_head(rows, cells)
    tail = "a normal approximation that does not hold here"
    effect = FEW_ROWS_EFFECT.get(method) if method is not None else None
    if effect is None:
        return f"{head}: its intervals and tests lean on {tail}"
    unknown = f"{tail}, so every interval is the whole [0, 1] (unknown: too few records for an interval)"
    if method == DEFAULT_METHOD:  # "leans on its prior, and its intervals and tests [lean] on ..."
        return f"{head}: {effect}, and its intervals and tests on {unknown}"
    return f"{head}: {effect}, and its intervals and tests lean on {unknown}"


def prior_records(cells: int, n: float) -> float:
    """Total weight of the default estimate's uniform prior, in records: one per cell, at most sqrt(n) (so the
    prior never outweighs the data on tables with more cells than sqrt(n) records; weight / n -> 0 as n grows,
    hence consistent). The prior is Dirichlet(1 + prior_records / cells) on every cell."""
    return float(min(float(cells), np.sqrt(float(n))))


def prior_lowered_note(weight: float, default: float) -> str:
    """Said with a 1-way default estimate whose prior the release's own spread lowered (``pooled_prior``)."""
    head = (
        "the release, over all its columns, is further from uniform than the default prior assumes (shown at "
        f"95 % confidence), so the uniform prior weighs {weight:.3g} pseudo-records instead of {default:.3g}"
    )
    if weight <= 0:
        return f"{head}: this estimate is then maximum likelihood"
    return f"{head}: this estimate is pulled less towards uniform"


def z_value(confidence: float) -> float:
    """Two-sided standard-normal quantile for the given confidence level (scipy.stats, imported here: it
    costs ~0.9 s, and this module is imported when the window starts)."""
    from scipy.stats import norm

    if not (0.0 < float(confidence) < 1.0):
        raise InputError(f"confidence must be between 0 and 1 (e.g. 0.95); got {confidence}")
    return float(norm.ppf(0.5 + 0.5 * float(confidence)))


def check_counts(counts, sizes) -> np.ndarray:
    arr = np.asarray(counts)
    sizes = tuple(int(a) for a in sizes)
    if arr.shape != sizes:
        raise InputError(f"the counts table has shape {arr.shape}; the marginal mechanism needs {sizes}")
    if np.any(arr < 0) or not np.all(np.isfinite(arr)):
        raise InputError("counts must be finite and non-negative")
    if arr.sum() <= 0:
        raise InputError("the perturbed data has no rows: nothing to estimate")
    return arr


def estimate_from_counts(
    marginal_mechanism,
    counts,
    method: str = DEFAULT_METHOD,
    confidence: float = 0.95,
    attributes=None,
    categories=None,
    ibu_max_iter: int = 10000,
    ibu_tol: float | None = None,
    progress=None,
    cancel=None,
    prior_bound: float | None = None,
) -> MarginalEstimate:
    """Estimate pi on the marginal's attributes from the perturbed counts (array of shape sizes).

    ``marginal_mechanism``: the induced Mechanism, or directly its StructuredOperator (e.g. a pooled channel).
    ``prior_bound``: for a 1-way table, the release's bound A_up on the prior weight (``pooled_prior``); the
    default estimate's prior is then min(prior_records, A_up) records (joint tables ignore it)."""
    if method not in METHODS:
        raise InputError(f"unknown estimation method {method!r}; choose one of {', '.join(METHODS)}")
    ctl = TaskControl(progress, cancel)
    if isinstance(marginal_mechanism, StructuredOperator):
        op = marginal_mechanism
    else:
        op = StructuredOperator.from_mechanism(marginal_mechanism)
    counts = check_counts(counts, op.sizes)
    n = float(counts.sum())
    observed = counts / n
    z = z_value(confidence)
    info: dict = {}
    try:
        unbiased = op.solve(observed)
        se = np.sqrt(interval_variance(op, counts, unbiased))
    except InputError:
        if method not in ITERATIVE:
            raise
        unbiased = np.full(op.sizes, np.nan)
        se = np.full(op.sizes, np.nan)
        info["unbiased_available"] = False
        info["not_identifiable"] = NOT_IDENTIFIABLE
    ctl.report(0.3, "unbiased estimate")
    if method == "unbiased":
        point = unbiased
    elif method == "clip":
        point = clip_and_rescale(unbiased)
    else:
        tol = ibu_tol if ibu_tol is not None else float(np.clip(IBU_TOTAL_GAP / n, 1e-10, 1e-6))
        pseudo = None
        if method == "map":  # the prior of prior_records, lowered on a 1-way table to the release's bound
            default = prior_records(op.cells, n)
            weight = default if prior_bound is None or op.m != 1 else float(min(default, prior_bound))
            pseudo = np.full(op.sizes, weight / (op.cells * n))
            info["prior_records"] = weight
            if weight < default and "not_identifiable" not in info:  # erased: the estimate is uniform anyway
                info["prior_lowered"] = prior_lowered_note(weight, default)
        res = iterative_bayesian_update(op, observed, max_iter=ibu_max_iter, tol=tol, ctl=ctl, pseudo=pseudo)
        point = res.estimate
        info.update(
            {
                "iterations": res.iterations,
                "converged": res.converged,
                "objective": ITERATIVE[method],
                "log_likelihood_gap_bound": res.gap * n,  # total over the records, certified
                "log_likelihood_gap_tolerance": tol * n,
                "stopping_rule": STOPPING_RULE[method],
            }
        )
    ctl.report(1.0, "done")
    few = few_rows(n, op.cells, method)
    if few:
        info["few_rows"] = few
    low, high = intervals(unbiased, se, z, few is not None)
    info["min_abs_eigenvalue"] = float(np.min(np.abs(op.eigenvalues)))
    return MarginalEstimate(
        sizes=op.sizes,
        method=method,
        estimate=point,
        unbiased=unbiased,
        std_error=se,
        ci_low=low,
        ci_high=high,
        confidence=float(confidence),
        rows=int(round(n)),
        observed=np.asarray(counts),
        attributes=list(attributes or []),
        categories=[list(c) for c in (categories or [])],
        info=info,
    )


def estimate_marginal(mechanism, attrs, counts, **kwargs) -> MarginalEstimate:
    """Estimate attributes ``attrs`` (indices into the mechanism) from their perturbed marginal counts."""
    return estimate_from_counts(mechanism.marginal(list(attrs)), counts, **kwargs)
