"""Proper (non-negative) distributions from perturbed counts.

- clip-and-rescale (Domingo-Ferrer & Soria-Comas 6.4): set negative entries of the unbiased estimate to 0
  and rescale to sum 1;
- iterative Bayesian update (Agrawal & Haritsa / Alvim et al.; EM for the multinomial likelihood):
  pi <- pi * M^T (lambda_hat / (M pi)), from the uniform distribution, accelerated by SQUAREM. Every iterate
  is a distribution and the limit maximises the likelihood of the observed counts. M is symmetric (M^T = M).
  When the unbiased estimate M^{-1} lambda_hat is already a distribution it is the maximum and is returned;
- the same EM with pseudo-counts (posterior mode under a Dirichlet prior, :func:`iterative_bayesian_update`'s
  ``pseudo``): maximises sum_y lambda_y log (M pi)_y + sum_x beta_x log pi_x, update pi <- (pi * g + beta) /
  (1 + sum beta).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spectrum import MIN_ABS_EIGENVALUE

#: Floor for predicted perturbed frequencies inside the update (they are positive in exact arithmetic).
_TINY = 1e-300
#: SQUAREM: fraction of min(x, p2) below which no cell of an extrapolated point goes; number of step halvings.
_FLOOR = 0.01
_BACKTRACKS = 4


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
    gap: float  # certified upper bound on (max log-likelihood - this one's), per record


def _state(operator, pi, lam, beta=None):
    """(z = M pi, gradient ratio g = M^T (lambda / z), objective per record) at ``pi``: the log-likelihood,
    plus sum beta log pi with pseudo-counts ``beta``."""
    z = np.maximum(operator.apply(pi), _TINY)
    g = operator.apply(lam / z)
    value = float(np.sum(lam[lam > 0] * np.log(z[lam > 0])))
    if beta is not None:
        value += float(np.sum(beta * np.log(np.maximum(pi, _TINY))))
    return z, g, value


def _em(pi, g, beta=None):
    new = np.clip(pi * g, 0.0, None)
    if beta is not None:
        new += beta
    return new / new.sum()


def penalised_gap(operator, lam, z, pi, g, beta) -> float:
    """Upper bound, per record, on (max F - F(pi)) for the concave F = sum lam log M pi + sum beta log pi.

    The Frank-Wolfe gap max_x dF/dpi_x - (1 + sum beta) (dF/dpi = g + beta / pi; sum_x pi_x dF/dpi_x = 1 + B),
    or, tighter near the maximum, weak duality as in :func:`certified_gap` with a dual point on both terms:
    for u > 0 (where lam > 0), v > 0, F(pi*) <= sum lam log(lam / u) + sum beta log(beta / v) - (1 + B)
    + max_x (M^T u + v)_x. With the excess e = max(dF/dpi - 1 - B, 0) split as w = min(e, beta / (2 pi)) (taken
    from the prior's part, v = beta / pi - w) and delta = e - w (taken from the likelihood's, u = lam / z -
    M^{-1} delta, when M is invertible), M^T u + v = dF/dpi - e (plus the clipping spill where lam = 0), so the
    bound is -sum beta log(1 - pi w / beta) - sum lam log(1 - z s / lam) + max(dF/dpi - e + spill) - (1 + B),
    s = M^{-1} delta: about sum_x pi_x e_x instead of max_x e_x. The smaller of the two is returned."""
    grad = g + beta / np.maximum(pi, _TINY)
    total = 1.0 + float(np.sum(beta))
    frank_wolfe = max(0.0, float(np.max(grad)) - total)
    if frank_wolfe == 0.0:
        return 0.0
    excess = np.clip(grad - total, 0.0, None)
    w = np.minimum(excess, 0.5 * beta / np.maximum(pi, _TINY))
    delta = excess - w
    pos_b = beta > 0
    dual = -float(np.sum(beta[pos_b] * np.log1p(-pi[pos_b] * w[pos_b] / beta[pos_b])))
    spill = 0.0
    if np.any(delta > 0):
        if not _identifiable(operator):
            return frank_wolfe
        s = operator.solve(delta)
        pos = lam > 0
        ratio = z[pos] * s[pos] / lam[pos]
        if np.any(ratio >= 1.0):
            return frank_wolfe
        dual -= float(np.sum(lam[pos] * np.log1p(-ratio)))
        c = np.where(pos, 0.0, np.clip(s, 0.0, None))
        spill = operator.apply(c) if np.any(c > 0) else 0.0
    dual += float(np.max(grad - excess + spill)) - total
    return max(0.0, min(frank_wolfe, dual))


def _identifiable(operator) -> bool:
    return bool(np.all(np.abs(operator.eigenvalues) >= MIN_ABS_EIGENVALUE))


def certified_gap(operator, lam, z, g) -> float:
    """Upper bound, per record, on (max log-likelihood - log-likelihood at pi) for z = M pi, g = M^T(lam / z).

    Weak duality for max sum_y lam_y log z_y over z = M pi, pi in the simplex: for any u with u_y > 0 where
    lam_y > 0 and u_y >= 0 elsewhere, sum lam log z <= sum lam log(lam / u) - 1 + max_x (M^T u)_x (from
    log t <= t - 1). Two dual points: u = lam / (z max g) gives the Frank-Wolfe bound log(max g); when M is
    invertible, u = lam / z - M^{-1} delta with delta = max(g - 1, 0) (so M^T u = min(g, 1)) gives
    -sum lam log(1 - z s / lam) + max(min(g, 1) - 1 + M c) with s = M^{-1} delta and c the clipping of u on
    the cells with lam = 0, which is about sum_x pi_x delta_x: far tighter near the optimum. The smaller wins.
    """
    frank_wolfe = float(np.log(max(float(np.max(g)), 1.0)))
    if frank_wolfe == 0.0 or not _identifiable(operator):
        return frank_wolfe
    delta = np.clip(g - 1.0, 0.0, None)
    s = operator.solve(delta)
    pos = lam > 0
    ratio = z[pos] * s[pos] / lam[pos]
    if np.any(ratio >= 1.0):
        return frank_wolfe
    c = np.where(pos, 0.0, np.clip(s, 0.0, None))
    spill = operator.apply(c) if np.any(c > 0) else 0.0
    dual = -float(np.sum(lam[pos] * np.log1p(-ratio))) + float(np.max(np.minimum(g, 1.0) - 1.0 + spill))
    return max(0.0, min(frank_wolfe, dual))


def _unbiased_if_optimal(operator, lam, tol):
    """M^{-1} lambda when it is a distribution: then M pi = lambda, the likelihood's unconstrained maximum, so
    it IS the maximum-likelihood estimate (certified below: the gradient ratio g = M^T 1 = 1 everywhere)."""
    if not _identifiable(operator):
        return None
    pi = operator.solve(lam)
    if not np.all(pi >= 0.0):
        return None
    pi = pi / pi.sum()
    z, g, _ = _state(operator, pi, lam)
    gap = certified_gap(operator, lam, z, g)
    return IBUResult(pi, 0, True, gap) if gap <= tol else None


def iterative_bayesian_update(
    operator,
    observed: np.ndarray,
    max_iter: int = 10000,
    tol: float = 1e-9,
    start: np.ndarray | None = None,
    accelerate: bool = True,
    ctl=None,
    check_every: int = 5,
    pseudo: np.ndarray | None = None,
) -> IBUResult:
    """EM for pi given observed perturbed frequencies ``observed`` (sums to 1) and the mechanism operator.

    Without ``start``: when the unbiased estimate M^{-1} lambda is already a distribution it is returned
    (it is the maximum, certified; 0 iterations); else EM starts from the uniform distribution.
    Stopping rule: :func:`certified_gap` (a duality bound on how far the log-likelihood per record is below
    its maximum) <= ``tol``, checked every ``check_every`` iterations (the Frank-Wolfe part every iteration).
    ``accelerate`` uses SQUAREM (Varadhan & Roland 2008; :func:`_squarem_step`): an extrapolated step from
    two EM steps, kept only when it does not lower the likelihood (else the plain double EM step): every
    iterate stays a distribution with no cell forced to 0, and the likelihood never decreases. Four
    applications of M per accelerated iteration (more when a step is shortened), two per plain one.

    ``pseudo`` (beta >= 0, the table's shape, per record): maximise sum lam log M pi + sum beta log pi instead
    (the posterior mode under the Dirichlet prior with parameters 1 + n beta); stopping rule
    :func:`penalised_gap` (its Frank-Wolfe part every iteration), and no unbiased shortcut.
    """
    lam = np.asarray(observed, dtype=float)
    beta = None if pseudo is None else np.asarray(pseudo, dtype=float)
    if start is None and beta is None:
        shortcut = _unbiased_if_optimal(operator, lam, tol)
        if shortcut is not None:
            return shortcut
    pi = np.full(lam.shape, 1.0 / lam.size) if start is None else np.array(start, dtype=float)
    pi = pi / pi.sum()
    z, g, loglik = _state(operator, pi, lam, beta)

    def bound(exact: bool) -> float:
        """The cheap Frank-Wolfe bound, or (``exact``, when that is above tol) the tighter dual one."""
        if beta is None:
            quick = float(np.log(max(float(np.max(g)), 1.0)))
            return certified_gap(operator, lam, z, g) if exact and quick > tol else quick
        quick = max(0.0, float(np.max(g + beta / np.maximum(pi, _TINY))) - 1.0 - float(np.sum(beta)))
        return penalised_gap(operator, lam, z, pi, g, beta) if exact and quick > tol else quick

    gap = np.inf
    for it in range(1, max_iter + 1):
        gap = bound((it - 1) % check_every == 0)
        if gap <= tol:
            return IBUResult(pi, it, True, gap)
        p1 = _em(pi, g, beta)
        if not accelerate:
            pi = p1
            z, g, loglik = _state(operator, pi, lam, beta)
        else:
            pi, z, g, loglik = _squarem_step(operator, pi, p1, lam, beta)
        if ctl is not None and it % 20 == 0:
            ctl.check()
    gap = bound(True)
    return IBUResult(pi, max_iter, gap <= tol, gap)


def _squarem_step(operator, x, p1, lam, beta=None):
    """From x and p1 = EM(x): p2 = EM(p1); the extrapolation x - 2 a r + a^2 v (r = p1 - x,
    v = p2 - 2 p1 + x, a = -|r|/|v| <= -1), with each cell kept at least 1/100 of min(x, p2) (so the step can
    be long where most cells move freely while cells heading for 0 shrink geometrically and none is set to
    exactly 0, which EM could not revive). The candidate is accepted when its likelihood is at least that of
    p1; else a moves halfway towards -1 (where the extrapolation is p2 itself), at most 4 times; else p2
    (whose likelihood is at least p1's). Returns the new point with its (z, g, log-likelihood)."""
    _, g1, loglik1 = _state(operator, p1, lam, beta)
    p2 = _em(p1, g1, beta)
    r, v = p1 - x, p2 - 2.0 * p1 + x
    norm_v = float(np.sqrt(np.sum(v * v)))
    if norm_v > 0:
        alpha = min(-float(np.sqrt(np.sum(r * r))) / norm_v, -1.0)
        floor = _FLOOR * np.minimum(x, p2)
        for _ in range(_BACKTRACKS):
            cand = np.maximum(x - 2.0 * alpha * r + alpha * alpha * v, floor)
            cand = cand / cand.sum()
            zc, gc, loglik_c = _state(operator, cand, lam, beta)
            if loglik_c >= loglik1:
                return cand, zc, gc, loglik_c
            alpha = 0.5 * (alpha - 1.0)
    return (p2, *_state(operator, p2, lam, beta))
