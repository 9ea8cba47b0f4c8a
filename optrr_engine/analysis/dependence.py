"""Dependence between two attributes (Domingo-Ferrer & Soria-Comas eqs. 8-9), both in [0, 1].

- |Pearson r| of the category codes, for two ordinal attributes;
- Cramer's V = sqrt(chi2 / n / min(r - 1, c - 1)), when one of them is nominal.
A constant attribute has dependence 0 with everything.
"""

from __future__ import annotations

import numpy as np

from ..estimation.counts import count_codes
from .chi_square import pearson_statistic

MEASURES = ("cramers_v", "pearson", "auto")


def cramers_v(table) -> float:
    t = np.asarray(table, dtype=float)
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    if min(t.shape) < 2:
        return 0.0
    return float(np.sqrt(pearson_statistic(t) / t.sum() / (min(t.shape) - 1)))


def abs_pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    sx, sy = x.std(), y.std()
    if sx == 0 or sy == 0:
        return 0.0
    return float(abs(np.mean((x - x.mean()) * (y - y.mean())) / (sx * sy)))


def dependence_matrix(codes: np.ndarray, sizes, measure: str = "cramers_v", ordinal=None) -> np.ndarray:
    """Symmetric m x m matrix of pairwise dependences (diagonal 0).

    ``measure``: "cramers_v", "pearson" (codes as numbers), or "auto" (the paper's rule: |Pearson r| if both
    attributes are ordinal per ``ordinal`` (list of bools), Cramer's V otherwise).
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown dependence measure {measure!r}; choose one of {', '.join(MEASURES)}")
    codes = np.asarray(codes)
    sizes = [int(a) for a in sizes]
    m = len(sizes)
    ordinal = [False] * m if ordinal is None else [bool(o) for o in ordinal]
    out = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            use_pearson = measure == "pearson" or (measure == "auto" and ordinal[i] and ordinal[j])
            if use_pearson:
                v = abs_pearson(codes[:, i], codes[:, j])
            else:
                v = cramers_v(count_codes(codes[:, [i, j]], [sizes[i], sizes[j]]))
            out[i, j] = out[j, i] = v
    return out
