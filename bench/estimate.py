"""Benchmark: a 3-way marginal from a 10-million-row release (target <= 2 s, memory independent of rows).

Two measurements:
1. counting kernel + estimate: perturbed codes are generated in memory chunk by chunk (1M rows each, not
   timed), then counted with the streaming mixed-radix bincount and estimated (unbiased + 95% intervals);
   timed and with tracemalloc's peak for 1M and 10M rows.
2. end to end from a CSV release (labels as strings + manifest): write a release of --csv-rows rows (not
   timed), then time estimate_release (read chunks, map labels to codes, count, estimate) without and with
   the manifest's SHA-256 check of the file, its tracemalloc peak, and a fresh process's max RSS.

3. the default estimator (smoothed maximum likelihood, method "map") on a 10,000-cell table (4 attributes of
   10 categories) from 1M perturbed rows (target <= 1 s): time, iterations, certified gap, L1 error, for
   a smooth truth (a mixture of 3 product distributions) and a sparse one (Dirichlet(0.3) over the cells),
   under an optimal design and a weaker Kronecker one; beside maximum likelihood (method "ibu") and the ML
   implementation before issue 13's estimator work (``baseline_ibu``), interleaved on the same counts.

4. ``--convergence``: the default estimator on the real data sets of tests/data (1-, 2- and 3-way marginals,
   Kronecker, auto and sample-2 at whole-record epsilon 1, 2, 4, 8): how many runs did not converge.

    python3 bench/estimate.py [--rows 10000000] [--csv-rows 2000000] [--mle-only | --convergence]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from optrr_engine.designs import run_design
from optrr_engine.estimation import StreamingCounter, estimate_from_counts, estimate_release

SIZES = [4, 5, 3, 6, 2]
EPS = [1.0, 1.5, 0.8, 2.0, 1.2]
ATTRS = [0, 1, 3]
CHUNK = 1_000_000


def kernel(mech, rows, rng, trace=False):
    """Seconds spent counting + estimating (codes generated per chunk, not timed); with ``trace`` the
    tracemalloc peak instead (tracemalloc slows allocation, so time and memory are separate passes)."""
    sub = [SIZES[a] for a in ATTRS]
    counter = StreamingCounter(sub)
    spent = 0.0
    if trace:
        tracemalloc.start()
    done = 0
    while done < rows:
        m = min(CHUNK, rows - done)
        codes = np.stack([rng.integers(0, a, m, dtype=np.int8) for a in sub], axis=1)  # not timed
        t0 = time.perf_counter()
        counter.add(codes)
        spent += time.perf_counter() - t0
        done += m
    t0 = time.perf_counter()
    est = estimate_from_counts(mech.marginal(ATTRS), counter.table)
    spent += time.perf_counter() - t0
    assert est.rows == rows
    if trace:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return peak
    return spent


def write_release(folder, mech, rows, rng):
    import pandas as pd

    names = [f"a{i}" for i in range(len(SIZES))]
    cats = [[f"v{j}" for j in range(a)] for a in SIZES]
    data = os.path.join(folder, "OUTPUT.csv")
    first = True
    done = 0
    while done < rows:
        m = min(CHUNK, rows - done)
        codes = np.stack([rng.integers(0, a, m) for a in SIZES], axis=1)
        frame = pd.DataFrame({n: np.asarray(c)[codes[:, i]] for i, (n, c) in enumerate(zip(names, cats, strict=True))})
        frame.to_csv(data, mode="w" if first else "a", header=first, index=False)
        first = False
        done += m
    digest = hashlib.sha256()
    with open(data, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    manifest = {
        "format_version": 1,
        "attributes": [
            {"name": n, "categories": c, "requested_epsilon": e, "achieved_epsilon": float(a)}
            for n, c, e, a in zip(names, cats, EPS, mech.attribute_epsilons(), strict=True)
        ],
        "overall_epsilon": mech.overall_epsilon(),
        "mechanism": mech.to_dict(),
        "rows": rows,
        "input_sha256": "0" * 64,
        "output_sha256": digest.hexdigest(),
        "shuffled": False,
        "seeded": False,
    }
    path = os.path.join(folder, "OUTPUT.manifest.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)
    return data, path, [names[a] for a in ATTRS]


def end_to_end(mech, rows, rng):
    """(seconds, tracemalloc peak, file size) of estimate_release on a fresh CSV release."""
    with tempfile.TemporaryDirectory() as folder:
        data, manifest, names = write_release(folder, mech, rows, rng)
        size = os.path.getsize(data)
        t0 = time.perf_counter()
        est = estimate_release(data, names, manifest_path=manifest, check_hash=False)
        spent = time.perf_counter() - t0
        assert est.rows == rows
        t0 = time.perf_counter()
        estimate_release(data, names, manifest_path=manifest, check_hash=True)
        hashed = time.perf_counter() - t0
        tracemalloc.start()
        estimate_release(data, names, manifest_path=manifest, check_hash=False)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = child_max_rss(data, manifest, names)
    return spent, hashed, peak, size, rss


def child_max_rss(data, manifest, names) -> float:
    """Peak resident memory (MiB) of a fresh process that runs estimate_release (sees Arrow's buffers too)."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", data, manifest, ",".join(names)], capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def child(data, manifest, names):
    import resource

    estimate_release(data, names.split(","), manifest_path=manifest, check_hash=False)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)


MLE_SIZES = [10, 10, 10, 10]


class BaselineOperator:
    """The operator as it was before the estimator work of issue 13 (per-axis concatenate / take), kept here
    only to print the before/after ratio on the same machine state."""

    def __init__(self, op):
        self.eigenvalues, self.sizes, self.m = op.eigenvalues, op.sizes, op.m
        self.scale = op.eigenvalues[op._grid]

    def _apply(self, table, scale):
        x = np.asarray(table, dtype=float)
        for i in range(self.m):
            mean = x.mean(axis=i, keepdims=True)
            x = np.concatenate([mean, x - mean], axis=i)
        x = x * scale
        for i in range(self.m):
            x = np.take(x, np.arange(1, x.shape[i]), axis=i) + np.take(x, [0], axis=i)
        return x

    def apply(self, table):
        return self._apply(table, self.scale)

    def solve(self, table):
        return self._apply(table, 1.0 / self.scale)


def baseline_ibu(op, lam, tol, max_iter=10000, check_every=5):
    """The SQUAREM-accelerated EM as it was before (uniform start, an EM step after every accepted
    extrapolation: six applications of M per iteration), with the same certified stopping rule."""
    from optrr_engine.estimation.nonnegative import _em, certified_gap

    def state(pi):
        z = np.maximum(op.apply(pi), 1e-300)
        g = op.apply(lam / z)
        return z, g, float(np.sum(lam[lam > 0] * np.log(z[lam > 0])))

    pi = np.full(lam.shape, 1.0 / lam.size)
    for it in range(1, max_iter + 1):
        z, g, _ = state(pi)
        gap = float(np.log(max(float(np.max(g)), 1.0)))
        if gap > tol and (it - 1) % check_every == 0:
            gap = certified_gap(op, lam, z, g)
        if gap <= tol:
            return pi, it, gap
        x, p1 = pi, _em(pi, g)
        _, g1, loglik1 = state(p1)
        p2 = _em(p1, g1)
        r, v = p1 - x, p2 - 2.0 * p1 + x
        norm_v = float(np.sqrt(np.sum(v * v)))
        pi = p2
        if norm_v > 0:
            alpha = min(-float(np.sqrt(np.sum(r * r))) / norm_v, -1.0)
            for _ in range(4):
                cand = np.maximum(x - 2.0 * alpha * r + alpha * alpha * v, 0.01 * np.minimum(x, p2))
                cand = cand / cand.sum()
                _, gc, loglik_c = state(cand)
                if loglik_c >= loglik1:
                    pi = _em(cand, gc)
                    break
                alpha = 0.5 * (alpha - 1.0)
    return pi, max_iter, gap


def mle_truths(rng):
    cells = int(np.prod(MLE_SIZES))
    mix = np.zeros(MLE_SIZES)
    for weight in (0.5, 0.3, 0.2):
        part = np.ones(())
        for a in MLE_SIZES:
            part = np.multiply.outer(part, rng.dirichlet(np.ones(a)))
        mix += weight * part
    return {"smooth": mix, "sparse": rng.dirichlet(np.full(cells, 0.3)).reshape(MLE_SIZES)}


def loglik(op, pi, lam):
    z = op.apply(pi)
    return float(np.sum(lam[lam > 0] * np.log(z[lam > 0])))


def mle_bench(rng, rows=1_000_000, repeats=3):
    """Default estimator vs the baseline, interleaved on the same counts (best of ``repeats`` each)."""
    from optrr_engine.estimation import StructuredOperator, count_codes

    print(f"default estimator on a {int(np.prod(MLE_SIZES)):,}-cell table from {rows:,} rows (target <= 1 s)")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    designs = {
        "optimal eps_i = 2 (whole-record": run_design("optimal", MLE_SIZES, [2.0] * 4).mechanism,
        "kronecker eps_i = 1 (whole-record": run_design("kronecker", MLE_SIZES, [1.0] * 4).mechanism,
    }
    ratios = []
    for label, mech in designs.items():
        op = StructuredOperator.from_mechanism(mech)
        old_op = BaselineOperator(op)
        for truth_name, truth in mle_truths(rng).items():
            idx = rng.choice(truth.size, size=rows, p=truth.ravel())
            codes = np.stack(np.unravel_index(idx, MLE_SIZES), axis=1)
            counts = count_codes(mech.sample(codes, rng), MLE_SIZES)
            lam = counts / counts.sum()
            new_t, ml_t, old_t = [], [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                est = estimate_from_counts(mech, counts)
                new_t.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                ml = estimate_from_counts(mech, counts, method="ibu")
                ml_t.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                old_pi, old_it, old_gap = baseline_ibu(old_op, lam, ml.info["log_likelihood_gap_tolerance"] / rows)
                old_t.append(time.perf_counter() - t0)
            info = est.info
            ratios.append(min(old_t) / min(ml_t))
            clipped = np.clip(est.unbiased, 0, None)
            diff = rows * (loglik(op, ml.estimate, lam) - loglik(op, old_pi, lam))
            print(
                f"  {label} {mech.overall_epsilon():.3g}), {truth_name:6s} truth: default ({est.method}) "
                f"{min(new_t):5.2f} s, {info['iterations']:4d} iterations, converged {info['converged']}, certified "
                f"gap {info['log_likelihood_gap_bound']:.3g}, L1 to truth {np.abs(est.estimate - truth).sum():.3f}; "
                f"ML {min(ml_t):5.2f} s, {ml.info['iterations']} iterations, converged {ml.info['converged']}, "
                f"L1 {np.abs(ml.estimate - truth).sum():.3f} (ML before: {min(old_t):5.2f} s, {old_it} iterations, "
                f"log-likelihood {diff:+.3f} below now); unbiased clipped L1 "
                f"{np.abs(clipped / clipped.sum() - truth).sum():.3f}"
            )
    print(
        f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
        f"ML's speed-up over its baseline: {min(ratios):.1f}x to {max(ratios):.1f}x"
    )


CONVERGENCE_DATA = ["nursery", "car", "mushroom", "breast_cancer", "cirrhosis", "heart_cleveland", "house_votes_84"]


def convergence_sweep(reps=2, epsilons=(1.0, 2.0, 4.0, 8.0), subsets=10, seed=2024):
    """The default estimator on real data (tests/data): every 1-way and up to ``subsets`` random 2- and 3-way
    marginals, Kronecker and auto at each whole-record epsilon (equal weights, budget policy) and sample-2
    (each record reports 2 attributes), ``reps`` perturbations each; counts the runs that did not converge."""
    from optrr_engine.compare.avd_marginals import draw_subsets
    from optrr_engine.compare.budgets import budgeted_design
    from optrr_engine.compare.datasets import load_dataset
    from optrr_engine.estimation.counts import count_codes
    from optrr_engine.estimation.sampled import estimate_sampled_codes
    from optrr_engine.sampling import make_sampling_design

    here = os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(seed)
    runs, failed, iterations, times = 0, [], [], []
    print(f"convergence of the default estimator on real data; load average {os.getloadavg()[0]:.2f}")
    for name in CONVERGENCE_DATA:
        data = load_dataset(os.path.join(here, "..", "tests", "data", f"{name}.csv"))
        codes, sizes, k = data.codes, data.sizes, len(data.sizes)
        sets = [[j] for j in range(k)]
        for way in (2, 3):
            sets += draw_subsets(k, way, subsets, sizes, rng)
        for eps in epsilons:
            designs = {m: budgeted_design(m, sizes, np.ones(k), eps).mechanism for m in ("kronecker", "auto")}
            designs["sample-2"] = make_sampling_design("sample-m", sizes, eps, m=2, inner_method="optimal")
            for method, design in designs.items():
                if design is None:
                    continue
                for _ in range(reps):
                    released = design.sample(codes, rng)
                    for attrs in sets:
                        t0 = time.perf_counter()
                        if method == "sample-2":
                            if len(attrs) > 2:
                                continue
                            est = estimate_sampled_codes(design, released, attrs)
                        else:
                            counts = count_codes(released[:, attrs], [int(sizes[a]) for a in attrs])
                            est = estimate_from_counts(design.marginal(attrs), counts)
                        times.append(time.perf_counter() - t0)
                        runs += 1
                        iterations.append(est.info["iterations"])
                        if not est.info["converged"]:
                            failed.append((name, eps, method, attrs, est.info["log_likelihood_gap_bound"]))
        print(f"  {name}: {runs} estimates so far, {len(failed)} not converged")
    it = np.array(iterations)
    print(
        f"{runs} estimates, {len(failed)} not converged; iterations median {np.median(it):.0f}, max {it.max()}, "
        f"{np.mean(it == 0):.0%} answered by the unbiased estimate (already a distribution); time per estimate "
        f"median {1e3 * np.median(times):.1f} ms, max {max(times):.2f} s; load average {os.getloadavg()[0]:.2f}"
    )
    for row in failed[:10]:
        print("  not converged:", row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--csv-rows", type=int, default=2_000_000)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--mle-only", action="store_true", help="only the default-estimator measurement")
    ap.add_argument("--convergence", action="store_true", help="only the convergence sweep on real data")
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.convergence:
        convergence_sweep()
        return
    rng = np.random.default_rng(0)
    mle_bench(rng)
    if args.mle_only:
        return
    mech = run_design("optimal", SIZES, EPS).mechanism
    cells = int(np.prod([SIZES[a] for a in ATTRS]))
    print(f"3-way marginal ({cells} cells) of a k = {len(SIZES)} optimal design")
    estimate_from_counts(mech.marginal(ATTRS), np.ones([SIZES[a] for a in ATTRS]))  # warm-up
    for rows in sorted({args.rows // 10, args.rows}):
        spent = kernel(mech, rows, rng)
        peak = kernel(mech, rows, rng, trace=True)
        print(f"kernel  {rows:>11,} rows: count + estimate {spent:6.3f} s, tracemalloc peak {peak / 2**20:7.1f} MiB")
    print("(kernel peak = one 1M-row chunk of int8 codes + its index; independent of the row count)")
    for rows in sorted({args.csv_rows // 4, args.csv_rows}):
        spent, hashed, peak, size, rss = end_to_end(mech, rows, rng)
        rate = rows / spent
        print(
            f"CSV end to end {rows:>11,} rows ({size / 2**20:6.1f} MiB): {spent:6.2f} s "
            f"({rate / 1e6:.2f} M rows/s, 10M rows ~ {1e7 / rate:5.1f} s), tracemalloc peak {peak / 2**20:6.1f} MiB, "
            f"process max RSS {rss:6.1f} MiB; with the manifest's SHA-256 check {hashed:5.2f} s"
        )
    import optrr_engine.estimation.release_source as rs

    reader = f"optrr_engine.io.readers.iter_tables (Arrow, dictionary-encoded), {rs.CHUNK_ROWS:,} rows per chunk"
    print(f"reader: {reader}")


if __name__ == "__main__":
    main()
