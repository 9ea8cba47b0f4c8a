"""k-way joint distributions from Bloom-filter reports: LASSO, LOPUB (LASSO + EM), BRR; LOCOP in :mod:`.copula`.

All regress the corrected bit counts y on the candidate matrix M (:mod:`.reports`), per subset D of attributes:
- ``lasso``: scikit-learn ``Lasso`` (non-negative, no intercept), the paper's "simple LOPUB" of its experiments;
- ``lopub``: Ren et al.'s hybrid: the LASSO support as candidate set, its normalised coefficients as the
  starting point, then EM on the individual reports: theta(c) <- theta(c) * mean_i P(s_i | c) / sum_c' theta(c')
  P(s_i | c'), with P(s_i | c) = prod_{j, b} P(s_ij[b] | H_j(c_j)[b]) (log space, rows in chunks);
- ``brr``: scikit-learn ``BayesianRidge`` (no intercept), the paper's Algorithm 2.
Coefficients are clipped at 0 and divided by their sum (uniform if none is positive).
"""

from __future__ import annotations

import warnings
from functools import reduce

import numpy as np

from .privacy import bit_log_ratio
from .reports import BloomReports, candidate_matrix, combinations, subset_sizes

#: The authors' LASSO penalty (on the count scale y of Eq. 5).
LASSO_ALPHA = 0.1
#: EM stops when no candidate's probability moves more than this, or after EM_MAX_ITER sweeps.
EM_TOL = 1e-5
EM_MAX_ITER = 100
#: Rows of reports per EM chunk.
EM_CHUNK_ROWS = 16_384


def normalise(beta: np.ndarray) -> np.ndarray:
    """Clip at 0 and divide by the sum; uniform when nothing is positive."""
    b = np.clip(np.asarray(beta, dtype=float), 0.0, None)
    s = b.sum()
    return b / s if s > 0 else np.full(b.shape, 1.0 / b.size)


def lasso_coefficients(reports: BloomReports, attrs, alpha: float = LASSO_ALPHA) -> np.ndarray:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso

    m = candidate_matrix(reports.mechanism, attrs)
    y = reports.corrected_counts(attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = Lasso(alpha=alpha, fit_intercept=False, positive=True, max_iter=5000).fit(m, y)
    return model.coef_


def lasso_joint(reports: BloomReports, attrs, alpha: float = LASSO_ALPHA) -> np.ndarray:
    """LASSO estimate of the joint distribution of ``attrs`` (shape: their sizes)."""
    return normalise(lasso_coefficients(reports, attrs, alpha)).reshape(subset_sizes(reports.mechanism, attrs))


def brr_joint(reports: BloomReports, attrs) -> np.ndarray:
    """Algorithm 2: BayesianRidge(M, y), coefficients clipped and normalised."""
    from sklearn.linear_model import BayesianRidge

    m = candidate_matrix(reports.mechanism, attrs)
    y = reports.corrected_counts(attrs)
    beta = BayesianRidge(fit_intercept=False).fit(m, y).coef_
    return normalise(beta).reshape(subset_sizes(reports.mechanism, attrs))


def value_log_likelihoods(reports: BloomReports, j: int, rows: slice) -> np.ndarray:
    """(rows, |Omega_j|): ln P(report bits of attribute j | value v), up to a per-row constant:
    ln r * sum_b H_j(v)[b] (2 s[b] - 1), r = (1 - f/2) / (f/2)."""
    mech = reports.mechanism
    signs = 2.0 * reports.attribute_bits(j)[rows].astype(float) - 1.0
    return bit_log_ratio(float(mech.flips[j])) * (signs @ mech.encoding.filters[j].T.astype(float))


def em_joint(reports: BloomReports, attrs, candidates: np.ndarray, theta: np.ndarray, max_iter=EM_MAX_ITER):
    """EM over the candidate combinations (flat C-order indices) from ``theta``; returns the full distribution."""
    sizes = subset_sizes(reports.mechanism, attrs)
    codes = combinations(sizes)[:, candidates]
    chunks = [slice(s, s + EM_CHUNK_ROWS) for s in range(0, reports.rows, EM_CHUNK_ROWS)]
    # per chunk: likelihoods of the candidates, each row scaled by its maximum (log space first)
    lik = []
    for rows in chunks:
        ll = reduce(np.add, (value_log_likelihoods(reports, j, rows)[:, codes[i]] for i, j in enumerate(attrs)))
        lik.append(np.exp(ll - ll.max(axis=1, keepdims=True)))
    theta = np.asarray(theta, dtype=float) / np.sum(theta)
    for _ in range(max_iter):
        acc = np.zeros_like(theta)
        for part in lik:
            acc += part.T @ (1.0 / (part @ theta))
        new = theta * acc / reports.rows
        new /= new.sum()
        done = np.max(np.abs(new - theta)) < EM_TOL
        theta = new
        if done:
            break
    out = np.zeros(int(np.prod(sizes)))
    out[candidates] = theta
    return out.reshape(sizes)


def lopub_joint(reports: BloomReports, attrs, alpha: float = LASSO_ALPHA, max_iter: int = EM_MAX_ITER) -> np.ndarray:
    """Ren et al.'s LASSO + EM: the LASSO support and coefficients start EM on the individual reports."""
    beta = np.clip(lasso_coefficients(reports, attrs, alpha), 0.0, None)
    support = np.flatnonzero(beta > 0)
    if support.size == 0:
        support = np.arange(beta.size)
        start = np.ones(beta.size)
    else:
        start = beta[support]
    return em_joint(reports, attrs, support, start, max_iter)
