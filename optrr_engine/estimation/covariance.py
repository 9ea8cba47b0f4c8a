"""Covariance of the unbiased estimate pi_hat = M^{-1} lambda_hat (docs/math.md §6).

The perturbed records are n independent draws, so the observed frequencies lambda_hat have the multinomial
covariance (diag(lambda) - lambda lambda^T) / n. Pushed through the symmetric M^{-1}:

    Cov(pi_hat) = (M^{-1} diag(lambda) M^{-1} - pi pi^T) / n.

This is the covariance around the distribution the records are drawn from (records i.i.d. from pi). For
a fixed data set the spread around its own empirical distribution is smaller by diag(pi) - pi pi^T (the
sampling part), so intervals built from it are conservative for that target. The plug-in uses lambda_hat
and pi_hat; the intervals' standard error (:func:`interval_variance`) takes a count of 0 as 1 record, so it is
never 0 where the records sit on few cells. Its diagonal is
(sum_y Z_{S(x,y)}^2 lambda_y - pi_x^2) / n, and (M^{-1})^{o2} is again pattern-structured, so every quantity here
is a per-axis operation.
"""

from __future__ import annotations

import numpy as np

from ..errors import TooLargeError

#: Largest number of cells for which a full covariance matrix is returned.
MAX_COVARIANCE_CELLS = 4096
#: Records a count of 0 stands for in the intervals' standard error (:func:`interval_variance`).
EMPTY_CELL_RECORDS = 1.0


def variance(operator, observed: np.ndarray, estimate: np.ndarray, n: float) -> np.ndarray:
    """Var(pi_hat_x) for every cell x (same shape as the table); never negative."""
    second = operator.apply_spectrum(observed, operator.squared_inverse_spectrum())
    return np.clip(second - np.asarray(estimate) ** 2, 0.0, None) / float(n)


def interval_variance(operator, counts: np.ndarray, unbiased: np.ndarray | None = None) -> np.ndarray:
    """Var(pi_hat_x) of the n records for every cell x, at the observed frequencies with every count of 0 taken as
    1 record (EMPTY_CELL_RECORDS): the standard error of the intervals. The plug-in :func:`variance` itself where
    no count is 0; never 0 for an invertible mechanism (every perturbed cell then has mass, and no row of M^-1 is
    constant), whereas the plug-in is 0 (or rounding noise) where the records sit on few cells: a cell whose
    coefficients Z agree on every observed value (two records of a 2 x 2 table), or a count of 0 at a strong
    epsilon, gave the interval [0, 0]. ``unbiased``: M^-1 of the observed frequencies, when the caller has it
    (used where no count is 0: the same frequencies, not solved again)."""
    counts = np.asarray(counts, dtype=float)
    n = float(counts.sum())
    filled = np.where(counts > 0, counts, EMPTY_CELL_RECORDS)
    observed = filled / float(filled.sum())
    solved = unbiased if unbiased is not None and not (counts == 0).any() else operator.solve(observed)
    return variance(operator, observed, solved, n)


def linear_variance(operator, observed: np.ndarray, estimate: np.ndarray, n: int, weights: np.ndarray) -> np.ndarray:
    """Var(w . pi_hat) for one weight table w (or a batch: trailing axes of ``weights``)."""
    w = np.asarray(weights, dtype=float)
    m = operator.m
    v = operator.solve(w)  # M^{-1} w, M symmetric
    lam = np.asarray(observed, dtype=float).reshape(observed.shape + (1,) * (w.ndim - m))
    axes = tuple(range(m))
    second = np.sum(v * v * lam, axis=axes)
    mean = np.sum(w * np.asarray(estimate).reshape(lam.shape), axis=axes)
    return np.clip(second - mean**2, 0.0, None) / float(n)


def covariance_matrix(operator, observed: np.ndarray, estimate: np.ndarray, n: int, chunk: int = 256) -> np.ndarray:
    """Full Cov(pi_hat) over the cells in C order (only for small tables), built column block by block."""
    cells = operator.cells
    if cells > MAX_COVARIANCE_CELLS:
        raise TooLargeError(
            f"a full covariance matrix needs at most {MAX_COVARIANCE_CELLS} cells; this table has {cells}"
        )
    lam = np.asarray(observed, dtype=float).reshape(-1)
    pi = np.asarray(estimate, dtype=float).reshape(-1)
    out = np.empty((cells, cells))
    for start in range(0, cells, chunk):
        cols = np.arange(start, min(cells, start + chunk))
        unit = np.zeros((cells, cols.size))
        unit[cols, np.arange(cols.size)] = 1.0
        minv_cols = operator.solve(unit.reshape(operator.sizes + (cols.size,))).reshape(cells, cols.size)
        out[:, cols] = operator.solve((lam[:, None] * minv_cols).reshape(operator.sizes + (cols.size,))).reshape(
            cells, cols.size
        )
    out -= np.outer(pi, pi)
    out /= float(n)
    return 0.5 * (out + out.T)
