"""auto's work budget (issue 11): wall and CPU seconds against the nominal budget, and the cost model.

- auto at k = 10, 100, 1,000, 10,000 (a_i in 2..5, eps_i in [0.5, 8), seeded) with the default 5 s budget:
  wall seconds, CPU seconds of this process, ratio to the budget, whole-record epsilon, winning design;
- the measured cost of the steps auto plans with, next to optrr_engine.designs.work's predictions
  (exact LP on g attributes, a closed-form pair), to re-fit the constants on another machine.
Wall time includes whatever else the machine runs; CPU time is what auto itself used.

Usage: python3 bench/auto_budget.py [--ks 10,100,1000,10000] [--budget 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from optrr_engine.designs import run_design, work  # noqa: E402


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench_auto(ks, budget: float) -> None:
    print(f"== auto, budget {budget:g} s ==")
    print(f"{'k':>6} {'wall s':>8} {'cpu s':>8} {'cpu/budget':>10} {'eps_total':>12} {'lower bound':>12}  design")
    for k in ks:
        rng = np.random.default_rng(k)
        sizes, eps = rng.integers(2, 6, k), rng.uniform(0.5, 8.0, k)
        d, wall, cpu = timed(lambda sizes=sizes, eps=eps: run_design("auto", sizes, eps, budget=budget))
        lb = d.info["lower_bound"]
        print(
            f"{k:>6} {wall:>8.2f} {cpu:>8.2f} {cpu / budget:>10.2f} {d.overall_epsilon:>12.3f} {lb:>12.3f}  "
            f"{d.info['design']}"
        )


def bench_costs() -> None:
    from optrr_engine.designs.heuristic import heuristic
    from optrr_engine.designs.optimal_lp import optimal

    print("== cost model: measured CPU seconds vs optrr_engine.designs.work ==")
    print(f"{'step':>14} {'measured':>10} {'predicted':>10}")
    rng = np.random.default_rng(0)
    for g in (4, 8, 10, 12, 14, 16):
        reps = max(1, 1024 >> g)
        cases = [(rng.integers(2, 6, g), rng.uniform(0.5, 8.0, g)) for _ in range(reps)]
        _, _, cpu = timed(lambda cases=cases: [optimal(s, e) for s, e in cases])
        print(f"{'LP g=' + str(g):>14} {cpu / reps:>10.4f} {work.lp_seconds(g):>10.4f}")
    # columns with many categories (record numbers, dates, postcodes perturbed on purpose): the LARGE_CATEGORY_FACTOR
    large = [309, 309, 300, 150, 2, 2, 3, 2, 2, 2, 3, 2, 2, 2, 2, 2, 2, 2]
    for g in (14, 16, 17, 18):
        _, _, cpu = timed(lambda g=g: optimal(large[:g], np.ones(g)))
        print(f"{'LP big g=' + str(g):>14} {cpu:>10.4f} {work.lp_seconds(g, 309):>10.4f}")
    cases = [(rng.integers(2, 6, 2), rng.uniform(0.5, 8.0, 2)) for _ in range(500)]
    _, _, cpu = timed(lambda: [heuristic(s, e) for s, e in cases])
    print(f"{'pair':>14} {cpu / 500:>10.5f} {work.PAIR:>10.5f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="10,100,1000,10000")
    ap.add_argument("--budget", type=float, default=5.0)
    args = ap.parse_args()
    bench_auto([int(k) for k in args.ks.split(",")], args.budget)
    bench_costs()


if __name__ == "__main__":
    main()
