"""Predicted error of the unbiased estimates of needed marginals, from the mechanism alone (docs/math.md §6).

For a marginal A with induced mechanism M (eigenvalues lambda_T), a prior table pi and n rows,
lambda = M pi is the distribution of the perturbed marginal and

    Cov(pi_hat) = M^{-1} (diag(lambda) - lambda lambda^T) M^{-1} / n,
    Var(pi_hat_x) = (sum_y (M^{-1})_{xy}^2 lambda_y - pi_x^2) / n          (estimation.covariance.variance)

computed by per-axis operations. Reported per marginal:
- expected squared error E||pi_hat - pi||^2 = sum_x Var(pi_hat_x) (exact);
- expected AVD = 1/2 sum_x E|pi_hat_x - pi_x| ~ 1/2 sum_x sqrt(2/pi) sd_x (normal approximation of each cell);
- identifiability (see :mod:`.identifiability`).
For a sampling design that reports A with probability P(A), the inner mechanism's error at n_eff = n P(A).

``given_data=True``: the error against the released data's own marginal pi (the n records are fixed; only the
mechanism, and which records report A, are random). Each record then contributes the variance of
(M^{-1} e_y)_x given its x, so Var(pi_hat_x) = (sum_y (M^{-1})_{xy}^2 lambda_y - pi_x) / n, i.e. the above minus
pi_x (1 - pi_x) / n; for a sampling design the n_eff reporting records are a random subset of the n (finite
population correction), which gives the same subtraction with the full n.

The default estimate's prediction (:mod:`.default_error`) is averaged over truths drawn around the prior table
(each attribute's shares Dirichlet(1)); the unbiased estimate's figures above stay at the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..estimation.covariance import variance
from ..estimation.operator import StructuredOperator, check_table_size
from ..estimation.spectrum import eigenvalues_from_patterns, mechanism_eigenvalues
from .default_error import ABS_PER_SD, default_avd, default_avd_of_marginal, shares_factors, uninformed_avd
from .identifiability import MAX_CELL_SD, MIN_REL_EIGENVALUE, zero_eigenvalue
from .marginals import resolve_marginals
from .prior import UniformPrior

#: Above this k the eigenvalues are computed marginal by marginal (no 2^k vector).
FULL_SPECTRUM_K = 20


#: Predicted errors this close (relative) rank as equal. Far below the prediction's own accuracy (the measured
#: error was 0.69-1.14 times it in 80 % of the bench cells, docs/utility.md) and above the budget searches'
#: rounding: `auto` and `optimal` at whole-record 3 on the 16-column lung cancer survey are the same mechanism up
#: to 3e-7 relative in their predictions, which moved the GUI's star from the first to arrive to the second.
RANK_TOLERANCE = 1e-3
#: A needed marginal carries no information when the data remove less than this share of the prior's spread from
#: its default estimate's predicted squared error (:attr:`MarginalError.information`).
NO_INFORMATION = 0.01


def strict_rank(key: tuple) -> tuple:
    """A :meth:`PredictedError.rank_key` as a sort key (a NaN prediction ranks last)."""
    erased, error = key
    return (erased, math.inf if math.isnan(error) else error)


def ties_with(best: tuple, key: tuple) -> bool:
    """``key`` ranks with ``best``: as many erased needed marginals, predicted errors equal within RANK_TOLERANCE."""
    (nb, xb), (n, x) = strict_rank(best), strict_rank(key)
    if n != nb:
        return False
    return x == xb or (math.isfinite(x) and math.isfinite(xb) and abs(x - xb) <= RANK_TOLERANCE * max(abs(x), abs(xb)))


def lead_with_ties(order: list, key_of, tie_break=None) -> list:
    """``order`` (best first by a strict ranking) with the items whose rank key (``key_of``; None: unknown) ties the
    first one's (:func:`ties_with`) moved to the front, in the order ``tie_break(x, y)`` gives them (a comparison;
    default: as they were). Only the best one's ties are tolerant, so the result is a total order (closeness is
    not transitive: 1.0 ~ 1.0009 ~ 1.0018)."""
    from functools import cmp_to_key

    best = key_of(order[0]) if order else None
    if best is None:
        return list(order)
    lead = [x for x in order if key_of(x) is not None and ties_with(best, key_of(x))]
    lead.sort(key=cmp_to_key(tie_break) if tie_break is not None else None)
    chosen = {id(x) for x in lead}
    return lead + [x for x in order if id(x) not in chosen]


def lower_epsilon_first(a: float, b: float) -> int:
    """Tie-break of two designs whose predictions tie: the lower whole-record epsilon first (the same predicted
    answer for less privacy loss; relative tolerance), 0 when equal. The engine's ranking and the window's use it."""
    from ..tolerance import eps_equal

    return 0 if eps_equal(a, b) else (-1 if a < b else 1)


def rank_order(keys, tie_break=None) -> list[int]:
    """Indices of ``keys`` (rank keys) best first: strictly by key, then :func:`lead_with_ties`."""
    order = sorted(range(len(keys)), key=lambda i: strict_rank(keys[i]))
    return lead_with_ties(order, keys.__getitem__, tie_break)


@dataclass
class MarginalError:
    attributes: tuple
    cells: int
    expected_avd: float
    expected_squared_error: float
    max_cell_sd: float
    min_abs_eigenvalue: float
    identifiable: bool
    reason: str = ""
    rows: float = 0.0  # the (effective) number of rows the error is predicted for
    #: predicted AVD of the default (smoothed maximum-likelihood) estimate (:mod:`.default_error`)
    expected_avd_default: float = float("inf")
    #: no number of rows recovers it (a zero eigenvalue, or never reported): the release refuses it when needed
    #: and the ranking puts designs with fewer such marginals first. A marginal only uninformative at these rows
    #: is not identifiable but not erased (:mod:`.identifiability`).
    erased: bool = False
    #: predicted AVD of the default estimate were the data to say nothing: the truth's own spread
    #: (:func:`.default_error.uninformed_avd`)
    uninformed_avd: float = 0.0

    @property
    def information(self) -> float:
        """Share of the prior's spread that the data remove from the default estimate's predicted squared error:
        0 when the estimate would be the prior's equal shares whatever the data (:attr:`uninformed_avd`), near 1
        when the data decide it."""
        prior = self.uninformed_avd if self.rows > 0 and self.cells > 1 else 0.0
        if not (prior > 0 and np.isfinite(self.expected_avd_default)):
            return 0.0
        return float(np.clip(1.0 - (self.expected_avd_default / prior) ** 2, 0.0, 1.0))

    @property
    def no_information(self) -> bool:
        """Estimable (not erased) but the data remove under NO_INFORMATION of the prior's spread at these rows
        (:attr:`information`): the one rule of the release notes, the recipient's warnings and the design's counts."""
        return not self.erased and self.information < NO_INFORMATION

    @property
    def too_noisy(self) -> bool:
        """Estimable (not erased) but the unbiased estimate's largest predicted cell standard deviation reaches
        MAX_CELL_SD at these rows: its intervals span everything (:mod:`.identifiability`)."""
        return not self.erased and not self.identifiable  # identifiable: max_cell_sd < MAX_CELL_SD, set once

    def to_json(self, names=None) -> dict:
        finite = self.identifiable
        return {
            "attributes": [names[i] if names else i + 1 for i in self.attributes],
            "cells": self.cells,
            "expected_avd": self.expected_avd if finite else None,
            "expected_avd_default": self.expected_avd_default if np.isfinite(self.expected_avd_default) else None,
            "expected_squared_error": self.expected_squared_error if finite else None,
            "max_cell_sd": self.max_cell_sd if np.isfinite(self.max_cell_sd) else None,
            "min_abs_eigenvalue": self.min_abs_eigenvalue,
            "identifiable": self.identifiable,
            "information": self.information,
            "reason": self.reason,
            "rows": self.rows,
        }


@dataclass
class PredictedError:
    rows: int
    marginals: list[MarginalError] = field(default_factory=list)

    @property
    def non_identifiable(self) -> list[tuple]:
        """Marginals whose unbiased estimate is not usable: erased, or uninformative at these rows."""
        return [m.attributes for m in self.marginals if not m.identifiable]

    @property
    def erased(self) -> list[tuple]:
        """Marginals no number of rows recovers (a release that needs one is refused)."""
        return [m.attributes for m in self.marginals if m.erased]

    def by_order(self) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for order in sorted({len(m.attributes) for m in self.marginals}):
            ms = [m for m in self.marginals if len(m.attributes) == order]
            ok = [m for m in ms if m.identifiable]
            bad = len(ms) - len(ok)
            default = float(np.mean([m.expected_avd_default for m in ms]))
            out[order] = {
                "marginals": len(ms),
                "non_identifiable": bad,
                "erased": sum(1 for m in ms if m.erased),
                # not erased, but the data remove under NO_INFORMATION of the prior's spread (release notes name them)
                "no_information": sum(1 for m in ms if m.no_information),
                "mean_expected_avd_default": default if np.isfinite(default) else None,
                "mean_expected_avd": float(np.mean([m.expected_avd for m in ms])) if not bad else None,
                "mean_expected_squared_error": float(np.mean([m.expected_squared_error for m in ms]))
                if not bad
                else None,
            }
        return out

    def default_score(self) -> float:
        """Mean predicted AVD of the default estimate over the needed marginals (inf when one cannot be
        estimated at all): the recommender's criterion, lower is better."""
        if not self.marginals:
            return float("inf")
        return float(np.mean([m.expected_avd_default for m in self.marginals]))

    def score(self) -> float:
        """:meth:`default_score`, or inf when a needed marginal is erased: lower is better."""
        if self.erased:
            return float("inf")
        return self.default_score()

    @property
    def no_information(self) -> bool:
        """On no needed marginal do the data remove NO_INFORMATION or more of the prior's spread
        (:attr:`MarginalError.information`): the default estimates would be the prior's equal shares, whose predicted
        error looks modest only because the prior is uniform. Stricter than "not identifiable" (the unbiased
        estimate's intervals span everything), which the default estimate can still beat by far (docs/utility.md)."""
        return bool(self.marginals) and all(m.erased or m.no_information for m in self.marginals)

    def rank_key(self) -> tuple:
        """Order of designs: fewer erased needed marginals first, then the smaller :meth:`default_score`; a design
        with no information on any needed marginal (:attr:`no_information`) ranks as if it erased them all.

        Only erased marginals come first, not those merely uninformative at these rows: the shown (default)
        estimate of an uninformative marginal leans on its prior, and its predicted error already says by how
        much. Putting them first as well picked designs up to 2x worse on joint tables (docs/utility.md). But when
        no needed marginal is informative, the prediction measures the prior alone (a heuristic design at scale
        0.0007, every column "no information", predicted 25 % above Kronecker)."""
        return (len(self.marginals) if self.no_information else len(self.erased), self.default_score())

    def unbiased_score(self) -> float:
        """Mean expected AVD of the unbiased estimates (inf when a needed marginal is non-identifiable)."""
        if self.non_identifiable or not self.marginals:
            return float("inf")
        return float(np.mean([m.expected_avd for m in self.marginals]))

    def to_json(self, names=None) -> dict:
        default, unbiased = self.default_score(), self.unbiased_score()
        return {
            "rows": self.rows,
            "estimator": "expected_avd_default: the default shown estimate (smoothed maximum likelihood), predicted "
            "as the risk of its shrinkage when each attribute's true shares are Dirichlet(1) around the prior table "
            "(docs/math.md 6b); "
            "expected_avd: the unbiased estimate (matrix inversion, the estimator of the intervals), exact variance "
            "and the normal approximation",
            "by_order": {str(k): v for k, v in self.by_order().items()},
            "mean_expected_avd_default": default if np.isfinite(default) else None,
            "mean_expected_avd": unbiased if np.isfinite(unbiased) else None,
            "non_identifiable": [[names[i] if names else i + 1 for i in a] for a in self.non_identifiable],
            "erased": [[names[i] if names else i + 1 for i in a] for a in self.erased],
            # every needed marginal unusable: ranked as if all were erased (rank_key)
            "no_information": self.no_information,
            "marginals": [m.to_json(names) for m in self.marginals],
        }


def marginal_eigenvalues(mechanism, attrs, full: np.ndarray | None) -> np.ndarray:
    """lambda_T for T over the 2^|A| masks of A (bit j = attrs[j]); equal to the full mechanism's lambda_T."""
    if full is not None:
        masks = np.zeros(1, dtype=np.int64)
        for a in attrs:
            masks = np.concatenate((masks, masks | (1 << int(a))))
        return full[masks]
    lam = np.ones(1)
    sub = mechanism.marginal(list(attrs))
    lam = np.ones(1 << len(attrs))
    from ..blocks.patterns import restrict_masks

    masks = np.arange(1 << len(attrs), dtype=np.int64)
    for pos, block in sub.parts:
        lam *= eigenvalues_from_patterns(block.sizes, np.exp(block.log_pattern_probs()))[restrict_masks(masks, pos)]
    return lam


def _marginal_error(
    attrs,
    cells: int,
    min_abs: float,
    n: float,
    erased: bool,
    sd_sum=0.0,
    var_sum=0.0,
    max_sd=0.0,
    avd_default=np.inf,
    uninformed=0.0,
):
    """The MarginalError of a marginal from its cells' summed sd and variance (ignored unless learnable), the
    default estimate's predicted AVD and its value were the data to say nothing (``uninformed``)."""
    attrs, uninformed = tuple(attrs), float(uninformed)
    if n <= 0:
        return MarginalError(
            attrs, cells, np.inf, np.inf, np.inf, min_abs, False, "never reported", 0.0, erased=True,
            uninformed_avd=uninformed,
        )  # fmt: skip
    if erased:
        reason = "zero eigenvalue: erased by the mechanism"
        return MarginalError(
            attrs, cells, np.inf, np.inf, np.inf, min_abs, False, reason, n, float(avd_default), erased=True,
            uninformed_avd=uninformed,
        )  # fmt: skip
    max_sd = float(max_sd)
    ok = max_sd < MAX_CELL_SD
    reason = "" if ok else f"a cell's predicted standard deviation is {max_sd:.3g} >= {MAX_CELL_SD:g} at {n:.4g} rows"
    return MarginalError(
        attrs, cells, float(0.5 * ABS_PER_SD * sd_sum), float(var_sum), max_sd, min_abs, ok, reason, float(n),
        float(avd_default), uninformed_avd=uninformed,
    )  # fmt: skip


def error_of_marginal(
    sizes, attrs, eigenvalues, prior_table, n: float, data_rows: float | None = None
) -> MarginalError:
    """The error of the unbiased estimate of one marginal from n (effective) rows; with ``data_rows`` (the
    release's full number of rows) against the released data's own marginal (module docstring)."""
    cells = int(np.prod([int(sizes[i]) for i in attrs]))
    min_abs = float(np.min(np.abs(eigenvalues)))
    erased = zero_eigenvalue(eigenvalues)
    sub_sizes = [int(sizes[i]) for i in attrs]
    table = np.reshape(np.asarray(prior_table, dtype=float), tuple(sub_sizes))
    uniform = bool(np.allclose(table, 1.0 / cells))
    factors = None if uniform else shares_factors(table)  # the truth centred on a skewed prior table
    uninformed = uninformed_avd(sub_sizes, n, factors)
    if n <= 0 or erased:
        avd_default = default_avd_of_marginal(sub_sizes, eigenvalues, n, data_rows, factors=factors)
        return _marginal_error(attrs, cells, min_abs, n, erased, avd_default=avd_default, uninformed=uninformed)
    op = StructuredOperator(tuple(sub_sizes), eigenvalues)
    observed = op.apply(prior_table)
    var = variance(op, observed, prior_table, n)
    if data_rows is not None:
        var = np.clip(var - prior_table * (1.0 - prior_table) / float(data_rows), 0.0, None)
    sd = np.sqrt(var)
    avd_default = default_avd_of_marginal(sub_sizes, eigenvalues, n, data_rows, var.sum(), sd.sum(), factors)
    return _marginal_error(attrs, cells, min_abs, n, False, sd.sum(), var.sum(), sd.max(), avd_default, uninformed)


def one_way_errors(mechanism, attributes, tables, n_eff, data_rows: float | None = None) -> list[MarginalError]:
    """:func:`error_of_marginal` of many 1-way marginals at once, in one numpy pass over all their cells.

    Attribute i (a categories) is reported through its induced mechanism: P(same) p, P(one specific other
    value) q (``Mechanism.one_way_log_probs``), with eigenvalues lambda_0 = p + (a - 1) q (constant) and
    lambda_1 = p - q (contrast). M^{-1} has the pattern coefficients Z_0 = (1/lambda_0 + (a - 1)/lambda_1) / a
    (same value) and Z_1 = (1/lambda_0 - 1/lambda_1) / a; the matrix of its squared entries has the eigenvalues
    s_0 = Z_0^2 + (a - 1) Z_1^2 and s_1 = Z_0^2 - Z_1^2. With lambda = M pi,

        Var(pi_hat_x) = (s_0 mean(lambda) + s_1 (lambda_x - mean(lambda)) - pi_x^2) / n.

    ``tables``: the prior's 1-way table of each attribute; ``n_eff``: the (effective) rows of each.
    """
    attrs = np.asarray(attributes, dtype=np.int64)
    if attrs.size == 0:
        return []
    a = mechanism.sizes[attrs].astype(float)
    p, q = np.exp(mechanism.one_way_log_probs()[attrs]).T
    lam = np.stack([p + (a - 1.0) * q, p - q], axis=1)
    abs_lam = np.abs(lam)
    min_abs = abs_lam.min(axis=1)
    n_eff = np.asarray(n_eff, dtype=float)
    erased = min_abs < MIN_REL_EIGENVALUE * abs_lam.max(axis=1)  # identifiability.zero_eigenvalue
    usable = (n_eff > 0) & ~erased
    safe = np.where(usable[:, None], lam, 1.0)
    z0 = (1.0 / safe[:, 0] + (a - 1.0) / safe[:, 1]) / a
    z1 = (1.0 / safe[:, 0] - 1.0 / safe[:, 1]) / a
    s0, s1 = z0**2 + (a - 1.0) * z1**2, z0**2 - z1**2
    # every cell of every marginal side by side; seg = the marginal of each cell
    counts = mechanism.sizes[attrs]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    seg = np.repeat(np.arange(attrs.size), counts)
    pi = np.concatenate([np.asarray(t, dtype=float).reshape(-1) for t in tables])
    mean_pi = np.add.reduceat(pi, starts) / a
    observed = safe[seg, 0] * mean_pi[seg] + safe[seg, 1] * (pi - mean_pi[seg])
    mean_obs = np.add.reduceat(observed, starts) / a
    second = s0[seg] * mean_obs[seg] + s1[seg] * (observed - mean_obs[seg])
    var = np.clip(second - pi**2, 0.0, None) / np.where(usable, n_eff, 1.0)[seg]
    if data_rows is not None:
        var = np.clip(var - pi * (1.0 - pi) / float(data_rows), 0.0, None)
    sd = np.sqrt(var)
    sum_sd, sum_var = np.add.reduceat(sd, starts), np.add.reduceat(var, starts)
    max_sd = np.maximum.reduceat(sd, starts)
    contrast = np.where(erased, 0.0, lam[:, 1] / lam[:, 0])  # lambda_1 relative to the constant's (1 for a channel)
    # scaled_truth_spreads of one attribute: Dirichlet(1) around its prior shares (shares_factors: 1 at uniform)
    factor = (1.0 - np.add.reduceat(pi * pi, starts)) / (1.0 - 1.0 / a)
    one = (factor / (a * (a + 1.0)))[:, None]
    avd_def = default_avd(a, (a - 1.0)[:, None], contrast[:, None], n_eff, one, data_rows, sum_var, sum_sd)
    uninformed = 0.5 * ABS_PER_SD * np.sqrt(factor * (a - 1.0) / (a + 1.0))  # uninformed_avd of one attribute
    return [
        _marginal_error((i,), int(counts[j]), float(min_abs[j]), float(n_eff[j]), bool(erased[j]), *stats)
        for j, (i, *stats) in enumerate(
            zip(attrs.tolist(), sum_sd, sum_var, max_sd, avd_def, uninformed, strict=True)
        )
    ]


def predicted_error_with_coverage(
    mechanism,
    n: int,
    marginals=None,
    prior=None,
    coverage: Callable[[tuple], float] | None = None,
    given_data: bool = False,
) -> PredictedError:
    """As :func:`predicted_error`, with marginal A estimated from n * coverage(A) rows (sampling designs:
    coverage(A) = P(every attribute of A is reported); 0 makes A non-identifiable)."""
    if not (isinstance(n, (int, np.integer, float)) and n >= 1):
        raise InputError(f"the number of rows must be a positive number; got {n!r}")
    sizes = mechanism.sizes
    attrs_list = resolve_marginals(marginals, mechanism.k)
    for attrs in attrs_list:
        check_table_size([sizes[i] for i in attrs], "to predict its error (name smaller tables)")
    prior = prior or UniformPrior()
    data_rows = float(n) if given_data else None

    def rows_of(attrs) -> float:
        return float(n) * (1.0 if coverage is None else float(coverage(attrs)))

    singles = [attrs for attrs in attrs_list if len(attrs) == 1]
    one_way = one_way_errors(
        mechanism,
        [attrs[0] for attrs in singles],
        [prior.marginal(sizes, attrs) for attrs in singles],
        [rows_of(attrs) for attrs in singles],
        data_rows,
    )
    by_attribute = {e.attributes: e for e in one_way}
    higher = len(singles) < len(attrs_list)
    full = mechanism_eigenvalues(mechanism) if higher and mechanism.k <= FULL_SPECTRUM_K else None
    out = PredictedError(int(n))
    for attrs in attrs_list:
        if len(attrs) == 1:
            out.marginals.append(by_attribute[tuple(attrs)])
            continue
        lam = marginal_eigenvalues(mechanism, attrs, full)
        table = prior.marginal(sizes, attrs)
        out.marginals.append(error_of_marginal(sizes, attrs, lam, table, rows_of(attrs), data_rows))
    return out


def predicted_error(mechanism, n: int, marginals=None, prior=None, given_data: bool = False) -> PredictedError:
    """Expected error of the unbiased estimates of ``marginals`` ({"orders": [1, 2]} by default, or
    {"sets": [...]}) from n rows released through ``mechanism``, under ``prior`` (uniform by default); with
    ``given_data`` against the released data's own marginals (module docstring)."""
    return predicted_error_with_coverage(mechanism, n, marginals, prior, None, given_data)
