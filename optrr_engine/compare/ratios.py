"""Yamamoto & Shibuya Figs. 1-4: whole-record epsilon of Kronecker, optimal and heuristic designs.

- ``fixed_sizes`` (Figs. 1-2): a_i = 5, eps_i ~ U(1, 8);
- ``fixed_epsilons`` (Figs. 3-4): eps_i = 3, a_i = int(U(2, 16)) (the authors' notebook).
For each random set the heuristic runs first and, as in the authors' code, its achieved eps_i (which may
differ from the request) are the eps_i of all three designs; the flag ``heuristic_changed`` says when.
Figs. 1 and 3 plot eps_total / sum(eps_i) against sum(eps_i) or sum(a_i); Figs. 2 and 4 the heuristic's
eps_total over the optimum's.
"""

from __future__ import annotations

import numpy as np

from ..errors import InfeasibleError
from ..tasks import TaskControl

MODES = ("fixed_sizes", "fixed_epsilons")


def draw_case(mode: str, k: int, rng: np.random.Generator):
    if mode == "fixed_sizes":
        return np.full(k, 5, dtype=np.int64), rng.uniform(1.0, 8.0, k)
    if mode == "fixed_epsilons":
        return rng.uniform(2, 16, k).astype(np.int64), np.full(k, 3.0)
    raise ValueError(f"mode must be one of {MODES}")


def ratio_curves(
    ks=(3, 5, 7, 10),
    sets: int = 200,
    mode: str = "fixed_sizes",
    methods=("kronecker", "optimal", "heuristic"),
    seed: int | None = None,
    progress=None,
    cancel=None,
):
    """DataFrame: one row per (k, set, method) with sum_eps, sum_a, overall_epsilon, ratio_to_sum, ratio_to_optimal."""
    import pandas as pd

    from ..designs import run_design

    ctl = TaskControl(progress, cancel)
    rng = np.random.default_rng(seed)
    rows = []
    total = len(ks) * sets
    done = 0
    for k in ks:
        for s in range(sets):
            ctl.check()
            sizes, requested = draw_case(mode, int(k), rng)
            heur = run_design("heuristic", sizes, requested)
            eps = heur.attribute_epsilons
            changed = bool(heur.epsilon_changes())
            results = {}
            for m in methods:
                if m == "heuristic":
                    results[m] = heur.overall_epsilon
                    continue
                try:
                    results[m] = run_design(m, sizes, eps).overall_epsilon
                except InfeasibleError:
                    results[m] = float("nan")
            opt = results.get("optimal", float("nan"))
            for m, total_eps in results.items():
                rows.append(
                    {
                        "mode": mode,
                        "k": int(k),
                        "set": s,
                        "method": m,
                        "sum_eps": float(np.sum(eps)),
                        "sum_a": int(np.sum(sizes)),
                        "overall_epsilon": total_eps,
                        "ratio_to_sum": total_eps / float(np.sum(eps)),
                        "ratio_to_optimal": total_eps / opt if np.isfinite(opt) else float("nan"),
                        "heuristic_changed": changed,
                    }
                )
            done += 1
            ctl.report(done / total, f"k = {k}: set {s + 1} of {sets}")
    return pd.DataFrame(rows)
