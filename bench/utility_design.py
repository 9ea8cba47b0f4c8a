"""Utility design and predicted error (issue 13), one run on this machine; prints times, gaps and ratios.

1. Utility-optimal design at k = 10 and k = 16 (a_i cycling 2,3,4,5; whole-record eps 1, 2, 4, 8), all 1- and
   2-way marginals: (a) whole orders, solved by classes of identical attributes; (b) the same marginals named one
   by one, which forces the general problem over all 2^k patterns. Time (targets: k = 10 <= 2 s, k = 16 <= 30 s)
   and the certified relative optimality gap.
2. Predicted vs simulated error: real sampler + estimator, R repetitions, n rows, uniform and skewed priors;
   ratio predicted / simulated for the unbiased estimator (expected squared error is exact, AVD uses the normal
   approximation) and, for comparison, the AVD of the non-negative estimators (clip; IBU with --ibu).

Usage: python3 bench/utility_design.py [--reps 200] [--skip-sim] [--ibu]
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from optrr_engine.budget import distribute_budget  # noqa: E402
from optrr_engine.estimation import estimate_marginal  # noqa: E402
from optrr_engine.utility import IndependentPrior, predicted_error  # noqa: E402
from optrr_engine.utility.optimal_design import utility_design  # noqa: E402


def sizes_for(k):
    return [[2, 3, 4, 5][i % 4] for i in range(k)]


def solve_times():
    print("utility-optimal design, all 1- and 2-way marginals")
    print("(work: the decomposition's counted reference seconds, budget WORK_BUDGET; the same on every machine)")
    print(
        f"{'k':>3} {'eps':>4} {'formulation':>12} {'cells':>7} {'seconds':>8} {'cpu s':>7} {'work':>6} "
        f"{'rel. gap':>9} {'steps':>6}"
    )
    for k in (10, 16):
        sizes = sizes_for(k)
        named = {"sets": [(i,) for i in range(k)] + list(combinations(range(k), 2))}
        for eps in (1.0, 2.0, 4.0, 8.0):
            for label, spec in (("classes", {"orders": [1, 2]}), ("general", named)):
                t0, c0 = time.perf_counter(), time.thread_time()
                mech, info = utility_design(sizes, eps, spec)
                sec, cpu = time.perf_counter() - t0, time.thread_time() - c0
                assert mech.overall_epsilon() <= eps * (1 + 1e-12)
                print(
                    f"{k:>3} {eps:>4g} {label:>12} {info['grid_cells']:>7} {sec:>8.2f} {cpu:>7.2f} "
                    f"{info['solver_work']:>6.2f} {info['relative_gap']:>9.1e} "
                    f"{info['solver_iterations']:>6}",
                    flush=True,
                )


METHODS = ["unbiased", "clip"]


def simulate(mech, attrs, prior, n, reps, rng):
    sizes = mech.sizes
    joint = prior.marginal(sizes, tuple(range(mech.k)))
    flat = joint.reshape(-1)
    truth = joint.sum(axis=tuple(i for i in range(mech.k) if i not in attrs))
    out = {"sq": [], **{m: [] for m in METHODS}}
    for _ in range(reps):
        cells = rng.choice(flat.size, size=n, p=flat)
        codes = np.stack(np.unravel_index(cells, tuple(sizes)), axis=1)
        sub = mech.sample(codes, rng)[:, list(attrs)]
        counts = np.zeros(tuple(int(sizes[i]) for i in attrs))
        np.add.at(counts, tuple(sub.T), 1)
        for method in METHODS:
            est = estimate_marginal(mech, attrs, counts, method=method).estimate
            out[method].append(0.5 * float(np.abs(est - truth).sum()))
            if method == "unbiased":
                out["sq"].append(float(((est - truth) ** 2).sum()))
    return {key: float(np.mean(v)) for key, v in out.items()}


def prediction_ratios(reps):
    rng = np.random.default_rng(2026)
    sizes = [3, 4, 2, 3]
    n = 2000
    print(f"\npredicted / simulated error ({reps} releases of {n} rows, sizes {sizes})")
    print(
        f"{'design':>10} {'eps':>4} {'prior':>7} {'marginal':>9} {'sq err':>7} "
        + " ".join(f"{'AVD ' + m:>9}" for m in METHODS)
    )
    ratios = []
    for method, eps in (("kronecker", 2.0), ("optimal", 2.0), ("kronecker", 6.0), ("utility", 2.0), ("utility", 6.0)):
        if method == "utility":
            mech = utility_design(sizes, eps, {"orders": [1, 2]})[0]
        else:
            mech = distribute_budget(method, sizes, [1.0] * 4, eps).design.mechanism
        for prior_name in ("uniform", "skewed"):
            one_way = [np.ones(a) if prior_name == "uniform" else rng.dirichlet(np.ones(a)) for a in sizes]
            prior = IndependentPrior(one_way)
            for attrs in ((0,), (0, 1), (1, 2, 3)):
                pe = predicted_error(mech, n, {"sets": [attrs]}, prior).marginals[0]
                if not pe.identifiable:
                    print(f"{method:>10} {eps:>4g} {prior_name:>7} {str(attrs):>9}  non-identifiable: {pe.reason}")
                    continue
                sim = simulate(mech, attrs, prior, n, reps, rng)
                row = [pe.expected_squared_error / sim["sq"]] + [pe.expected_avd / sim[m] for m in METHODS]
                ratios.append(row)
                print(
                    f"{method:>10} {eps:>4g} {prior_name:>7} {str(attrs):>9} " + " ".join(f"{r:>8.3f}" for r in row),
                    flush=True,
                )
    med = np.median(np.array(ratios), axis=0)
    print(
        "median ratio: squared error " + ", AVD ".join(f"{n} {v:.3f}" for n, v in zip(["", *METHODS], med, strict=True))
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--skip-sim", action="store_true")
    ap.add_argument("--ibu", action="store_true", help="also simulate the IBU estimator (slow)")
    args = ap.parse_args()
    if args.ibu:
        METHODS.append("ibu")
    solve_times()
    if not args.skip_sim:
        prediction_ratios(args.reps)


if __name__ == "__main__":
    main()
