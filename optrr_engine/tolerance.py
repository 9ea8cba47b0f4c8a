"""How epsilons are compared: relatively, with a floor at the resolution of floating point.

An epsilon is a difference of log-probabilities, which float64 gives to about 1e-15 in absolute terms whatever
its size. Two epsilons therefore count as equal when |a - b| <= REL_TOL * max(|a|, |b|) + ABS_FLOOR: the relative
term governs every epsilon from 1e-4 up; the floor only keeps rounding noise from being reported as a change for
the tiniest epsilons accepted (validation.MIN_EPSILON = 1e-10, where it is 1e-3 of the value). A real change,
e.g. a heuristic raising 1.8e-10 to 4.9e-10, is far above it. Every epsilon comparison in the engine goes
through these functions (see docs/decisions.md).
"""

from __future__ import annotations

import numpy as np

#: Relative tolerance of every epsilon comparison.
REL_TOL = 1e-9
#: Absolute floor: float64 rounding of a difference of log-probabilities (about 100 ulps of values near 1).
ABS_FLOOR = 1e-13


def eps_tolerance(reference, rel: float = REL_TOL):
    """Allowed difference around ``reference`` (scalar or array)."""
    return rel * np.abs(reference) + ABS_FLOOR


def eps_equal(a, b, rel: float = REL_TOL):
    """a == b within the relative tolerance (elementwise for arrays)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.abs(a - b) <= eps_tolerance(np.maximum(np.abs(a), np.abs(b)), rel)


def eps_above(value, limit, rel: float = REL_TOL):
    """value > limit beyond the tolerance (elementwise): a real excess, not rounding."""
    value, limit = np.asarray(value, dtype=float), np.asarray(limit, dtype=float)
    return value > limit + eps_tolerance(limit, rel)


def eps_within(value, limit, rel: float = REL_TOL):
    """value <= limit up to the tolerance (elementwise)."""
    return ~eps_above(value, limit, rel)


def eps_relative_error(a, b) -> float:
    """Largest |a - b| / (max(|a|, |b|) + ABS_FLOOR / REL_TOL): at most REL_TOL exactly when eps_equal holds."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0:
        return 0.0
    scale = np.maximum(np.abs(a), np.abs(b)) + ABS_FLOOR / REL_TOL
    return float(np.max(np.abs(a - b) / scale))
