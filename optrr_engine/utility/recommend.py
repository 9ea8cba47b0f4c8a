"""Recommend by predicted error: at a whole-record epsilon target, rank every design kind by the mean predicted
AVD of the default estimate of the needed marginals (designs with fewer erased needed marginals first: those
no number of rows recovers, ``MarginalError.erased``) and return the runners-up too.

Candidates: Kronecker and ``auto`` in budget mode (the target split by the weights), the utility-optimal
design, and the sampling designs when their module is present (any object implementing
:class:`~optrr_engine.utility.candidate.DesignCandidate` can be added through ``extra``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..errors import Cancelled, OptRRError
from .candidate import DesignCandidate, MechanismCandidate
from .predicted import PredictedError

#: Default number of rows the error is predicted for when the user does not say.
DEFAULT_ROWS = 10_000


@dataclass
class Ranked:
    candidate: DesignCandidate | FailedCandidate  # FailedCandidate: a design kind that failed (see failure)
    error: PredictedError | None
    seconds: float
    failure: str = ""

    @property
    def score(self) -> float:
        return self.error.score() if self.error is not None else float("inf")

    @property
    def rank_key(self) -> tuple:
        return self.error.rank_key() if self.error is not None else (float("inf"), float("inf"))

    def to_json(self, names=None, per_marginal: bool = False) -> dict:
        out = {"design": self.candidate.name if self.candidate is not None else None, "seconds": self.seconds}
        if self.failure or self.error is None or isinstance(self.candidate, FailedCandidate):
            out["result"] = f"not available: {self.failure}"
            return out
        pe = self.error.to_json(names)
        out.update(
            {
                "whole_record_epsilon": self.candidate.whole_record_epsilon(),
                "attribute_epsilons": [float(e) for e in self.candidate.attribute_epsilons()],
                "mean_expected_avd_default": pe["mean_expected_avd_default"],
                "mean_expected_avd": pe["mean_expected_avd"],
                "by_order": pe["by_order"],
                "non_identifiable": pe["non_identifiable"],
                "erased": pe["erased"],
                "no_information": pe["no_information"],
            }
        )
        info = getattr(self.candidate, "info", {}) or {}
        if "suppression" in info:
            out["suppression"] = info["suppression"]
        if per_marginal:
            out["marginals"] = pe["marginals"]
        return out


@dataclass
class Recommendation:
    ranked: list[Ranked] = field(default_factory=list)

    @property
    def best(self) -> Ranked:
        return self.ranked[0]

    def to_json(self, rows: int, marginals_text: str, names=None) -> dict:
        return {
            "rows": rows,
            "marginals": marginals_text,
            "chosen": self.best.candidate.name,
            "ranking": "fewest erased needed marginals (no number of rows recovers them), then the mean predicted "
            "AVD of the default estimate of the needed marginals, lowest first",
            "candidates": [r.to_json(names) for r in self.ranked],
        }


def _budget(method: str, sizes, weights, target):
    from ..budget import distribute_budget

    d = distribute_budget(method, sizes, weights, target).design  # (remembered for the release: no ctl)
    return MechanismCandidate(method, d.mechanism, {"budget_design": d})


def _utility(sizes, target, marginals, caps, ctl=None):
    from .optimal_design import utility_design

    mech, info = utility_design(sizes, target, marginals, caps, ctl)
    return MechanismCandidate("utility", mech, info)


def _sampling(sizes, target, marginals, prior, weights) -> list:
    from .sampling import sampling_candidates

    return list(sampling_candidates(sizes, target, marginals=marginals, prior=prior, weights=weights))


def recommend(
    sizes,
    target: float,
    weights=None,
    rows: int = DEFAULT_ROWS,
    marginals=None,
    prior=None,
    caps=None,
    include_sampling: bool = True,
    extra=(),
    ctl=None,
) -> Recommendation:
    """Every candidate at whole-record epsilon <= target, ranked by predicted error (best first).

    ``weights``: split the target for Kronecker and ``auto``, and (when given) SMP's and RS+FD's sampling
    weights, as a release of the same configuration would use them; without them SMP's weights are chosen
    for the needed 1-way marginals (:func:`~optrr_engine.utility.sampling.smp_weights`)."""
    from ..validation import check_target

    sizes = np.asarray(sizes, dtype=np.int64)
    target = check_target(target, sizes.size)  # above k x MAX_EPSILON no design can use it (each fails otherwise)
    given = None if weights is None else list(weights)  # the sampling designs' weights when the caller gives them
    weights = [1.0] * sizes.size if weights is None else list(weights)
    builders = [
        ("kronecker", lambda part: [_budget("kronecker", sizes, weights, target)]),
        ("auto", lambda part: [_budget("auto", sizes, weights, target)]),
        ("utility", lambda part: [_utility(sizes, target, marginals, caps, part)]),
    ]
    if include_sampling:
        builders.append(("sampling", lambda part: _sampling(sizes, target, marginals, prior, given)))
    ranked: list[Ranked] = []
    for step, (name, build) in enumerate(builders):
        if ctl is not None:
            ctl.check()
            ctl.report(step / (len(builders) + 1), f"designing and predicting: {name}")
        t0 = time.perf_counter()
        try:
            share = None if ctl is None else ctl.sub(step / (len(builders) + 1), (step + 1) / (len(builders) + 1))
            cands = build(share)
        except Cancelled:
            raise
        except OptRRError as exc:
            ranked.append(Ranked(FailedCandidate(name), None, time.perf_counter() - t0, str(exc)))
            continue
        for cand in cands:
            ranked.append(Ranked(cand, cand.predicted_error(rows, marginals, prior), time.perf_counter() - t0))
    for cand in extra:
        t0 = time.perf_counter()
        ranked.append(Ranked(cand, cand.predicted_error(rows, marginals, prior), time.perf_counter() - t0))
    from .predicted import rank_order

    # predictions tying the best within RANK_TOLERANCE: the lower whole-record epsilon first (the same answer for
    # less privacy loss), then the candidates' order (Kronecker, auto, utility, sampling)
    ranked = [ranked[i] for i in rank_order([r.rank_key for r in ranked], partial(_less_epsilon_first, ranked))]
    if not ranked or ranked[0].error is None:
        raise OptRRError("no design could be built at this whole-record epsilon")
    return Recommendation(ranked)


def _less_epsilon_first(ranked: list, i: int, j: int) -> int:
    """:func:`~.predicted.lower_epsilon_first` of two ranked candidates (0 when either failed: no epsilon)."""
    from .predicted import lower_epsilon_first

    a, b = ranked[i], ranked[j]
    if a.error is None or b.error is None:
        return 0
    return lower_epsilon_first(a.candidate.whole_record_epsilon(), b.candidate.whole_record_epsilon())


@dataclass
class FailedCandidate:
    name: str
