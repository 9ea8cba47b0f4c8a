"""Design benchmarks (issue 2), one run on this machine; prints times and ratios.

- heuristic (Algorithm 3) time at k = 1e3, 1e4, 1e5, with the per-attribute epsilons verified;
- optimal LP time at k = 10, 12, 14, 16 and beyond while the total stays within the time budget,
  compared with an independent LP (the paper's own formulation, Algorithms 1-2) where that is feasible;
- overall-epsilon ratios optimal/Kronecker and heuristic/optimal on 200 random cases
  (a_i in 2..5, eps_i in [0.5, 8));
- `optrr design` process start to JSON for a small case.

Usage: python3 bench/designs.py [--budget-seconds 600] [--cases 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from optrr_engine.designs import run_design  # noqa: E402


def random_case(rng, k, eps_range=(0.5, 8.0)):
    return rng.integers(2, 6, k), rng.uniform(*eps_range, k)


def bench_heuristic():
    print("== heuristic (Algorithm 3, log space) ==")
    head = ("k", "seconds", "eps_total", "fallbacks", "max |eps_i - req| (kept)", "self-check")
    print(f"{head[0]:>8} {head[1]:>10} {head[2]:>12} {head[3]:>10} {head[4]:>26} {head[5]:>10}")
    for k in (1_000, 10_000, 100_000):
        rng = np.random.default_rng(k)
        sizes, eps = random_case(rng, k)
        run_design("heuristic", sizes, eps)  # warm-up
        times = []
        for _ in range(5):
            d = run_design("heuristic", sizes, eps)
            times.append(d.design_seconds)
        ach = d.attribute_epsilons
        kept = np.setdiff1d(np.arange(k), d.info["fallback_attributes"])
        err = float(np.max(np.abs(ach[kept] - eps[kept]))) if kept.size else 0.0
        ok = d.mechanism.self_check().ok and np.all(np.isfinite(ach))
        nfb = len(d.info["fallback_attributes"])
        print(f"{k:>8} {min(times):>10.4f} {d.overall_epsilon:>12.3f} {nfb:>10} {err:>26.2e} {ok!s:>10}")


def bench_optimal(budget_seconds: float):
    from tests.reference import paper_lp

    print("== optimal (exact LP, HiGHS) ==")
    head = ("k", "seconds", "eps_total", "cert. gap", "max |eps_i-req|", "independent LP", "rel diff")
    print(f"{head[0]:>4} {head[1]:>9} {head[2]:>11} {head[3]:>10} {head[4]:>16} {head[5]:>15} {head[6]:>9}")
    start = time.perf_counter()
    k = 10
    last = 0.0
    while True:
        elapsed = time.perf_counter() - start
        if elapsed + 4.5 * last > budget_seconds or k > 20:
            print(f"stopped before k = {k}: the next size would exceed the {budget_seconds:.0f} s budget or k > 20")
            break
        rng = np.random.default_rng(1000 + k)
        sizes, eps = random_case(rng, k)
        d = run_design("optimal", sizes, eps)
        last = d.design_seconds
        err = float(np.max(np.abs(d.attribute_epsilons - eps)))
        ref = rel = "-"
        if k <= 14:
            r = paper_lp(sizes, eps)
            ref = f"{r:.6f}"
            rel = f"{abs(r - d.overall_epsilon) / r:.1e}"
        gap = d.info["certified_gap"]
        sec, tot = d.design_seconds, d.overall_epsilon
        print(f"{k:>4} {sec:>9.3f} {tot:>11.5f} {gap:>10.1e} {err:>16.1e} {ref:>15} {rel:>9}")
        k += 2 if k < 16 else 1


def bench_ratios(cases: int):
    print(f"== whole-record epsilon ratios on {cases} random cases (a_i in 2..5, eps_i in [0.5, 8)) ==")
    rng = np.random.default_rng(7)
    opt_kron, heur_opt_req, heur_opt_ach, changed = [], [], [], 0
    for _ in range(cases):
        k = int(rng.integers(2, 11))
        sizes, eps = random_case(rng, k)
        o = run_design("optimal", sizes, eps)
        h = run_design("heuristic", sizes, eps)
        opt_kron.append(o.overall_epsilon / eps.sum())
        heur_opt_req.append(h.overall_epsilon / o.overall_epsilon)
        o_ach = run_design("optimal", sizes, h.attribute_epsilons)
        heur_opt_ach.append(h.overall_epsilon / o_ach.overall_epsilon)
        changed += bool(h.epsilon_changes())
    for name, vals in (
        ("optimal / Kronecker", opt_kron),
        ("heuristic / optimal (same requested eps_i)", heur_opt_req),
        ("heuristic / optimal (at the heuristic's achieved eps_i)", heur_opt_ach),
    ):
        v = np.asarray(vals)
        print(f"{name:<58} mean {v.mean():.4f}  median {np.median(v):.4f}  min {v.min():.4f}  max {v.max():.4f}")
    print(f"cases where the heuristic changed at least one eps_i: {changed} of {cases} (k uniform in 2..10)")


def bench_cli_start():
    cmd = [
        sys.executable,
        "-m",
        "optrr_engine.cli.main",
        "design",
        "--sizes",
        "3,4,2",
        "--epsilons",
        "1,2,0.5",
        "--json",
    ]
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    print(
        f"== optrr design (process start to JSON, small case, default auto): best {min(times):.3f} s, "
        f"median {np.median(times):.3f} s =="
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget-seconds", type=float, default=600.0)
    ap.add_argument("--cases", type=int, default=200)
    args = ap.parse_args()
    bench_heuristic()
    bench_cli_start()
    bench_ratios(args.cases)
    bench_optimal(args.budget_seconds)


if __name__ == "__main__":
    main()
