"""The Wald test's p-value by simulation under independence (a parametric bootstrap), for small samples.

The chi-square law of the Wald statistic W (:func:`.chi_square.wald_statistics`) holds for large samples. With a
few records per cell of a randomized table it is too light-tailed: on a sample-m release of car.csv (about 85
records for a 4 x 4 table) the chi-square p-value fell below 0.05 for 13.6 % of releases of two independent
attributes. Here the null law of W is simulated instead, as the release produced it:

    pi_0 = (row margin) x (column margin) of the estimate,  q_0 = M pi_0  (the perturbed cells' law),
    counts_b ~ Multinomial(n, q_0),  W_b = W(M^{-1} counts_b / n, its plug-in covariance),
    W / s ~ chi2(nu) with s = var(W_b) / (2 mean(W_b)), nu = 2 mean(W_b)^2 / var(W_b)   (Satterthwaite),
    p = P(chi2(nu) >= W / s).

The scaled chi-square matches the simulated law's mean and variance; unlike the share of W_b above W, it resolves
p-values below 1 / B (a strong association gets its small p, not "< 0.001"). Measured on 300 releases each of
independent attributes (4 x 4 from 85 records, 3 x 3 from 300, 2 x 2 from 200; eps 0.5-1.5): rejections at the
1 / 5 / 10 % levels 0.7 / 4.7 / 9.0 %, 0.7 / 3.3 / 8.0 %, 0.7 / 6.3 / 11.3 % (the chi-square law's: 7.3 / 17 /
24.7 % on the first).

The simulation's generator is seeded from the observed counts: the same release gives the same p-value (nothing
secret is involved; the recipient holds the counts). Cost ~ B cells^3: tables above ``MAX_SIMULATED_CELLS`` keep
the chi-square p-value (and say so).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..tasks import TaskControl
from .chi_square import wald_statistics

#: Simulated releases under independence.
SIMULATIONS = 999
#: Largest table (cells) whose Wald p-value is simulated; larger ones keep the chi-square approximation.
MAX_SIMULATED_CELLS = 144
#: Simulated releases per batch (bounds the memory: batch x cells^2 floats).
BATCH = 111


def counts_seed(counts: np.ndarray) -> int:
    """A seed that depends only on the observed counts (the same release, the same simulated p-value)."""
    data = np.ascontiguousarray(np.asarray(counts, dtype=np.int64))
    digest = hashlib.sha256(repr(data.shape).encode() + data.tobytes()).digest()
    return int.from_bytes(digest[:8], "little")


def dense_inverse(op) -> np.ndarray:
    """M^{-1} as a cells x cells matrix (C order) of a small marginal's operator."""
    cells = op.cells
    return op.solve(np.eye(cells).reshape(op.sizes + (cells,))).reshape(cells, cells)


def null_law(op, estimate: np.ndarray) -> np.ndarray:
    """q_0 = M (row x column margins of ``estimate``): the perturbed cells' law when the attributes are independent
    with the estimated margins (margins clipped to distributions)."""
    p = np.clip(np.asarray(estimate, dtype=float), 0.0, None)
    p /= p.sum()
    q = np.clip(op.apply(np.outer(p.sum(axis=1), p.sum(axis=0))), 0.0, None).reshape(-1)
    return q / q.sum()


def simulated_p_value(op, estimate: np.ndarray, counts: np.ndarray, statistic: float, cancel=None) -> float | None:
    """The p-value of ``statistic`` against its simulated null law (module docstring); None when the table has
    more than ``MAX_SIMULATED_CELLS`` cells, the release has no records or the simulated law is degenerate.
    ``estimate``: a point estimate of the table (its margins define the null); ``counts``: the perturbed counts
    the test used. Raises ``Cancelled`` when ``cancel()`` turns true."""
    counts = np.asarray(counts)
    n = int(round(float(counts.sum())))
    if op.cells > MAX_SIMULATED_CELLS or n <= 0:
        return None
    r, c = op.sizes
    minv = dense_inverse(op)
    q0 = null_law(op, estimate)
    ctl = TaskControl(None, cancel)
    rng = np.random.default_rng(counts_seed(counts))
    simulated = []
    done = 0
    while done < SIMULATIONS:
        ctl.check()
        b = min(BATCH, SIMULATIONS - done)
        lam = rng.multinomial(n, q0, size=b) / n  # (b, cells)
        pi = lam @ minv.T  # M^{-1} lambda for each simulated release
        # Cov = (M^{-1} diag(lambda) M^{-1} - pi pi^T) / n, as covariance_matrix computes it for the observed one
        cov = (minv[None] * lam[:, None, :]) @ minv.T[None] - pi[:, :, None] * pi[:, None, :]
        cov = 0.5 * (cov + np.swapaxes(cov, 1, 2)) / n
        simulated.append(wald_statistics(pi.reshape(b, r, c), cov))
        done += b
    return scaled_chi2_p(np.concatenate(simulated), statistic)


def scaled_chi2_p(simulated: np.ndarray, statistic: float) -> float | None:
    """P(chi2(nu) >= statistic / s) for the scaled chi-square with the mean and variance of ``simulated``; None when
    the simulated statistics do not vary (no law to fit)."""
    from scipy.stats import chi2

    mean, var = float(np.mean(simulated)), float(np.var(simulated, ddof=1))
    if not (mean > 0.0 and var > 0.0 and np.isfinite(var)):
        return None
    scale, dof = var / (2.0 * mean), 2.0 * mean * mean / var
    return float(chi2.sf(float(statistic) / scale, dof))
