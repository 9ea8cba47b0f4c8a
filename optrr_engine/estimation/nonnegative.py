"""Proper (non-negative) distributions from perturbed counts.

- clip-and-rescale (Domingo-Ferrer & Soria-Comas 6.4): set negative entries of the unbiased estimate to 0
  and rescale to sum 1;
- iterative Bayesian update (Agrawal & Haritsa / Alvim et al.; EM for the multinomial likelihood):
  pi <- pi * M^T (lambda_hat / (M pi)), from the uniform distribution. Every iterate is a distribution and
  the fixed points maximise the likelihood of the observed counts. M is symmetric here (M^T = M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Floor for predicted perturbed frequencies inside the update (they are positive in exact arithmetic).
_TINY = 1e-300


def clip_and_rescale(estimate: np.ndarray) -> np.ndarray:
    """max(pi, 0) / sum(max(pi, 0)); the unbiased estimate sums to 1, so some entry is positive."""
    p = np.clip(np.asarray(estimate, dtype=float), 0.0, None)
    total = p.sum(axis=tuple(range(p.ndim)) if p.ndim else None)
    if not np.all(total > 0):
        return np.full(p.shape, 1.0 / p.size)
    return p / total


@dataclass
class IBUResult:
    estimate: np.ndarray
    iterations: int
    converged: bool
    max_change: float


def iterative_bayesian_update(
    operator, observed: np.ndarray, max_iter: int = 20000, tol: float = 1e-10, start: np.ndarray | None = None, ctl=None
) -> IBUResult:
    """EM for pi given observed perturbed frequencies ``observed`` (sums to 1) and the mechanism operator.

    Stops when no cell changes by more than ``tol`` in one iteration, or after ``max_iter`` iterations.
    """
    lam = np.asarray(observed, dtype=float)
    pi = np.full(lam.shape, 1.0 / lam.size) if start is None else np.array(start, dtype=float)
    change = np.inf
    for it in range(1, max_iter + 1):
        predicted = np.maximum(operator.apply(pi), _TINY)
        new = np.clip(pi * operator.apply(lam / predicted), 0.0, None)
        new /= new.sum()
        change = float(np.max(np.abs(new - pi)))
        pi = new
        if change <= tol:
            return IBUResult(pi, it, True, change)
        if ctl is not None and it % 200 == 0:
            ctl.check()
    return IBUResult(pi, max_iter, False, change)
