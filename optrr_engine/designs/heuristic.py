"""The paper's Algorithm 3 (Yamamoto & Shibuya), exactly, including its fallback (steps 8-10).

Normalised by P_i = prod_{h<=i} a_h the recursion simplifies: with y = x - 1 and E = sum (a_h-1) y_h,
y_0 + E = sigma * P_i at every step (both branches multiply it by a_i), so step 7 gives in closed form

    eta_i := y_{i,i} / P_i = (a_i sigma - e^{eps_i} + 1) / (a_i (a_i - 1 + e^{eps_i})),
    y_{i,0} / P_i = y_{i-1,0} / P_{i-1} - (a_i - 1) eta_i,

and y_{i,j} / P_i = eta_j for j < i. Step 8 accepts iff eta_i >= 0 and the new y_0/P_i is at least
max(eta_1..eta_i); otherwise (step 9) eta_i = 0 and y_0/P_i is unchanged, so the attribute's epsilon
becomes ln(1 + a_i sigma) (step 10; lower or HIGHER than requested). A failing check stays failing as
y_0/P only decreases and max eta only grows, which lets the loop below drop such steps in bulk.
The result is stored in log space (SinglesBlock), finite at k = 100,000.
"""

from __future__ import annotations

import numpy as np

from ..blocks import IndependentBlock, SinglesBlock
from ..mechanism import Mechanism


def base_case(m: int, n: int, eps1: float, eps2: float) -> tuple[float, float, float]:
    """Optimal (x_{2,0}, x_{2,1}, x_{2,2}) for two attributes with m and n categories (cases I-IV)."""
    e1, e2 = np.exp(eps1), np.exp(eps2)
    e12 = e1 * e2
    if e12 >= (m - 1) * (n - 1):
        if n * (e1 - 1) >= m * (e2 - 1):  # (I)
            x0 = (n * e12 + (m - 1) * (n - 1) * (e2 - 1)) / (e2 + n - 1)
            return x0, 1.0, (n * e1 - (m - 1) * (e2 - 1)) / (e2 + n - 1)
        x0 = (m * e12 + (m - 1) * (n - 1) * (e1 - 1)) / (e1 + m - 1)  # (II)
        return x0, (m * e2 - (n - 1) * (e1 - 1)) / (e1 + m - 1), 1.0
    if (n - m) * e12 - m * (n - 1) * e1 + (m - 1) * n * e2 >= 0:  # (III)
        den = -(e1 - 1) * e2 + m * (n - 1)
        x0 = (n - 1) * (e1 + m - 1) * e2 / den
        return x0, x0, (m * (n - 1) * e1 + (m - 1) * (e1 - 1) * e2) / den
    den = -e1 * (e2 - 1) + (m - 1) * n  # (IV)
    x0 = (m - 1) * e1 * (e2 + n - 1) / den
    return x0, ((m - 1) * n * e2 + (n - 1) * e1 * (e2 - 1)) / den, x0


def _induction(a: np.ndarray, e: np.ndarray, sigma: float, y0: float, m0: float):
    """Run steps 2-12 for attributes 3..k; returns (final y_0/P_k, eta per step, accepted mask)."""
    eta = (a * sigma - e + 1.0) / (a * (a - 1.0 + e))
    accepted = np.zeros(a.size, dtype=bool)
    remaining = np.flatnonzero(eta >= 0)
    current_max = m0
    while remaining.size:
        ar, er = a[remaining], eta[remaining]
        feasible_now = (y0 >= ar * er) & (y0 - (ar - 1.0) * er >= current_max)
        remaining = remaining[feasible_now]
        if not remaining.size:
            break
        ar, er = a[remaining], eta[remaining]
        after = y0 - np.cumsum((ar - 1.0) * er)
        running_max = np.maximum(np.maximum.accumulate(er), current_max)
        fails = np.flatnonzero(after < running_max)
        stop = fails[0] if fails.size else remaining.size
        if stop > 0:
            accepted[remaining[:stop]] = True
            y0 = float(after[stop - 1])
            current_max = float(running_max[stop - 1])
        remaining = remaining[stop + 1 :]  # the failing step (if any) falls back: rejected
    return y0, np.where(accepted, eta, 0.0), accepted


def heuristic(sizes, epsilons, ctl=None) -> tuple[Mechanism, dict]:
    sizes = np.asarray(sizes, dtype=np.int64)
    eps = np.asarray(epsilons, dtype=float)
    k = sizes.size
    if k == 1:
        return Mechanism.single(IndependentBlock.from_epsilons(sizes, eps)), {"fallback_attributes": []}
    m, n = int(sizes[0]), int(sizes[1])
    x0, x1, x2 = base_case(m, n, float(eps[0]), float(eps[1]))
    p2 = float(m * n)
    y0, eta1, eta2 = (x0 - 1.0) / p2, (x1 - 1.0) / p2, (x2 - 1.0) / p2
    sigma = y0 + (m - 1) * eta1 + (n - 1) * eta2
    a_rest = sizes[2:].astype(float)
    y0_final, eta_rest, accepted = _induction(a_rest, np.exp(eps[2:]), sigma, y0, max(eta1, eta2))
    log_p = float(np.log(sizes.astype(float)).sum())
    etas = np.concatenate(([eta1, eta2], eta_rest))
    with np.errstate(divide="ignore"):
        log_y = np.log(np.maximum(etas, 0.0)) + log_p
        log_y0 = float(np.log(max(y0_final, 0.0)) + log_p)
    block = SinglesBlock(sizes, log_y0, log_y)
    fallback = (np.flatnonzero(~accepted) + 2).tolist()
    return Mechanism.single(block), {"fallback_attributes": fallback, "sigma": sigma}
