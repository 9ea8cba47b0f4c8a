"""Predicted error of the default estimate (smoothed maximum likelihood), from the mechanism alone.

The default estimate (``estimation`` method "map") is the posterior mode under the public prior
Dirichlet(alpha) on the cells of the marginal, alpha = 1 + prior_records(d, n) / d (d cells, n rows). Its
error is predicted as the risk of that shrinkage when each attribute's true shares are Dirichlet(1) (uniform on
the simplex, centred on the prior table), one eigen-component at a time (docs/math.md §6b):

- the pattern mechanism acts on the contrast component T (a non-empty subset of the marginal's attributes,
  dimension D_T = prod_{i in T} (a_i - 1)) by its eigenvalue lambda_T, so at the uniform table the unbiased
  estimate has, per orthonormal coordinate of T, the variance s_T = 1 / (d n lambda_T^2) (minus 1 / (d N) against
  the released data's own marginal, N rows);
- the estimate's prior has, per orthonormal non-constant coordinate, the variance tau^2 = 1 / (d (d alpha + 1))
  (:func:`prior_spread`), and it shrinks one Gaussian coordinate x of noise variance s to c x, c = tau^2 / (s +
  tau^2);
- the truth: each attribute's shares are Dirichlet(1), independently, so a coordinate of an attribute's own
  component T = {i} has the variance t_T^2 = 1 / (d (a_i + 1)) (1 / (a (a + 1)) for one attribute: uniform on the
  simplex); an association (|T| >= 2) has t_T^2 = tau^2, as much spread as the smoothing assumes
  (:func:`component_truth_spreads`). The error is (1 - c)^2 t_T^2 + c^2 s: the unbiased error s when the data
  are informative (s << tau^2), the truth's spread t_T^2 when they are not (an erased component, lambda_T = 0,
  contributes t_T^2);
- s is averaged over the truths: at the uniform table s_T = 1 / (d n lambda_T^2) - t_T^2 / n (the unbiased
  estimate's variance is linear in pi but for -pi_x^2 / n);
- MSE = sum_T D_T ((1 - c_T)^2 t_T^2 + c_T^2 s_T), and the AVD by the normal approximation of each cell,
  1/2 sqrt(2/pi) sqrt(d MSE).

Why the truth is not drawn from the estimate's own prior: alpha is a regulariser (about one pseudo-record per
cell), more concentrated than real columns, which are skewed. Under a skewed truth the variance of the reports
falls, most for designs that report few columns at a high epsilon (sampling designs), and an uninformed component
costs the truth's spread, not the prior's. Why not Dirichlet(1) on the whole table: a real table's spread lies
mostly in its attributes' own shares, less in their associations; Dirichlet(1) on all d cells spreads every
component alike, and on the stroke file it ranked Utility before auto for 2- and 3-way tables, which measured
11-29 % worse (docs/utility.md, "The ranking's prediction under skewed shares").

With a prior table other than uniform, the s_T are first scaled so that their sum is the exact variance of the
unbiased estimate at that table (``var_sum``, :mod:`.predicted`), and the AVD by the unbiased estimate's ratio
sum(sd) / sqrt(d sum(var)). As n grows the prediction tends to the unbiased estimator's, averaged over the truths
(c_T -> 1). It is a prediction under the truth model, checked against simulation in tests/test_default_error.py,
and against the real data sets in bench/utility.py.
"""

from __future__ import annotations

from functools import lru_cache

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


def component_truth_spreads(sizes, n) -> np.ndarray:
    """:func:`_truth_spreads` (cached: the marginals of a prediction share a few sizes and one n)."""
    return _truth_spreads(tuple(int(a) for a in sizes), float(n))


@lru_cache(maxsize=256)
def _truth_spreads(sizes: tuple, n: float) -> np.ndarray:
    """t_T^2 for every mask T over the attributes of a marginal (bit j = attribute j, mask 0 first) at n rows: the
    truth's variance per orthonormal coordinate of component T. An attribute's own shares (|T| = 1) are
    Dirichlet(1), independently of the others: 1 / (d (a_i + 1)) (d cells; 1 / (a (a + 1)) for a 1-way table,
    uniform on the simplex). An association (|T| >= 2) has the estimate's own prior spread, :func:`prior_spread`
    (as much as the smoothing assumes). Mask 0 (the constant) has 0."""
    inverse, order = np.ones(1), np.zeros(1)
    for a in sizes:  # as component_dimensions: bit j of the mask = attribute j
        inverse = np.concatenate((inverse, inverse / (int(a) + 1.0)))
        order = np.concatenate((order, order + 1.0))
    d = float(np.prod([int(a) for a in sizes]))
    out = np.where(order == 1, inverse / d, np.where(order == 0, 0.0, float(prior_spread(d, n))))
    out.setflags(write=False)  # shared by the cache
    return out


def default_avd(cells, dims, eigenvalues, n, truth, data_rows=None, var_sum=None, sd_sum=None) -> np.ndarray:
    """Predicted AVD of the default estimate of marginals (module docstring); inf where n <= 0.

    ``cells`` (...): d; ``dims``, ``eigenvalues`` (..., C): D_T and lambda_T of the non-constant components;
    ``n`` (...): the rows the marginal is estimated from; ``truth`` (..., C): t_T^2 of the components
    (:func:`component_truth_spreads`); ``data_rows``: against the data's own marginal (N);
    ``var_sum``, ``sd_sum`` (...): the unbiased estimate's exact sums over the cells at the prior table (None:
    uniform)."""
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
    if var_sum is not None:  # the prior table's noise relative to the uniform table's
        uniform_sum = (dims * s).sum(axis=-1)
        var_sum = np.asarray(var_sum, dtype=float)
        ok = all_learn & np.isfinite(var_sum) & (uniform_sum > 0)
        s = s * np.where(ok, var_sum / np.where(ok, uniform_sum, 1.0), 1.0)[..., None]
    # averaged over the truths: E[-pi_x^2] is the table's square minus Var(pi_x), per coordinate t_T^2 / n less
    # (and as much more against the data's own marginal, whose sampling term pi_x (1 - pi_x) / N falls alike)
    t2 = np.asarray(truth, dtype=float)
    s = s - t2 * (1.0 / rows - (0.0 if data_rows is None else 1.0 / float(data_rows)))
    s = np.where(learn, np.clip(s, 0.0, None), 0.0)
    c = tau2 / (s + tau2)
    mse = (dims * np.where(learn, (1.0 - c) ** 2 * t2 + c**2 * s, t2)).sum(axis=-1)
    shape: float | np.ndarray = 1.0
    if var_sum is not None and sd_sum is not None:
        sd_sum = np.asarray(sd_sum, dtype=float)
        ok = all_learn & np.isfinite(var_sum) & (var_sum > 0)
        shape = np.where(ok, sd_sum / np.sqrt(d * np.where(ok, var_sum, 1.0)), 1.0)
    out = 0.5 * ABS_PER_SD * np.sqrt(d * mse) * shape
    return np.where(n > 0, out, np.inf)


def shares_factors(table) -> np.ndarray:
    """Per attribute of a prior table (an array of shape (a_1, ..., a_m)): (1 - sum_x m_ix^2) / (1 - 1/a_i), m_i its
    1-way shares; the truth's spread of that attribute's shares around them, Dirichlet(a_i m_i), relative to the
    spread around uniform shares (1 at uniform shares, near 0 near a point mass)."""
    table = np.asarray(table, dtype=float)
    out = []
    for axis, a in enumerate(table.shape):
        m = table.sum(axis=tuple(i for i in range(table.ndim) if i != axis))
        out.append((1.0 - float(np.sum(m * m))) / (1.0 - 1.0 / a) if a > 1 else 1.0)
    return np.asarray(out)


def scaled_truth_spreads(sizes, n, factors=None) -> np.ndarray:
    """:func:`component_truth_spreads`, each attribute's own component times its :func:`shares_factors` entry (the
    truth centred on a prior table whose shares are not uniform); associations as they are."""
    spreads = component_truth_spreads(sizes, n)
    if factors is None:
        return spreads
    out = np.array(spreads)
    for j, f in enumerate(np.asarray(factors, dtype=float)):
        out[1 << j] *= f
    return out


@lru_cache(maxsize=256)
def _uninformed(sizes: tuple, n: float, factors: tuple | None) -> float:
    d = float(np.prod(sizes))
    spread = float(np.sum(component_dimensions(sizes) * scaled_truth_spreads(sizes, n, factors)))
    return float(0.5 * ABS_PER_SD * np.sqrt(d * spread))


def uninformed_avd(sizes, n, factors=None) -> float:
    """Predicted AVD of the default estimate of a marginal (its attributes' sizes) at n rows when the data say
    nothing (every lambda_T = 0): the truth's own spread, sum_T D_T t_T^2 (:func:`default_avd` with no component
    learned)."""
    key = None if factors is None else tuple(round(float(f), 12) for f in factors)
    return _uninformed(tuple(int(a) for a in sizes), max(float(n), 0.0), key)


def default_avd_of_marginal(sizes, eigenvalues, n, data_rows=None, var_sum=None, sd_sum=None, factors=None) -> float:
    """:func:`default_avd` of one marginal from its eigenvalues over all 2^m masks (mask 0 first); ``factors``: the
    prior table's :func:`shares_factors` (None: uniform)."""
    dims = component_dimensions(sizes)
    cells = float(np.prod([int(a) for a in sizes]))
    lam = np.asarray(eigenvalues, dtype=float)
    truth = scaled_truth_spreads(sizes, max(float(n), 0.0), factors)
    return float(default_avd(cells, dims[1:], lam[1:], n, truth[1:], data_rows, var_sum, sd_sum))


__all__ = [
    "component_dimensions",
    "component_truth_spreads",
    "default_avd",
    "default_avd_of_marginal",
    "prior_spread",
    "scaled_truth_spreads",
    "shares_factors",
    "uninformed_avd",
]
