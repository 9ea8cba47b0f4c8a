"""The default estimate's prior weight chosen from the release itself, pooled over its attributes (experiments,
docs/utility.md; of its columns only ``gate`` is the product's rule).

The default estimate of a 1-way table is the posterior mode under Dirichlet(1 + w / d), w = prior_records(d, n)
(one record per cell, at most sqrt(n)). Here w is instead the total concentration A of a symmetric Dirichlet that
fits all the release's attributes at once, by moments: for a Dirichlet(A / d) table E||pi - u||^2 = (1 - 1/d) / (A + 1),
and ||pi_hat - u||^2 - trace Cov(pi_hat) estimates ||pi - u||^2 from the unbiased estimate, so

    1 / (A + 1) = sum_j (||pi_hat_j - u_j||^2 - sum_x se_jx^2) / sum_j (1 - 1 / d_j)

(A = inf when the right side is <= 0: every attribute looks uniform). One attribute's own moment is too noisy with
few reports (docs/utility.md); pooled over k attributes the noise falls by about sqrt(k).

Column ``own``: each attribute's own moment, capped at the default weight (min(prior_records, A_j): smooth less only
where the attribute itself looks further from uniform than the prior assumes).

Column ``gate``: the product's rule since 2026-11-27 (optrr_engine.estimation.pooled_prior): the default weight
lowered to the pooled concentration's one-sided 95 % upper bound A_up where that is smaller (the release's
1-way prior bound, as ``optrr estimate`` applies it).

    python3 bench/pooled_prior.py --reps 20 --design smp tests/data/car.csv tests/data/mushroom.csv

Prints, per data set and epsilon, the mean AVD of the 1-way estimates against the data's own marginals for the
default estimate as it was before the bound (map: min(cells, sqrt(n)) records), clip-and-rescale (the peers' SMP
estimator), the pooled weight (eb), the capped own weight (own) and the product's bounded weight (gate), with
standard errors.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import optrr_engine.estimation.estimate as estimate_module
from optrr_engine.analysis.avd import avd
from optrr_engine.compare.datasets import load_dataset
from optrr_engine.compare.designs_on_data import estimate_marginal, release_of, released_prior_bound
from optrr_engine.errors import InputError
from optrr_engine.sampling import make_sampling_design
from optrr_engine.utility.recommend import recommend
from optrr_engine.utility.sampling import SamplingCandidate

DEFAULT_WEIGHT = estimate_module.prior_records


def pooled_concentration(unbiased, sizes) -> float:
    """A from the unbiased 1-way estimates of one release (module docstring; None: an attribute nobody reported)."""
    pairs = [(u, a) for u, a in zip(unbiased, sizes, strict=True) if u is not None]
    spread = sum(float(((u.unbiased - 1.0 / a) ** 2).sum() - (u.std_error**2).sum()) for u, a in pairs)
    if spread <= 0:
        return float("inf")
    return max(sum(1.0 - 1.0 / a for _, a in pairs) / spread - 1.0, 0.0)


def reported(estimate, *args):
    """The estimate, or None when no record of this release reported the attribute (SMP on few rows)."""
    try:
        return estimate(*args)
    except InputError:
        return None


def with_weight(cand, released, sizes, j, weight):
    """The default (map) estimate of attribute j with the prior weight ``weight`` records."""
    estimate_module.prior_records = lambda cells, n: weight  # read by estimate_from_counts at call time
    try:
        return estimate_marginal(cand, released, sizes, [j], "map").estimate
    finally:
        estimate_module.prior_records = DEFAULT_WEIGHT


def run(path, eps, reps, rng, design):
    data = load_dataset(path)
    codes, sizes, k = data.codes, data.sizes, len(data.sizes)
    truths = [np.bincount(codes[:, j], minlength=sizes[j]) / data.rows for j in range(k)]
    if design == "smp":
        cand = SamplingCandidate(make_sampling_design("smp", sizes, eps))
    else:
        cand = recommend(sizes, eps, rows=data.rows, marginals={"orders": [1]}).best.candidate
    out: dict = {"map": [], "clip": [], "eb": [], "own": [], "gate": []}
    weights = []
    for _ in range(reps):
        released = release_of(cand).sample(codes, rng)
        unbiased = [reported(estimate_marginal, cand, released, sizes, [j], "unbiased") for j in range(k)]
        a = pooled_concentration(unbiased, sizes)
        weights.append(a)
        w = a if np.isfinite(a) else 1e9
        upper = released_prior_bound(cand, released, sizes)  # the product's rule (estimation.pooled_prior)
        for method in out:
            per = []
            for j in range(k):
                if unbiased[j] is None:
                    est = np.full(sizes[j], 1.0 / sizes[j])  # nobody reported it: the uniform estimate (all three)
                elif method == "eb":
                    est = with_weight(cand, released, sizes, j, w)
                elif method == "own":
                    own = pooled_concentration([unbiased[j]], [sizes[j]])
                    today = DEFAULT_WEIGHT(sizes[j], float(max(unbiased[j].rows, 1)))
                    est = with_weight(cand, released, sizes, j, min(today, own))
                elif method == "gate":
                    est = estimate_marginal(cand, released, sizes, [j], "map", upper).estimate
                else:
                    est = estimate_marginal(cand, released, sizes, [j], method).estimate
                per.append(avd(est, truths[j]))
            out[method].append(float(np.mean(per)))
    stats = {m: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v)))) for m, v in out.items()}
    return cand.name, stats, float(np.median(weights))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--eps", default="1,2,4,8")
    ap.add_argument("--design", choices=["smp", "recommended"], default="smp")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for path in args.paths:
        for eps in [float(e) for e in args.eps.split(",")]:
            t0 = time.perf_counter()
            name, s, a = run(path, eps, args.reps, rng, args.design)
            cols = " ".join(f"{m} {v[0]:.4f}+-{v[1]:.4f}" for m, v in s.items())
            print(
                f"{os.path.basename(path):22s} eps {eps:g} {name:9s} pooled A (median) {a:8.1f}  {cols}  "
                f"eb/map {s['eb'][0] / s['map'][0]:.3f} gate/map {s['gate'][0] / s['map'][0]:.3f} "
                f"gate/clip {s['gate'][0] / s['clip'][0]:.3f} "
                f"({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
