"""RR-Adjustment (Domingo-Ferrer & Soria-Comas, Algorithm 2): raking of the perturbed records.

Weights w_i start at 1/n; for each attribute (or cluster) j in turn, every record's weight is multiplied by
pi_hat^j(v) / s_v, where v is the record's value of j and s_v the current total weight of records with that
value, so the weighted marginal of j equals its estimate. Sweeps repeat until every weighted marginal is
within ``tol`` of its target or ``max_iter`` sweeps are done. Identical records always share a weight, so
the work is done on distinct records with multiplicities (same result, less work).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..estimation.counts import count_codes, flat_index


@dataclass
class Adjustment:
    weights: np.ndarray  # one per input record, sums to 1
    iterations: int
    converged: bool
    max_margin_error: float

    def distribution(self, codes: np.ndarray, sizes, attrs) -> np.ndarray:
        """Weighted joint distribution of the records on ``attrs``."""
        codes = np.asarray(codes)
        sub = [int(np.asarray(sizes)[a]) for a in attrs]
        idx = flat_index(codes[:, list(attrs)], sub)
        return np.bincount(idx, weights=self.weights, minlength=int(np.prod(sub))).reshape(sub)


def _distinct_rows(codes: np.ndarray, sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = np.asarray(sizes, dtype=np.int64)
    if float(np.prod(sizes.astype(float))) < 2**62:
        key = flat_index(codes, sizes).astype(np.int64)
        _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        return codes[first], inverse, counts
    uniq, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    return uniq, inverse.reshape(-1), counts


def rr_adjustment(codes, sizes, groups, targets, max_iter: int = 1000, tol: float = 1e-9, record_sweeps: int = 0):
    """Rake record weights so that the weighted distribution of each group matches its target.

    ``groups``: list of attribute-index lists (single attributes, or clusters); ``targets``: for each group a
    proper distribution of shape sizes[group] (e.g. the clip-rescaled unbiased estimate).
    Returns an :class:`Adjustment`; with ``record_sweeps`` > 0 also the list of weights after each of the first
    sweeps' single-group steps (for checking the algorithm step by step).
    """
    codes = np.asarray(codes)
    sizes = np.asarray(sizes, dtype=np.int64)
    if codes.ndim != 2 or codes.shape[1] != sizes.size:
        raise InputError(f"codes must have shape (rows, {sizes.size})")
    n = codes.shape[0]
    if n == 0:
        raise InputError("no records to adjust")
    uniq, inverse, mult = _distinct_rows(codes, sizes)
    cells, goals = [], []
    for g, t in zip(groups, targets, strict=True):
        g = [int(i) for i in g]
        shape = tuple(int(sizes[i]) for i in g)
        t = np.asarray(t, dtype=float)
        if t.shape != shape or np.any(t < 0) or abs(t.sum() - 1) > 1e-9:
            raise InputError(f"the target of group {g} must be a distribution of shape {shape}")
        cells.append(flat_index(uniq[:, g], shape))
        goals.append(t.reshape(-1))
    w = np.full(len(uniq), 1.0 / n)  # weight of each record with that distinct value
    steps = []
    err = np.inf
    for sweep in range(1, max_iter + 1):
        for idx, goal in zip(cells, goals, strict=True):
            s = np.bincount(idx, weights=w * mult, minlength=goal.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                factor = np.where(s > 0, goal / s, 0.0)
            w = w * factor[idx]
            if sweep <= record_sweeps:
                steps.append(w[inverse].copy())
        err = max(
            float(np.max(np.abs(np.bincount(idx, weights=w * mult, minlength=goal.size) - goal)))
            for idx, goal in zip(cells, goals, strict=True)
        )
        if err <= tol:
            break
    weights = w[inverse]
    total = weights.sum()
    adj = Adjustment(weights / total if total > 0 else weights, sweep, err <= tol, err)
    return (adj, steps) if record_sweeps else adj


def independent_targets(codes, sizes, groups) -> list[np.ndarray]:
    """Unadjusted group distributions of the records (helper for tests and defaults)."""
    codes = np.asarray(codes)
    sizes = np.asarray(sizes)
    return [count_codes(codes[:, list(g)], sizes[list(g)]) / len(codes) for g in groups]
