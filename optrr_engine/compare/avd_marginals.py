"""AVD and R-squared of k-way marginals (k = 2..5) for every design and the Bloom-filter schemes, on real data.

Two privacy axes (``axis``): "whole_record" (OptRR's: every design gets the same whole-record epsilon through the
budget policy, equal weights unless given; the Bloom schemes get eps_j = target * w_j / sum(w) per attribute by the
paper's formula) and "per_attribute" (the LOPUB/LOCOP/BRR paper's: every attribute gets eps_j = target * w_j /
mean(w); the designs are run with exactly those eps_j). Per repetition the data set is perturbed once per design
and once for all Bloom schemes (they share the client side); for each way w, ``subsets`` random attribute subsets
of size w are drawn (the same for every method), each subset's joint is estimated (designs: structured inverse,
then clip-and-rescale or IBU; Bloom: :mod:`optrr_engine.bloom`) and compared with the true one: AVD = 1/2 sum
|P - Q| and R-squared (NaN when the true joint is uniform). Means and standard deviations over all (subset,
repetition) estimates.
"""

from __future__ import annotations

import time

import numpy as np

from ..analysis.avd import avd
from ..analysis.joint_metrics import r_squared
from ..analysis.rr_clusters import plan_rr_clusters
from ..errors import InputError, OptRRError
from ..estimation.counts import count_codes
from ..estimation.estimate import estimate_from_counts
from ..estimation.nonnegative import clip_and_rescale, iterative_bayesian_update
from ..estimation.operator import StructuredOperator
from ..tasks import TaskControl
from .budgets import BudgetedDesign, designs_at_budget

#: The Bloom-filter schemes (optrr_engine.bloom): the paper's simple LOPUB (LASSO only), Ren et al.'s LASSO + EM,
#: LOCOP (Gaussian copula) and BRR.
BLOOM_METHODS = ("lasso", "lopub", "locop", "brr")
#: The utility-aware design (optrr_engine.utility): minimum expected squared error of the compared ways' marginals.
UTILITY_METHOD = "utility"
#: Privacy axes of the comparison.
AXES = ("whole_record", "per_attribute")
AXIS_LABELS = {
    "whole_record": "whole-record epsilon (OptRR's axis)",
    "per_attribute": "epsilon per attribute (paper's axis)",
}

#: Pseudo-methods: RR-Clusters with joint GRR (the paper) or the best exact design inside each cluster.
CLUSTER_METHODS = {"rr_clusters": "joint_grr", "rr_clusters_optimized": "auto"}

#: Largest number of cells of a k-way marginal estimated in the comparison.
MAX_CELLS = 200_000


def estimate_subset(mechanism, perturbed, sizes, attrs, method: str = "clip") -> np.ndarray:
    sub = [int(sizes[a]) for a in attrs]
    counts = count_codes(perturbed[:, attrs], sub)
    lam = counts / counts.sum()
    op = StructuredOperator.from_mechanism(mechanism.marginal(attrs))
    if method == "map":
        return estimate_from_counts(op, counts, method="map").estimate
    if method != "ibu":
        try:
            return clip_and_rescale(op.solve(lam))
        except InputError:  # not identifiable by inversion: the EM estimate still exists
            pass
    return iterative_bayesian_update(op, lam, max_iter=2000, tol=1e-8).estimate


def draw_subsets(k: int, way: int, count: int, sizes, rng, bloom: bool = False) -> list[list[int]]:
    """``count`` random sorted attribute subsets of size ``way`` whose table has at most MAX_CELLS cells (and,
    with ``bloom``, whose Bloom candidate matrix fits optrr_engine.bloom.reports.MAX_CANDIDATE_ENTRIES)."""
    from ..bloom.encoding import bloom_length
    from ..bloom.reports import MAX_CANDIDATE_ENTRIES

    out: list[list[int]] = []
    tries = 0
    while len(out) < count and tries < 50 * count:
        tries += 1
        s = sorted(rng.choice(k, size=way, replace=False).tolist())
        cells = int(np.prod([int(sizes[a]) for a in s]))
        if cells > MAX_CELLS:
            continue
        if bloom and cells * sum(bloom_length(int(sizes[a])) for a in s) > MAX_CANDIDATE_ENTRIES:
            continue
        out.append(s)
    return out


def attribute_epsilons(axis: str, target: float, weights) -> np.ndarray:
    """eps_j of each attribute: target * w_j / sum(w) (whole record) or target * w_j / mean(w) (per attribute)."""
    if axis not in AXES:
        raise InputError(f"the epsilon axis must be one of {', '.join(AXES)}")
    w = np.asarray(weights, dtype=float)
    return target * w / (w.sum() if axis == "whole_record" else w.mean())


def clustered_design(name, data, eps, within: str, tv: float, td: float) -> BudgetedDesign:
    """RR-Clusters with attribute epsilons ``eps``; clusters by Algorithm 1 on the raw data's Cramer's V
    (outside the guarantee); per cluster joint GRR or ``within`` spending eps_C."""
    t0 = time.perf_counter()
    try:
        plan = plan_rr_clusters(data.codes, data.sizes, eps, tv=tv, td=td, within=within)
    except OptRRError as exc:
        return BudgetedDesign(name, None, time.perf_counter() - t0, str(exc))
    out = BudgetedDesign(name, plan.mechanism, time.perf_counter() - t0)
    out.note = f"clusters {plan.clusters} chosen from the raw data (outside the epsilon guarantee)"
    return out


def design_at_attribute_epsilons(method: str, sizes, eps, ctl) -> BudgetedDesign:
    from ..designs import run_design
    from .budgets import OPTIMAL_MAX_K

    if method == "optimal" and len(sizes) > OPTIMAL_MAX_K:
        return BudgetedDesign(method, None, 0.0, f"skipped: the exact LP is slow above {OPTIMAL_MAX_K} attributes")
    t0 = time.perf_counter()
    try:
        d = run_design(method, sizes, eps, cancel=ctl.cancel)
    except OptRRError as exc:
        return BudgetedDesign(method, None, time.perf_counter() - t0, str(exc))
    return BudgetedDesign(method, d.mechanism, time.perf_counter() - t0)


def utility_at(data, axis: str, target: float, eps, ways) -> BudgetedDesign:
    """The utility-aware design for the ``ways``-way marginals: whole-record epsilon <= target (whole-record axis)
    or eps_i <= eps (per-attribute axis, whole-record target sum(eps))."""
    from ..utility.optimal_design import utility_design

    t0 = time.perf_counter()
    orders = sorted({int(w) for w in ways}) or [1, 2]
    try:
        if axis == "whole_record":
            mech, _ = utility_design(data.sizes, target, {"orders": orders})
        else:
            mech, _ = utility_design(data.sizes, float(np.sum(eps)), {"orders": orders}, caps=list(eps))
    except OptRRError as exc:
        return BudgetedDesign(UTILITY_METHOD, None, time.perf_counter() - t0, str(exc))
    return BudgetedDesign(UTILITY_METHOD, mech, time.perf_counter() - t0)


def bloom_summary(name: str, mech) -> dict:
    eps = mech.attribute_epsilons()
    return {
        "method": name,
        "overall_epsilon": mech.overall_epsilon(),
        "stated_overall_epsilon": mech.stated_overall_epsilon(),
        "mean_attribute_epsilon": float(np.mean(eps)),
        "min_attribute_epsilon": float(np.min(eps)),
        "max_attribute_epsilon": float(np.max(eps)),
        "note": f"Bloom filters, h = {mech.hashes}, f per attribute from the paper's formula",
    }


class BloomRun:
    """One perturbation of the data by the Bloom-filter client side, and the four server-side estimators."""

    def __init__(self, mech, codes, rng, need_locop: bool, ctl):
        from ..bloom.copula import LocopModel
        from ..bloom.reports import BloomReports

        self.reports = BloomReports(mech, mech.sample(codes, rng))
        self.locop = LocopModel(self.reports, rng, ctl=ctl) if need_locop else None

    def estimate(self, method: str, attrs) -> np.ndarray:
        from ..bloom import estimators

        if method == "locop":
            if self.locop is None:
                raise OptRRError("LoCop was not fitted for these reports (need_locop=False)")
            return self.locop.joint(attrs)
        fn = {"lasso": estimators.lasso_joint, "lopub": estimators.lopub_joint, "brr": estimators.brr_joint}[method]
        return fn(self.reports, attrs)


def _stats(values) -> tuple[float, float, int]:
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    mean = float(v.mean()) if v.size else float("nan")
    return mean, float(v.std(ddof=1)) if v.size > 1 else float("nan"), int(v.size)


def avd_table(
    data,
    target: float,
    methods=None,
    ways=(2, 3, 4, 5),
    subsets: int = 100,
    repetitions: int = 1,
    weights=None,
    estimator: str = "clip",
    seed: int | None = None,
    tv: float = 50,
    td: float = 0.1,
    progress=None,
    cancel=None,
    axis: str = "whole_record",
    chosen=None,
    rng=None,
):
    """Returns (rows DataFrame: per method and way the mean and sd of AVD and R-squared, designs: summaries).

    ``methods``: design methods (default: every one in optrr_engine.designs.METHODS plus ``rr_clusters``),
    where ``rr_clusters`` is Domingo-Ferrer's joint GRR per cluster and ``rr_clusters_optimized`` the same
    clusters with an optimized design inside each (thresholds ``tv``, ``td``), and the Bloom-filter schemes
    ``lasso``, ``lopub``, ``locop``, ``brr``, and ``utility`` (optrr_engine.utility's design for the compared
    ways' marginals). ``target``: the epsilon on ``axis``. ``chosen``: {way: subsets}
    to reuse (drawn here otherwise); ``rng`` overrides ``seed``.
    """
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from ..bloom import BloomMechanism
    from ..designs import METHODS

    ctl = TaskControl(progress, cancel)
    rng = np.random.default_rng(seed) if rng is None else rng
    methods = list(methods or (tuple(METHODS) + ("rr_clusters",)))
    sizes = data.sizes
    k = len(sizes)
    weights = np.ones(k) if weights is None else np.asarray(weights, dtype=float)
    eps = attribute_epsilons(axis, target, weights)
    bloom = [m for m in methods if m in BLOOM_METHODS]
    plain = [m for m in methods if m not in CLUSTER_METHODS and m not in BLOOM_METHODS and m != UTILITY_METHOD]
    if axis == "whole_record":
        designs = designs_at_budget(sizes, weights, target, plain, ctl.sub(0.0, 0.3))
    else:
        designs = {m: design_at_attribute_epsilons(m, sizes, eps, ctl) for m in plain}
    for m in methods:
        if m in CLUSTER_METHODS:
            designs[m] = clustered_design(m, data, eps, CLUSTER_METHODS[m], tv, td)
    mech = BloomMechanism.from_epsilons(sizes, eps) if bloom else None
    ways = [w for w in ways if 2 <= w <= k]
    if UTILITY_METHOD in methods:
        designs[UTILITY_METHOD] = utility_at(data, axis, target, eps, ways)
    if chosen is None:
        chosen = {w: draw_subsets(k, w, subsets, sizes, rng, bloom=bool(bloom)) for w in ways}
    truth = {
        (w, i): count_codes(data.codes[:, s], [int(sizes[a]) for a in s]) / data.rows
        for w in ways
        for i, s in enumerate(chosen[w])
    }
    values: dict[tuple[str, int], tuple[list[float], list[float]]] = {(m, w): ([], []) for m in methods for w in ways}

    def record(m, w, i, est):
        values[(m, w)][0].append(avd(truth[(w, i)], est))
        values[(m, w)][1].append(r_squared(truth[(w, i)], est))

    built = {m: designs[m].mechanism for m in methods if m in designs}
    ok = {m: mech_m for m, mech_m in built.items() if mech_m is not None}  # the designs that could be built
    steps = max(1, repetitions * (len(ok) + len(bloom)))
    done = 0
    # small dense problems: one BLAS thread is faster than several competing ones
    with threadpool_limits(limits=1):
        for _ in range(repetitions):
            for m in ok:
                ctl.check()
                dmech = ok[m]
                perturbed = dmech.sample(data.codes, rng)
                for w in ways:
                    for i, s in enumerate(chosen[w]):
                        record(m, w, i, estimate_subset(dmech, perturbed, sizes, s, estimator))
                done += 1
                ctl.report(0.3 + 0.7 * done / steps, f"{m}: AVD of random marginals")
            if bloom:
                ctl.check()
                run = BloomRun(mech, data.codes, rng, "locop" in bloom, ctl)
                for m in bloom:
                    for w in ways:
                        for i, s in enumerate(chosen[w]):
                            ctl.check()
                            record(m, w, i, run.estimate(m, s))
                    done += 1
                    ctl.report(0.3 + 0.7 * done / steps, f"{m}: AVD of random marginals")
    summaries = {m: designs[m].summary() for m in designs}
    for m in bloom:
        summaries[m] = bloom_summary(m, mech)
    rows = []
    for m in methods:
        summ = summaries[m]
        for w in ways:
            mean_avd, sd_avd, n_avd = _stats(values[(m, w)][0])
            mean_r2, sd_r2, n_r2 = _stats(values[(m, w)][1])
            rows.append(
                {
                    "dataset": data.name,
                    "method": m,
                    "way": w,
                    "epsilon_axis": axis,
                    "epsilon": target,
                    "target_epsilon": target,
                    "overall_epsilon": summ.get("overall_epsilon", float("nan")),
                    "stated_overall_epsilon": summ.get("stated_overall_epsilon", float("nan")),
                    "mean_attribute_epsilon": summ.get("mean_attribute_epsilon", float("nan")),
                    "mean_avd": mean_avd,
                    "sd_avd": sd_avd,
                    "mean_r2": mean_r2,
                    "sd_r2": sd_r2,
                    "estimates": n_avd,
                    "r2_estimates": n_r2,
                    "subsets": len(chosen[w]),
                    "repetitions": repetitions,
                    "error": summ.get("error", ""),
                }
            )
    return pd.DataFrame(rows), [summaries[m] for m in methods]


def avd_sweep(
    data,
    epsilons,
    axes=AXES,
    methods=None,
    ways=(2, 3, 4, 5),
    subsets: int = 100,
    repetitions: int = 1,
    weights=None,
    estimator: str = "clip",
    seed: int | None = None,
    progress=None,
    cancel=None,
):
    """:func:`avd_table` for every (axis, epsilon), on the same attribute subsets; rows concatenated, and the
    design summaries with their axis and epsilon."""
    import pandas as pd

    ctl = TaskControl(progress, cancel)
    rng = np.random.default_rng(seed)
    methods = list(methods) if methods else None
    k = len(data.sizes)
    bloom = methods is not None and any(m in BLOOM_METHODS for m in methods)
    ways = [w for w in ways if 2 <= w <= k]
    chosen = {w: draw_subsets(k, w, subsets, data.sizes, rng, bloom=bloom) for w in ways}
    cases = [(a, float(e)) for a in axes for e in epsilons]
    frames: list = []
    designs: list[dict] = []
    for i, (axis, eps) in enumerate(cases):
        sub = ctl.sub(i / len(cases), (i + 1) / len(cases))
        rows, summ = avd_table(
            data,
            eps,
            methods,
            ways,
            subsets,
            repetitions,
            weights,
            estimator,
            progress=sub.progress,
            cancel=cancel,
            axis=axis,
            chosen=chosen,
            rng=rng,
        )
        frames.append(rows)
        designs.extend({**d, "epsilon_axis": axis, "epsilon": eps} for d in summ)
    return pd.concat(frames, ignore_index=True), designs
