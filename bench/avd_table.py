"""Benchmark: AVD of 2-way marginals at one whole-record epsilon, optimized designs vs Kronecker.

For every data set in ../shared/data (prepared by optrr_engine.compare.datasets: identifiers dropped,
continuous numeric columns cut into 4 quantile bins, rare categories beyond 12 lumped into 'other', missing
markers kept as categories, constant columns dropped), every design gets the same whole-record epsilon
target = PER_ATTRIBUTE * k through the budget policy with equal weights (Kronecker: eps_i = PER_ATTRIBUTE).
AVD = 1/2 sum |P - Q| between the true and the estimated (structured inverse, clip-and-rescale) joint
distribution of a pair of attributes, averaged over up to --pairs random pairs and --repetitions perturbations.
``best/kron`` compares the best of our optimized designs with Kronecker; ``rr_clusters`` (Domingo-Ferrer's joint GRR
per cluster, clusters chosen from the raw data, Tv = 50, Td = 0.1) is shown for reference.

    python3 bench/avd_table.py [--per-attribute 1.0] [--pairs 60] [--repetitions 2]
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import numpy as np

from optrr_engine.compare import avd_table, load_dataset, rules_text

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
OPTIMIZED = ("auto", "optimal", "family", "classes", "heuristic")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=DATA)
    ap.add_argument("--per-attribute", type=float, default=1.0, help="target = this * k (default 1.0)")
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.data_dir, "*.csv")))
    if not files:
        raise SystemExit(f"no CSV files in {args.data_dir}")
    print(f"data preparation: {rules_text()}")
    print(f"whole-record epsilon = {args.per_attribute:g} * k; 2-way AVD, mean over pairs and repetitions\n")
    methods = ("kronecker",) + OPTIMIZED + ("rr_clusters",)
    head = f"{'dataset':<22}{'n':>6}{'k':>4}{'target':>8} " + "".join(f"{m:>12}" for m in methods)
    print(head + f"{'best/kron':>11}  best")
    lines = []
    t_all = time.perf_counter()
    for path in files:
        data = load_dataset(path)
        k = len(data.sizes)
        target = args.per_attribute * k
        t0 = time.perf_counter()
        rows, designs = avd_table(
            data, target, methods=methods, ways=(2,), subsets=args.pairs, repetitions=args.repetitions, seed=args.seed
        )
        avd = rows.set_index("method")["mean_avd"]
        eps = {d["method"]: d.get("mean_attribute_epsilon", float("nan")) for d in designs}
        opt = avd[list(OPTIMIZED)].dropna()
        best = opt.idxmin() if len(opt) else "-"
        ratio = opt.min() / avd["kronecker"] if len(opt) else float("nan")
        cells = "".join(f"{avd[m]:>12.4f}" if np.isfinite(avd[m]) else f"{'-':>12}" for m in methods)
        print(f"{data.name:<22}{data.rows:>6}{k:>4}{target:>8.1f} {cells}{ratio:>11.3f}  {best}")
        lines.append((data.name, eps, [d for d in designs if "error" in d], time.perf_counter() - t0))
    print("\nmean attribute epsilon each design reached at that whole-record epsilon:")
    for name, eps, errors, secs in lines:
        shown = "  ".join(f"{m}={eps[m]:.3f}" for m in methods if np.isfinite(eps.get(m, float("nan"))))
        print(f"  {name:<22}{shown}   ({secs:.1f} s)")
        for e in errors:
            print(f"  {'':<22}{e['method']}: not run - {e['error'][:110]}")
    print(f"\ntotal {time.perf_counter() - t_all:.1f} s")


if __name__ == "__main__":
    main()
