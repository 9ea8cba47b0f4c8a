"""Utility benchmark (issue 13 item 6): AVD of 1-, 2- and 3-way marginals at equal whole-record epsilon.

Ours, each estimated with the default estimator (smoothed maximum likelihood, method "map"):
- Kronecker and auto at the whole-record target (equal weights, budget policy); SMP, sample-2, sample-3 and
  RS+FD (optrr_engine.sampling);
- ``utility``: the utility-optimal design for the marginals scored in the cell (all w-way, w = the cell's way);
- ``recommended``: what ``optrr_engine.utility.recommend`` (= ``optrr design --target-total``) picks for "all
  w-way marginals" at the data set's n rows. Its predicted error (the recommender's criterion: unbiased
  estimator, normal approximation, uniform prior; here given the data, i.e. against the data's own marginals)
  is printed next to the simulated AVD of the default estimator and, on the same releases, of maximum
  likelihood (``ibu``), the unbiased estimator, clip-and-renormalise (the peers' post-processing) and Norm-Sub
  (the Euclidean projection of the unbiased estimate onto the simplex; Wang et al., NDSS 2020).

Peers, from the PyPI package multi-freq-ldpy (a bench-only dependency: ``pip install -e ".[bench]"``), each with
the package's own clients and its own estimator (matrix inversion, clipped at 0 and renormalised, "MI"):
- 1-way: SPL (the target split evenly over the attributes), SMP and RS+FD with GRR. RS+FD is given the
  epsilon whose "amplified" GRR epsilon equals the target, because that amplified epsilon is its whole-record
  one (docs/sampling.md);
- 2- and 3-way: SPL's reports, joint table estimated by inverting the tensor product of its per-attribute
  GRR channels and the package's clip-and-renormalise (the package itself only estimates 1-way); and a
  sampled-w variant (``peer_sw``, the "sampled pairs" of issue 13): each record reports one w-subset of
  attributes, chosen uniformly among the C(k, w), as one value of their joint domain through the package's GRR
  at the whole target; a w-way marginal is estimated by the package's GRR aggregator from the records that
  chose it (uniform when none did; likewise SMP's estimate of an attribute no record sampled, where the package
  raises: snpassoc_snps, 157 rows and 33 attributes). SMP and RS+FD cannot answer joint marginals ("-").

AVD of a marginal = 0.5 * sum |estimate - truth| (total variation); a cell shows the mean over the marginals
drawn (all 1-way; up to --pairs random 2-way and 3-way sets, the same for every method) and the repetitions.
The second table gives, per cell, the recommended design, its predicted and simulated AVD and the ratio
recommended / best peer (target: <= 1 everywhere).

    python3 bench/utility.py [--reps 20] [--eps 1,2,4,8] [--extra-data DIR] [--quick] [--csv utility.csv] [--no-ml]
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
from optrr_engine.compare.designs_on_data import estimate_marginal, release_of, released_prior_bound
from optrr_engine.errors import InputError, OptRRError
from optrr_engine.estimation import DEFAULT_METHOD
from optrr_engine.estimation.counts import count_codes
from optrr_engine.sampling import make_sampling_design
from optrr_engine.utility.candidate import MechanismCandidate
from optrr_engine.utility.recommend import recommend
from optrr_engine.utility.sampling import SamplingCandidate

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
DATASETS = ["nursery", "mushroom", "car", "breast_cancer", "cirrhosis", "heart_cleveland", "house_votes_84"]
EXTRA = ["stroke", "snpassoc_snps"]
FIXED = ["kronecker", "auto", "smp", "sample-2", "sample-3", "rsfd"]
OURS = [*FIXED, "utility", "recommended"]
PEERS = ["peer_spl", "peer_smp", "peer_rsfd", "peer_sw"]
WAYS = (1, 2, 3)
#: Estimators computed on the same releases as the default for the recommended and utility designs
#: (normsub: post-processing of the unbiased estimate, bench only).
OTHER_ESTIMATORS = ["ibu", "unbiased", "clip", "normsub"]


def truth_of(codes, sizes, attrs):
    t = count_codes(codes[:, attrs], [int(sizes[a]) for a in attrs]).astype(float)
    return t / t.sum()


def avd(est, truth) -> float:
    return 0.5 * float(np.abs(np.asarray(est, dtype=float) - truth).sum())


def build_fixed(method, sizes, target):
    """A candidate (mechanism or sampling design) at the whole-record target; None if impossible."""
    if method in ("kronecker", "auto"):
        return MechanismCandidate(method, budgeted_design(method, sizes, np.ones(len(sizes)), target).mechanism)
    if method.startswith("sample-"):
        m = int(method.split("-")[1])
        if m >= len(sizes):
            return None
        return SamplingCandidate(make_sampling_design("sample-m", sizes, target, m=m, inner_method="optimal"))
    return SamplingCandidate(make_sampling_design(method, sizes, target))


def project_to_simplex(estimate: np.ndarray) -> np.ndarray:
    """Norm-Sub (Wang, Lopuhaa-Zwakenberg, Li, Skoric & Li, NDSS 2020) = the Euclidean projection onto the
    simplex: max(pi - theta, 0) with theta from the sorted entries (Held, Wolfe & Crowder 1974)."""
    u = np.sort(np.ravel(estimate))[::-1]
    excess = np.cumsum(u) - 1.0
    rho = int(np.flatnonzero(u * np.arange(1, u.size + 1) > excess)[-1]) + 1
    return np.maximum(np.asarray(estimate, dtype=float) - excess[rho - 1] / rho, 0.0)


def estimate(cand, released, sizes, attrs, method, bound=None):
    """The estimate of ``method`` (``bound``: the release's 1-way prior bound, used by the default method)."""
    if method == "normsub":
        return project_to_simplex(estimate(cand, released, sizes, attrs, "unbiased"))
    est = estimate_marginal(cand, released, sizes, attrs, method, bound if method == DEFAULT_METHOD else None)
    if "converged" in est.info:
        CONVERGENCE[method] = CONVERGENCE.get(method, 0) + 1
        if not est.info["converged"]:
            CONVERGENCE[f"{method} NOT converged"] = CONVERGENCE.get(f"{method} NOT converged", 0) + 1
    return est.estimate


#: Iterative estimates run and not converged, per method (printed at the end).
CONVERGENCE: dict = {}


def ours_avd(cand, codes, sizes, sets, truths, rng, others) -> dict:
    """{(way, estimator): [AVD per marginal]} for one perturbation of the data (sets the design cannot
    estimate are left out); the default estimator, and the estimators listed in ``others``."""
    out: dict = {}
    released = release_of(cand).sample(codes, rng)
    bound = released_prior_bound(cand, released, sizes) if any(len(s) == 1 for s in sets) else None
    for attrs, truth in zip(sets, truths, strict=True):
        for method in (DEFAULT_METHOD, *others):
            try:
                est = estimate(cand, released, sizes, attrs, method, bound)
            except InputError:
                continue  # the design cannot estimate this marginal
            out.setdefault((len(attrs), method), []).append(avd(est, truth))
    return out


def grr_inverse_axis(table, axis, p, q):
    """Apply the inverse GRR channel ((p - q) I + q J)^-1 along one axis: (v - q sum v) / (p - q)."""
    return (table - q * table.sum(axis=axis, keepdims=True)) / (p - q)


def clip_renormalise(est):
    """The package's MI post-processing: clip at 0 and renormalise (unchanged if all clipped)."""
    est = np.clip(est, 0.0, None)
    s = est.sum()
    return est / s if s > 0 else est


def smp_without_reports(reports, lst_k, eps):
    """SMP_GRR_Aggregator_MI's per-attribute GRR estimates (the package's own GRR aggregator), with the uniform
    distribution for an attribute no record sampled (the package raises there; same rule as peer_sw)."""
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI

    by_attr: dict = {}
    for rep in reports:
        by_attr.setdefault(rep[0], []).append(rep[-1])
    return [
        GRR_Aggregator_MI(by_attr[j], a, eps) if by_attr.get(j) else np.full(a, 1.0 / a) for j, a in enumerate(lst_k)
    ]


def peers_avd(codes, sizes, target, seed, sets, truths) -> dict:
    """{(peer, way): [AVD per marginal]} for one run of each multi-freq-ldpy protocol."""
    from multi_freq_ldpy.mdim_freq_est.RSpFD_solution import RSpFD_GRR_Aggregator_MI, RSpFD_GRR_Client
    from multi_freq_ldpy.mdim_freq_est.SMP_solution import SMP_GRR_Aggregator_MI, SMP_GRR_Client
    from multi_freq_ldpy.mdim_freq_est.SPL_solution import SPL_GRR_Aggregator_MI, SPL_GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client

    np.random.seed(seed)  # the package draws from numpy's global generator
    k = len(sizes)
    lst_k = [int(a) for a in sizes]
    rows = codes.tolist()
    rsfd_eps = math.log(math.expm1(target) / k + 1.0)  # amplified epsilon ln(k (e^eps - 1) + 1) = target
    one_way = [(i, s) for i, s in enumerate(sets) if len(s) == 1]
    out: dict = {}
    runs = {
        "peer_spl": (SPL_GRR_Client, SPL_GRR_Aggregator_MI, target),
        "peer_smp": (SMP_GRR_Client, SMP_GRR_Aggregator_MI, target),
        "peer_rsfd": (RSpFD_GRR_Client, RSpFD_GRR_Aggregator_MI, rsfd_eps),
    }
    for name, (client, aggregate, eps) in runs.items():
        reports = [client(r, lst_k, k, eps) for r in rows]
        try:
            est = aggregate(reports, lst_k, k, eps)
        except ValueError:  # SMP on few rows: an attribute nobody sampled ("List of reports is empty")
            if name != "peer_smp":
                raise
            est = smp_without_reports(reports, lst_k, eps)
        if one_way:  # none when --ways leaves the 1-way tables out
            out[(name, 1)] = [avd(np.asarray(est[s[0]], dtype=float), truths[i]) for i, s in one_way]
        if name == "peer_spl":  # joint tables from the same reports: invert the tensor product of the GRRs
            reports = np.asarray(reports, dtype=np.int64)
            e = eps / k
            for i, attrs in enumerate(sets):
                if len(attrs) == 1:
                    continue
                table = truth_of(reports, sizes, attrs)
                for axis, a in enumerate(attrs):
                    p = math.exp(e) / (math.exp(e) + lst_k[a] - 1)
                    table = grr_inverse_axis(table, axis, p, (1 - p) / (lst_k[a] - 1))
                out.setdefault((name, len(attrs)), []).append(avd(clip_renormalise(table), truths[i]))
    for way in (2, 3):  # sampled-w: one uniformly chosen w-subset per record, GRR on its joint domain
        wanted = [(i, tuple(s)) for i, s in enumerate(sets) if len(s) == way]
        if not wanted or way >= k:
            continue
        subsets = [tuple(sorted(np.random.choice(k, size=way, replace=False).tolist())) for _ in rows]
        by_subset: dict = {}
        for r, s in zip(rows, subsets, strict=True):
            if s in {w for _, w in wanted}:
                dom = [lst_k[a] for a in s]
                by_subset.setdefault(s, []).append(
                    GRR_Client(int(np.ravel_multi_index([r[a] for a in s], dom)), int(np.prod(dom)), target)
                )
        for i, s in wanted:
            dom = [lst_k[a] for a in s]
            rep = by_subset.get(s)
            if rep:
                est = np.asarray(GRR_Aggregator_MI(rep, int(np.prod(dom)), target), dtype=float).reshape(dom)
            else:
                est = np.full(dom, 1.0 / np.prod(dom))
            out.setdefault(("peer_sw", way), []).append(avd(est, truths[i]))
    return out


def repetition_se(per_rep) -> float:
    """Standard error of a cell's mean AVD from the mean AVD of each repetition."""
    if len(per_rep) < 2:
        return float("nan")
    return float(np.std(per_rep, ddof=1) / math.sqrt(len(per_rep)))


def write_csv(path, rows) -> None:
    if rows:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def predicted_avd(cand, n, sets) -> tuple[float, float]:
    """Mean predicted AVD of the scored sets (uniform prior, against the data's own marginals: given_data): of
    the unbiased estimate (inf if one is not identifiable) and of the default estimate (the ranking's)."""
    if not sets:
        return float("nan"), float("nan")
    pe = cand.predicted_error(n, {"sets": [tuple(s) for s in sets]}, given_data=True)
    vals = [m.expected_avd if m.identifiable else np.inf for m in pe.marginals]
    return float(np.mean(vals)), pe.default_score()


def candidates_for(sizes, target, n, name, seconds_out, fixed=FIXED, ways=WAYS) -> dict:
    """{(method, way): candidate}: the fixed designs for every way, the utility-optimal and the recommended
    design per way (the recommender asked for all w-way marginals at n rows)."""
    out: dict = {}
    for method in fixed:
        t0 = time.perf_counter()
        try:
            cand = build_fixed(method, sizes, target)
        except (InputError, OptRRError) as exc:
            print(f"  {name} eps {target:g} {method}: not built ({exc})")
            cand = None
        seconds_out[method] = time.perf_counter() - t0
        if cand is not None:
            for way in ways:
                out[(method, way)] = cand
    for way in ways:
        if way > len(sizes):
            continue
        t0 = time.perf_counter()
        rec = recommend(sizes, target, rows=n, marginals={"orders": [way]})
        seconds_out[f"recommend-{way}"] = time.perf_counter() - t0
        out[("recommended", way)] = rec.best.candidate
        util = [r.candidate for r in rec.ranked if r.candidate.name == "utility" and r.error is not None]
        if util:
            out[("utility", way)] = util[0]
    return out


def run_dataset(
    path, eps_list, reps, pairs, rng, rows_out, quick, csv_path, fixed=FIXED, others=OTHER_ESTIMATORS, ways=WAYS
):
    data = load_dataset(path)
    codes, sizes = data.codes, data.sizes
    k, n = len(sizes), data.rows
    sets = [[j] for j in range(k)] + draw_subsets(k, 2, pairs, sizes, rng) + draw_subsets(k, 3, pairs, sizes, rng)
    sets = [s for s in sets if len(s) in ways]
    truths = [truth_of(codes, sizes, s) for s in sets]
    by_way = {w: [s for s in sets if len(s) == w] for w in WAYS}
    for target in eps_list:
        t0 = time.perf_counter()
        seconds: dict = {}
        cands = candidates_for(sizes, target, n, data.name, seconds, fixed, ways)
        results: dict = {}  # (method, way, estimator) -> list of AVD
        per_rep: dict = {}  # (method, way, estimator) -> mean AVD of each repetition (for the standard error)
        for (method, _way), cand in cands.items():
            eps_made = cand.whole_record_epsilon()
            assert eps_made <= target * (1 + 1e-6), (method, eps_made, target)
        t_sim = time.perf_counter()
        jobs: dict = {}  # one perturbation per distinct design and repetition, shared by the cells it serves
        for (method, way), cand in cands.items():
            jobs.setdefault(id(cand), (cand, {}))[1].setdefault(way, []).append(method)
        for _ in range(reps):
            for cand, served in jobs.values():
                wsets = [s for s in sets if len(s) in served]
                wtruths = [t for s, t in zip(sets, truths, strict=True) if len(s) in served]
                more = any(m in ("utility", "recommended") for ms in served.values() for m in ms)
                avds = ours_avd(cand, codes, sizes, wsets, wtruths, rng, others if more else ())
                for (w, est), values in avds.items():
                    for method in served[w]:
                        results.setdefault((method, w, est), []).extend(values)
                        per_rep.setdefault((method, w, est), []).append(float(np.mean(values)))
        t_peer = time.perf_counter()
        for _ in range(reps):
            for (name, way), values in peers_avd(codes, sizes, target, int(rng.integers(2**31)), sets, truths).items():
                results.setdefault((name, way, "own"), []).extend(values)
                per_rep.setdefault((name, way, "own"), []).append(float(np.mean(values)))
        t_end = time.perf_counter()
        for (method, way, est), values in sorted(results.items()):
            if est in OTHER_ESTIMATORS:
                continue  # columns of the default estimator's row
            cand = cands.get((method, way))
            row = {
                "dataset": data.name,
                "rows": n,
                "k": k,
                "epsilon": target,
                "method": method,
                "chosen": cand.name if cand is not None else "",
                "way": way,
                "marginals": len(values) // reps,
                "scored": len(by_way[way]),
                "reps": reps,
                "avd": float(np.mean(values)),
                "avd_se": repetition_se(per_rep[(method, way, est)]),
                "estimator": est,
                **{
                    f"avd_{o}": float(np.mean(results[(method, way, o)])) if (method, way, o) in results else ""
                    for o in OTHER_ESTIMATORS
                },
            }
            row["predicted"], row["predicted_default"] = (
                predicted_avd(cand, n, by_way[way]) if cand is not None else ("", "")
            )
            rows_out.append(row)
        print(
            f"  {data.name} (n = {n}, k = {k}) eps {target:g}: {t_end - t0:.1f} s (designs {t_sim - t0:.1f} s: "
            + ", ".join(f"{m} {s:.1f}" for m, s in seconds.items() if s >= 0.5)
            + f"; ours {t_peer - t_sim:.1f} s; peers {t_end - t_peer:.1f} s)",
            flush=True,
        )
        write_csv(csv_path, rows_out)  # partial results survive an interrupted run
        if quick:
            cell = [r for r in rows_out if r["dataset"] == data.name and r["epsilon"] == target]
            print_table(cell)
            print_recommended(cell)


def _cells(rows):
    keys = sorted({(r["dataset"], float(r["epsilon"]), int(r["way"])) for r in rows})
    index: dict = {}
    for r in rows:
        index.setdefault((r["dataset"], float(r["epsilon"]), int(r["way"])), {})[r["method"]] = r
    return keys, index


def best_peer(vals: dict):
    peers = [(float(vals[m]["avd"]), m) for m in PEERS if m in vals]
    return min(peers) if peers else (None, None)


def print_table(rows) -> None:
    keys, index = _cells(rows)
    short = {"recommended": "recommend", "peer_rsfd": "peer_rsfd"}
    print(f"{'dataset':16s} {'eps':>4s} way " + " ".join(f"{short.get(m, m):>9s}" for m in OURS + PEERS) + "  rec/peer")
    for key in keys:
        vals = index[key]
        cells = " ".join(f"{float(vals[m]['avd']):9.4f}" if m in vals else f"{'-':>9s}" for m in OURS + PEERS)
        peer, _ = best_peer(vals)
        ratio = f"{float(vals['recommended']['avd']) / peer:8.2f}" if peer and "recommended" in vals else f"{'-':>8s}"
        print(f"{key[0]:16s} {key[1]:4g} {key[2]:3d} {cells}  {ratio}")


def _num(x) -> float:
    return float(x) if x not in ("", None) else float("nan")


def print_recommended(rows) -> None:
    """Per cell: the recommended design, predicted vs simulated AVD (default estimator and, on the same releases,
    ML, unbiased, clip, Norm-Sub), and the ratio to the best peer (also had ML been the default)."""
    keys, index = _cells(rows)
    print(
        f"\n{'dataset':16s} {'eps':>4s} way {'recommended':>12s} {'predicted':>9s} {'sim def':>8s} {'sim ML':>8s} "
        f"{'sim unb':>8s} {'sim clip':>8s} {'sim nsub':>8s} {'pred/unb':>8s} {'pred def':>8s} {'pdef/def':>8s} "
        f"{'utility':>8s} "
        f"{'u pred':>8s} {'best peer':>10s} {'AVD':>8s} {'rec/peer':>8s} {'ML/peer':>8s}"
    )
    ratios: dict = {"recommended": [], "utility": []}
    wins = losses = ml_wins = ml_cells = 0
    for key in keys:
        vals = index[key]
        rec = vals.get("recommended")
        if rec is None:
            continue
        util = vals.get("utility")
        peer, peer_name = best_peer(vals)
        pred, sim, unb = _num(rec["predicted"]), float(rec["avd"]), _num(rec["avd_unbiased"])
        ml = _num(rec.get("avd_ibu"))
        for name, r in (("recommended", rec), ("utility", util)):
            if r is None:
                continue
            pred_r, pred_d = _num(r["predicted"]), _num(r.get("predicted_default"))
            unb_ok = np.isfinite(pred_r) and np.isfinite(_num(r["avd_unbiased"]))
            ratios[name].append(
                (
                    pred_r / _num(r["avd_unbiased"]) if unb_ok else float("nan"),
                    pred_d / float(r["avd"]) if np.isfinite(pred_d) else float("nan"),
                )
            )
        ratio = sim / peer if peer else float("nan")
        if peer:
            wins += ratio <= 1.0
            losses += ratio > 1.0
            ml_wins += ml <= peer
            ml_cells += bool(np.isfinite(ml))
        print(
            f"{key[0]:16s} {key[1]:4g} {key[2]:3d} {rec['chosen']:>12s} {pred:9.4f} {sim:8.4f} {ml:8.4f} {unb:8.4f} "
            f"{_num(rec['avd_clip']):8.4f} {_num(rec.get('avd_normsub')):8.4f} {pred / unb:8.2f} "
            f"{_num(rec.get('predicted_default')):8.4f} {_num(rec.get('predicted_default')) / sim:8.2f} "
            + (f"{float(util['avd']):8.4f} {_num(util['predicted']):8.4f} " if util else f"{'-':>8s} {'-':>8s} ")
            + (
                f"{peer_name:>10s} {peer:8.4f} {ratio:8.2f} {ml / peer:8.2f}"
                if peer
                else f"{'-':>10s} {'-':>8s} {'-':>8s} {'-':>8s}"
            )
        )
    for name, rs in ratios.items():
        arr = np.array(rs, dtype=float).reshape(-1, 2)
        for col, what in (
            (0, "the unbiased estimate's prediction / its simulation"),
            (1, f"the default estimate's prediction / its simulation ({DEFAULT_METHOD}; the ranking's)"),
        ):
            vals = arr[np.isfinite(arr[:, col]), col]
            if vals.size:
                q1, med, q3 = np.percentile(vals, [25, 50, 75])
                print(f"{name}: {what}: median {med:.3f} (quartiles {q1:.3f}-{q3:.3f}) over {vals.size} cells")
    ml_text = f" (with ML instead: {ml_wins} of {ml_cells} cells <= 1)" if ml_cells else " (ML not run: --no-ml)"
    print(f"recommended vs best peer: {wins} cells <= 1, {losses} cells > 1{ml_text}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--eps", default="1,2,4,8")
    ap.add_argument("--pairs", type=int, default=10, help="random 2-way and 3-way marginals per data set")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument(
        "--extra-data", help="folder with stroke.csv and snpassoc_snps.csv (both, or those --datasets names)"
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: car and nursery, eps 1 and 4, 2 repetitions")
    ap.add_argument("--csv", default="utility.csv")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument(
        "--fixed", default=",".join(FIXED), help="which fixed designs of ours to run besides utility and recommended"
    )
    ap.add_argument("--table", help="only print the tables of an existing CSV")
    ap.add_argument("--no-ml", action="store_true", help="leave maximum likelihood (the slowest) out of the comparison")
    ap.add_argument("--ways", default="1,2,3", help="which marginal orders to score (e.g. 1 for the 1-way cells)")
    args = ap.parse_args()
    if args.table:
        with open(args.table, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        print_table(rows)
        print_recommended(rows)
        return
    tokens = [w.strip() for w in args.ways.split(",") if w.strip()]
    if not tokens or not set(tokens) <= {str(w) for w in WAYS}:
        ap.error(f"--ways takes marginal orders among {', '.join(map(str, WAYS))} (e.g. 1 or 1,2); got {args.ways!r}")
    ways = tuple(sorted({int(w) for w in tokens}))
    rng = np.random.default_rng(args.seed)
    eps_list = [float(e) for e in args.eps.split(",")]
    names = [n for n in args.datasets.split(",") if n]
    reps, pairs = args.reps, args.pairs
    if args.quick:
        names, eps_list, reps, pairs = ["car", "nursery"], [1.0, 4.0], 2, 5
    if args.extra_data and not set(names) & set(EXTRA):
        names += EXTRA  # all of them unless --datasets names which
    paths = [os.path.join((args.extra_data or DATA) if n in EXTRA else DATA, f"{n}.csv") for n in names]
    rows: list = []
    t0 = time.perf_counter()
    for path in paths:
        others = [e for e in OTHER_ESTIMATORS if not (args.no_ml and e == "ibu")]
        fixed = [m for m in args.fixed.split(",") if m]
        run_dataset(path, eps_list, reps, pairs, rng, rows, args.quick, args.csv, fixed, others, ways)
    write_csv(args.csv, rows)
    print(f"\nmean AVD over marginals and {reps} repetitions (wrote {args.csv}; {time.perf_counter() - t0:.0f} s)")
    print_table(rows)
    print_recommended(rows)
    print("iterative estimates run / not converged:", CONVERGENCE)


if __name__ == "__main__":
    main()
