"""Proper (non-negative) distributions from perturbed counts.

- clip-and-rescale (Domingo-Ferrer & Soria-Comas 6.4): set negative entries of the unbiased estimate to 0
  and rescale to sum 1;
- iterative Bayesian update (Agrawal & Haritsa / Alvim et al.; EM for the multinomial likelihood):
  pi <- pi * M^T (lambda_hat / (M pi)), from the uniform distribution, accelerated by SQUAREM. Every iterate
  is a distribution and the limit maximises the likelihood of the observed counts. M is symmetric (M^T = M).
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
    gap: float  # upper bound on (max log-likelihood - this one's), per record


def _em_map(operator, pi, lam):
    """One EM step and the gradient ratio g = M^T (lambda / M pi) at ``pi``."""
    g = operator.apply(lam / np.maximum(operator.apply(pi), _TINY))
    new = np.clip(pi * g, 0.0, None)
    return new / new.sum(), g


def _loglik(operator, pi, lam) -> float:
    return float(np.sum(lam * np.log(np.maximum(operator.apply(pi), _TINY))))


def iterative_bayesian_update(
    operator,
    observed: np.ndarray,
    max_iter: int = 10000,
    tol: float = 1e-9,
    start: np.ndarray | None = None,
    accelerate: bool = True,
    ctl=None,
) -> IBUResult:
    """EM for pi given observed perturbed frequencies ``observed`` (sums to 1) and the mechanism operator.

    Stopping rule: the log-likelihood is concave, so for the gradient ratio g = M^T(lambda / M pi),
    max_x g_x - 1 bounds (per record) how far the current log-likelihood is below the maximum; stop when
    that bound is <= ``tol``. ``accelerate`` uses SQUAREM (Varadhan & Roland 2008): an extrapolated step from
    two EM steps (shortened to stay inside the simplex), followed by one EM step, kept only when it does not
    lower the likelihood (else the plain double EM step): every iterate stays a distribution with no cell
    forced to 0, and the likelihood never decreases.
    """
    lam = np.asarray(observed, dtype=float)
    pi = np.full(lam.shape, 1.0 / lam.size) if start is None else np.array(start, dtype=float)
    gap = np.inf
    for it in range(1, max_iter + 1):
        p1, g = _em_map(operator, pi, lam)
        gap = float(np.max(g) - 1.0)
        if gap <= tol:
            return IBUResult(pi, it, True, gap)
        if not accelerate:
            pi = p1
        else:
            pi = _squarem_step(operator, pi, p1, lam)
        if ctl is not None and it % 100 == 0:
            ctl.check()
    return IBUResult(pi, max_iter, False, gap)


def _squarem_step(operator, x, p1, lam):
    """From x and p1 = EM(x): p2 = EM(p1); the extrapolation x - 2 a r + a^2 v (r = p1 - x,
    v = p2 - 2 p1 + x, a = -|r|/|v| <= -1). While it leaves the simplex, a moves halfway towards -1 (where the
    extrapolation is p2 itself), so no cell is ever set to exactly 0 (EM could not revive it). One EM step
    follows; the result is kept if its likelihood is at least that of p2."""
    p2, _ = _em_map(operator, p1, lam)
    r, v = p1 - x, p2 - 2.0 * p1 + x
    norm_v = float(np.sqrt(np.sum(v * v)))
    if norm_v == 0:
        return p2
    alpha = min(-float(np.sqrt(np.sum(r * r))) / norm_v, -1.0)
    for _ in range(30):
        cand = x - 2.0 * alpha * r + alpha * alpha * v
        if np.all(cand > 0):
            break
        alpha = 0.5 * (alpha - 1.0)
    else:
        return p2
    cand, _ = _em_map(operator, cand / cand.sum(), lam)
    return cand if _loglik(operator, cand, lam) >= _loglik(operator, p2, lam) else p2
