"""LOCOP (Wang et al.; the paper's Algorithm 1): LASSO marginals plus a Gaussian copula for the dependence.

1. Marginal F_j of every attribute: LASSO on its own bits (:func:`.estimators.lasso_joint` on [j]).
2. Every pair's joint by LOPUB (LASSO + EM), and from it the Pearson correlation of the two attributes' codes.
3. The correlation matrix R; if it is not positive definite, eigenvalues below ``MIN_EIGENVALUE`` are raised
   to it and the matrix is rescaled to a unit diagonal.
4. N synthetic users: z ~ N(0, R) (scipy.stats.multivariate_normal), u = Phi(z) (scipy.stats.norm.cdf),
   x_j = F_j^{-1}(u_j) (the smallest value whose cumulative probability exceeds u_j).
A k-way joint is the relative frequency of the combinations among the synthetic users.
"""

from __future__ import annotations

import numpy as np

from ..estimation.counts import count_codes
from ..tasks import TaskControl
from .estimators import lasso_joint, lopub_joint
from .reports import BloomReports

MIN_EIGENVALUE = 1e-6


def pearson_from_joint(joint: np.ndarray) -> float:
    """Pearson correlation of the codes (0..a-1, 0..b-1) under a 2-way distribution; 0 if one is constant."""
    a, b = joint.shape
    x, y = np.arange(a, dtype=float), np.arange(b, dtype=float)
    px, py = joint.sum(axis=1), joint.sum(axis=0)
    mx, my = px @ x, py @ y
    vx, vy = px @ (x - mx) ** 2, py @ (y - my) ** 2
    if vx <= 0 or vy <= 0:
        return 0.0
    return float(np.clip((x - mx) @ joint @ (y - my) / np.sqrt(vx * vy), -1.0, 1.0))


def repair_correlation(r: np.ndarray) -> tuple[np.ndarray, bool]:
    """(a positive definite correlation matrix, whether ``r`` had to be repaired)."""
    r = (np.asarray(r, dtype=float) + np.asarray(r, dtype=float).T) / 2.0
    w, v = np.linalg.eigh(r)
    if w.min() > MIN_EIGENVALUE:
        return r, False
    fixed = (v * np.maximum(w, MIN_EIGENVALUE)) @ v.T
    d = np.sqrt(np.diag(fixed))
    fixed = fixed / d[:, None] / d[None, :]
    np.fill_diagonal(fixed, 1.0)
    return fixed, True


class LocopModel:
    """LOCOP fitted on all attributes of a set of reports; :meth:`joint` gives any subset's distribution."""

    def __init__(self, reports: BloomReports, rng: np.random.Generator | None = None, synthetic_rows=None, ctl=None):
        from scipy.stats import multivariate_normal, norm

        ctl = ctl or TaskControl()
        rng = np.random.default_rng() if rng is None else rng
        k = len(reports.mechanism.sizes)
        self.sizes = reports.mechanism.sizes
        self.marginals = [lasso_joint(reports, [j]) for j in range(k)]
        r = np.eye(k)
        for i in range(k):
            ctl.check()
            for j in range(i + 1, k):
                r[i, j] = r[j, i] = pearson_from_joint(lopub_joint(reports, [i, j]))
        self.correlation, self.repaired = repair_correlation(r)
        n = int(synthetic_rows or reports.rows)
        z = multivariate_normal(mean=np.zeros(k), cov=self.correlation).rvs(size=n, random_state=rng)
        u = norm.cdf(np.asarray(z).reshape(n, k))
        cdfs = [np.cumsum(p) for p in self.marginals]
        self.synthetic = np.stack(
            [np.minimum(np.searchsorted(c, u[:, j], side="right"), len(c) - 1) for j, c in enumerate(cdfs)], axis=1
        )

    def joint(self, attrs) -> np.ndarray:
        counts = count_codes(self.synthetic[:, list(attrs)], [self.sizes[j] for j in attrs])
        return counts / counts.sum()
