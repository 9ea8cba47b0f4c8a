"""Benchmark: the LOPUB / LOCOP / BRR paper (Hernandez-Matamoros & Kikuchi 2024) on Nursery and Cirrhosis.

1. Figure 3 shape: AVD of k-way joints (k = 2..5) against epsilon per attribute in [0.1, 1] for the paper's
   LASSO ("simple LOPUB"), LOPUB (LASSO + EM), LOCOP and BRR, beside OptRR's Kronecker and auto designs at the
   same epsilon per attribute; Figure 5: R-squared of LASSO vs BRR from the same runs. PNGs in --png-dir
   (drawn by the project's figure renderer with the Qt/pyqtgraph backend, offscreen).
2. The headline: Nursery, eps = 0.1 per attribute, k = 5, --runs runs (each a fresh perturbation and a fresh
   random 5-attribute subset): BRR's AVD against LOPUB's (the paper: 57 % lower), with the spread.
3. Timing: one comparison of 5 methods (lopub, locop, brr, kronecker, auto) x 4 epsilons x k = 2..5 on Nursery
   (12,960 rows), with the machine's load average (the machine may be shared).

    python3 bench/bloom_paper.py [--subsets 20] [--runs 100] [--png-dir docs/img] [--skip-figures]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from optrr_engine.analysis import aar
from optrr_engine.compare import avd_sweep, avd_table, load_dataset, output

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
EPSILONS = (0.1, 0.4, 0.7, 1.0)
BLOOM = ("lasso", "lopub", "locop", "brr")
OURS = ("kronecker", "auto")


def figures(name, subsets, seed, png_dir):
    data = load_dataset(os.path.join(DATA, f"{name}.csv"))
    print(f"\n{name}: n = {data.rows}, k = {len(data.sizes)}, AAR = {aar(data.codes, data.sizes):.4f}")
    t0 = time.perf_counter()
    rows, _ = avd_sweep(data, EPSILONS, ("per_attribute",), BLOOM + OURS, (2, 3, 4, 5), subsets, seed=seed)
    print(f"({time.perf_counter() - t0:.0f} s, {subsets} subsets per k, one perturbation per epsilon)")
    print("mean AVD (Figure 3):")
    print(rows.pivot_table(index=["method", "epsilon"], columns="way", values="mean_avd").round(3).to_string())
    print("mean R-squared (Figure 5; NaN subsets, whose true joint is uniform, left out):")
    r2 = rows[rows.method.isin(["lasso", "brr"])]
    print(r2.pivot_table(index=["method", "epsilon"], columns="way", values="mean_r2").round(3).to_string())
    print(r2.pivot_table(index=["method", "epsilon"], columns="way", values="r2_estimates").to_string())
    if png_dir:
        os.makedirs(png_dir, exist_ok=True)
        a = output.plot_avd_sweep(rows, os.path.join(png_dir, f"bloom_fig3_{name}.png"), "mean_avd")
        b = output.plot_avd_sweep(r2, os.path.join(png_dir, f"bloom_fig5_{name}.png"), "mean_r2")
        print(f"wrote {a}\nwrote {b}")


def headline(runs, seed):
    from scipy.stats import bootstrap

    data = load_dataset(os.path.join(DATA, "nursery.csv"))
    rng = np.random.default_rng(seed)
    vals = {m: [] for m in ("lasso", "lopub", "brr")}
    t0 = time.perf_counter()
    for _ in range(runs):
        rows, _ = avd_table(data, 0.1, tuple(vals), (5,), subsets=1, axis="per_attribute", rng=rng)
        for m in vals:
            vals[m].append(float(rows.loc[rows.method == m, "mean_avd"].iloc[0]))
    v = {m: np.array(x) for m, x in vals.items()}
    print(f"\nNursery, eps = 0.1 per attribute, k = 5, {runs} runs ({time.perf_counter() - t0:.0f} s):")
    for m, x in v.items():
        print(f"  {m:<6} AVD mean {x.mean():.4f}  sd {x.std(ddof=1):.4f}  [min {x.min():.4f}, max {x.max():.4f}]")
    for base in ("lopub", "lasso"):
        red = 1 - v["brr"].mean() / v[base].mean()
        ci = bootstrap(
            (v["brr"], v[base]),
            lambda b, a: 1 - np.mean(b) / np.mean(a),
            paired=True,
            vectorized=False,
            n_resamples=2000,
            random_state=seed,
        ).confidence_interval
        wins = np.mean(v["brr"] < v[base])
        print(
            f"  BRR vs {base}: AVD {100 * red:.1f}% lower (95% bootstrap interval {100 * ci.low:.1f}% to "
            f"{100 * ci.high:.1f}%), BRR lower in {100 * wins:.0f}% of runs (paper: 57% lower than LOPUB)"
        )


def timing(subsets, seed):
    data = load_dataset(os.path.join(DATA, "nursery.csv"))
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    methods = ("lopub", "locop", "brr", "kronecker", "auto")
    avd_sweep(data, EPSILONS, ("per_attribute",), methods, (2, 3, 4, 5), subsets, seed=seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"\ntiming: 5 methods x 4 epsilons x k = 2..5 on Nursery ({data.rows} rows), {subsets} subsets per k: "
        f"{wall:.1f} s wall, {cpu:.1f} s CPU (target <= 120 s); load average before {load0[0]:.1f}, "
        f"after {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subsets", type=int, default=20, help="random attribute subsets per k (default 20)")
    ap.add_argument("--runs", type=int, default=100, help="runs of the headline comparison (default 100)")
    ap.add_argument("--png-dir", default=os.path.join(HERE, "..", "docs", "img"))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--skip-figures", action="store_true")
    ap.add_argument("--skip-headline", action="store_true")
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # figures: the installed pyqtgraph renderer, offscreen
    if not args.skip_timing:
        timing(args.subsets, args.seed)
    if not args.skip_figures:
        for name in ("nursery", "cirrhosis"):
            figures(name, args.subsets, args.seed, args.png_dir)
    if not args.skip_headline:
        headline(args.runs, args.seed)


if __name__ == "__main__":
    main()
