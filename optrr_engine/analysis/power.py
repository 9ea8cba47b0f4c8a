"""What a release's test of independence can detect: the weakest association found with 80 % power.

A large p-value is evidence of independence only if the test could have detected an association of interest.
The effect size is Cohen's w of the true r x c table, w^2 = sum_ij (p_ij - p_i. p_.j)^2 / (p_i. p_.j) (0.1 small,
0.3 medium, 0.5 large; Cohen 1988, ch. 7), at most sqrt(min(r, c) - 1).

On the original n records the chi-square test's noncentrality is n w^2 = d^T C^{-1} d, with d the free cells of
p - row x column (:func:`.chi_square._contrast`) and C their covariance at independence, J (diag(p0) - p0 p0^T) J^T
/ n (p0 = row x column). On the release the Wald test's noncentrality is d^T R^{-1} d with R the covariance of d
from the unbiased estimate at p0 (the randomization's noise included). Their ratio in a direction u, e(u) =
u^T R^{-1} u / u^T C^{-1} u, is the share of the records' information on that kind of association the release
keeps; its extremes are the generalized eigenvalues of C v = e R v. With lambda_80 the noncentrality at which a
chi-square test of df = (r-1)(c-1) degrees of freedom at the 5 % level has 80 % power (scipy's ncx2), the release
detects w >= sqrt(lambda_80 / (n e_max)) in the direction it keeps best and w >= sqrt(lambda_80 / (n e_min)) in
every direction; the original records w >= sqrt(lambda_80 / n) (n: all the release's records, also for a sampling
release whose table fewer of them report). Margins: those of the default (smoothed) estimate,
every cell positive. Asymptotic (normal) power, as the Wald test's own chi-square law.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..utility.identifiability import MIN_REL_EIGENVALUE

#: The test's level and the power asked of it.
ALPHA = 0.05
POWER = 0.8
#: Cohen's medium effect: a test that cannot detect it (80 % power) has little power.
MEDIUM_W = 0.3
#: Largest (r-1)(c-1) whose power is computed (a generalized eigenproblem of that order: ~0.3 s at 900).
MAX_POWER_DOF = 900


@lru_cache(maxsize=64)
def noncentrality_for_power(dof: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """lambda with P(chi2'(dof, lambda) > chi2_{1-alpha}(dof)) = power (scipy.stats.ncx2)."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2

    critical = float(chi2.isf(alpha, dof))
    return float(brentq(lambda lam: float(ncx2.sf(critical, dof, lam)) - power, 1e-9, 1e4))


def detectable_association(op, estimate: np.ndarray, rows: int, original_rows: int | None = None) -> dict | None:
    """The smallest Cohen's w the release's Wald test of independence detects with POWER at level ALPHA (module
    docstring), for the table's operator ``op`` (its M: ``apply``/``solve``), a point estimate with every cell
    positive (its margins are the null's) and the rows that report the table: ``detectable_w`` (the direction the
    release keeps best), ``detectable_w_every_direction``, ``detectable_w_original`` (the ``original_rows``
    records unperturbed, default ``rows``: a sampling release's table is reported by fewer rows than it has),
    ``largest_w`` (sqrt(min(r, c) - 1)) and ``alpha``, ``power``; None when the covariance is singular (the test is
    not computable), there are no rows or the table has more than MAX_POWER_DOF degrees of freedom."""
    from scipy.linalg import eigh

    from ..estimation.covariance import covariance_matrix
    from ..estimation.spectrum import NotIdentifiableError
    from .chi_square import _contrast
    from .wald_simulation import null_law

    p = np.clip(np.asarray(estimate, dtype=float), 0.0, None)
    if rows <= 0 or p.ndim != 2 or p.sum() <= 0:
        return None
    p = p / p.sum()
    r, c = p.shape
    if (r - 1) * (c - 1) > MAX_POWER_DOF:
        return None
    p0 = np.outer(p.sum(axis=1), p.sum(axis=0))
    if np.any(p0 <= 0):
        return None
    try:
        release = covariance_matrix(op, null_law(op, p0), p0, rows)
    except NotIdentifiableError:  # a zero eigenvalue: the test is not computable
        return None
    flat = p0.reshape(-1)
    original = (np.diag(flat) - np.outer(flat, flat)) / rows
    _d, cov = _contrast(p0[None], np.stack([release, original]))
    try:
        kept = eigh(cov[1], cov[0], eigvals_only=True)  # C v = e R v; both positive definite (p0 > 0)
    except np.linalg.LinAlgError:
        return None
    lam = noncentrality_for_power((r - 1) * (c - 1))
    return {
        "detectable_w": float(np.sqrt(lam / (rows * kept.max()))),
        "detectable_w_every_direction": float(np.sqrt(lam / (rows * kept.min()))),
        "detectable_w_original": float(np.sqrt(lam / (original_rows or rows))),
        "largest_w": float(np.sqrt(min(r, c) - 1)),
        "alpha": ALPHA,
        "power": POWER,
    }


def power_sentence(power: dict) -> str:
    """What the test can detect, in words (every test's output carries it)."""
    w, every, orig, top = (
        power[k] for k in ("detectable_w", "detectable_w_every_direction", "detectable_w_original", "largest_w")
    )
    level, share = f"{100 * power['alpha']:g} %", f"{100 * power['power']:g} %"
    scale = "Cohen's w: 0.1 small, 0.3 medium, 0.5 large"
    if w > top:
        return (
            f"power: at the {level} level this test would need Cohen's w >= {w:.2g} for {share} power, above the "
            f"largest possible ({top:.2g}): it cannot detect any association; the original records: w >= {orig:.2g} "
            f"({scale})"
        )
    every_kind = f"w >= {every:.2g} in every pattern" if every <= top else "some patterns not at all"
    return (
        f"power: at the {level} level this test detects, with {share} power, associations of w >= {w:.2g} in the "
        f"pattern of association the release keeps best ({every_kind}); the original records: w >= {orig:.2g} "
        f"({scale})"
    )


def low_power_warning(power: dict) -> str | None:
    """The warning when the test cannot detect a medium association (MEDIUM_W) with the power asked: in any pattern
    (even the one the release keeps best), or in some patterns (a review: p = 0.157 without a word for two columns
    associated in a pattern that needed w >= 0.89); a large p-value then does not show independence."""
    w, every, top = power["detectable_w"], power["detectable_w_every_direction"], power["largest_w"]
    share = f"{100 * power['power']:g} %"
    if w > top:
        return (
            f"this test has no power here: even the strongest possible association (Cohen's w = {top:.2g}) is "
            f"detected less than {share} of the time; its p-value says nothing about independence"
        )
    if w > MEDIUM_W:
        return (
            f"this test has little power: it detects ({share} power) only associations stronger than Cohen's w = "
            f"{w:.2g}, above a medium one ({MEDIUM_W:g}); a large p-value says little about independence"
        )
    if every > MEDIUM_W:
        some = f"w >= {every:.2g}" if every <= top else "more than the strongest possible association"
        return (
            f"this test detects a medium association (Cohen's w = {MEDIUM_W:g}) only in some patterns: others need "
            f"{some} for {share} power; a large p-value does not show independence"
        )
    return None


#: At most this many needed 2-way tables get their power computed before a release (spread evenly over them).
MAX_DESIGN_TABLES = 200


def design_power(design, rows: int, sets, shares=None) -> dict | None:
    """Before a release: what the tests of association on the needed 2-way tables ``sets`` (of column indices) will
    detect: ``tables`` (how many, at most MAX_DESIGN_TABLES spread evenly), ``median_w`` and ``weakest_w`` (the
    median and the largest w the release's test detects), ``original_w`` (the median of the unperturbed rows'),
    ``no_power`` (tables that detect no association at all: their w is above the largest possible), ``with_power``
    (when some but not all tables have no power: the median and weakest w of the others, which the sentence quotes),
    ``margins`` and the sentence ``statement``. ``design``: a Mechanism or a SamplingDesign (its tables reported by
    the rows expected to hold both columns); None without 2-way tables or when none has a test (a design that never
    reports two columns together, or erases their association).

    ``shares``: per column (the design's order), the 1-way shares of its categories in the data manager's own file as
    released (the design's category order; None for a column whose shares are unknown). A table whose two columns
    have shares is evaluated at the independence table of those shares (:func:`detectable_w_at_shares`), where a
    rare category makes the test much weaker than at uniform margins; the others at uniform margins
    (:func:`detectable_w_uniform`, the prior when there are no data). ``margins`` says which: "file" (every table at
    the file's shares), "uniform" (none) or "mixed". The file's shares are only for this statement to the data
    manager: nothing computed from them belongs in a released file."""
    pairs = [(int(s[0]), int(s[1])) for s in sets if len(s) == 2]
    if not pairs or rows <= 0:
        return None
    if len(pairs) > MAX_DESIGN_TABLES:
        pairs = [pairs[int(i)] for i in np.linspace(0, len(pairs) - 1, MAX_DESIGN_TABLES)]
    found, at_shares = [], 0
    for pair in pairs:
        table = _tested_operator(design, pair, rows)  # built once per table, for either margins
        if table is None:
            continue
        p = None
        if shares is not None and shares[pair[0]] is not None and shares[pair[1]] is not None:
            p = _w_at_shares(design, pair, rows, table, shares[pair[0]], shares[pair[1]])
            at_shares += p is not None
        found.append(p if p is not None else _w_uniform(design, pair, rows, table))
    if not found:
        return None
    best = np.array([w for w, _orig, _top in found])
    able = best <= np.array([top for _w, _orig, top in found])  # else even the strongest association is missed
    out: dict = {
        "tables": len(found),
        "median_w": float(np.median(best)),
        "weakest_w": float(best.max()),
        "original_w": float(np.median([orig for _w, orig, _top in found])),
        "no_power": int(np.count_nonzero(~able)),
        "margins": "file" if at_shares == len(found) else ("uniform" if at_shares == 0 else "mixed"),
        "alpha": ALPHA,
        "power": POWER,
    }
    if 0 < out["no_power"] < out["tables"]:  # the sentence quotes the tables that can detect something
        out["with_power"] = {"median_w": float(np.median(best[able])), "weakest_w": float(best[able].max())}
    out["statement"] = design_power_sentence(out)
    return out


def _pair_operator(design, pair: tuple[int, int], rows: int):
    """(the structured operator of ``pair``'s table, the rows expected to report it), or None when no record
    reports the pair's real values together (RS+FD, or a sampling design that never holds both)."""
    from ..sampling import SamplingDesign

    if isinstance(design, SamplingDesign):
        if design.fills_fakes or design.coverage(pair) <= 0:
            return None  # RS+FD: no record carries two real values; else no record reports the pair
        from ..estimation.sampled import marginal_operator

        op = marginal_operator(design, pair, np.asarray(design.probs, dtype=float) * design.holding(pair))
        return op, rows * design.coverage(pair)
    from ..estimation import StructuredOperator

    return StructuredOperator.from_mechanism(design.marginal(list(pair))), float(rows)


def _tested_operator(design, pair: tuple[int, int], rows: int):
    """:func:`_pair_operator`, or None also when the design erases the pair's association (no test)."""
    found = _pair_operator(design, pair, rows)
    if found is None or abs(float(found[0].eigenvalues[3])) < MIN_REL_EIGENVALUE:
        return None
    return found


def detectable_w_uniform(design, pair: tuple[int, int], rows: int) -> tuple[float, float, float] | None:
    """(w the release's test detects, w the ``rows`` original records detect, the largest w) for the table of
    ``pair`` at uniform margins, where every pattern of association is kept alike: the release keeps lambda_11^2 of
    the records' information (R = C / lambda_11^2 on the interaction space; lambda_11 the pair's interaction
    eigenvalue), so w = sqrt(lambda_80 / n) / |lambda_11| with n the rows reporting the table
    (:func:`detectable_association` at uniform margins gives the same). None when no record reports the pair's real
    values together or the design erases their association."""
    table = _tested_operator(design, pair, rows)
    return None if table is None else _w_uniform(design, pair, rows, table)


def _w_uniform(design, pair: tuple[int, int], rows: int, table) -> tuple[float, float, float]:
    op, reporting = table
    r, c = (int(design.sizes[a]) for a in pair)
    lam = noncentrality_for_power((r - 1) * (c - 1))
    interaction = abs(float(op.eigenvalues[3]))
    return float(np.sqrt(lam / reporting) / interaction), float(np.sqrt(lam / rows)), float(np.sqrt(min(r, c) - 1))


def detectable_w_at_shares(design, pair: tuple[int, int], rows: int, row_shares, col_shares):
    """As :func:`detectable_w_uniform`, at the independence table outer(``row_shares``, ``col_shares``) (the 1-way
    shares of the pair's columns in the design's category order) instead of uniform margins: the release's Wald test
    as :func:`detectable_association` evaluates it after a release at the estimated table, for the rows expected to
    report the table (all ``rows`` records for the original). A category with no row gets a share of 0.5 / ``rows``
    (the test needs every cell positive). None when the shares do not fit the table, no record reports the pair, the
    design erases the association or the test is not computable (then the caller falls back to uniform margins)."""
    table = _tested_operator(design, pair, rows)
    return None if table is None else _w_at_shares(design, pair, rows, table, row_shares, col_shares)


def _w_at_shares(design, pair: tuple[int, int], rows: int, table, row_shares, col_shares):
    r, c = (int(design.sizes[a]) for a in pair)
    shares = []
    for s, a in ((row_shares, r), (col_shares, c)):
        v = np.asarray(s, dtype=float).reshape(-1)
        if v.size != a or not np.all(np.isfinite(v)) or np.any(v < 0) or v.sum() <= 0:
            return None
        v = v / v.sum()
        v = np.maximum(v, 0.5 / max(rows, 1))
        shares.append(v / v.sum())
    op, reporting = table
    power = detectable_association(op, np.outer(shares[0], shares[1]), reporting, rows)
    if power is None:
        return None
    return power["detectable_w"], power["detectable_w_original"], power["largest_w"]


#: How :func:`design_power_sentence` names the margins the tables were evaluated at (``design_power``'s
#: ``margins``), and what it adds about them: the file's shares are the data manager's own, never released.
MARGINS_WORDS = {
    "file": ("at your file's shares", "these figures are for your file's own margins (not released)"),
    "mixed": (
        "at your file's shares where known, else uniform margins",
        "these figures are for your file's own margins (not released) where known",
    ),
    "uniform": ("uniform margins", "without your file's shares: a rare category makes its tests weaker"),
}


def design_power_sentence(power: dict) -> str:
    """:func:`design_power` in words, for the design's predicted-error lines. The w quoted are those of the tables
    that can detect something: a table that cannot (``no_power``) would quote a w above the largest possible one.
    The sentence says at which margins (``margins``: the file's shares or uniform ones) and ends with what that
    means."""
    share = f"{100 * power['power']:g} %"
    margins, caveat = MARGINS_WORDS[power.get("margins", "uniform")]
    head = (
        f"tests of association on these tables ({power['tables']} computed, {margins}, {share} power at "
        f"{100 * power['alpha']:g} %)"
    )
    original = f"the original records: {power['original_w']:.2g} (0.1 small, 0.3 medium, 0.5 large); {caveat}"
    if power["no_power"] >= power["tables"]:
        return f"{head}: none detects any association, not even the strongest possible; {original}"
    some = power.get("with_power", {})
    median, weakest = some.get("median_w", power["median_w"]), some.get("weakest_w", power["weakest_w"])
    none = f"; {power['no_power']} of them detect no association at all" if power["no_power"] else ""
    which = "median" if not power["no_power"] else "median of those that can"
    return (
        f"{head}: detect Cohen's w >= {median:.2g} ({which}; the weakest table {weakest:.2g}){none}; {original}"
    )
