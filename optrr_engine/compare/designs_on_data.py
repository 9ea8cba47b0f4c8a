"""Every design the recommender ranks, released from the user's own data: measured against predicted error.

At one whole-record epsilon, :func:`optrr_engine.utility.recommend` ranks Kronecker and ``auto`` (budget mode),
the utility-optimal design and the sampling designs (SMP, sample-m, RS+FD) by the predicted error of the needed
marginals. :func:`compare_designs` releases the data ``repetitions`` times with each of them, estimates the
same 1-, 2- and 3-way marginals from every release with the default estimator, and reports per design and way
the mean AVD (0.5 * sum |estimate - truth|) beside the predicted AVD of the same marginals. This is
``bench/utility.py``'s comparison on the user's data (the LDP peers themselves are bench-only, never shipped).

Everything here stays on the user's machine: the releases are simulated in memory and never written.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from ..errors import InputError, OptRRError
from ..estimation.counts import count_codes
from ..estimation.estimate import DEFAULT_METHOD, estimate_from_counts
from ..tasks import TaskControl

#: Marginal sizes compared (each drawn only where the data has that many attributes).
WAYS = (1, 2, 3)
#: A marginal with more cells than this is not drawn (its estimate would dominate the run time).
MAX_CELLS = 20_000


def choose_marginals(sizes, way: int, count: int, rng) -> list[tuple[int, ...]]:
    """``count`` distinct attribute sets of size ``way`` with at most MAX_CELLS cells: all of them when there
    are no more than ``count``, else a uniform random choice (the same sets are used for every design)."""
    k = len(sizes)
    if way > k:
        return []

    def small(s) -> bool:
        return int(np.prod([int(sizes[a]) for a in s])) <= MAX_CELLS

    if comb(k, way) <= count:
        return [s for s in combinations(range(k), way) if small(s)]
    chosen: set[tuple[int, ...]] = set()
    for _ in range(50 * count):
        if len(chosen) >= count:
            break
        s = tuple(sorted(int(a) for a in rng.choice(k, size=way, replace=False)))
        if small(s):
            chosen.add(s)
    return sorted(chosen)


def release_of(candidate):
    """The object that perturbs rows: a mechanism design's Mechanism, or a sampling design itself."""
    mechanism = getattr(candidate, "mechanism", None)
    return mechanism if mechanism is not None else candidate.design


def estimate_marginal(candidate, released: np.ndarray, sizes, attrs, method: str = DEFAULT_METHOD, prior_bound=None):
    """The MarginalEstimate of the marginal on ``attrs`` from codes released by ``candidate`` (a mechanism or
    a sampling design candidate; InputError when the design cannot answer it). ``prior_bound``: the release's
    bound on the 1-way prior (:func:`released_prior_bound`), as a recipient's estimate of the release uses it."""
    from ..estimation.sampled import estimate_sampled_codes

    if getattr(candidate, "mechanism", None) is not None:
        counts = count_codes(released[:, list(attrs)], [int(sizes[a]) for a in attrs])
        return estimate_from_counts(
            candidate.mechanism.marginal(list(attrs)), counts, method=method, prior_bound=prior_bound
        )
    return estimate_sampled_codes(candidate.design, released, list(attrs), method=method, prior_bound=prior_bound)


def released_prior_bound(candidate, released: np.ndarray, sizes) -> float | None:
    """The bound A_up on the 1-way default estimate's prior (optrr_engine.estimation.pooled_prior) of codes
    released by ``candidate``, from all of its columns."""
    from ..estimation.pooled_prior import one_way_prior_bound
    from ..estimation.sampled import sampled_codes_prior_bound

    mechanism = getattr(candidate, "mechanism", None)
    if mechanism is None:
        return sampled_codes_prior_bound(candidate.design, released)
    return one_way_prior_bound(
        (mechanism.marginal([j]), np.bincount(released[:, j], minlength=int(a))) for j, a in enumerate(sizes)
    )


def compare_designs(
    codes,
    sizes,
    target: float,
    weights=None,
    marginals=None,
    ways=WAYS,
    sets: int = 20,
    repetitions: int = 3,
    estimator: str = DEFAULT_METHOD,
    seed=None,
    progress=None,
    cancel=None,
):
    """Returns (rows, ranking): ``rows`` a DataFrame with one row per (design, way): ``design``, ``rank``
    (1 = recommended), ``whole_record_epsilon`` (recomputed from the design), ``way``, ``measured_avd`` and
    ``sd_avd`` (over marginals and repetitions), ``predicted_avd`` (the same marginals; the default estimator,
    the ranking's truth model, docs/math.md §6b, against the data's own tables; inf when the design erases one of
    them, with the reason in ``not_identifiable``; a table only too noisy at n rows for the unbiased estimate keeps
    its prediction),
    ``marginals``, ``unanswered`` (marginals the design cannot estimate) and ``note``
    (e.g. "each row carries 2 of 9 columns"); ``ranking`` the recommender's JSON.

    ``codes``: (n, k) category codes of the perturbed columns; ``marginals``: the needed marginals the ranking
    uses (optrr_engine.utility spec; default all 1- and 2-way); ``seed``: None = operating-system entropy
    (a simulation only: nothing is released)."""
    import pandas as pd

    from ..utility.recommend import FailedCandidate, recommend

    ctl = TaskControl(progress, cancel)
    codes = np.asarray(codes)
    sizes = [int(a) for a in sizes]
    if codes.ndim != 2 or codes.shape[1] != len(sizes):
        raise InputError("the codes must be a table with one column per attribute")
    n = int(codes.shape[0])
    if n == 0:
        raise InputError("no rows to compare on")
    if not (float(target) > 0):
        raise InputError(f"the whole-record epsilon must be positive; got {target}")
    if int(repetitions) < 1 or int(sets) < 1:
        raise InputError("repetitions and marginals per size must be at least 1")
    rng = np.random.default_rng(seed)
    rec = recommend(sizes, float(target), weights=weights, rows=n, marginals=marginals, ctl=ctl.sub(0.0, 0.2))
    ranked = [r for r in rec.ranked if r.error is not None]
    chosen = {w: choose_marginals(sizes, w, int(sets), rng) for w in ways}
    chosen = {w: s for w, s in chosen.items() if s}
    truths = {s: count_codes(codes[:, list(s)], [sizes[a] for a in s]) / n for w in chosen for s in chosen[w]}
    spec = {"sets": [s for w in chosen for s in chosen[w]]}
    rows = []
    work = ctl.sub(0.2, 1.0)
    steps = max(1, len(ranked) * int(repetitions))
    for rank, r in enumerate(ranked, start=1):
        cand = r.candidate
        assert not isinstance(cand, FailedCandidate)  # r.error is set: the design was built
        predicted = {m.attributes: m for m in cand.predicted_error(n, spec, given_data=True).marginals}
        errors: dict[int, list[float]] = {w: [] for w in chosen}
        unanswered: dict[int, set] = {w: set() for w in chosen}
        for rep in range(int(repetitions)):
            work.check()
            released = release_of(cand).sample(codes, rng)
            bound = released_prior_bound(cand, released, sizes) if estimator == "map" and 1 in chosen else None
            for w, subsets in chosen.items():
                for s in subsets:
                    try:
                        est = estimate_marginal(cand, released, sizes, s, estimator, bound).estimate
                    except (InputError, OptRRError):
                        unanswered[w].add(s)
                        continue
                    errors[w].append(0.5 * float(np.abs(np.asarray(est, dtype=float) - truths[s]).sum()))
            done = (rank - 1) * int(repetitions) + rep + 1
            work.report(done / steps, f"{cand.name}: release {rep + 1} of {repetitions} estimated")
        note = (getattr(cand, "info", {}) or {}).get("suppression", "")
        for w, subsets in chosen.items():
            pred = [predicted[tuple(s)] for s in subsets if tuple(s) in predicted]
            ok = [p.expected_avd_default for p in pred if not p.erased]
            reasons = [p.reason for p in pred if p.erased and p.reason]
            vals = np.asarray(errors[w], dtype=float)
            rows.append(
                {
                    "design": cand.name,
                    "rank": rank,
                    "whole_record_epsilon": float(cand.whole_record_epsilon()),
                    "way": int(w),
                    "measured_avd": float(vals.mean()) if vals.size else float("nan"),
                    "sd_avd": float(vals.std(ddof=1)) if vals.size > 1 else float("nan"),
                    "predicted_avd": float(np.mean(ok)) if ok and len(ok) == len(pred) else float("inf"),
                    "marginals": len(subsets),
                    "unanswered": len(unanswered[w]),
                    "not_identifiable": reasons[0] if reasons else "",
                    "repetitions": int(repetitions),
                    "estimator": estimator,
                    "note": str(note),
                }
            )
    return pd.DataFrame(rows), rec.to_json(n, _describe(marginals))


def _describe(marginals) -> str:
    if not marginals:
        return "all 1- and 2-way"
    if "orders" in marginals:
        return ", ".join(f"all {o}-way" for o in marginals["orders"])
    return f"{len(marginals.get('sets', []))} named attribute sets"
