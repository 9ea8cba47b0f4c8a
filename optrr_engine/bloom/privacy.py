"""Epsilon of the Bloom-filter mechanism: the paper's statement and the mechanism's own worst case.

One bit with flip probability f reports 1 with probability q = 1 - f/2 if it was set and f/2 otherwise, so a
single bit's output-probability ratio is at most r = (1 - f/2) / (f/2). The bits are perturbed independently,
hence for two values u, w whose filters differ in D(u, w) positions, the worst ratio over all outputs is r^D
(each differing bit contributes r for the output that agrees with u; equal bits contribute 1). The mechanism's
epsilon for an attribute is therefore max_{u != w} D(u, w) * ln r.

The paper (Section 2.8, RAPPOR's bound) states eps = 2h ln r, i.e. D = 2h: exact when some pair of values has
filters with h distinct bits each and no bit in common; larger than the truth (loose, still valid) when hash
collisions make every pair's filters share bits or a filter set fewer than h bits. For a whole record
(attributes perturbed independently) both add up over attributes (sequential composition is exact here).
"""

from __future__ import annotations

import math

import numpy as np


def bit_log_ratio(f: float) -> float:
    """ln((1 - f/2) / (f/2)): one bit's epsilon."""
    return math.log((1.0 - f / 2.0) / (f / 2.0))


def stated_attribute_epsilon(hashes: int, f: float) -> float:
    """The paper's eps = 2h ln((1 - f/2) / (f/2)) = 2h ln((2 - f) / f)."""
    return 2.0 * hashes * bit_log_ratio(f)


def max_filter_distance(filters: np.ndarray) -> int:
    """max over pairs of distinct values of the Hamming distance between their Bloom filters."""
    a = np.asarray(filters, dtype=np.int64)
    if a.shape[0] < 2:
        return 0
    d = a.sum(axis=1)[:, None] + a.sum(axis=1)[None, :] - 2 * a @ a.T
    return int(d.max())


def true_attribute_epsilon(filters: np.ndarray, f: float) -> float:
    """The mechanism's own epsilon: max Hamming distance between two values' filters times ln r."""
    return max_filter_distance(filters) * bit_log_ratio(f)
