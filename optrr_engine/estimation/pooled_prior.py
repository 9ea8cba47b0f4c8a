"""The default estimate's prior weight on a release's 1-way tables, lowered where the release itself shows its
attributes further from uniform than the prior assumes (empirical Bayes with a one-sided bound; docs/estimation.md
§1, docs/math.md §6).

The default estimate (``map``) of a table of d cells adds w / d pseudo-records to every cell, w = prior_records(d, n)
= min(d, sqrt(n)): the posterior mean of a multinomial under a symmetric Dirichlet(w / d) prior does the same, so w
plays the part of that Dirichlet's total concentration (one pseudo-record per cell: Dirichlet(1), uniform on the
simplex). Under a symmetric Dirichlet of total concentration A, E||pi - u||^2 = (1 - 1/d) / (A + 1) (u: the
uniform table). Over the release's attributes j,

    S = sum_j (||pi_hat_j - u_j||^2 - tr Cov_j)

estimates sum_j ||pi_j - u_j||^2 without bias (pi_hat_j: the unbiased estimate, Cov_j its covariance, whose trace
is estimated without bias too: the plug-in trace times n / (n - 1), n the column's reports), with
Var(S) ~ sum_j 4 d_j' Cov_j d_j + 2 tr(Cov_j^2), d_j = pi_hat_j - u_j (the columns' noises independent, normal
approximation, plug-in). Its one-sided lower bound S_low = S - z sd(S), z = the standard normal's 95 % quantile,
gives the most concentrated common Dirichlet whose expected spread is consistent with the release's own columns:

    A_up = sum_j (1 - 1/d_j) / S_low - 1      (no bound when S_low <= 0)

A 1-way table's prior weight is then min(prior_records(d, n), A_up): lowered only where the attributes, taken
together, are shown (at 95 % one-sided confidence) more spread than the prior assumes; never raised. With few
reports S is noisy, S_low <= 0 and nothing changes: the bound moves the estimate only where the data can tell a
skewed file from a uniform one (bench/pooled_prior.py measures it on the nine bench files). A column whose noise
alone (at the uniform table: from the design and its number of reports, never from its counts) exceeds the largest
possible spread is left out (:func:`spread_term`), and so is one the file lacks, that cannot be read or that fewer
than two records report. Pooling over all the release's attributes makes a column's 1-way estimate depend on the
release's other columns (all of them, whichever column is asked for, so a release always gives the same 1-way
estimate of a column). Joint tables keep prior_records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

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
    """The 1-way table's term of S from its perturbed counts; None when fewer than two records report it, the table
    cannot be inverted, or its noise alone, sqrt(2 tr Cov^2) at the uniform table (the hypothesis the column is to
    be told from), exceeds 1 - 1/d, the spread of a point mass (the largest any column can have): such a column
    cannot tell skewed from uniform and would only drown the others' evidence. That test looks at the design and the
    number of reports only, never at the counts: judged at the counts, a column of a few reports that all fell on
    one value has no noise and was kept while its spread-out neighbours were left out, and S summed the
    skewed-looking ones (an SMP release of the 157-row SNP file: 35 columns of about 4.5 reports each, S_low 22.7
    where point masses give 7.6, the prior weight 0). ``marginal``: the induced Mechanism or its operator.

    A 1-way channel is M = P_0 + l P_1 (l: its contrast eigenvalue), so M^-1 = (1/l) I + c J and
    Cov(pi_hat) = (diag(lambda) - lambda lambda') / (n l^2): every quantity below in O(d). Its trace is estimated
    without bias, (1 - sum lambda_hat^2) / ((n - 1) l^2), so that the excess is unbiased at any n >= 2 (fewer
    reports: None)."""
    op = marginal if isinstance(marginal, StructuredOperator) else StructuredOperator.from_mechanism(marginal)
    counts = np.asarray(counts, dtype=float).reshape(-1)
    n = float(counts.sum())
    d = counts.size
    if op.m != 1 or n < 2 or d < 2:
        return None  # (one report cannot estimate its own noise: the trace below needs n - 1 > 0)
    contrast = float(op.eigenvalues[1])
    if contrast == 0.0:
        return None  # the column is erased: nothing of it reaches the release
    scale = 1.0 / (n * contrast * contrast)
    if scale * np.sqrt(2.0 * (d - 1.0)) / d > 1.0 - 1.0 / d:  # sqrt(2 tr Cov^2) at lambda = u: tr = (d - 1)/d^2 scale^2
        return None  # (from the design and n alone: checked before anything is computed from the counts)
    lam = counts / n
    dev = np.asarray(op.solve(lam), dtype=float).reshape(-1) - 1.0 / d
    sq = float(np.sum(lam * lam))
    # unbiased: E[1 - sum lam_hat^2] = (1 - sum lam^2)(1 - 1/n), so the plug-in trace falls short by the factor
    # (n - 1)/n; at a few reports per column (SMP on a small file) that shortfall made S look like point masses
    trace = scale * (1.0 - sq) * n / (n - 1.0)
    quad = scale * (float(np.sum(dev * dev * lam)) - float(np.dot(dev, lam)) ** 2)
    square = scale * scale * (sq - 2.0 * float(np.sum(lam**3)) + sq * sq)
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
