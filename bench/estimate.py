"""Benchmark: a 3-way marginal from a 10-million-row release (target <= 2 s, memory independent of rows).

Two measurements:
1. counting kernel + estimate: perturbed codes are generated in memory chunk by chunk (1M rows each, not
   timed), then counted with the streaming mixed-radix bincount and estimated (unbiased + 95% intervals);
   timed and with tracemalloc's peak for 1M and 10M rows.
2. end to end from a CSV release (labels as strings + manifest): write a release of --csv-rows rows (not
   timed), then time estimate_release (read chunks, map labels to codes, count, estimate) without and with
   the manifest's SHA-256 check of the file, its tracemalloc peak, and a fresh process's max RSS.

3. the default estimator (maximum likelihood, SQUAREM-accelerated EM) on a 10,000-cell table (4 attributes of
   10 categories) from 1M perturbed rows (target <= 1 s): time, iterations, certified log-likelihood gap, for
   a smooth truth (a mixture of 3 product distributions) and a sparse one (Dirichlet(0.3) over the cells),
   under an optimal design and a weaker Kronecker one.

    python3 bench/estimate.py [--rows 10000000] [--csv-rows 2000000] [--mle-only]
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


def mle_truths(rng):
    cells = int(np.prod(MLE_SIZES))
    mix = np.zeros(MLE_SIZES)
    for weight in (0.5, 0.3, 0.2):
        part = np.ones(())
        for a in MLE_SIZES:
            part = np.multiply.outer(part, rng.dirichlet(np.ones(a)))
        mix += weight * part
    return {"smooth": mix, "sparse": rng.dirichlet(np.full(cells, 0.3)).reshape(MLE_SIZES)}


def mle_bench(rng, rows=1_000_000):
    from optrr_engine.estimation import count_codes

    print(f"default estimator on a {int(np.prod(MLE_SIZES)):,}-cell table from {rows:,} rows (target <= 1 s)")
    designs = {
        "optimal eps_i = 2 (whole-record": run_design("optimal", MLE_SIZES, [2.0] * 4).mechanism,
        "kronecker eps_i = 1 (whole-record": run_design("kronecker", MLE_SIZES, [1.0] * 4).mechanism,
    }
    for label, mech in designs.items():
        for truth_name, truth in mle_truths(rng).items():
            idx = rng.choice(truth.size, size=rows, p=truth.ravel())
            codes = np.stack(np.unravel_index(idx, MLE_SIZES), axis=1)
            counts = count_codes(mech.sample(codes, rng), MLE_SIZES)
            t0 = time.perf_counter()
            est = estimate_from_counts(mech, counts)
            spent = time.perf_counter() - t0
            info = est.info
            print(
                f"  {label} {mech.overall_epsilon():.3g}), {truth_name:6s} truth: {spent:6.2f} s, "
                f"{info['iterations']:5d} iterations, converged {info['converged']}, certified gap "
                f"{info['log_likelihood_gap_bound']:.3g} (tolerance {info['log_likelihood_gap_tolerance']:.3g}), "
                f"L1 to truth {np.abs(est.estimate - truth).sum():.3f} (unbiased clipped "
                f"{np.abs(np.clip(est.unbiased, 0, None) / np.clip(est.unbiased, 0, None).sum() - truth).sum():.3f})"
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--csv-rows", type=int, default=2_000_000)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--mle-only", action="store_true", help="only the default-estimator measurement")
    args = ap.parse_args()
    if args.child:
        child(*args.child)
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
