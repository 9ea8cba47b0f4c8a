"""Bitmask utilities for patterns S (bit i set = attribute i differs between input and output).

A vector indexed by bitmask has 2^k entries; ``as_axes`` views it as a k-dimensional array whose
axis i is bit i, so per-attribute sums are reductions over axes.
"""

from __future__ import annotations

import numpy as np

from ..errors import TooLargeError

#: Largest k for which a full table of 2^k pattern values is built.
MAX_PATTERN_K = 22


def require_pattern_k(k: int, what: str = "a table of all 2^k patterns") -> None:
    if k > MAX_PATTERN_K:
        raise TooLargeError(f"{what} needs k <= {MAX_PATTERN_K} attributes; got k = {k}")


def bit_matrix(k: int) -> np.ndarray:
    """(2^k, k) boolean matrix: row S, column i = bit i of S."""
    require_pattern_k(k)
    masks = np.arange(1 << k, dtype=np.int64)
    return ((masks[:, None] >> np.arange(k)) & 1).astype(bool)


def group_counts(group_of, groups: int) -> np.ndarray:
    """(2^k, groups) matrix: row S, column g = how many attributes of group g the pattern S contains (k = number
    of attributes, ``group_of[i]`` the group of attribute i: a class or a pool)."""
    group_of = np.asarray(group_of, dtype=np.int64)
    require_pattern_k(group_of.size)
    masks = np.arange(1 << group_of.size, dtype=np.int64)
    counts = np.zeros((masks.size, groups), dtype=np.int64)
    for i, g in enumerate(group_of):
        counts[:, g] += (masks >> i) & 1
    return counts


def subset_sums(weights: np.ndarray) -> np.ndarray:
    """Vector over all 2^k masks of sum_{i in S} weights[i], built by doubling in O(2^k)."""
    k = len(weights)
    require_pattern_k(k)
    out = np.zeros(1, dtype=float)
    for w in weights:
        out = np.concatenate((out, out + w))
    return out


def popcounts(k: int) -> np.ndarray:
    return subset_sums(np.ones(k)).astype(np.int64)


def log_multiplicities(sizes: np.ndarray) -> np.ndarray:
    """log t_S = sum_{i in S} log(a_i - 1): number of outputs with pattern S, in log space."""
    return subset_sums(np.log(np.asarray(sizes, dtype=float) - 1.0))


def as_axes(vec: np.ndarray, k: int) -> np.ndarray:
    """View a 2^k vector as an array of shape (2,)*k with axis i = bit i."""
    if k == 0:
        return vec.reshape(())
    return vec.reshape((2,) * k).transpose(tuple(range(k - 1, -1, -1)))


def from_axes(arr: np.ndarray) -> np.ndarray:
    """Inverse of :func:`as_axes`: flatten an array with axis i = bit i to a bitmask-indexed vector."""
    k = arr.ndim
    if k == 0:
        return arr.reshape(1)
    return np.ascontiguousarray(arr.transpose(tuple(range(k - 1, -1, -1)))).reshape(-1)


def restrict_masks(masks: np.ndarray, positions) -> np.ndarray:
    """For each mask over the parent attributes, the mask over ``positions`` (bit j = parent bit positions[j])."""
    out = np.zeros_like(masks)
    for j, p in enumerate(positions):
        out |= ((masks >> int(p)) & 1) << j
    return out
