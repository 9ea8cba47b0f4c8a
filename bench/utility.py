"""Utility benchmark (issue 13 item 6): AVD of 1-, 2- and 3-way marginals at equal whole-record epsilon.

Designs (ours, each estimated with the default estimator, maximum likelihood): Kronecker and auto at the
whole-record target (equal weights, budget policy), SMP, sample-2, sample-3 and RS+FD (optrr_engine.sampling).
Peers from the PyPI package multi-freq-ldpy (a bench-only dependency: `pip install -e ".[bench]"`): SPL, SMP
and RS+FD with GRR and their own estimators (1-way only: the package estimates per-attribute frequencies).
RS+FD is given the epsilon whose "amplified" GRR epsilon equals the target, because that amplified epsilon is
its whole-record one (docs/sampling.md); SPL splits the target evenly (= Kronecker).

AVD of a marginal = 0.5 * sum |estimate - truth| (total variation); the table shows the mean over the
marginals drawn (all 1-way; up to --pairs random 2-way and 3-way sets) and the repetitions, and the ratio of
ours to the best peer on 1-way marginals. A "-" means the design cannot estimate that marginal (SMP and RS+FD:
no joint marginals; sample-2: no 3-way) or could not be built.

    python3 bench/utility.py [--reps 20] [--eps 1,2,4,8] [--extra-data DIR] [--quick] [--csv utility.csv]
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import time

import numpy as np

from optrr_engine.compare.avd_marginals import draw_subsets
from optrr_engine.compare.budgets import budgeted_design
from optrr_engine.compare.datasets import load_dataset
from optrr_engine.errors import InputError
from optrr_engine.estimation import estimate_from_counts
from optrr_engine.estimation.counts import count_codes
from optrr_engine.estimation.sampled import estimate_sampled_codes
from optrr_engine.sampling import make_sampling_design

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
DATASETS = ["nursery", "mushroom", "car", "breast_cancer", "cirrhosis", "heart_cleveland", "house_votes_84"]
EXTRA = ["stroke", "snpassoc_snps"]
OURS = ["kronecker", "auto", "smp", "sample-2", "sample-3", "rsfd"]
PEERS = ["peer_spl", "peer_smp", "peer_rsfd"]


def truth_of(codes, sizes, attrs):
    t = count_codes(codes[:, attrs], [int(sizes[a]) for a in attrs]).astype(float)
    return t / t.sum()


def avd(est, truth) -> float:
    return 0.5 * float(np.abs(np.asarray(est, dtype=float) - truth).sum())


def build(method, sizes, target):
    """A mechanism (Kronecker, auto) or a sampling design at the whole-record target; None if impossible."""
    if method in ("kronecker", "auto"):
        d = budgeted_design(method, sizes, np.ones(len(sizes)), target)
        return d.mechanism
    if method.startswith("sample-"):
        m = int(method.split("-")[1])
        if m >= len(sizes):
            return None
        return make_sampling_design("sample-m", sizes, target, m=m, inner_method="optimal")
    return make_sampling_design(method, sizes, target)


def ours_avd(design, method, codes, sizes, sets, rng) -> dict:
    """{way: [AVD per marginal]} for one perturbation of the data."""
    out: dict = {1: [], 2: [], 3: []}
    released = design.sample(codes, rng)
    for attrs in sets:
        truth = truth_of(codes, sizes, attrs)
        try:
            if method in ("kronecker", "auto"):
                counts = count_codes(released[:, attrs], [int(sizes[a]) for a in attrs])
                est = estimate_from_counts(design.marginal(attrs), counts).estimate
            else:
                est = estimate_sampled_codes(design, released, attrs).estimate
        except InputError:
            continue  # the design cannot estimate this marginal
        out[len(attrs)].append(avd(est, truth))
    return out


def peers_avd(codes, sizes, target, seed) -> dict:
    """{peer: [1-way AVD per attribute]} for one run of each multi-freq-ldpy protocol."""
    from multi_freq_ldpy.mdim_freq_est.RSpFD_solution import RSpFD_GRR_Aggregator_MI, RSpFD_GRR_Client
    from multi_freq_ldpy.mdim_freq_est.SMP_solution import SMP_GRR_Aggregator_MI, SMP_GRR_Client
    from multi_freq_ldpy.mdim_freq_est.SPL_solution import SPL_GRR_Aggregator_MI, SPL_GRR_Client

    np.random.seed(seed)  # the package draws from numpy's global generator
    k = len(sizes)
    lst_k = [int(a) for a in sizes]
    rows = codes.tolist()
    rsfd_eps = math.log(math.expm1(target) / k + 1.0)  # amplified epsilon ln(k (e^eps - 1) + 1) = target
    runs = {
        "peer_spl": (SPL_GRR_Client, SPL_GRR_Aggregator_MI, target),
        "peer_smp": (SMP_GRR_Client, SMP_GRR_Aggregator_MI, target),
        "peer_rsfd": (RSpFD_GRR_Client, RSpFD_GRR_Aggregator_MI, rsfd_eps),
    }
    out = {}
    for name, (client, aggregate, eps) in runs.items():
        reports = [client(r, lst_k, k, eps) for r in rows]
        est = aggregate(reports, lst_k, k, eps)
        out[name] = [avd(np.asarray(est[j], dtype=float), truth_of(codes, sizes, [j])) for j in range(k)]
    return out


def write_csv(path, rows) -> None:
    if rows:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def run_dataset(path, eps_list, reps, pairs, rng, rows_out, quick, csv_path):
    data = load_dataset(path)
    codes, sizes = data.codes, data.sizes
    k = len(sizes)
    sets = [[j] for j in range(k)] + draw_subsets(k, 2, pairs, sizes, rng) + draw_subsets(k, 3, pairs, sizes, rng)
    for target in eps_list:
        t0 = time.perf_counter()
        results: dict = {}
        for method in OURS:
            try:
                design = build(method, sizes, target)
            except InputError as exc:
                print(f"  {data.name} eps {target:g} {method}: not built ({exc})")
                design = None
            if design is None:
                continue
            eps_made = design.overall_epsilon()
            assert eps_made <= target * (1 + 1e-6), (method, eps_made, target)
            per_way: dict = {1: [], 2: [], 3: []}
            for _ in range(reps):
                for way, values in ours_avd(design, method, codes, sizes, sets, rng).items():
                    per_way[way].extend(values)
            results[method] = per_way
        for _ in range(reps):
            for name, values in peers_avd(codes, sizes, target, int(rng.integers(2**31))).items():
                results.setdefault(name, {1: [], 2: [], 3: []})[1].extend(values)
        for method, per_way in results.items():
            for way in (1, 2, 3):
                if per_way[way]:
                    rows_out.append(
                        {
                            "dataset": data.name,
                            "rows": data.rows,
                            "k": k,
                            "epsilon": target,
                            "method": method,
                            "way": way,
                            "marginals": len(per_way[way]) // reps,
                            "reps": reps,
                            "avd": float(np.mean(per_way[way])),
                        }
                    )
        print(f"  {data.name} (n = {data.rows}, k = {k}) eps {target:g}: {time.perf_counter() - t0:.1f} s", flush=True)
        write_csv(csv_path, rows_out)  # partial results survive an interrupted run
        if quick:
            print_table([r for r in rows_out if r["dataset"] == data.name and r["epsilon"] == target])


def print_table(rows) -> None:
    keys = sorted({(r["dataset"], r["epsilon"], r["way"]) for r in rows})
    methods = OURS + PEERS
    print(f"{'dataset':16s} {'eps':>4s} way " + " ".join(f"{m:>10s}" for m in methods) + "  best-ours/best-peer")
    for ds, eps, way in keys:
        vals = {r["method"]: r["avd"] for r in rows if (r["dataset"], r["epsilon"], r["way"]) == (ds, eps, way)}
        cells = " ".join(f"{vals[m]:10.4f}" if m in vals else f"{'-':>10s}" for m in methods)
        ours = [vals[m] for m in OURS if m in vals]
        peers = [vals[m] for m in PEERS if m in vals]
        ratio = f"{min(ours) / min(peers):8.2f}" if ours and peers else f"{'-':>8s}"
        print(f"{ds:16s} {eps:4g} {way:3d} {cells}  {ratio}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--eps", default="1,2,4,8")
    ap.add_argument("--pairs", type=int, default=10, help="random 2-way and 3-way marginals per data set")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--extra-data", help="folder with stroke.csv and snpassoc_snps.csv")
    ap.add_argument("--quick", action="store_true", help="smoke run: car and nursery, eps 1 and 4, 2 repetitions")
    ap.add_argument("--csv", default="utility.csv")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--table", help="only print the table of an existing CSV")
    args = ap.parse_args()
    if args.table:
        with open(args.table, encoding="utf-8") as fh:
            rows = [
                {**r, "epsilon": float(r["epsilon"]), "way": int(r["way"]), "avd": float(r["avd"])}
                for r in csv.DictReader(fh)
            ]
        print_table(rows)
        return
    rng = np.random.default_rng(args.seed)
    eps_list = [float(e) for e in args.eps.split(",")]
    paths = [os.path.join(DATA, f"{n}.csv") for n in args.datasets.split(",")]
    reps, pairs = args.reps, args.pairs
    if args.quick:
        paths, eps_list, reps, pairs = [os.path.join(DATA, f"{n}.csv") for n in ("car", "nursery")], [1.0, 4.0], 2, 5
    if args.extra_data:
        paths += [os.path.join(args.extra_data, f"{n}.csv") for n in EXTRA]
    rows: list = []
    t0 = time.perf_counter()
    for path in paths:
        run_dataset(path, eps_list, reps, pairs, rng, rows, args.quick, args.csv)
    write_csv(args.csv, rows)
    print(f"\nmean AVD over marginals and {reps} repetitions (wrote {args.csv}; {time.perf_counter() - t0:.0f} s)")
    print_table(rows)


if __name__ == "__main__":
    main()
