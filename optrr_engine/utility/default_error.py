"""Predicted error of the default estimate (smoothed maximum likelihood), from the mechanism alone.

The default estimate (``estimation`` method "map") is the posterior mode under the public prior
Dirichlet(alpha) on the cells of the marginal, alpha = 1 + prior_records(d, n) / d (d cells, n rows). Its
error is predicted as the Bayes risk of shrinkage under that same prior, one eigen-component at a time
(docs/math.md §6b):

- the pattern mechanism acts on the contrast component T (a non-empty subset of the marginal's attributes,
  dimension D_T = prod_{i in T} (a_i - 1)) by its eigenvalue lambda_T, so at the uniform table the unbiased
  estimate has, per orthonormal coordinate of T, the variance s_T = 1 / (d n lambda_T^2) (minus 1 / (d N) against
  the released data's own marginal, N rows);
- a Dirichlet(alpha) table has, per orthonormal non-constant coordinate, the variance
  tau^2 = 1 / (d (d alpha + 1));
- shrinking one Gaussian coordinate of noise variance s towards the prior mean leaves the error s tau^2 / (s + tau^2):
  the unbiased error s when the data are informative (s << tau^2), the prior's spread tau^2 when they are not
  (an erased component, lambda_T = 0, contributes tau^2);
- MSE = sum_T D_T s_T tau^2 / (s_T + tau^2), and the AVD by the normal approximation of each cell,
  1/2 sqrt(2/pi) sqrt(d MSE).

With a prior table other than uniform, the s_T are scaled so that their sum is the exact variance of the
unbiased estimate, and the AVD by the unbiased estimate's ratio sum(sd) / sqrt(d sum(var)). As n grows the
prediction tends to the unbiased estimator's (s_T -> 0). It is a prediction under the prior, checked against
simulation in tests/test_default_error.py, and against the real data sets in bench/utility.py.
"""

from __future__ import annotations

import numpy as np

from ..estimation.estimate import prior_records
from .identifiability import MIN_REL_EIGENVALUE

#: E|Z| / sd for a normal error Z.
ABS_PER_SD = float(np.sqrt(2.0 / np.pi))


def component_dimensions(sizes) -> np.ndarray:
    """D_T = prod_{j in T} (a_j - 1) for every mask T over the attributes of a marginal (bit j = attribute j)."""
    dims = np.ones(1)
    for a in sizes:
        dims = np.concatenate((dims, dims * (int(a) - 1)))
    return dims


def prior_spread(cells, n) -> np.ndarray:
    """tau^2: variance of one orthonormal non-constant coordinate of a Dirichlet(1 + prior_records / d) table."""
    d = np.asarray(cells, dtype=float)
    alpha = 1.0 + np.vectorize(prior_records, otypes=[float])(d, np.maximum(np.asarray(n, dtype=float), 0.0)) / d
    return 1.0 / (d * (d * alpha + 1.0))


def default_avd(cells, dims, eigenvalues, n, data_rows=None, var_sum=None, sd_sum=None) -> np.ndarray:
    """Predicted AVD of the default estimate of marginals (module docstring); inf where n <= 0.

    ``cells`` (...): d; ``dims``, ``eigenvalues`` (..., C): D_T and lambda_T of the non-constant components;
    ``n`` (...): the rows the marginal is estimated from; ``data_rows``: against the data's own marginal (N);
    ``var_sum``, ``sd_sum`` (...): the unbiased estimate's exact sums over the cells (None: uniform prior)."""
    d = np.asarray(cells, dtype=float)
    n = np.asarray(n, dtype=float)
    dims = np.asarray(dims, dtype=float)
    lam = np.abs(np.asarray(eigenvalues, dtype=float))
    tau2 = prior_spread(d, n)[..., None]
    rows = np.where(n > 0, n, 1.0)[..., None]
    learn = (lam >= MIN_REL_EIGENVALUE) & (n > 0)[..., None]
    safe = np.where(learn, lam, 1.0)
    s = 1.0 / (d[..., None] * rows * safe**2)
    if data_rows is not None:
        s = np.clip(s - 1.0 / (d[..., None] * float(data_rows)), 0.0, None)
    s = np.where(learn, s, 0.0)
    all_learn = learn.all(axis=-1)
    if var_sum is not None:
        uniform_sum = (dims * s).sum(axis=-1)
        var_sum = np.asarray(var_sum, dtype=float)
        ok = all_learn & np.isfinite(var_sum) & (uniform_sum > 0)
        s = s * np.where(ok, var_sum / np.where(ok, uniform_sum, 1.0), 1.0)[..., None]
    mse = (dims * np.where(learn, s * tau2 / (s + tau2), tau2)).sum(axis=-1)
    shape: float | np.ndarray = 1.0
    if var_sum is not None and sd_sum is not None:
        sd_sum = np.asarray(sd_sum, dtype=float)
        ok = all_learn & np.isfinite(var_sum) & (var_sum > 0)
        shape = np.where(ok, sd_sum / np.sqrt(d * np.where(ok, var_sum, 1.0)), 1.0)
    out = 0.5 * ABS_PER_SD * np.sqrt(d * mse) * shape
    return np.where(n > 0, out, np.inf)


def prior_avd(cells, n) -> np.ndarray:
    """Predicted AVD of the default estimate when the data say nothing (every lambda_T = 0): the prior's own
    spread, sum_T D_T tau^2 = (d - 1) tau^2 (:func:`default_avd` with no component learned)."""
    d = np.asarray(cells, dtype=float)
    return 0.5 * ABS_PER_SD * np.sqrt(d * (d - 1.0) * prior_spread(d, n))


def default_avd_of_marginal(sizes, eigenvalues, n, data_rows=None, var_sum=None, sd_sum=None) -> float:
    """:func:`default_avd` of one marginal from its eigenvalues over all 2^m masks (mask 0 first)."""
    dims = component_dimensions(sizes)
    cells = float(np.prod([int(a) for a in sizes]))
    lam = np.asarray(eigenvalues, dtype=float)
    return float(default_avd(cells, dims[1:], lam[1:], n, data_rows, var_sum, sd_sum))


__all__ = ["component_dimensions", "default_avd", "default_avd_of_marginal", "prior_avd", "prior_spread"]
