"""How good is the recommender's pick among its own candidates, on real files? (issue 13, item 4)

For each data set, whole-record epsilon and marginal order w, ``recommend()`` (= ``optrr design --target-total``)
ranks its candidates for "all w-way marginals" at the file's number of rows. Every candidate that can answer
w-way tables is then released ``--reps`` times and its **default estimates** of all w-way tables (or ``--pairs``
random ones when there are more) are scored by AVD against the file's own marginals. Per cell the script prints
the pick, the best candidate, the **regret** (the pick's simulated AVD over the best candidate's), and the pick's
prediction (against the data's own marginals, as simulated) over its simulation; then the mean / median / max
regret per order. The peers of ``bench/utility.py`` are not run: this is the ranking's own quality.

    nice -n 19 python3 bench/ranking.py --datasets car,breast_cancer --ways 2,3 --reps 20 --csv ranking.csv
    python3 bench/ranking.py --extra-data ../shared/data --datasets stroke --eps 1,2

docs/utility.md ("The ranking puts only erased needed tables first") has the results.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from itertools import combinations

import numpy as np

from optrr_engine.analysis.avd import avd
from optrr_engine.compare.avd_marginals import MAX_CELLS
from optrr_engine.compare.datasets import load_dataset
from optrr_engine.compare.designs_on_data import estimate_marginal, release_of
from optrr_engine.errors import InputError
from optrr_engine.estimation.counts import count_codes
from optrr_engine.utility.recommend import recommend

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
DATASETS = ["car", "breast_cancer", "heart_cleveland", "house_votes_84", "nursery", "cirrhosis", "mushroom"]
EXTRA = ["stroke", "snpassoc_snps"]  # from --extra-data (not in tests/data)


def scored_sets(k: int, sizes, way: int, pairs: int, rng) -> list[tuple]:
    """All w-way tables when there are at most ``pairs`` of them (of at most MAX_CELLS cells), else ``pairs``
    distinct ones drawn at random (which tables are scored moves a cell's regret a lot: score many)."""
    tables = [s for s in combinations(range(k), way) if int(np.prod([int(sizes[a]) for a in s])) <= MAX_CELLS]
    if len(tables) <= pairs:
        return tables
    return [tables[i] for i in sorted(rng.choice(len(tables), size=pairs, replace=False))]


def simulated_avd(cand, codes, sizes, sets, truths, reps: int, rng) -> tuple[float, float] | None:
    """(mean, standard error over repetitions) of the default estimates' AVD; None when the design cannot
    estimate one of the sets (a sampling design never reporting them together)."""
    per_rep = []
    for _ in range(reps):
        released = release_of(cand).sample(codes, rng)
        try:
            estimates = [estimate_marginal(cand, released, sizes, s).estimate for s in sets]
            vals = [avd(e, t) for e, t in zip(estimates, truths, strict=True)]
        except InputError:
            return None
        per_rep.append(float(np.mean(vals)))
    return float(np.mean(per_rep)), float(np.std(per_rep, ddof=1) / np.sqrt(reps)) if reps > 1 else float("nan")


def run_cell(data, target: float, way: int, sets, truths, reps: int, rng) -> list[dict]:
    codes, sizes, n = data.codes, data.sizes, data.rows
    t0 = time.perf_counter()
    rec = recommend(sizes, target, rows=n, marginals={"orders": [way]})
    seconds = time.perf_counter() - t0
    rows = []
    for rank, r in enumerate(rec.ranked):
        if r.error is None:
            continue
        sim = simulated_avd(r.candidate, codes, sizes, sets, truths, reps, rng)
        given = r.candidate.predicted_error(n, {"sets": sets}, given_data=True).default_score()
        rows.append(
            {
                "dataset": data.name,
                "epsilon": target,
                "way": way,
                "rank": rank,
                "design": r.candidate.name,
                "erased": len(r.error.erased),
                "uninformative": len(r.error.non_identifiable) - len(r.error.erased),
                "predicted_default": r.error.default_score(),
                "predicted_given_data": given,
                "simulated": sim[0] if sim else "",
                "simulated_se": sim[1] if sim else "",
                "recommend_seconds": seconds,
            }
        )
    return rows


def summarise(rows: list[dict]) -> None:
    cells: dict = {}
    for r in rows:
        cells.setdefault((r["dataset"], float(r["epsilon"]), int(r["way"])), []).append(r)
    print(f"\n{'dataset':16s} {'eps':>4s} way {'pick':>10s} {'AVD':>8s} {'best':>10s} {'AVD':>8s} regret pred/sim")
    regrets: dict = {}
    accuracy: dict = {}
    earlier: dict = {}  # the rule before 2026-11-26: every non-identifiable needed table first (erased or noisy)
    for (name, eps, way), rs in sorted(cells.items()):
        done = [r for r in rs if r["simulated"] not in ("", None)]
        if not done:
            continue
        pick = min(rs, key=lambda r: int(r["rank"]))
        best = min(done, key=lambda r: float(r["simulated"]))
        if pick["simulated"] in ("", None):
            print(f"{name:16s} {eps:4g} {way:3d} {pick['design']:>10s}: the pick cannot answer these tables")
            continue
        regret = float(pick["simulated"]) / float(best["simulated"])
        ratio = float(pick["predicted_given_data"]) / float(pick["simulated"])
        regrets.setdefault(way, []).append(regret)
        old = min(rs, key=lambda r: (int(r["erased"]) + int(r["uninformative"]), float(r["predicted_default"])))
        if old["simulated"] not in ("", None):
            earlier.setdefault(way, []).append(float(old["simulated"]) / float(best["simulated"]))
        accuracy.setdefault(way, []).append(ratio)
        print(
            f"{name:16s} {eps:4g} {way:3d} {pick['design']:>10s} {float(pick['simulated']):8.4f} "
            f"{best['design']:>10s} {float(best['simulated']):8.4f} {regret:6.3f} {ratio:7.3f}"
        )
    for way, v in sorted(regrets.items()):
        a = np.asarray(v)
        acc = np.asarray(accuracy[way])
        print(
            f"{way}-way: {a.size} cells, regret mean {a.mean():.3f} median {np.median(a):.3f} max {a.max():.3f}, "
            f"{int(np.sum(a <= 1.0))} at the best; the pick's prediction / simulation: median {np.median(acc):.3f}"
        )
        if way in earlier:
            b = np.asarray(earlier[way])
            print(
                f"       the earlier rule (noisy tables ranked like erased ones): regret mean {b.mean():.3f} "
                f"median {np.median(b):.3f} max {b.max():.3f}, {int(np.sum(b <= 1.0))} at the best"
            )


def write_csv(path: str, rows: list[dict]) -> None:
    if not rows:
        return
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--extra-data", help="folder with stroke.csv and snpassoc_snps.csv")
    ap.add_argument("--eps", default="1,2,4,8")
    ap.add_argument("--ways", default="1,2,3")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=30, help="2- and 3-way tables scored per cell (all when fewer)")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--csv", default="ranking.csv")
    ap.add_argument("--table", help="only summarise an existing CSV")
    args = ap.parse_args()
    if args.table:
        with open(args.table, encoding="utf-8") as fh:
            summarise(list(csv.DictReader(fh)))
        return
    try:
        ways = sorted({int(w) for w in args.ways.split(",") if w.strip()})
        eps_list = [float(e) for e in args.eps.split(",") if e.strip()]
    except ValueError:
        ap.error(f"--ways and --eps take comma-separated numbers; got {args.ways!r} and {args.eps!r}")
    if not ways or not set(ways) <= {1, 2, 3} or not eps_list or min(eps_list) <= 0 or args.reps < 2:
        ap.error("--ways among 1, 2, 3; --eps positive; --reps at least 2")
    names = [n for n in args.datasets.split(",") if n]
    if any(n in EXTRA for n in names) and not args.extra_data:
        ap.error(f"{', '.join(n for n in names if n in EXTRA)}: give --extra-data (the folder with its CSV)")
    rng = np.random.default_rng(args.seed)
    rows: list[dict] = []
    t0 = time.perf_counter()
    for name in names:
        data = load_dataset(os.path.join(args.extra_data if name in EXTRA else DATA, f"{name}.csv"))
        k = len(data.sizes)
        for way in ways:
            if way > k:
                continue
            sets = scored_sets(k, data.sizes, way, args.pairs, rng)
            truths = [count_codes(data.codes[:, list(s)], [int(data.sizes[a]) for a in s]) / data.rows for s in sets]
            for target in eps_list:
                t1 = time.perf_counter()
                rows += run_cell(data, target, way, sets, truths, args.reps, rng)
                write_csv(args.csv, rows)  # partial results survive an interrupted run
                print(f"  {data.name} eps {target:g} {way}-way: {time.perf_counter() - t1:.1f} s", flush=True)
    print(f"wrote {args.csv} ({time.perf_counter() - t0:.0f} s)")
    summarise(rows)


if __name__ == "__main__":
    main()
