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
import os
import time

import numpy as np
import pandas as pd

from optrr_engine.compare.datasets import load_dataset
from optrr_engine.compare.designs_on_data import compare_designs

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
DATASETS = ["car", "breast_cancer", "heart_cleveland", "house_votes_84", "nursery", "cirrhosis", "mushroom"]
EXTRA = ["stroke", "snpassoc_snps"]  # from --extra-data (not in tests/data)


def run_cell(data, target: float, way: int, pairs: int, reps: int, seed: int) -> pd.DataFrame:
    """One (data set, epsilon, order) cell: the Compare tab's comparison (``compare_designs``: every candidate of
    ``recommend()`` for all w-way tables released ``reps`` times, its default estimates of the same w-way tables
    scored), with each candidate's ranking facts from the recommender's JSON."""
    t0 = time.perf_counter()
    spec = {"orders": [way]}
    rows, ranking = compare_designs(
        data.codes, data.sizes, target, marginals=spec, ways=(way,), sets=pairs, repetitions=reps, seed=seed
    )
    facts = {c["design"]: c for c in ranking["candidates"] if "result" not in c}
    out = pd.DataFrame(
        {
            "dataset": data.name,
            "epsilon": target,
            "way": way,
            "rank": rows["rank"] - 1,  # 0 = the pick
            "design": rows["design"],
            "erased": [len(facts[d]["erased"]) for d in rows["design"]],
            "uninformative": [len(facts[d]["non_identifiable"]) - len(facts[d]["erased"]) for d in rows["design"]],
            "predicted_default": [facts[d]["mean_expected_avd_default"] or np.inf for d in rows["design"]],
            "predicted_given_data": rows["predicted_avd"],
            # a design that could not estimate every scored table in every release has no comparable AVD
            "simulated": rows["measured_avd"].where(rows["unanswered"] == 0),
            "seconds": time.perf_counter() - t0,
        }
    )
    return out


def with_earlier_rule(table: pd.DataFrame) -> pd.DataFrame:
    """The key of the rule before 2026-11-26: every non-identifiable needed table, erased or only too noisy."""
    return table.assign(noisy_or_erased=table["erased"] + table["uninformative"])


def summarise(table: pd.DataFrame) -> None:
    """Per cell: the pick (rank 0), the best simulated candidate, the regret and the pick's prediction /
    simulation; per order: mean / median / max regret, and the same for the rule before 2026-11-26."""
    print(f"\n{'dataset':16s} {'eps':>4s} way {'pick':>10s} {'AVD':>8s} {'best':>10s} {'AVD':>8s} regret pred/sim")
    regrets: dict = {}
    earlier: dict = {}  # every non-identifiable needed table first (erased or only too noisy)
    accuracy: dict = {}
    for (name, eps, way), cell in table.groupby(["dataset", "epsilon", "way"], sort=True):
        done = cell.dropna(subset=["simulated"])
        if done.empty:
            continue
        pick = cell.loc[cell["rank"].idxmin()]
        best = done.loc[done["simulated"].idxmin()]
        if np.isnan(pick["simulated"]):
            print(f"{name:16s} {eps:4g} {way:3d} {pick['design']:>10s}: the pick cannot answer these tables")
            continue
        regret = pick["simulated"] / best["simulated"]
        ratio = pick["predicted_given_data"] / pick["simulated"]
        regrets.setdefault(way, []).append(regret)
        accuracy.setdefault(way, []).append(ratio)
        old = cell.loc[cell.sort_values(["noisy_or_erased", "predicted_default"]).index[0]]
        if not np.isnan(old["simulated"]):
            earlier.setdefault(way, []).append(old["simulated"] / best["simulated"])
        print(
            f"{name:16s} {eps:4g} {way:3d} {pick['design']:>10s} {pick['simulated']:8.4f} "
            f"{best['design']:>10s} {best['simulated']:8.4f} {regret:6.3f} {ratio:7.3f}"
        )
    for way, v in sorted(regrets.items()):
        a, acc = np.asarray(v), np.asarray(accuracy[way])
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


def write_csv(table: pd.DataFrame, path: str) -> None:
    tmp = path + ".tmp"
    table.to_csv(tmp, index=False)
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
    ap.add_argument("--force", action="store_true", help="overwrite an existing --csv")
    args = ap.parse_args()
    if args.table and not os.path.isfile(args.table):
        ap.error(f"--table: no such file: {args.table}")
    if args.table:
        summarise(with_earlier_rule(pd.read_csv(args.table)))
        return
    try:
        ways = sorted({int(w) for w in args.ways.split(",") if w.strip()})
        eps_list = [float(e) for e in args.eps.split(",") if e.strip()]
    except ValueError:
        ap.error(f"--ways and --eps take comma-separated numbers; got {args.ways!r} and {args.eps!r}")
    if not ways or not set(ways) <= {1, 2, 3} or not eps_list or min(eps_list) <= 0 or args.reps < 2:
        ap.error("--ways among 1, 2, 3; --eps positive; --reps at least 2")
    if os.path.exists(args.csv) and not args.force:
        ap.error(f"{args.csv} exists: give another --csv, or --force to overwrite it")
    names = [n for n in args.datasets.split(",") if n]
    if any(n in EXTRA for n in names) and not args.extra_data:
        ap.error(f"{', '.join(n for n in names if n in EXTRA)}: give --extra-data (the folder with its CSV)")
    rng = np.random.default_rng(args.seed)
    cells: list[pd.DataFrame] = []
    t0 = time.perf_counter()
    for name in names:
        data = load_dataset(os.path.join(args.extra_data if name in EXTRA else DATA, f"{name}.csv"))
        for way in ways:
            if way > len(data.sizes):
                continue
            for target in eps_list:
                cells.append(run_cell(data, target, way, args.pairs, args.reps, int(rng.integers(2**31))))
                write_csv(pd.concat(cells, ignore_index=True), args.csv)  # partial results survive an interruption
                print(f"  {data.name} eps {target:g} {way}-way: {cells[-1]['seconds'].iloc[0]:.1f} s", flush=True)
    print(f"wrote {args.csv} ({time.perf_counter() - t0:.0f} s)")
    summarise(with_earlier_rule(pd.concat(cells, ignore_index=True)))


if __name__ == "__main__":
    main()
