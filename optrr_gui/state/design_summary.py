"""Qt-free summaries of designs, as the mechanism panel shows them (the job that runs a design is
:mod:`optrr_gui.workers.jobs.design`). Every epsilon comes from the mechanism, never from the request.

Expected error (docs/math.md §6, one attribute): the mechanism induced on attribute i is GRR-like with
P(same) = p and P(one specific other value) = q. With a categories, n rows and true proportion pi of a
category, the observed share is lambda = q + (p - q) pi and the unbiased estimate pi_hat = (lambda_hat - q) /
(p - q) has variance lambda (1 - lambda) / (n (p - q)^2). The panel shows its square root at pi = 1/a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Designs that may be slow are started in the background with a spinner; below these k they are instant.
QUICK_OPTIMAL_K = 10
QUICK_OPTIMAL_BUDGET_K = 8
#: A budgeted design giving a column less than this epsilon carries no information about it (not offered).
DEGENERATE_EPSILON = 1e-6
#: Human names of the designs (the engine's method ids are the keys).
METHOD_LABELS = {
    "auto": "Auto (best exact)",
    "optimal": "Optimal (exact LP)",
    "classes": "Classes (exact, symmetric)",
    "heuristic": "Heuristic (Algorithm 3)",
    "family": "Family (exact LP of the heuristic's family)",
    "kronecker": "Kronecker (independent RR)",
    "clusters": "Clusters (RR-Clusters, comparison)",
}
#: Short explanation used in tooltips.
METHOD_HELP = {
    "auto": "Meets every attribute's epsilon exactly with the lowest whole-record epsilon OptRR can find.",
    "optimal": "The exact optimum (linear program over 2^k patterns); slow above about 14 attributes.",
    "classes": "Exact optimum when many attributes share the same categories and epsilon.",
    "heuristic": "The paper's fast Algorithm 3. It may change some attributes' epsilons; they are flagged.",
    "family": "The best mechanism of the heuristic's family; may be infeasible for some epsilons.",
    "kronecker": "Randomize each attribute independently: whole-record epsilon is the sum of the epsilons.",
    "clusters": (
        "RR-Clusters (Domingo-Ferrer & Soria-Comas): groups of dependent columns are randomized jointly with the "
        "sum of their ε. The groups are chosen from the raw data; shown for comparison, not offered for release."
    ),
}


def available_methods() -> tuple[str, ...]:
    """The engine's design methods, in a stable display order (``optrr_engine.designs.METHODS``)."""
    from optrr_engine.designs import METHODS

    order = ["auto", "optimal", "classes", "family", "heuristic", "kronecker", "clusters"]
    known = [m for m in order if m in METHODS]
    return tuple(known + [m for m in METHODS if m not in known])


def is_quick(method: str, k: int, budget_mode: bool) -> bool:
    """Whether a design is expected to finish within a few milliseconds."""
    if method in ("kronecker", "heuristic"):
        return True
    if method == "family":
        return k <= 200
    limit = QUICK_OPTIMAL_BUDGET_K if budget_mode else QUICK_OPTIMAL_K
    return k <= limit


@dataclass
class DesignSummary:
    method: str
    ok: bool
    error: str = ""
    overall_epsilon: float = math.nan
    requested: list = field(default_factory=list)
    achieved: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    exceeds_request: bool = False
    standard_errors: list = field(default_factory=list)
    seconds: float = 0.0
    lower_bound: float | None = None
    scale: float | None = None
    design: object = None  # the engine's Design (kept to release with exactly this mechanism)
    releasable: bool = True  # False for comparison-only designs (RR-Clusters chosen from the raw data)
    note: str = ""
    clusters: list | None = None
    predicted_avd: float | None = None  # mean expected AVD of the 1-/2-way marginals (unbiased estimator)
    predicted_orders: str = ""
    non_identifiable: list = field(default_factory=list)  # marginals (1-based column indices) erased

    @property
    def changed_attributes(self) -> set[int]:
        return {int(c["attribute"]) for c in self.changes}


def grr_parameters(mechanism, attribute: int) -> tuple[float, float]:
    """(p, q) of the mechanism induced on one attribute: P(same value), P(one specific other value)."""
    logs = mechanism.marginal([attribute]).log_pattern_probs()
    return float(np.exp(logs[0])), float(np.exp(logs[1]))


def standard_error(p: float, q: float, a: int, n: int, pi: float | None = None) -> float:
    """Standard error of the unbiased estimate of a category share pi (default 1/a) from n perturbed rows."""
    if n <= 0 or p <= q:
        return math.inf
    pi = 1.0 / a if pi is None else pi
    lam = q + (p - q) * pi
    return math.sqrt(lam * (1.0 - lam) / (n * (p - q) ** 2))


def expected_errors(mechanism, n_rows: int | None) -> list[float]:
    """Per attribute: standard error of the estimated share of a category with share 1/a_i."""
    if not n_rows:
        return [math.nan] * mechanism.k
    out = []
    for i, a in enumerate(mechanism.sizes):
        p, q = grr_parameters(mechanism, i)
        out.append(standard_error(p, q, int(a), int(n_rows)))
    return out


#: Predicted errors are computed for designs of at most this many columns (the GUI stays responsive).
PREDICT_MAX_K = 200
#: Rows the error is predicted for when no data is loaded.
PREDICT_DEFAULT_ROWS = 10_000


def predicted(mechanism, n_rows: int | None) -> tuple[float | None, str, list]:
    """(mean expected AVD of all 1- and 2-way marginals, or 1-way only for many columns; the orders; the
    non-identifiable marginals) from optrr_engine.utility; (None, "", []) when too large."""
    from optrr_engine.errors import OptRRError
    from optrr_engine.utility import predicted_error

    k = mechanism.k
    if k > PREDICT_MAX_K:
        return None, "", []
    orders = [1, 2] if 2 <= k <= 20 else [1]
    try:
        pe = predicted_error(mechanism, int(n_rows or PREDICT_DEFAULT_ROWS), {"orders": orders})
    except OptRRError:
        return None, "", []
    score = pe.score()
    bad = [[i + 1 for i in a] for a in pe.non_identifiable]
    return (score if math.isfinite(score) else math.inf), "/".join(map(str, orders)) + "-way", bad


def summarise(design, n_rows: int | None, seconds: float, requested=None, scale=None) -> DesignSummary:
    mech = design.mechanism
    info = design.info or {}
    lower = info.get("lower_bound")
    avd, orders, bad = predicted(mech, n_rows)
    return DesignSummary(
        predicted_avd=avd,
        predicted_orders=orders,
        non_identifiable=bad,
        method=design.method,
        ok=True,
        overall_epsilon=float(mech.overall_epsilon()),
        requested=[float(e) for e in (design.requested_epsilons if requested is None else requested)],
        achieved=[float(e) for e in mech.attribute_epsilons()],
        changes=design.epsilon_changes(),
        exceeds_request=design.exceeds_request(),
        standard_errors=expected_errors(mech, n_rows),
        seconds=seconds,
        lower_bound=float(lower) if lower is not None else None,
        scale=scale,
        design=design,
    )


def _compare(a: DesignSummary, b: DesignSummary, budget_mode: bool) -> int:
    """-1 when design a is better than b, 1 when worse, 0 when equal within the relative tolerance
    (optrr_engine.tolerance). Per-attribute mode: lower whole-record epsilon. Budget mode (all meet the target):
    smaller predicted error of the 1-/2-way marginals (when known for both), then larger attribute epsilons
    (scale c), then lower whole-record epsilon. Ties go to auto."""
    from optrr_engine.tolerance import eps_equal

    if budget_mode and a.predicted_avd is not None and b.predicted_avd is not None:
        x, y = a.predicted_avd, b.predicted_avd
        if x != y and not (math.isfinite(x) and math.isfinite(y) and eps_equal(x, y)):
            return -1 if x < y else 1
    keys = [(-(a.scale or 0.0), -(b.scale or 0.0))] if budget_mode else []
    keys.append((a.overall_epsilon, b.overall_epsilon))
    for x, y in keys:
        if not eps_equal(x, y):
            return -1 if x < y else 1
    return (a.method != "auto") - (b.method != "auto")


def ranked(summaries: dict[str, DesignSummary], budget_mode: bool) -> list[str]:
    """The designs that may be recommended, best first: computed, releasable and (per-attribute mode) giving no
    attribute more epsilon than requested."""
    from functools import cmp_to_key

    ok = {m: s for m, s in summaries.items() if s.ok and s.releasable and (budget_mode or not s.exceeds_request)}
    return sorted(ok, key=cmp_to_key(lambda x, y: _compare(ok[x], ok[y], budget_mode)))


def recommend(summaries: dict[str, DesignSummary], budget_mode: bool) -> str | None:
    """The design to use: the best of :func:`ranked` (None if no design qualifies)."""
    best = ranked(summaries, budget_mode)
    return best[0] if best else None


def display_order(methods, summaries: dict[str, DesignSummary], budget_mode: bool) -> list[str]:
    """Rows of the design table: the rankable designs best first (the recommended one on top, so a better row
    never sits below it), then the others (running, stale, unavailable, raising an epsilon) in their usual order."""
    best = [m for m in ranked(summaries, budget_mode) if m in methods]
    return best + [m for m in methods if m not in best]
