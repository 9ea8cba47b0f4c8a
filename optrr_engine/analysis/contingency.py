"""Contingency tables: counts of attribute combinations, margins and expected counts under independence."""

from __future__ import annotations

import numpy as np

from ..estimation.counts import count_codes


def contingency_table(codes: np.ndarray, sizes) -> np.ndarray:
    """Counts of every combination of the columns of ``codes`` (shape sizes, C order)."""
    return count_codes(codes, sizes)


def table_from_estimate(estimate: np.ndarray, rows: int, clip: bool = True) -> np.ndarray:
    """Estimated counts n * pi_hat (negative estimates set to 0 and rescaled to n when ``clip``)."""
    p = np.asarray(estimate, dtype=float)
    if clip:
        p = np.clip(p, 0.0, None)
        p = p / p.sum()
    return p * float(rows)


def expected_under_independence(table: np.ndarray) -> np.ndarray:
    """E_ij = row_i * col_j / n for a two-way table."""
    t = np.asarray(table, dtype=float)
    n = t.sum()
    return np.outer(t.sum(axis=1), t.sum(axis=0)) / n


def conditional_shares(joint, axis: int) -> np.ndarray:
    """Shares within each row (``axis=1``: every row sums to 1) or column (``axis=0``: every column sums to 1) of
    a two-way table of ``joint`` shares or counts; NaN in a row or column whose sum is not positive."""
    joint = np.asarray(joint, dtype=float)
    sums = joint.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums > 0, joint / sums, np.nan)


def allele_status_table(a, b, c, d) -> np.ndarray:
    """The 2x2 allele-by-status table of docs/math.md §9: rows allele 0/1, columns status 0/1 -> [[A, B], [C, D]]."""
    return np.array([[a, b], [c, d]], dtype=float)
