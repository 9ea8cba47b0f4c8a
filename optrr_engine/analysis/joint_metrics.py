"""Metrics of the LOPUB / LOCOP / BRR paper for k-way joint distributions (AVD is :func:`.avd.avd`).

- R-squared between the true and the estimated joint (cells as observations): 1 - sum (t - e)^2 /
  sum (t - mean t)^2, scikit-learn's ``r2_score``; NaN when the true joint is uniform (no variance to explain).
- AAR of a data set: the average over attribute pairs of |Pearson r| between the attributes' codes
  (:func:`.dependence.dependence_matrix` with ``measure="pearson"``; a constant attribute counts 0).
"""

from __future__ import annotations

import numpy as np

from .dependence import dependence_matrix


def r_squared(true, estimate) -> float:
    from sklearn.metrics import r2_score

    t = np.asarray(true, dtype=float).ravel()
    e = np.asarray(estimate, dtype=float).ravel()
    if t.shape != e.shape:
        raise ValueError(f"distributions of different sizes {t.size} and {e.size}")
    return float(r2_score(t, e, force_finite=False)) if np.ptp(t) > 0 else float("nan")


def aar(codes, sizes) -> float:
    """Average absolute Pearson correlation over the k (k - 1) / 2 attribute pairs."""
    d = dependence_matrix(codes, sizes, measure="pearson")
    k = d.shape[0]
    return float(d[np.triu_indices(k, 1)].mean()) if k > 1 else float("nan")
