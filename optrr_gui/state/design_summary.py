"""Qt-free summaries of designs, as the mechanism panel shows them (the job that runs a design is
:mod:`optrr_gui.workers.jobs.design`). Every epsilon comes from the mechanism, never from the request.

Expected error (docs/math.md §6, one attribute): the mechanism induced on attribute i is GRR-like with
P(same) = p and P(one specific other value) = q. With a categories, n rows and true proportion pi of a
category, the observed share is lambda = q + (p - q) pi and the unbiased estimate pi_hat = (lambda_hat - q) /
(p - q) has variance lambda (1 - lambda) / (n (p - q)^2). The panel shows its square root at pi = 1/a.
"""

from __future__ import annotations

import math
import re
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
    "utility": "Utility (least unbiased error)",
    "smp": "SMP (1 column per row)",
    "sample-2": "Sample-2 (2 columns per row)",
    "sample-3": "Sample-3 (3 columns per row)",
    "rsfd": "RS+FD (1 real column, fakes)",
}
#: Total-budget designs whose per-column ε do not follow the columns' weights (the utility design chooses them for
#: the needed tables; sample-2 and sample-3 report columns chosen uniformly at random).
WEIGHTLESS_METHODS = ("utility", "sample-2", "sample-3")
#: Designs defined by a whole-record epsilon only: rows of the table in total-budget mode.
BUDGET_ONLY_METHODS = ("utility", "smp", "sample-2", "sample-3", "rsfd")
#: The release configuration's method (and sample_m) of each sampling row.
SAMPLING_ROWS = {"smp": ("smp", None), "sample-2": ("sample-m", 2), "sample-3": ("sample-m", 3), "rsfd": ("rsfd", None)}
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
    "utility": (
        "The mechanism with the smallest predicted error of the unbiased estimates of the marginals you need, at "
        "the whole-record ε (a convex problem solved exactly; per-column ε follow from the solution, not from the "
        "weights). The ★ ranks every design by the error of the estimates shown (smoothed), which can prefer "
        "another design."
    ),
    "smp": (
        "Sampling design (Wang et al. 2019): each row reports ONE column, chosen at random with the columns' "
        "weights, randomized with the whole-record ε; the other columns are marked as not reported. No 2-way "
        "association can be estimated from it."
    ),
    "sample-2": (
        "Sampling design: each row reports 2 columns chosen at random, randomized jointly with the whole-record ε; "
        "the others are marked as not reported. Good for 1- and 2-way tables at low ε."
    ),
    "sample-3": (
        "Sampling design: each row reports 3 columns chosen at random, randomized jointly with the whole-record ε; "
        "the others are marked as not reported."
    ),
    "rsfd": (
        "RS+FD (Arcolezi et al. 2021): each row reports one real column (randomized) and fake values in all the "
        "others, without saying which is real. Never more accurate than SMP; hides which column is real."
    ),
}


def sampling_parameters(method: str) -> tuple[str, int | None]:
    """(engine method, m) of a sampling row."""
    return SAMPLING_ROWS[method]


def release_method(method: str) -> tuple[str, int | None]:
    """(the release configuration's method, its sample_m) of a row of the table ("recommended" -> auto)."""
    if method == "recommended":
        return "auto", None
    return SAMPLING_ROWS.get(method, (method, None))


def available_methods() -> tuple[str, ...]:
    """The engine's design methods, in a stable display order (``optrr_engine.designs.METHODS``)."""
    from optrr_engine.designs import METHODS

    order = ["auto", "optimal", "classes", "family", "heuristic", "kronecker", "clusters"]
    known = [m for m in order if m in METHODS]
    return tuple(known + [m for m in METHODS if m not in known])


def is_quick(method: str, k: int, budget_mode: bool) -> bool:
    """Whether a design is expected to finish within a few milliseconds."""
    if method in ("kronecker", "heuristic", "smp", "rsfd"):
        return True
    if method in ("sample-2", "sample-3"):
        return k <= 12
    if method == "utility":
        return k <= 6
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
    predicted_avd: float | None = None  # mean predicted AVD of the needed marginals (default estimate)
    #: the engine's ranking key (PredictedError.rank_key: erased needed marginals, then the default
    #: estimate's mean predicted AVD), so that the window orders designs exactly as ``recommend()`` does
    predicted_rank: tuple | None = None
    predicted_orders: str = ""  # which marginals: "1/2-way", "1/2-way + 3 named"
    predicted_by_order: dict = field(default_factory=dict)  # order -> mean expected AVD (None: a table erased)
    #: needed marginals (1-based column indices) whose unbiased estimate is unusable: erased, or too noisy at n rows
    non_identifiable: list = field(default_factory=list)
    erased: list = field(default_factory=list)  # ... of which no number of rows recovers (the release refuses)
    suppression: str = ""  # sampling designs: "each row carries m of k columns ..."
    needed_tables: int = 0  # how many needed marginals the prediction covers (0: not predicted)
    #: what tests of association on the needed 2-way tables will detect (the engine's
    #: :func:`~optrr_engine.analysis.power.design_power` at the loaded file's shares, as ``optrr design`` prints it);
    #: None without needed 2-way tables, or when the design never reports two columns together or erases their
    #: association
    test_power: dict | None = None
    #: on no needed marginal do the data move the shown estimate off the prior's equal shares (the engine's
    #: PredictedError.no_information): recommended only when every design has none (:func:`ranked`), said in its row
    no_information: bool = False
    #: the request this design answers: its perturbed columns' names and categories, and its whole-record target
    #: (None in per-column mode), so that a result kept while a new request computes is shown as what it is
    names: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    target: float | None = None
    #: per column, the engine's word for its 1-way table at the file's rows (:func:`column_states`)
    column_states: list = field(default_factory=list)

    @property
    def too_noisy(self) -> list:
        """The needed marginals only too noisy at these rows for the unbiased estimate (not erased). Linear in the
        number of tables (a set of the erased ones: testing list membership took ~0.5 s per file open with 561
        needed 2-way tables, asked by every row's tooltip at every redraw)."""
        if not self.erased:
            return list(self.non_identifiable)
        erased = {tuple(a) for a in self.erased}
        return [a for a in self.non_identifiable if tuple(a) not in erased]

    @property
    def changed_attributes(self) -> set[int]:
        return {int(c["attribute"]) for c in self.changes}


def grr_parameters(mechanism, attribute: int) -> tuple[float, float]:
    """(p, q) of the mechanism induced on one attribute: P(same value), P(one specific other value)."""
    p, q = np.exp(mechanism.one_way_log_probs()[attribute])
    return float(p), float(q)


def standard_error(p: float, q: float, a: int, n: int, pi: float | None = None) -> float:
    """Standard error of the unbiased estimate of a category share pi (default 1/a) from n perturbed rows."""
    if n <= 0 or p <= q:
        return math.inf
    pi = 1.0 / a if pi is None else pi
    lam = q + (p - q) * pi
    return math.sqrt(lam * (1.0 - lam) / (n * (p - q) ** 2))


def column_errors(mechanism, n_rows: int):
    """The engine's predicted error (:class:`~optrr_engine.utility.predicted.MarginalError`) of every column's
    1-way table at ``n_rows`` rows, for a mechanism or a sampling design (uniform prior)."""
    from optrr_engine.utility.candidate import candidate_of

    return candidate_of(mechanism).predicted_error(int(n_rows), {"orders": [1]}).marginals


def expected_errors(mechanism, n_rows: int | None, errors=None) -> list[float]:
    """Per attribute: standard error of the estimated share of a category with share 1/a_i (a sampling design:
    the predicted standard deviation of a 1-way cell under the uniform prior, the same quantity; ``errors``: its
    :func:`column_errors` when already computed)."""
    if not n_rows:
        return [math.nan] * mechanism.k
    if not hasattr(mechanism, "marginal"):  # a sampling design
        return [m.max_cell_sd for m in (errors if errors is not None else column_errors(mechanism, n_rows))]
    p, q = np.exp(mechanism.one_way_log_probs()).T
    return [standard_error(*pq, int(a), int(n_rows)) for *pq, a in zip(p, q, mechanism.sizes, strict=True)]


#: The words of a column's 1-way table by the engine's rules (:func:`column_states`): erased (never recovered),
#: no information (``MarginalError.no_information``), too noisy (``MarginalError.too_noisy``).
ERASED, NO_INFORMATION, TOO_NOISY = "erased", "no information", "too noisy"


def column_state(err) -> str:
    """The word for one 1-way MarginalError: ERASED, NO_INFORMATION, TOO_NOISY, or "" (the number says it)."""
    if err.erased:
        return ERASED
    if err.no_information:
        return NO_INFORMATION
    return TOO_NOISY if err.too_noisy else ""


def column_states(mechanism, n_rows: int | None, errors=None) -> list[str]:
    """Per column, :func:`column_state` of its 1-way table at ``n_rows`` rows (``errors``: its :func:`column_errors`
    when already computed); all "" before the rows are counted."""
    if not n_rows:
        return [""] * mechanism.k
    return [column_state(m) for m in (errors if errors is not None else column_errors(mechanism, n_rows))]


#: Predicted errors are computed for designs of at most this many columns (the GUI stays responsive).
PREDICT_MAX_K = 200
#: Rows the error is predicted for when no data is loaded.
PREDICT_DEFAULT_ROWS = 10_000


def needed_spec(request: dict, k: int) -> tuple[dict, str]:
    """(the engine's marginal spec, a short label) of the request's needed marginals (the default without)."""
    from .needed_marginals import default_orders, spec

    names = request.get("names") or [str(i) for i in range(k)]
    if len(names) != k:
        names = [str(i) for i in range(k)]
    sp = spec(request.get("needed"), names)
    if "orders" in sp:
        return sp, "/".join(map(str, sp["orders"])) + "-way"
    orders = default_orders(k) if request.get("needed") is None else request["needed"].get("orders", [])
    label = "/".join(map(str, orders)) + "-way" if orders else ""
    named = len(sp["sets"]) - sum(1 for t in sp["sets"] if len(t) in orders)
    return sp, (label + " + " if label else "") + f"{max(named, 0)} named"


def predicted(mechanism, n_rows: int | None, request: dict | None = None) -> dict:
    """The predicted error (optrr_engine.utility) of the needed marginals of ``request`` (default: all 1- and
    2-way when few enough) for a mechanism or sampling design: {"avd": mean predicted AVD of the default estimate
    (inf when a needed marginal is erased), "orders": label, "by_order": {order: mean AVD, None when erased},
    "non_identifiable": 1-based column sets erased or uninformative at these rows, "erased": those no number of
    rows recovers, "one_way": every column's 1-way MarginalError when the needed marginals hold them all (else
    None)}; {} when too large."""
    from optrr_engine.errors import OptRRError

    k = mechanism.k
    if k > PREDICT_MAX_K:
        return {}
    try:
        sp, label = needed_spec(request or {}, k)
        if not sp.get("orders", sp.get("sets")):
            return {}
        from optrr_engine.utility.candidate import candidate_of

        pe = candidate_of(mechanism).predicted_error(int(n_rows or PREDICT_DEFAULT_ROWS), sp)
    except (OptRRError, ValueError):
        return {}
    score = pe.score()
    bad = [m for m in pe.marginals if not m.identifiable]
    singles = {m.attributes: m for m in pe.marginals if len(m.attributes) == 1}
    return {
        "avd": score if math.isfinite(score) else math.inf,
        "rank": pe.rank_key(),
        "orders": label,
        "by_order": {o: None if v["erased"] else v["mean_expected_avd_default"] for o, v in pe.by_order().items()},
        "needed": len(pe.marginals),
        "no_information": pe.no_information,
        "non_identifiable": [[i + 1 for i in m.attributes] for m in bad],
        "erased": [[i + 1 for i in m.attributes] for m in bad if m.erased],
        "one_way": [singles[(i,)] for i in range(k)] if len(singles) == k else None,
        "power": association_power(
            mechanism, int(n_rows or PREDICT_DEFAULT_ROWS), pe.marginals, (request or {}).get("shares")
        ),
    }


def association_power(mechanism, n_rows: int, marginals, shares=None) -> dict | None:
    """What tests of association on the needed 2-way tables among ``marginals`` (the prediction's MarginalErrors)
    will detect: the engine's :func:`~optrr_engine.analysis.power.design_power` (at most MAX_DESIGN_TABLES tables),
    as ``optrr design`` computes it, at the loaded file's ``shares`` (the request's: per perturbed column its
    categories' shares in the rows read, :func:`~optrr_gui.state.config_bridge.column_shares`; a rare category makes
    a test much weaker than at uniform margins), uniform margins where they are unknown (before the rows are read);
    None without 2-way tables or without a test. Run in the design worker with the predicted error. For the Design
    tab's line only: nothing computed from the shares is released."""
    from optrr_engine.analysis.power import design_power

    pairs = [m.attributes for m in marginals if len(m.attributes) == 2]
    if shares is not None and len(shares) != mechanism.k:  # shares of another set of columns: not these
        shares = None
    return design_power(mechanism, n_rows, pairs, shares) if pairs else None


def power_text(s: DesignSummary | None, label: str) -> str:
    """The line under the design table for the design shown: the engine's sentence of what tests of association on
    the needed 2-way tables will detect (:attr:`DesignSummary.test_power`), after the design's name; the sentence
    says at which margins (the loaded file's shares, or uniform ones before its rows are read); "" when there is
    nothing to say (no needed 2-way table, the design has no such test, or no result)."""
    if s is None or not s.ok or not s.test_power:
        return ""
    return f"{label}, needed 2-way tables: {s.test_power['statement']}"


def with_prediction(summary: DesignSummary, mechanism, n_rows, request) -> DesignSummary:
    """``summary`` with the predicted error of ``request``'s needed marginals (:func:`predicted`) and the words of
    its columns' 1-way tables at ``n_rows`` (:func:`column_states`) and their standard errors
    (:func:`expected_errors`), both from one prediction of the 1-way tables: the needed marginals' own when they
    hold every column's 1-way table (the default), else :func:`column_errors`."""
    p = predicted(mechanism, n_rows, request)
    errors = (p.get("one_way") or column_errors(mechanism, n_rows)) if n_rows else None
    summary.column_states = column_states(mechanism, n_rows, errors)
    summary.standard_errors = expected_errors(mechanism, n_rows, errors)
    summary.needed_tables = p.get("needed", 0)
    if p:
        summary.predicted_avd = p["avd"]
        summary.predicted_rank = p["rank"]
        summary.predicted_orders = p["orders"]
        summary.predicted_by_order = p["by_order"]
        summary.non_identifiable = p["non_identifiable"]
        summary.erased = p["erased"]
        summary.no_information = p["no_information"]
        summary.test_power = p["power"]
    return summary


def summarise(design, n_rows: int | None, seconds: float, requested=None, scale=None, request=None) -> DesignSummary:
    mech = design.mechanism
    info = design.info or {}
    lower = info.get("lower_bound")
    summary = DesignSummary(
        method=design.method,
        ok=True,
        overall_epsilon=float(mech.overall_epsilon()),
        requested=[float(e) for e in (design.requested_epsilons if requested is None else requested)],
        achieved=[float(e) for e in mech.attribute_epsilons()],
        changes=design.epsilon_changes(),
        exceeds_request=design.exceeds_request(),
        seconds=seconds,
        lower_bound=float(lower) if lower is not None else None,
        scale=scale,
        design=design,
    )
    summary.note = noise_note(summary.achieved, (request or {}).get("names"))
    answers(summary, mech, request)
    return with_prediction(summary, mech, n_rows, request)


def answers(summary: DesignSummary, mechanism, request: dict | None) -> None:
    """Record in ``summary`` which request it answers: the columns' names (none known without a request), their
    categories, and the whole-record target in total-budget mode."""
    request = request or {}
    names = list(request.get("names") or [])
    summary.names = names if len(names) == mechanism.k else []
    summary.sizes = [int(a) for a in mechanism.sizes]
    summary.target = float(request["target_total"]) if request.get("budget_mode") else None


def noise_note(achieved, names=None) -> str:
    """Columns a design releases as uniform noise (ε exactly 0: the utility design for named tables does this to
    the columns no table uses), named; "" when there are none."""
    from optrr_engine.release.manifest import noise_columns

    labels = list(names) if names else [f"column {i + 1}" for i in range(len(achieved))]
    noise = noise_columns(labels, achieved)
    if not noise:
        return ""
    shown = ", ".join(noise[:6]) + (f" and {len(noise) - 6} more" if len(noise) > 6 else "")
    return f"{len(noise)} column(s) released as uniform noise (ε 0; no needed table uses them): {shown}"


def summarise_sampling(method: str, sampling, n_rows, seconds: float, request=None) -> DesignSummary:
    """A sampling design (optrr_engine.sampling) as a row: epsilons recomputed from the design, no per-column
    request (it is defined by the whole-record target), what a row carries in words."""
    from types import SimpleNamespace

    eps = [float(e) for e in sampling.attribute_epsilons()]
    summary = DesignSummary(
        method=method,
        ok=True,
        overall_epsilon=float(sampling.whole_record_epsilon()),
        requested=eps,
        achieved=eps,
        seconds=seconds,
        design=SimpleNamespace(method=sampling.method, mechanism=sampling, info={"m": sampling.m}),
        suppression=sampling.suppression_text(request.get("names") if request else None),
    )
    answers(summary, sampling, request)
    with_prediction(summary, sampling, n_rows, request)
    return summary


def _compare(a: DesignSummary, b: DesignSummary, budget_mode: bool) -> int:
    """-1 when design a is better than b, 1 when worse, 0 when equal within the relative tolerance
    (optrr_engine.tolerance). Per-attribute mode: lower whole-record epsilon. Budget mode (all meet the target):
    the engine's ranking of the predicted errors (when known for both: fewer erased needed marginals,
    then the smaller predicted error of the default estimate, as ``recommend()``), then lower whole-record
    epsilon, then larger attribute epsilons (scale c). Ties go to auto. :func:`ranked` lets the designs that tie
    the best prediction within RANK_TOLERANCE lead by the later keys."""
    from optrr_engine.utility.predicted import strict_rank

    if budget_mode and a.predicted_rank is not None and b.predicted_rank is not None:
        x, y = strict_rank(a.predicted_rank), strict_rank(b.predicted_rank)
        if x != y:
            return -1 if x < y else 1
    return _compare_beyond_prediction(a, b, budget_mode)


def _compare_beyond_prediction(a: DesignSummary, b: DesignSummary, budget_mode: bool) -> int:
    """Lower whole-record epsilon first (the same predicted answer for less privacy loss: at a target of 100 on two
    columns, Kronecker 100, auto 51 and utility 38 predict the same error), then larger attribute epsilons (scale
    c) in budget mode; ties go to auto."""
    from optrr_engine.tolerance import eps_equal
    from optrr_engine.utility.predicted import lower_epsilon_first

    first = lower_epsilon_first(a.overall_epsilon, b.overall_epsilon)  # the engine's rule (recommend)
    if first:
        return first
    if budget_mode and not eps_equal(a.scale or 0.0, b.scale or 0.0):
        return -1 if (a.scale or 0.0) > (b.scale or 0.0) else 1
    return (a.method != "auto") - (b.method != "auto")


def may_recommend(
    s: DesignSummary, budget_mode: bool, accept_changed: bool = False, uninformative: bool = False
) -> bool:
    """Computed, releasable, with information on some needed marginal (:attr:`DesignSummary.no_information`;
    a design with none too when ``uninformative``), and (per-column mode) keeping every ε the user typed: a design
    that raises one is never recommended, one that lowers some (the heuristic can) only when the user accepted
    changed ε."""
    if not (s.ok and s.releasable) or (s.no_information and not uninformative):
        return False
    if budget_mode:
        return True
    return not s.exceeds_request and (accept_changed or not s.changes)


def ranked(summaries: dict[str, DesignSummary], budget_mode: bool, accept_changed: bool = False) -> list[str]:
    """The designs that may be recommended (:func:`may_recommend`), best first. A design without information
    (:attr:`DesignSummary.no_information`) only when every such design has none: then the best of them, as the
    engine's ``recommend()`` ranks it (PredictedError.rank_key: as if it erased every needed table, so after any
    design with information, but still chosen when all lack it); its row and the status line flag it."""
    from functools import cmp_to_key

    from optrr_engine.utility.predicted import lead_with_ties

    ok = {m: s for m, s in summaries.items() if may_recommend(s, budget_mode, accept_changed, uninformative=True)}
    if any(not s.no_information for s in ok.values()):
        ok = {m: s for m, s in ok.items() if not s.no_information}
    order = sorted(ok, key=cmp_to_key(lambda x, y: _compare(ok[x], ok[y], budget_mode)))
    if not budget_mode:
        return order
    # equal predictions (the same design reached by two searches, 3e-7 apart) must not move the star
    return lead_with_ties(
        order, lambda m: ok[m].predicted_rank, lambda x, y: _compare_beyond_prediction(ok[x], ok[y], budget_mode)
    )


def recommend(summaries: dict[str, DesignSummary], budget_mode: bool, accept_changed: bool = False) -> str | None:
    """The design to use: the best of :func:`ranked` (None if no design qualifies)."""
    best = ranked(summaries, budget_mode, accept_changed)
    return best[0] if best else None


def display_order(
    methods, summaries: dict[str, DesignSummary], budget_mode: bool, accept_changed: bool = False
) -> list[str]:
    """Rows of the design table: the rankable designs best first (the recommended one on top, so a better row
    never sits below it), then the others (running, stale, unavailable, changing an epsilon) in their usual
    order. The budget-only designs (utility, sampling) are rows in total-budget mode only."""
    methods = [m for m in methods if budget_mode or m not in BUDGET_ONLY_METHODS]
    best = [m for m in ranked(summaries, budget_mode, accept_changed) if m in methods]
    return best + [m for m in methods if m not in best]


def short_label(method: str) -> str:
    """A design's name without its explanation: "Optimal" for "Optimal (exact LP)"."""
    return METHOD_LABELS.get(method, method).split(" (")[0]


def _predicted_below(s: DesignSummary, than: DesignSummary) -> bool:
    """``s``'s predicted error alone (the default estimate's, without the ranking's first key) is below
    ``than``'s beyond RANK_TOLERANCE."""
    from optrr_engine.utility.predicted import ties_with

    if s.predicted_rank is None or than.predicted_rank is None:
        return False
    mine, theirs = (0, s.predicted_rank[1]), (0, than.predicted_rank[1])
    return not ties_with(theirs, mine) and mine[1] < theirs[1]


def refused_above(
    summaries: dict[str, DesignSummary], recommended: str | None, order, budget_mode: bool
) -> dict[str, list[str]]:
    """The designs kept from the recommendation although they come before ``recommended`` in ``order`` (the
    table's usual order) or predict a smaller error alone: {"erased": those erasing a needed table (total-budget
    mode, where the ranking puts them after), "no_information": those without information at these rows}.
    Empty when the recommended design itself erases a table or has no information (the status line says so)."""
    rec = summaries.get(recommended) if recommended else None
    out: dict[str, list[str]] = {"erased": [], "no_information": []}
    if rec is None or not rec.ok or rec.erased or rec.no_information:
        return out
    order = list(dict.fromkeys(order))
    place = order.index(recommended) if recommended in order else len(order)
    for m in order:
        s = summaries.get(m)
        if m == recommended or s is None or not (s.ok and s.releasable):
            continue
        if not (order.index(m) < place or _predicted_below(s, rec)):
            continue
        if s.erased and budget_mode:
            out["erased"].append(m)
        elif s.no_information:
            out["no_information"].append(m)
    return out


def words_listed(words: list[str], last: str = "and") -> str:
    """ "a, b and c" (or ``last`` "or": "a, b or c")."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {last} " + words[-1]


def listed_labels(methods: list[str], last: str = "and") -> str:
    """ "Optimal, Auto and Classes" (the designs as the table's rows name them)."""
    return words_listed([short_label(m) for m in methods], last)


def recommendation_text(
    summaries: dict[str, DesignSummary],
    recommended: str | None,
    order,
    budget_mode: bool,
    name_no_information: bool = True,
) -> str:
    """Why the recommendation is not a design before it or with a smaller predicted error (:func:`refused_above`),
    in one line: "Recommended: Sample-2 (2 columns per row): Optimal, Auto and Classes erase needed tables at this
    ε"; "" when no such design was refused. ``name_no_information`` False leaves out the designs kept from it for
    having no information (the Design tab's status line: a design neither recommended nor picked lacking
    information is no news there; its row says so)."""
    refused = refused_above(summaries, recommended, order, budget_mode)
    if not name_no_information:
        refused["no_information"] = []
    parts = []
    if refused["erased"]:
        verb = "erases" if len(refused["erased"]) == 1 else "erase"
        parts.append(f"{listed_labels(refused['erased'])} {verb} needed tables at this ε")
    if refused["no_information"]:
        verb = "has" if len(refused["no_information"]) == 1 else "have"
        parts.append(f"{listed_labels(refused['no_information'])} {verb} no information at this number of rows")
    if not parts or recommended is None:
        return ""
    return f"Recommended: {METHOD_LABELS.get(recommended, recommended)}: " + "; ".join(parts)


def weights_note(method: str | None, weights, budget_mode: bool) -> str:
    """A plain sentence when the columns' weights differ but ``method`` does not follow them (WEIGHTLESS_METHODS, in
    total-budget mode), with the ways to favour a column; "" otherwise (a GUI review set a weight of 5 and saw the
    recommended Utility design give that column the lowest ε, with nothing said)."""
    if not budget_mode or method not in WEIGHTLESS_METHODS or not weights or len(set(weights)) < 2:
        return ""
    what = (
        "gives each column the ε that lowers the needed tables' error most"
        if method == "utility"
        else "reports columns chosen at random, alike"
    )
    return (
        f"{short_label(method)} does not use the column weights: it {what}. To favour a column, name its tables "
        "under Needed, or choose a design that follows the weights (Auto, Kronecker, SMP)."
    )


def changes_text(s: DesignSummary) -> str:
    """What a design did to the per-column ε typed in: "none", "lowers 3", "raises 1, lowers 2"; in total-budget
    mode (nothing typed: the ε come from the weights, ``s.scale``) against those: "8 above, 2 below weights"."""
    if not s.changes:
        return "none"
    up = sum(1 for c in s.changes if c["achieved"] > c["requested"])
    down = len(s.changes) - up
    if s.scale is not None:
        return ", ".join(([f"{up} above"] if up else []) + ([f"{down} below"] if down else [])) + " weights"
    return ", ".join(([f"raises {up}"] if up else []) + ([f"lowers {down}"] if down else []))


#: An engine method id in its messages (longest first: "sample-2" before a shorter id).
_METHOD_ID = "|".join(sorted(map(re.escape, METHOD_LABELS), key=len, reverse=True))
#: The engine's advice to pick other methods, in its command-line words: "use --method heuristic, family or auto",
#: "choose the method auto or optimal", optionally followed by " or smaller epsilons".
_OTHER_METHODS = re.compile(
    rf"(?:use --method|choose the method) ((?:{_METHOD_ID})(?:(?:, | or )(?:{_METHOD_ID}))*)\b"
    r"(?: or (smaller|larger) epsilons)?"
)
#: "method family cannot meet ...": the engine naming a method by its id.
_METHOD_NAMED = re.compile(rf"\bmethod ({_METHOD_ID})\b")


def design_wording(error: str) -> str:
    """Why a design is not available, in the GUI's words: the engine's command-line advice ("use --method
    heuristic, family or auto", "choose the method auto or optimal") names the designs as the table's rows do
    ("pick the Heuristic, Family or Auto design"); the engine's other command-line steps as :func:`gui_wording`
    words them. The engine's own (CLI) text is left as it is."""

    def advice(match: re.Match) -> str:
        ids = re.split(r", | or ", match.group(1))
        text = f"pick the {listed_labels(ids, 'or')} design instead"
        return text + (f", or use {match.group(2)} ε" if match.group(2) else "")

    from .config_bridge import gui_wording

    text = _OTHER_METHODS.sub(advice, gui_wording(error))
    return _METHOD_NAMED.sub(lambda m: f"the {short_label(m.group(1))} design", text)


def joint_note(achieved, overall: float) -> str:
    """Why the columns' ε sum to more than the whole-record ε (a newcomer added 0.494 x 4 + ... = 5.31 against a
    target of 3 and thought it broken; another read "add up to more than the whole record's 3" as the budget broken):
    the whole record's ε is the promise, each column's ε bounds that column alone, and the whole-record ε is computed
    for all columns together, not by adding. "" when they do not sum to more."""
    total = float(sum(achieved))
    if not (math.isfinite(overall) and total > overall * (1 + 1e-6)):
        return ""
    return (
        f" The promise is the whole record's ε, {overall:.3g}. Each column's ε bounds what that column reveals on its "
        "own; the whole-record ε is computed exactly for all columns together, not by adding them, so the columns' ε "
        f"can sum to more ({total:.3g}) without breaking the promise."
    )
