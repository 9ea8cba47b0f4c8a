"""Chi-square tests of association.

- :func:`chi2_2x2`: 2N (AD - BC)^2 / ((A+B)(C+D)(A+C)(B+D)) (docs/math.md §9), vectorised over SNPs;
- :func:`pearson_chi2`: Pearson's statistic for an r x c table of counts (= scipy chi2_contingency,
  correction=False); valid when the table holds observed counts;
- :func:`wald_independence`: a test of independence on an *estimated* table that accounts for the
  randomization: d_ij = p_ij - p_i. p_.j on the (r-1)(c-1) free cells, Cov(d) = J Cov(p_hat) J^T (delta
  method), W = d^T Cov(d)^{-1} d ~ chi2((r-1)(c-1)) under independence (large samples).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


def _chi2_sf(stat: float, dof: int) -> float:
    """P(X >= stat) for X ~ chi2(dof) (scipy.stats, imported here to keep the CLI's start-up light)."""
    from scipy.stats import chi2

    return float(chi2.sf(stat, dof))


#: p-values below this are shown as "< 1e-16" (double precision cannot resolve them from 0).
SMALLEST_SHOWN_P = 1e-16


def format_p_value(p: float | None, digits: int = 4) -> str:
    """p for display: "< 1e-16" below printing precision, never "0"; "n/a" when there is none."""
    if p is None:
        return "n/a"
    p = float(p)
    if not np.isfinite(p):
        return "n/a"
    if p < SMALLEST_SHOWN_P:
        return f"< {SMALLEST_SHOWN_P:g}"
    return f"{p:.{digits}g}"


#: The p-values of a test's JSON object (:meth:`Chi2Result.to_json_dict`) that :func:`strict_p_values` bounds.
P_VALUE_KEYS = ("p_value", "p_value_chi2_approximation")


def strict_p_values(test: dict) -> dict:
    """A test's JSON object (:meth:`Chi2Result.to_json_dict`) for output: each p-value below printing precision
    (SMALLEST_SHOWN_P, including one that underflowed to 0) becomes null with ``<key>_below``: SMALLEST_SHOWN_P
    beside it (e.g. ``"p_value": null, "p_value_below": 1e-16``), so that JSON never shows such a p as 0; the
    text (``p_value_text``) says "< 1e-16". Other fields are kept."""
    out: dict = {}
    for key, value in test.items():
        below = key in P_VALUE_KEYS and value is not None and float(value) < SMALLEST_SHOWN_P
        out[key] = None if below else value
        if below:
            out[f"{key}_below"] = SMALLEST_SHOWN_P
    return out


@dataclass
class Chi2Result:
    statistic: float | None  # None: not computable (the test says why in ``assumes``)
    dof: int
    p_value: float | None
    test: str
    assumes: str
    info: dict = field(default_factory=dict)

    def to_json_dict(self) -> dict:
        return {
            "test": self.test,
            "statistic": self.statistic,
            "dof": self.dof,
            "p_value": self.p_value,
            "p_value_text": format_p_value(self.p_value),
            "assumes": self.assumes,
            **self.info,
        }


def chi2_2x2(a, b, c, d):
    """The paper's allele-by-status statistic; arrays broadcast. N = (A+B+C+D)/2 so 2N = the table total."""
    a, b, c, d = (np.asarray(v, dtype=float) for v in (a, b, c, d))
    total = a + b + c + d
    den = (a + b) * (c + d) * (a + c) * (b + d)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = total * (a * d - b * c) ** 2 / den
    return np.where(den > 0, out, 0.0)


def pearson_statistic(table) -> float:
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or min(t.shape) < 2:
        raise InputError("a chi-square test needs a two-way table with at least 2 rows and 2 columns")
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / t.sum()
    keep = expected > 0
    return float(np.sum((t[keep] - expected[keep]) ** 2 / expected[keep]))


def pearson_chi2(table, test: str = "pearson", assumes: str = "the table holds observed counts") -> Chi2Result:
    """Pearson chi-square test of independence; dof counts only non-empty rows and columns."""
    t = np.asarray(table, dtype=float)
    stat = pearson_statistic(t)
    rows = int(np.count_nonzero(t.sum(axis=1) > 0))
    cols = int(np.count_nonzero(t.sum(axis=0) > 0))
    dof = max((rows - 1) * (cols - 1), 1)
    return Chi2Result(stat, dof, _chi2_sf(stat, dof), test, assumes)


def wald_statistics(estimates: np.ndarray, covariances: np.ndarray) -> np.ndarray:
    """W = d^T (J Cov J^T)^{-1} d for a batch of estimated r x c tables (shape (B, r, c)) with the covariances of
    their C-order cells (shape (B, rc, rc)); d_ij = p_ij - p_i. p_.j on the free cells i < r-1, j < c-1 and J its
    Jacobian (module docstring). A singular J Cov J^T uses the pseudo-inverse. Never negative."""
    vec, cov_d = _contrast(estimates, covariances)
    try:
        sol = np.linalg.solve(cov_d, vec[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        sol = (np.linalg.pinv(cov_d) @ vec[:, :, None])[:, :, 0]
    return np.maximum(np.einsum("bf,bf->b", vec, sol), 0.0)


#: An eigenvalue of Cov(d) below this share of its largest counts as 0 (:func:`wald_rank`).
RANK_TOLERANCE = 1e-9


def wald_rank(estimate: np.ndarray, covariance: np.ndarray) -> int:
    """The rank of Cov(d) = J Cov J^T of one estimated r x c table (eigenvalues above RANK_TOLERANCE of the
    largest): below (r-1)(c-1), the estimate's covariance says nothing in some direction of d (the perturbed counts
    fall in too few cells to estimate it), and a Wald statistic is not defined."""
    _vec, cov_d = _contrast(np.asarray(estimate, dtype=float)[None], np.asarray(covariance, dtype=float)[None])
    eig = np.linalg.eigvalsh((cov_d[0] + cov_d[0].T) / 2)
    top = float(eig.max()) if eig.size else 0.0
    return int(np.count_nonzero(eig > RANK_TOLERANCE * top)) if top > 0 else 0


def _contrast(estimates, covariances) -> tuple[np.ndarray, np.ndarray]:
    """(d on the free cells, J Cov J^T) of a batch of tables (:func:`wald_statistics`)."""
    p = np.asarray(estimates, dtype=float)
    cov = np.asarray(covariances, dtype=float)
    batch, r, c = p.shape
    row, col = p.sum(axis=2), p.sum(axis=1)
    fi, fj = (a.reshape(-1) for a in np.meshgrid(np.arange(r - 1), np.arange(c - 1), indexing="ij"))
    ck, cl = (a.reshape(-1) for a in np.meshgrid(np.arange(r), np.arange(c), indexing="ij"))
    same_row = (fi[:, None] == ck[None, :]).astype(float)  # (free, cells)
    same_col = (fj[:, None] == cl[None, :]).astype(float)
    jac = same_row * same_col - same_row * col[:, fj][:, :, None] - same_col * row[:, fi][:, :, None]
    cov_d = jac @ cov @ np.swapaxes(jac, 1, 2)
    vec = (p - row[:, :, None] * col[:, None, :])[:, fi, fj]
    return vec, cov_d


def wald_independence(estimate: np.ndarray, covariance: np.ndarray) -> Chi2Result:
    """Wald test of H0 "independent" for an estimated r x c distribution with covariance of its C-order cells
    (the chi-square p-value; :mod:`.wald_simulation` simulates it where the sample is small)."""
    p = np.asarray(estimate, dtype=float)
    r, c = p.shape
    stat = float(wald_statistics(p[None], np.asarray(covariance, dtype=float)[None])[0])
    dof = (r - 1) * (c - 1)
    assumes = (
        "records are independent and the sample is large enough for the estimated table to be approximately "
        "normal; uses the covariance of the unbiased estimate, so the randomization noise is accounted for; "
        "H0: the two attributes are independent in the true data"
    )
    return Chi2Result(stat, dof, _chi2_sf(stat, dof), "wald_on_unbiased_estimate", assumes)
