"""Budget mode of the exact LP (``optimal``) on cirrhosis' shape: the 19 columns the GUI proposes for
tests/data/cirrhosis.csv (their category counts below), equal weights, whole-record target 3 (the safe start).

For each k (the first k columns): the budget search with the LP over the grid of classes of identical (a_i, eps_i)
(designs/optimal_lp.ClassLPProblem, the default) and, with ``--full``, with the LP over all 2^k patterns (the path
before it; minutes at k = 19). Prints the LP's size, the LPs solved, wall and CPU seconds, the scale and the
whole-record epsilon (the two paths agree to 1e-9 relative: the same optimum). ``--methods`` adds other designs'
budget searches (auto, classes; ``utility`` is the GUI's budget-only design) at the same target for comparison.

Usage: python3 bench/optimal_budget.py [--ks 12,14,16,19] [--full] [--methods auto,classes,utility] [--target 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from optrr_engine.budget import distribute_budget, forget_remembered
from optrr_engine.designs import optimal_lp
from optrr_engine.errors import OptRRError

#: Category counts of the 19 columns the GUI proposes for cirrhosis.csv (ID dropped), in file order.
CIRRHOSIS = [4, 3, 3, 4, 2, 3, 3, 3, 3, 4, 5, 4, 5, 5, 5, 5, 5, 4, 5]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def counting_lps():
    """Wrap optimal_lp.optimal to count the exact LPs solved; returns the counter list."""
    solved: list[int] = []
    inner = optimal_lp.optimal

    def counted(sizes, eps, ctl=None):
        mech, info = inner(sizes, eps, ctl)
        solved.append(int(info.get("solver_runs", 1)))
        return mech, info

    optimal_lp.optimal = counted
    return solved, inner


def search(method: str, sizes, target: float) -> str:
    """One budget search from scratch: its line of the table."""
    forget_remembered()
    k = len(sizes)
    if method == "utility":
        from optrr_engine.utility.optimal_design import utility_design

        (mech, _), wall, cpu = timed(lambda: utility_design(sizes, target, {"orders": [1, 2]}))
        return f"{'':>14} {'':>4} {wall:8.2f} {cpu:8.2f} {'':>12} {mech.overall_epsilon():.12g}"
    solved, inner = counting_lps()
    try:
        res, wall, cpu = timed(lambda: distribute_budget(method, sizes, np.ones(k), target))
    except OptRRError as exc:
        return f"failed: {exc}"
    finally:
        optimal_lp.optimal = inner
    info = res.design.info
    size = f"{info.get('lp_rows', '-')}x{info.get('lp_columns', '-')}" if "lp_rows" in info else info.get("design")
    return f"{size:>14} {sum(solved):4d} {wall:8.2f} {cpu:8.2f} {res.scale:.10f} {res.design.overall_epsilon:.12g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="12,14,16,19")
    ap.add_argument("--target", type=float, default=3.0)
    ap.add_argument("--full", action="store_true", help="also the LP over all 2^k patterns (slow)")
    ap.add_argument("--methods", default="", help="other designs to time at the same request")
    args = ap.parse_args()
    print(
        f"{'k':>3} {'design':<10} {'LP rows x cols':>14} {'LPs':>4} {'wall s':>8} {'CPU s':>8} {'scale':>12} eps_total"
    )
    for k in map(int, args.ks.split(",")):
        sizes = CIRRHOSIS[:k]
        print(f"{k:3d} {'optimal':<10} {search('optimal', sizes, args.target)}", flush=True)
        if args.full:
            inner = optimal_lp.lp_problem
            optimal_lp.lp_problem = optimal_lp.LPProblem
            try:
                print(f"{k:3d} {'opt. 2^k':<10} {search('optimal', sizes, args.target)}", flush=True)
            finally:
                optimal_lp.lp_problem = inner
        for method in filter(None, args.methods.split(",")):
            print(f"{k:3d} {method:<10} {search(method, sizes, args.target)}", flush=True)


if __name__ == "__main__":
    main()
