"""Count queries over a fraction sigma of a two-attribute domain (Domingo-Ferrer & Soria-Comas 6.5).

A query S is a random set of round(sigma * a_1 * a_2) cells (at least one) of the domain of two
attributes; X_S is the true number of records in S, Y_S = n * sum_{x in S} pi_hat(x) the estimate.
Absolute error |Y_S - X_S|, relative error |Y_S - X_S| / X_S (queries with X_S = 0 have no relative error).
"""

from __future__ import annotations

import numpy as np


def random_query(shape, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of the cells in S."""
    cells = int(np.prod(shape))
    size = min(cells, max(1, int(round(sigma * cells))))
    mask = np.zeros(cells, dtype=bool)
    mask[rng.choice(cells, size=size, replace=False)] = True
    return mask.reshape(shape)


def query_errors(true_counts: np.ndarray, estimate: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(absolute error, relative error) of one query; relative is NaN when X_S = 0."""
    n = float(np.sum(true_counts))
    x = float(np.sum(true_counts[mask]))
    y = n * float(np.sum(np.asarray(estimate)[mask]))
    abs_err = abs(y - x)
    return abs_err, (abs_err / x if x > 0 else float("nan"))
