"""Eigenvalues of a pattern-structured mechanism and the pattern coefficients of its inverse (docs/math.md §6).

On attributes A with sizes a_i, M[y, x] = Y_{S(x, y)} = sum_S Y_S (x)_{i in S}(J_i - I_i) (x)_{i not in S} I_i.
Per axis, the pattern basis {I, J - I} and the eigen-projections {J/a (constant), I - J/a (contrast)} are
related by the 2x2 matrix G_i = [[1, a_i - 1], [1, -1]] (rows: T_i = constant/contrast, columns: S_i = 0/1):

    lambda_T = sum_S Y_S prod_{i in S} (-1 if i in T else a_i - 1)      (lambda = (x)_i G_i  Y)

and G_i^{-1} = G_i / a_i, so any operator with eigenvalues f_T has pattern coefficients
(x)_i (G_i / a_i) f. Vectors over the 2^m masks use bit i = attribute i; the transforms cost O(m 2^m).
"""

from __future__ import annotations

import numpy as np

from ..blocks.patterns import require_pattern_k, restrict_masks
from ..errors import InputError

#: Eigenvalues smaller than this (in absolute value) make the marginal not identifiable by inversion.
MIN_ABS_EIGENVALUE = 1e-12


def _axis_transform(vec: np.ndarray, sizes, inverse: bool) -> np.ndarray:
    """Apply (x)_i G_i (or (x)_i G_i / a_i) to a vector over the 2^m masks (bit i = attribute i)."""
    sizes = np.asarray(sizes, dtype=float)
    m = sizes.size
    require_pattern_k(m)
    out = np.array(vec, dtype=float, copy=True)
    for i, a in enumerate(sizes):
        # view: (high bits, bit i, low bits); bit i is axis 1
        v = out.reshape(-1, 2, 1 << i)
        lo = v[:, 0, :].copy()
        hi = v[:, 1, :].copy()
        v[:, 0, :] = lo + (a - 1.0) * hi
        v[:, 1, :] = lo - hi
        if inverse:
            v /= a
    return out


def eigenvalues_from_patterns(sizes, pattern_probs: np.ndarray) -> np.ndarray:
    """lambda_T for every mask T from Y_S (linear scale) over the 2^m masks."""
    return _axis_transform(pattern_probs, sizes, inverse=False)


def patterns_from_eigenvalues(sizes, eigenvalues: np.ndarray) -> np.ndarray:
    """Pattern coefficients Z_S of the operator whose eigenvalue on eigenspace T is ``eigenvalues[T]``."""
    return _axis_transform(eigenvalues, sizes, inverse=True)


def mechanism_eigenvalues(mechanism) -> np.ndarray:
    """lambda_T of a Mechanism over all 2^k masks T, block by block (lambda factorises over blocks).

    Each block's eigenvalues come from its own pattern table, which keeps cancellation local: a
    Kronecker block gives exactly prod_{i in T}(p_i - q_i).
    """
    k = mechanism.k
    require_pattern_k(k, "estimation on a marginal")
    masks = np.arange(1 << k, dtype=np.int64)
    lam = np.ones(masks.size)
    for pos, block in mechanism.parts:
        y = np.exp(block.log_pattern_probs())
        lam_b = eigenvalues_from_patterns(block.sizes, y)
        lam *= lam_b[restrict_masks(masks, pos)]
    return lam


class NotIdentifiableError(InputError):
    """A marginal's mechanism has a zero eigenvalue: inversion cannot recover it (front ends may say why)."""


def check_identifiable(eigenvalues: np.ndarray, tol: float = MIN_ABS_EIGENVALUE) -> None:
    """Raise :class:`NotIdentifiableError` when an eigenvalue is (numerically) zero."""
    bad = np.flatnonzero(np.abs(eigenvalues) < tol)
    if bad.size:
        raise NotIdentifiableError(
            "this table cannot be estimated by inversion (methods unbiased and clip): part of it never reaches the "
            f"released values (its mechanism has a (numerically) zero eigenvalue on {bad.size} eigenspace(s)); the "
            "default method, map, still gives an estimate, in which that part is the prior's guess, and says so"
        )
