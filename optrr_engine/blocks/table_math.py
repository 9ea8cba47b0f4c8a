"""Section-2/5 formulas evaluated on a full table of log X_S (k <= MAX_PATTERN_K).

All functions take ``sizes`` (a_i) and ``log_x`` (2^k values of log X_S indexed by bitmask).
"""

from __future__ import annotations

import numpy as np

from ..logmath import logsumexp
from .patterns import as_axes, from_axes, log_multiplicities


def log_mass(sizes: np.ndarray, log_x: np.ndarray) -> float:
    """log sum_S t_S X_S (0 for a valid mechanism)."""
    return float(logsumexp(log_x + log_multiplicities(sizes)))


def log_max_min(log_x: np.ndarray) -> tuple[float, float]:
    return float(np.max(log_x)), float(np.min(log_x))


def attribute_log_channel(sizes: np.ndarray, log_x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per attribute i: log P(output_i = input_i) and log P(output_i = one specific other value)."""
    k = len(sizes)
    weighted = as_axes(log_x + log_multiplicities(sizes), k)
    same = np.empty(k)
    diff = np.empty(k)
    for i in range(k):
        other_axes = tuple(j for j in range(k) if j != i)
        pair = logsumexp(weighted, axis=other_axes) if other_axes else weighted
        pair = np.asarray(pair).reshape(2)
        same[i] = pair[0]
        diff[i] = pair[1] - np.log(sizes[i] - 1.0)
    return same, diff


def attribute_epsilons(sizes: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """Paper eq. (2): eps_i = |ln(P(same_i) / P(specific other_i))|."""
    same, diff = attribute_log_channel(sizes, log_x)
    return np.abs(same - diff)


def marginal(sizes: np.ndarray, log_x: np.ndarray, positions) -> np.ndarray:
    """log Y_{S'} on the attributes ``positions`` (in that order): Y_{S'} = sum_R X_{S' u R} t_R."""
    k = len(sizes)
    positions = [int(p) for p in positions]
    arr = as_axes(log_x, k)
    dropped = [j for j in range(k) if j not in positions]
    if dropped:
        weights = np.zeros((2,) * k)
        for j in dropped:
            shape = [1] * k
            shape[j] = 2
            weights = weights + np.array([0.0, np.log(sizes[j] - 1.0)]).reshape(shape)
        arr = np.asarray(logsumexp(arr + weights, axis=tuple(dropped)))
        kept_order = [j for j in range(k) if j in positions]
    else:
        kept_order = list(range(k))
    arr = np.asarray(arr)
    perm = [kept_order.index(p) for p in positions]
    return from_axes(np.transpose(arr, perm) if arr.ndim else arr)
