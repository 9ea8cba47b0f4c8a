"""AVD of k-way marginals (k = 2..5) at one whole-record epsilon, for every design, on a real data set.

Every design gets the same whole-record epsilon through the budget policy (equal weights unless given).
Per repetition the data set is perturbed once per design; for each way w, ``subsets`` random attribute
subsets of size w are drawn (the same subsets for every design), each subset's joint distribution is
estimated by the structured inverse (then clip-and-rescale, or IBU) and compared with the true one:
AVD = 1/2 sum |P - Q| (LOPUB/LOCOP/BRR paper). Means and standard deviations over subsets and repetitions.
"""

from __future__ import annotations

import time

import numpy as np

from ..analysis.avd import avd
from ..analysis.rr_clusters import plan_rr_clusters
from ..errors import InputError, OptRRError
from ..estimation.counts import count_codes
from ..estimation.nonnegative import clip_and_rescale, iterative_bayesian_update
from ..estimation.operator import StructuredOperator
from ..tasks import TaskControl
from .budgets import BudgetedDesign, designs_at_budget

#: Pseudo-methods: RR-Clusters with joint GRR (the paper) or the best exact design inside each cluster.
CLUSTER_METHODS = {"rr_clusters": "joint_grr", "rr_clusters_optimized": "auto"}

#: Largest number of cells of a k-way marginal estimated in the comparison.
MAX_CELLS = 200_000


def estimate_subset(mechanism, perturbed, sizes, attrs, method: str = "clip") -> np.ndarray:
    sub = [int(sizes[a]) for a in attrs]
    counts = count_codes(perturbed[:, attrs], sub)
    lam = counts / counts.sum()
    op = StructuredOperator.from_mechanism(mechanism.marginal(attrs))
    if method != "ibu":
        try:
            return clip_and_rescale(op.solve(lam))
        except InputError:  # not identifiable by inversion: the EM estimate still exists
            pass
    return iterative_bayesian_update(op, lam, max_iter=2000, tol=1e-8).estimate


def draw_subsets(k: int, way: int, count: int, sizes, rng) -> list[list[int]]:
    out = []
    tries = 0
    while len(out) < count and tries < 50 * count:
        tries += 1
        s = sorted(rng.choice(k, size=way, replace=False).tolist())
        if np.prod([int(sizes[a]) for a in s]) <= MAX_CELLS:
            out.append(s)
    return out


def clustered_design(name, data, weights, target: float, within: str, tv: float, td: float) -> BudgetedDesign:
    """RR-Clusters at the whole-record budget: eps_i = target * w_i / sum(w); clusters by Algorithm 1 on the
    raw data's Cramer's V (outside the guarantee); per cluster joint GRR or ``within`` spending eps_C."""
    t0 = time.perf_counter()
    w = np.asarray(weights, dtype=float)
    eps = target * w / w.sum()
    try:
        plan = plan_rr_clusters(data.codes, data.sizes, eps, tv=tv, td=td, within=within)
    except OptRRError as exc:
        return BudgetedDesign(name, None, time.perf_counter() - t0, str(exc))
    out = BudgetedDesign(name, plan.mechanism, time.perf_counter() - t0)
    out.note = f"clusters {plan.clusters} chosen from the raw data (outside the epsilon guarantee)"
    return out


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
):
    """Returns (rows DataFrame: per design and way the mean and sd of AVD, designs: list of design summaries).

    ``methods``: design methods (default: every one in optrr_engine.designs.METHODS plus ``rr_clusters``),
    where ``rr_clusters`` is Domingo-Ferrer's joint GRR per cluster and ``rr_clusters_optimized`` the same
    clusters with an optimized design inside each (thresholds ``tv``, ``td``).
    """
    import pandas as pd

    from ..designs import METHODS

    ctl = TaskControl(progress, cancel)
    rng = np.random.default_rng(seed)
    methods = list(methods or (tuple(METHODS) + ("rr_clusters",)))
    sizes = data.sizes
    k = len(sizes)
    weights = np.ones(k) if weights is None else np.asarray(weights, dtype=float)
    plain = [m for m in methods if m not in CLUSTER_METHODS]
    designs = designs_at_budget(sizes, weights, target, plain, ctl.sub(0.0, 0.5))
    for m in methods:
        if m in CLUSTER_METHODS:
            designs[m] = clustered_design(m, data, weights, target, CLUSTER_METHODS[m], tv, td)
    ways = [w for w in ways if 2 <= w <= k]
    chosen = {w: draw_subsets(k, w, subsets, sizes, rng) for w in ways}
    truth = {
        (w, i): count_codes(data.codes[:, s], [int(sizes[a]) for a in s]) / data.rows
        for w in ways
        for i, s in enumerate(chosen[w])
    }
    values = {(m, w): [] for m in methods for w in ways}
    ok = [m for m in methods if designs[m].ok]
    steps = max(1, repetitions * len(ok))
    done = 0
    for _ in range(repetitions):
        for m in ok:
            ctl.check()
            mech = designs[m].mechanism
            perturbed = mech.sample(data.codes, rng)
            for w in ways:
                for i, s in enumerate(chosen[w]):
                    values[(m, w)].append(avd(truth[(w, i)], estimate_subset(mech, perturbed, sizes, s, estimator)))
            done += 1
            ctl.report(0.5 + 0.5 * done / steps, f"{m}: AVD of random marginals")
    rows = []
    for m in methods:
        summ = designs[m].summary()
        for w in ways:
            v = values[(m, w)]
            rows.append(
                {
                    "dataset": data.name,
                    "method": m,
                    "way": w,
                    "target_epsilon": target,
                    "overall_epsilon": summ.get("overall_epsilon", float("nan")),
                    "mean_attribute_epsilon": summ.get("mean_attribute_epsilon", float("nan")),
                    "mean_avd": float(np.mean(v)) if v else float("nan"),
                    "sd_avd": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                    "subsets": len(chosen[w]),
                    "error": summ.get("error", ""),
                }
            )
    return pd.DataFrame(rows), [d.summary() for d in designs.values()]
