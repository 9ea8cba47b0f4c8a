"""The default estimate's prior weight on a release's 1-way tables, lowered where the release itself shows its
attributes further from uniform than the prior assumes (empirical Bayes with a one-sided bound; docs/estimation.md
§1b, docs/math.md §6b).

The default estimate (``map``) of a table of d cells is the posterior mode under Dirichlet(1 + w / d), with
w = prior_records(d, n) = min(d, sqrt(n)) records: a truth drawn from a symmetric Dirichlet of total concentration
w. Under such a truth, E||pi - u||^2 = (1 - 1/d) / (w + 1) (u: the uniform table). Over the release's attributes j,

    S = sum_j (||pi_hat_j - u_j||^2 - tr Cov_j)

estimates sum_j ||pi_j - u_j||^2 without bias (pi_hat_j: the unbiased estimate, Cov_j its covariance), with
Var(S) ~ sum_j 4 d_j' Cov_j d_j + 2 tr(Cov_j^2), d_j = pi_hat_j - u_j (normal approximation, plug-in). Its one-sided
lower bound S_low = S - z sd(S), z = the standard normal's 95 % quantile, gives the most concentrated common
Dirichlet the release is consistent with:

    A_up = sum_j (1 - 1/d_j) / S_low - 1      (no bound when S_low <= 0)

A 1-way table's prior weight is then min(prior_records(d, n), A_up): lowered only where the attributes, taken
together, are shown (at 95 % one-sided confidence) more spread than the prior assumes; never raised. With few
reports S is noisy, S_low <= 0 and nothing changes: the bound moves the estimate only where the data can tell a
skewed file from a uniform one (bench/pooled_prior.py measures it on the nine bench files). Pooling over all the
release's attributes makes one table's estimate depend on the release's other columns (all of them, whichever
table is asked for, so the same release always gives the same estimate). Joint tables keep prior_records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .covariance import MAX_COVARIANCE_CELLS, covariance_matrix, variance
from .operator import StructuredOperator

#: One-sided confidence of the bound A_up.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class SpreadTerm:
    """One attribute's part of S: ``excess`` ||pi_hat - u||^2 - tr Cov, ``variance`` its approximate variance,
    ``expected`` 1 - 1/d (its expectation is expected / (A + 1) under a Dirichlet of total concentration A)."""

    excess: float
    variance: float
    expected: float


def spread_term(marginal, counts) -> SpreadTerm | None:
    """The 1-way table's term of S from its perturbed counts; None when no record reports it or the table cannot be
    inverted (it then tells nothing about the spread). ``marginal``: the induced Mechanism or its operator."""
    op = marginal if isinstance(marginal, StructuredOperator) else StructuredOperator.from_mechanism(marginal)
    counts = np.asarray(counts, dtype=float).reshape(-1)
    n = float(counts.sum())
    d = counts.size
    if op.m != 1 or n <= 0 or d < 2:
        return None
    observed = counts / n
    try:
        unbiased = np.asarray(op.solve(observed), dtype=float).reshape(-1)
    except InputError:
        return None
    dev = unbiased - 1.0 / d
    if d <= MAX_COVARIANCE_CELLS:
        cov = covariance_matrix(op, observed, unbiased, int(round(n)))
        trace, quad, square = float(np.trace(cov)), float(dev @ cov @ dev), float(np.sum(cov * cov))
    else:  # a column with thousands of categories: the diagonal only
        var = np.asarray(variance(op, observed, unbiased, n), dtype=float).reshape(-1)
        trace, quad, square = float(var.sum()), float(np.sum(dev * dev * var)), float(np.sum(var * var))
    return SpreadTerm(float(dev @ dev) - trace, 4.0 * quad + 2.0 * square, 1.0 - 1.0 / d)


def concentration_bound(terms: Iterable[SpreadTerm | None]) -> float | None:
    """A_up from the attributes' terms (module docstring); None when the release does not bound it (S_low <= 0,
    or no term)."""
    from scipy.stats import norm

    parts = [t for t in terms if t is not None]
    if not parts:
        return None
    spread = sum(t.excess for t in parts)
    sd = float(np.sqrt(sum(max(t.variance, 0.0) for t in parts)))
    low = spread - float(norm.ppf(CONFIDENCE)) * sd
    if not low > 0:
        return None
    return max(sum(t.expected for t in parts) / low - 1.0, 0.0)


def one_way_prior_bound(tables: Iterable[tuple[object, np.ndarray]]) -> float | None:
    """A_up of a release from its 1-way tables: (marginal mechanism or operator, perturbed counts) for every
    attribute (those no record reports may be left out)."""
    return concentration_bound(spread_term(m, c) for m, c in tables)
