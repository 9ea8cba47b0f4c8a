"""Certified lower bounds on the optimal whole-record epsilon OPT(a, eps) for exact eps_i.

Two facts make any smaller problem a lower bound:
1. Marginals: the induced mechanism of an optimal mechanism on a subset A of attributes keeps every eps_i
   of A and is never less private than the whole, so OPT(a, eps) >= OPT(a_A, eps_A).
2. Monotonicity: post-processing output attribute i with a GRR channel lowers its eps_i continuously to any
   value in (0, eps_i] without touching the other attributes or raising the whole-record epsilon, so
   OPT is non-decreasing in every eps_i: OPT(a, eps) >= OPT(a, eps') whenever eps' <= eps.
So rounding eps_i DOWN to a few levels within groups of equal a_i gives a classes problem whose exact
dual bound (designs.classes) is a certified bound, and any <= 16-attribute subset's exact LP optimum is one.
3. Weak duality of the full LP with a Chernoff bound on its objective (chernoff_dual_bound): any k, instant.
The costly searches take a :class:`~.work.WorkBudget` (predicted seconds), so the bound is deterministic.
"""

from __future__ import annotations

import numpy as np

from .work import G_EVAL_PER_CELL, WorkBudget

#: Fewest evaluations of G worth a combined-classes search (below this it is skipped).
MIN_G_EVALUATIONS = 60
#: Most evaluations of G in one combined-classes search (Nelder-Mead's own limit).
MAX_G_EVALUATIONS = 4000


def classes_rounding_bound(sizes, epsilons, work: WorkBudget | None = None) -> tuple[float, str]:
    """Best bound from subsets with at most 3 (a, eps') classes, eps' = eps rounded down within each a.
    The combined searches run only as far as ``work`` (default: unlimited) allows."""
    from .classes import ClassProblem

    work = work if work is not None else WorkBudget(float("inf"))

    sizes = np.asarray(sizes, dtype=np.int64)
    eps = np.asarray(epsilons, dtype=float)
    best, how = 0.0, ""
    per_size = {}
    for a in np.unique(sizes):
        e_sorted = np.sort(eps[sizes == a])[::-1]
        n_all = e_sorted.size
        cands = sorted({max(1, int(round(q * n_all))) for q in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0)})
        scored = []
        for n in cands:
            level = float(e_sorted[n - 1])
            prob = ClassProblem([a], [level], [n])
            b = prob.lower_bound(np.array([1.0 / prob.delta[0]]))
            scored.append((b, n, level))
            if b > best:
                best, how = b, f"{n} attributes with a = {a} at eps = {level:.6g}"
        per_size[int(a)] = sorted(scored, reverse=True)[:3]
    # combine the strongest groups of up to three sizes
    keys = sorted(per_size, key=lambda a: per_size[a][0][0], reverse=True)[:3]
    if len(keys) >= 2:
        for pick in range(min(3, min(len(per_size[a]) for a in keys))):
            groups = [per_size[a][min(pick, len(per_size[a]) - 1)] for a in keys]
            counts = np.asarray([g[1] for g in groups], dtype=float)
            outer_cells = float(np.prod(counts + 1) / (counts.max() + 1))
            evaluations = int(min(MAX_G_EVALUATIONS, work.left / (outer_cells * G_EVAL_PER_CELL)))
            if outer_cells > 2e6 or evaluations < MIN_G_EVALUATIONS:
                continue
            work.spend(evaluations * outer_cells * G_EVAL_PER_CELL)
            prob = ClassProblem(keys, [g[2] for g in groups], [g[1] for g in groups])
            lam = prob.minimise(max_evaluations=evaluations)
            b = prob.lower_bound(lam)
            if b > best:
                best = b
                how = "; ".join(
                    f"{g[1]} attributes with a = {a} at eps = {g[2]:.6g}" for a, g in zip(keys, groups, strict=True)
                )
    return best, how


def subset_lp_bound(sizes, epsilons, max_attrs: int = 12) -> tuple[float, str]:
    """Exact LP optimum of the max_attrs attributes with the largest eps_i (ties: more categories)."""
    from .optimal_lp import optimal

    sizes = np.asarray(sizes, dtype=np.int64)
    eps = np.asarray(epsilons, dtype=float)
    order = np.lexsort((-sizes, -eps))[:max_attrs]
    mech, info = optimal(sizes[order], eps[order])
    return float(info.get("lower_bound", mech.overall_epsilon())), f"exact LP on {len(order)} attributes"


def best_lower_bound(sizes, epsilons, work: WorkBudget) -> tuple[float, str]:
    """The best of the bounds above; the subset LP and the classes searches are charged to ``work``."""
    from .work import lp_seconds

    bounds = [(float(np.max(epsilons)), "largest single eps_i"), chernoff_dual_bound(sizes, epsilons)]
    subset = min(12, len(sizes))
    seconds = lp_seconds(subset, int(np.max(sizes)))  # at most: the subset's largest a_i is no larger
    if work.affords(seconds):
        work.spend(seconds)
        try:
            bounds.append(subset_lp_bound(sizes, epsilons, subset))
        except Exception:  # a bound that cannot be computed is simply not used
            pass
    bounds.append(classes_rounding_bound(sizes, epsilons, work))
    return max(bounds)


def chernoff_dual_bound(sizes, epsilons) -> tuple[float, str]:
    """Dual bound of the exact LP with a Chernoff bound on its objective, for any k.

    In the LP of designs.optimal_lp (rows scaled by sigma_i = 1/(1 + r_i)), any lam with lam.w > 0 gives
    s* <= E_u[(lam.h_S)_+] / lam.w, where under u the events "i in S" are independent with
    p_i = (a_i - 1)/a_i and lam.h_S = sum_i lam_i sigma_i (1 if i not in S else -r_i). Since
    y_+ <= e^{y - 1}, E_u[(lam.h_S)_+] <= e^{-1} prod_i ((1 - p_i) e^{lam_i sigma_i} + p_i e^{-lam_i sigma_i r_i}),
    so eps_total* = ln(1 + 1/s*) >= ln(1 + e^{-Phi(lam)}), Phi = -1 + sum_i psi_i(lam_i) - ln(lam.w).
    Phi is convex; for a multiplier kappa each coordinate's stationarity psi_i'(lam_i) = kappa w_i has a
    closed form, and kappa is found by a bounded 1-D search. Valid for any lam, so always certified.
    """
    a = np.asarray(sizes, dtype=float)
    e = np.exp(np.asarray(epsilons, dtype=float))
    p = (a - 1.0) / a
    r = e / (a - 1.0)
    sig = 1.0 / (1.0 + r)
    w = (e - 1.0) / a * sig
    hi = float(np.min(sig / w))  # kappa w_i must stay below the top value sigma_i

    def lam_of(kappa):
        m = kappa * w
        q = (m + sig * r) / (sig * (1.0 + r))
        q = np.clip(q, 1e-300, 1 - 1e-16)
        return (np.log(q) - np.log1p(-q) - np.log((1.0 - p) / p)) / (sig * (1.0 + r))

    def phi(lam):
        lw = float(lam @ w)
        if lw <= 0:
            return np.inf
        terms = np.logaddexp(np.log1p(-p) + lam * sig, np.log(p) - lam * sig * r)
        return -1.0 + float(terms.sum()) - np.log(lw)

    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda t: phi(lam_of(hi * np.exp(t))), bounds=(-60.0, -1e-12), method="bounded", options={"xatol": 1e-10}
    )
    val = phi(lam_of(hi * np.exp(res.x)))
    if not np.isfinite(val):
        return 0.0, "Chernoff dual bound (not available)"
    return float(np.logaddexp(0.0, -val)), "Chernoff dual bound of the exact LP"
