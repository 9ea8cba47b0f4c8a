"""Utility design over pooled classes (issue 13 item 2 beyond one grid), one run; prints times and ratios.

1. Pooled against exact where both solve: size vectors of the bench data sets with at least 3 classes of
   identical columns, and synthetic mixes; all 1-way and all 1- and 2-way marginals; whole-record eps 1, 2, 4, 8.
   The pooled design (X_S depends on the differing count per pool of neighbouring sizes) at 1 to 4 pools (fewer
   than the classes), against the exact optimum over the classes: objective ratio (>= 1, a restriction).
2. Files whose classes' grid is too large for the exact design (the 77-column survey of bench/gui_stall.py,
   the 1990 census sample's 67 columns): the design's time and pools, and the recommender's ranking at 10,000
   rows: the predicted AVD of the utility design against the best other candidate (< 1: utility is picked).

Usage: python3 bench/pooled_design.py [--skip-exact] [--skip-wide]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from optrr_engine.utility.objective import detect_structure, order_weights  # noqa: E402
from optrr_engine.utility.optimal_design import MARGIN, solve, utility_design  # noqa: E402
from optrr_engine.utility.pooled import choose_pools  # noqa: E402
from optrr_engine.utility.recommend import recommend  # noqa: E402

DATA = ROOT / "tests" / "data"
EPS = (1.0, 2.0, 4.0, 8.0)
ORDERS = ([1], [1, 2])


def sizes_of(csv: Path) -> np.ndarray:
    """Category counts of a file's columns as the Compare tab and bench/utility.py prepare them (at most 12
    categories, numbers in 4 bins, identifiers and constant columns dropped; optrr_engine.compare.datasets)."""
    from optrr_engine.compare.datasets import load_dataset

    return np.asarray(load_dataset(str(csv)).sizes, dtype=np.int64)


def exact_cases():
    cases = []
    for name in ("nursery", "mushroom", "car", "breast_cancer", "cirrhosis", "heart_cleveland", "house_votes_84"):
        sizes = sizes_of(DATA / f"{name}.csv")
        if detect_structure(sizes, np.full(sizes.size, np.inf), True).class_sizes.size >= 3:
            cases.append((name, sizes))
    cases.append(("32 cols, 4 sizes", np.array([2] * 8 + [3] * 5 + [4] * 9 + [5] * 10)))
    cases.append(("24 cols, 6 sizes", np.repeat([2, 3, 4, 6, 8, 12], 4)))
    return cases


def pooled_objective(sizes, target, orders, pools):
    cs = detect_structure(sizes, np.full(sizes.size, np.inf), True)
    types, weights = order_weights(cs, orders)
    structure = choose_pools(cs, limit=1 << 40, max_pools=pools)
    t0 = time.perf_counter()
    res = solve(structure, types, weights, target * (1.0 - MARGIN), sizes)
    return res["objective"], time.perf_counter() - t0, [int(c) for c in structure.pool_counts]


def pooled_against_exact():
    print("pooled against exact (objective = n x mean expected squared error of the unbiased estimate)")
    print(f"{'data':>18} {'orders':>6} {'eps':>4} {'classes':>7} {'exact s':>8}  pools: ratio to exact (seconds)")
    ratios: dict[int, list[float]] = {}
    for name, sizes in exact_cases():
        m = detect_structure(sizes, np.full(sizes.size, np.inf), True).class_sizes.size
        for orders in ORDERS:
            for eps in EPS:
                t0 = time.perf_counter()
                _, exact = utility_design(sizes, eps, {"orders": orders})
                exact_s = time.perf_counter() - t0
                cells = []
                for pools in range(1, min(m, 5)):
                    f, sec, _ = pooled_objective(sizes, eps, orders, pools)
                    ratios.setdefault(pools, []).append(f / exact["objective"])
                    cells.append(f"{pools}: {f / exact['objective']:.3f} ({sec:.2f})")
                print(
                    f"{name:>18} {'+'.join(map(str, orders)):>6} {eps:>4g} {m:>7} {exact_s:>8.2f}  " + "  ".join(cells),
                    flush=True,
                )
    for pools, r in sorted(ratios.items()):
        print(f"{pools} pool(s): ratio median {np.median(r):.3f}, max {np.max(r):.3f} over {len(r)} cells")


def wide_files():
    from gui_stall import make_wide_csv

    with tempfile.TemporaryDirectory() as tmp:
        files = [("77-column survey", sizes_of(Path(make_wide_csv(tmp))))]
    files.append(("1990 census sample", sizes_of(DATA / "uscensus1990_first99.csv")))
    print("\nfiles whose classes' grid is too large for the exact design (recommendation at 10,000 rows)")
    print(
        f"{'data':>18} {'cols':>4} {'orders':>6} {'eps':>4} {'design s':>8} {'pools':>14} {'utility AVD':>11} "
        f"{'best other':>16} {'ratio':>6} {'rank s':>7}"
    )
    for name, sizes in files:
        for orders in ORDERS:
            for eps in EPS:
                t0 = time.perf_counter()
                mech, info = utility_design(sizes, eps, {"orders": orders})
                design_s = time.perf_counter() - t0
                assert mech.overall_epsilon() <= eps
                t0 = time.perf_counter()
                rec = recommend(sizes, eps, rows=10_000, marginals={"orders": orders})
                rank_s = time.perf_counter() - t0
                by = {r.candidate.name: r.score for r in rec.ranked if r.error is not None}
                other = min((s, n) for n, s in by.items() if n != "utility")
                print(
                    f"{name:>18} {sizes.size:>4} {'+'.join(map(str, orders)):>6} {eps:>4g} {design_s:>8.2f} "
                    f"{str(info.get('pool_columns', '-')):>14} {by['utility']:>11.4f} "
                    f"{other[1] + ' ' + format(other[0], '.4f'):>16} {by['utility'] / other[0]:>6.3f} {rank_s:>7.1f}",
                    flush=True,
                )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-exact", action="store_true")
    ap.add_argument("--skip-wide", action="store_true")
    args = ap.parse_args()
    if not args.skip_exact:
        pooled_against_exact()
    if not args.skip_wide:
        wide_files()


if __name__ == "__main__":
    main()
