"""Best mechanism in the heuristic's family (authors' README, "Another Solution"), solved exactly.

Family: X_empty, X_{i}, and one value X_b for |S| >= 2, with X_b the smallest. With u = y / P
(y = x - 1 in units of X_b) the k equalities of eq. (2) read

    sigma - (a_j - 1 + e^{eps_j}) u_j = (e^{eps_j} - 1) / a_j,   sigma := u_0 + sum_h (a_h - 1) u_h,

so every u_j is an increasing affine function of the single number sigma, and so is
u_0 = sigma - sum (a_h - 1) u_h (slope 1 - alpha). The LP "minimise t >= u_0, u_j; u >= 0" is
therefore one-dimensional: minimise the convex piecewise-linear max(u_0(sigma), max_j u_j(sigma))
over the feasible interval of sigma. eps_total = ln(1 + P t). Works for any k.
"""

from __future__ import annotations

import numpy as np

from ..blocks import IndependentBlock, SinglesBlock
from ..errors import InfeasibleError
from ..mechanism import Mechanism


class FamilyLines:
    """u_j(sigma) = (sigma - c_j) * g_j, u_0(sigma) = (1 - alpha) sigma + beta."""

    def __init__(self, sizes, epsilons):
        a = np.asarray(sizes, dtype=float)
        e = np.exp(np.asarray(epsilons, dtype=float))
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.c = (e - 1.0) / a
        self.g = 1.0 / (a - 1.0 + e)
        self.weights = a - 1.0
        self.alpha = float(np.sum(self.weights * self.g))
        self.beta = float(np.sum(self.weights * self.g * self.c))

    def u(self, sigma: float) -> np.ndarray:
        return (sigma - self.c) * self.g

    def u0(self, sigma: float) -> float:
        return (1.0 - self.alpha) * sigma + self.beta

    def interval(self) -> tuple[float, float]:
        lo = float(np.max(self.c))
        hi = self.beta / (self.alpha - 1.0) if self.alpha > 1.0 else np.inf
        return lo, hi

    def best_sigma(self) -> float:
        lo, hi = self.interval()
        if lo > hi * (1 + 1e-15):
            raise InfeasibleError(
                "infeasible for these eps_i: no mechanism of the heuristic's family reaches them "
                f"(needs sigma >= {lo:.6g} but the identity pattern allows at most {hi:.6g}); choose the method "
                "auto or optimal (exact designs, for any epsilons), or raise the smallest epsilons towards the "
                "others (the family needs epsilons that are close to each other and not too small)"
            )
        if self.alpha <= 1.0:
            return lo  # objective increasing in sigma

        # u_0 decreasing, max_j u_j increasing: the optimum is their crossing, clipped to [lo, hi].
        def gap(s):
            return float(np.max(self.u(s))) - self.u0(s)

        if gap(lo) >= 0:
            return lo
        if gap(hi) <= 0:
            return hi
        a_, b_ = lo, hi
        for _ in range(200):
            mid = 0.5 * (a_ + b_)
            if gap(mid) < 0:
                a_ = mid
            else:
                b_ = mid
            if b_ - a_ <= 1e-16 * max(1.0, abs(b_)):
                break
        # exact crossing with the active line j*
        j = int(np.argmax(self.u(b_)))
        s = (self.beta + self.g[j] * self.c[j]) / (self.g[j] - 1.0 + self.alpha)
        return float(min(max(s, lo), hi))


def family(sizes, epsilons, ctl=None) -> tuple[Mechanism, dict]:
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 1:
        return Mechanism.single(IndependentBlock.from_epsilons(sizes, epsilons)), {}
    lines = FamilyLines(sizes, epsilons)
    sigma = lines.best_sigma()
    u = np.maximum(lines.u(sigma), 0.0)
    u0 = max(lines.u0(sigma), 0.0)
    log_p = float(np.log(sizes.astype(float)).sum())
    with np.errstate(divide="ignore"):
        block = SinglesBlock(sizes, float(np.log(u0) + log_p), np.log(u) + log_p)
    return Mechanism.single(block), {"sigma": sigma}
