"""Budget mode's search for the scale (optrr_engine.budget.distribute_budget) on real data sets' shapes.

Per data set (its categorical attribute sizes, equal weights) and whole-record target: the number of designs
the search ran, wall and CPU seconds, the scale c found, the achieved whole-record epsilon and its relative gap
below the target, and which design ``auto`` returned at that scale (an exact optimum, ``classes`` / ``optimal``,
or a product of blocks etc.); then the wall and CPU seconds of ``recommend()`` (every design kind at the target,
the needed marginals of ``--orders``). Wall time includes whatever else the machine runs; compare runs made
under the same load, and read the CPU column.

Usage: python3 bench/budget_search.py [--datasets house_votes_84,cirrhosis] [--eps 1,2,4,8] [--methods auto]
       [--extra-data DIR] [--no-recommend]
(the engine imported is the one on PYTHONPATH, so the same script times another checkout of the engine.)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import optrr_engine.budget as budget_module
from optrr_engine.budget import distribute_budget
from optrr_engine.compare.datasets import load_dataset
from optrr_engine.utility.recommend import recommend

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def fresh() -> None:
    """Forget remembered budget-mode designs (an engine without them has nothing to forget)."""
    getattr(budget_module, "forget_remembered", lambda: None)()


def one(data, method: str, target: float, orders) -> None:
    """One line: the budget search for ``method`` at ``target``, and recommend() (when ``orders``) for auto,
    each from scratch."""
    fresh()
    sizes = data.sizes
    k = sizes.size
    res, wall, cpu = timed(lambda: distribute_budget(method, sizes, np.ones(k), target))
    eps = res.design.overall_epsilon
    rec = ""
    if orders and method == "auto":
        fresh()
        _, r_wall, r_cpu = timed(lambda: recommend(sizes, target, rows=data.rows, marginals={"orders": orders}))
        rec = f"{r_wall:8.1f} {r_cpu:8.1f}"
    print(
        f"{data.name:>16} {k:>3} {method:>9} {target:>4g} {res.evaluations:>7} {wall:>8.2f} {cpu:>8.2f} "
        f"{res.scale:>10.6g} {eps:>10.7g} {(target - eps) / target:>9.2e} "
        f"{str(res.design.info.get('design', method))[:22]:>22} {rec}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="house_votes_84")
    ap.add_argument("--extra-data", default=None, help="folder searched for data sets not in tests/data")
    ap.add_argument("--eps", default="1,2,4,8")
    ap.add_argument("--methods", default="auto")
    ap.add_argument("--orders", default="1,2", help="marginal orders recommend() is asked for")
    ap.add_argument("--no-recommend", action="store_true")
    args = ap.parse_args()
    orders = [int(o) for o in args.orders.split(",")]
    print(
        f"{'data':>16} {'k':>3} {'method':>9} {'eps':>4} {'designs':>7} {'wall s':>8} {'cpu s':>8} "
        f"{'scale':>10} {'eps_total':>10} {'gap':>9} {'design':>22} {'rec wall':>8} {'rec cpu':>8}"
    )
    for name in args.datasets.split(","):
        path = os.path.join(DATA, f"{name}.csv")
        if not os.path.exists(path) and args.extra_data:
            path = os.path.join(args.extra_data, f"{name}.csv")
        data = load_dataset(path)
        for method in args.methods.split(","):
            for target in (float(e) for e in args.eps.split(",")):
                one(data, method, target, None if args.no_recommend else orders)


if __name__ == "__main__":
    main()
