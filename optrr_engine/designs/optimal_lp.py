"""Exact optimum over all mechanisms whose induced channel on attribute i is GRR with eps_i.

Box formulation of docs/math.md §3 (1 <= x_S <= T, k homogeneous equalities, minimise T), rewritten with
x_S = 1 + z_S / s and v_S = z_S t_S / P in [0, t_S / P]:

    maximise s   subject to   sum_S h_{S,i} v_S = s (e^{eps_i} - 1) / a_i   (i = 1..k),

with h_{S,i} = 1 if i is not in S and -e^{eps_i}/(a_i-1) if it is; then T = 1 + 1/s. Only k rows and
2^k bounded columns. After HiGHS, the basic solution is polished: the variables strictly inside their
bounds (at most k) are re-solved from the k equalities in float64, so attribute epsilons match the
request to ~1e-12. For any dual vector lam with lam.w > 0, s <= sum_S u_S (lam.h_S)_+ / lam.w (weak
duality), which gives a certified lower bound on eps_total.

Symmetry (docs/math.md §3): attributes with identical (a_i, eps_i) are interchangeable, so averaging any feasible
solution over the permutations within each class gives a feasible solution with the same s; an optimum that
depends only on the count vector c of differing attributes per class exists. When the classes' grid (prod_j
(n_j + 1) cells) is smaller than 2^k, the LP is solved over that grid (:class:`ClassLPProblem`: one row per class,
one column per cell, bound U_c = sum of u_S over the cell) and the cells are spread back over the 2^k patterns.
The optimum, every eps_i and the certificate are those of the full LP (the class dual lifts to a full dual with
the same bound); the mechanism is the symmetric optimum, where the full LP returns one of its optimal vertices.
"""

from __future__ import annotations

import time

import numpy as np

from ..blocks import IndependentBlock, PatternBlock
from ..blocks.patterns import bit_matrix, log_multiplicities
from ..errors import InfeasibleError, OptRRError, TooLargeError
from ..mechanism import Mechanism
from ..tolerance import eps_tolerance

#: Largest k for the dense-column LP (2^k columns).
MAX_LP_K = 20
#: Largest predicted cost (optrr_engine.designs.work.lp_seconds, seconds of this reference machine) of one exact
#: LP; larger requests are refused at once instead of computing for minutes. k = 20 binary: 25 s (allowed); k = 19
#: or 20 with a column of 50+ categories: 36 s / 75 s predicted (refused; k = 20 with four columns of 150-309
#: categories was not done after 113 s CPU, 2026-11-26); k = 18 with such columns: 17 s predicted, 15.4 s measured.
MAX_LP_SECONDS = 30.0


def lp_shape(sizes, epsilons) -> tuple[int, int]:
    """(rows, columns) of the LP :func:`lp_problem` solves: over the classes of identical (a_i, eps_i) when their
    grid is smaller than the 2^k patterns, else k x 2^k. ``epsilons`` may be any values equal exactly where the
    attributes' epsilons are (a budget search's weights: eps_i = c w_i)."""
    from .classes import detect_classes, grid_size

    class_sizes, _eps, member = detect_classes(sizes, epsilons)
    cells = grid_size(np.bincount(member, minlength=class_sizes.size))
    k = len(member)
    return (int(class_sizes.size), int(cells)) if cells < 2.0**k else (k, 1 << k)


def check_lp_size(sizes, epsilons=None) -> float:
    """Predicted seconds of the exact LP for these sizes (and epsilons: the LP over their classes when smaller,
    :func:`lp_shape`; without them, the LP over the 2^k patterns); TooLargeError when beyond MAX_LP_K (the design is
    a table of 2^k patterns whatever the LP) or MAX_LP_SECONDS."""
    from .work import LARGE_CATEGORIES, lp_seconds

    sizes = np.asarray(sizes, dtype=np.int64)
    k = int(sizes.size)
    if k > MAX_LP_K:
        raise TooLargeError(
            f"the exact LP handles at most k = {MAX_LP_K} attributes (2^k patterns); got k = {k}: "
            "use --method heuristic, family or auto"
        )
    cells = None if epsilons is None else float(np.prod(lp_shape(sizes, epsilons), dtype=float))
    seconds = lp_seconds(k, int(sizes.max()) if k else 2, cells)
    if seconds > MAX_LP_SECONDS:
        large = [i + 1 for i in np.flatnonzero(sizes >= LARGE_CATEGORIES).tolist()]
        what = f"; columns {', '.join(map(str, large))} have {LARGE_CATEGORIES}+ categories" if large else ""
        raise TooLargeError(
            f"too large for the exact design: its LP over {k} columns is predicted to take {seconds:.0f} s on the "
            f"reference machine (limit {MAX_LP_SECONDS:.0f} s{what}); use auto, or perturb fewer columns or bin "
            "the columns with many categories"
        )
    return seconds


class LPProblem:
    """The scaled LP data for given sizes and epsilons."""

    shape = "k equality rows, 2^k bounded columns"

    def __init__(self, sizes, epsilons):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.eps = np.asarray(epsilons, dtype=float)
        self.k = self.sizes.size
        a = self.sizes.astype(float)
        self.r = np.exp(self.eps) / (a - 1.0)
        self.log_t = log_multiplicities(self.sizes)
        self.log_p = float(np.log(a).sum())
        self.upper = np.exp(self.log_t - self.log_p)
        # Row i divided by (1 + r_i) keeps every coefficient within [-1, 1].
        self.scale = 1.0 / (1.0 + self.r)
        self.w = np.expm1(self.eps) / a * self.scale
        # h[S, i]: coefficient of column S in row i (built once: 2^k x k, 160 MB at k = 20)
        self.h = np.where(bit_matrix(self.k), -self.r, 1.0) * self.scale

    def free_columns(self, v: np.ndarray, rel_tol: float) -> np.ndarray:
        """Boolean mask of the columns strictly inside their bounds (the basic ones of a vertex)."""
        return (v > rel_tol * self.upper) & (v < (1 - rel_tol) * self.upper)

    def column_values(self, lam: np.ndarray) -> np.ndarray:
        """lam . h_S for every pattern S (scaled rows), in O(2^k k)."""
        from ..blocks.patterns import subset_sums

        coef = lam * self.scale
        return coef.sum() - subset_sums(coef * (1.0 + self.r))

    def residual(self, v: np.ndarray, s: float) -> float:
        res = v @ self.h - s * self.w
        return float(np.max(np.abs(res)) / max(1e-300, float(np.max(np.abs(self.w))) * s))

    def dual_lower_bound(self, lam: np.ndarray) -> float:
        """Certified lower bound on eps_total from any dual vector (both signs tried)."""
        best = 0.0
        for cand in (lam, -lam):
            lw = float(cand @ self.w)
            if lw <= 0:
                continue
            f = float(self.upper @ np.maximum(self.column_values(cand), 0.0))
            if f > 0:
                best = max(best, float(np.log1p(lw / f)))
        return best

    def polish(self, v: np.ndarray, s: float, rel_tol: float = 1e-7) -> tuple[np.ndarray, float] | None:
        """Re-solve the free variables of a basic solution exactly from the k equalities."""
        u = self.upper
        free = self.free_columns(v, rel_tol)
        fixed = np.where(v >= 0.5 * u, u, 0.0)
        fixed[free] = 0.0
        rhs = -(fixed @ self.h)
        idx = np.flatnonzero(free)
        sys = np.hstack([self.h[idx].T, -self.w[:, None]])
        sol, *_ = np.linalg.lstsq(sys, rhs, rcond=None)
        v_new = fixed.copy()
        v_new[idx] = sol[:-1]
        s_new = float(sol[-1])
        slack = 1e-12 * u
        if not np.all(np.isfinite(sol)) or s_new <= 0 or np.any(v_new < -slack) or np.any(v_new > u + slack):
            return None
        return np.clip(v_new, 0.0, u), s_new

    def mechanism(self, v: np.ndarray, s: float) -> Mechanism:
        """log X_S = log1p(z_S / s) - log P - log1p(V / s), z_S = v_S / u_S, V = sum v."""
        z = np.clip(v / self.upper, 0.0, 1.0)
        log_x = np.log1p(z / s) - self.log_p - np.log1p(v.sum() / s)
        return Mechanism.single(PatternBlock(self.sizes, log_x[self.pattern_column()], normalize=True))

    def pattern_column(self) -> np.ndarray | slice:
        """The LP column of every pattern S (here the pattern itself)."""
        return slice(None)


class ClassLPProblem(LPProblem):
    """The LP of :class:`LPProblem` over solutions symmetric within each class of identical (a_i, eps_i) (module
    doc): v_c is the sum of v_S over the patterns S with count vector c, in [0, U_c]; row j is the average of the
    rows of class j, h_{c,j} = sigma_j - c_j / n_j; the same optimum s."""

    shape = "one equality row per class of identical (a, eps), one bounded column per count vector"

    def __init__(self, sizes, epsilons, member: np.ndarray, class_sizes: np.ndarray, class_eps: np.ndarray):
        from ..blocks.classes import log_binomial_pmf
        from ..blocks.pooled import grid_of

        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.eps = np.asarray(epsilons, dtype=float)
        self.k = self.sizes.size
        self.member = np.asarray(member, dtype=np.int64)
        self.n = np.bincount(self.member, minlength=class_sizes.size)
        a = np.asarray(class_sizes, dtype=float)
        self.r = np.exp(class_eps) / (a - 1.0)
        self.log_p = float(np.log(self.sizes.astype(float)).sum())
        self.scale = 1.0 / (1.0 + self.r)
        self.w = np.expm1(class_eps) / a * self.scale
        self.cells = grid_of(self.n)  # every count vector, class 0 varying fastest
        log_u = np.zeros(self.cells.shape[0])
        for j, (n_j, a_j) in enumerate(zip(self.n, a, strict=True)):
            log_u += log_binomial_pmf(int(n_j), (a_j - 1.0) / a_j)[self.cells[:, j]]
        self.upper = np.exp(log_u)
        self.h = self.scale - self.cells / self.n

    def column_values(self, lam: np.ndarray) -> np.ndarray:
        """lam . h_c for every cell c (equal to lam' . h_S of the full LP for every S in c, lam'_i = lam_j / n_j)."""
        return self.h @ lam

    def pattern_column(self) -> np.ndarray:
        """The cell of every pattern S: sum over i in S of the stride of i's class (cells as ``grid_of`` orders
        them), by doubling; the sums are integers below 2^20, exact in float64."""
        from ..blocks.patterns import subset_sums

        strides = np.concatenate(([1.0], np.cumprod(self.n + 1.0)[:-1]))
        return subset_sums(strides[self.member]).astype(np.int64)


def lp_problem(sizes, epsilons) -> LPProblem:
    """The exact LP for these sizes and epsilons: over the grid of classes of identical (a_i, eps_i) when it has
    fewer cells than the 2^k patterns (same optimum, module doc), else over the patterns."""
    from .classes import detect_classes

    if lp_shape(sizes, epsilons)[1] < 2 ** len(sizes):
        class_sizes, class_eps, member = detect_classes(sizes, epsilons)
        return ClassLPProblem(sizes, epsilons, member, class_sizes, class_eps)
    return LPProblem(sizes, epsilons)


def solve_lp(problem: LPProblem, s_scale: float):
    """Solve with v and s divided by ``s_scale`` (an estimate of the optimal s) so that s is O(1):
    unscaled, s ~ 1/T is far below HiGHS's feasibility tolerances and the answer is wrong."""
    from .highs_lp import maximise

    n = problem.upper.size
    c = np.zeros(n + 1)
    c[-1] = 1.0
    a_dense = np.hstack([problem.h.T, -problem.w[:, None]])
    upper = np.append(problem.upper / s_scale, np.inf)
    sol = maximise(c, a_dense, np.zeros(problem.w.size), np.zeros(n + 1), upper)
    if sol.x is not None:
        sol.x = sol.x * s_scale
    return sol


def initial_scale(sizes, epsilons) -> float:
    """1/(T-1) for an upper bound on the optimal T: the better of the family optimum (when feasible)
    and the product of optimal two-attribute blocks; never below 1e-18 (bounds stay below HiGHS's infinity)."""
    from .family_lp import family
    from .heuristic import base_case

    eps = np.asarray(epsilons, dtype=float)
    pairs = float(eps[-1]) if len(eps) % 2 else 0.0
    for i in range(0, len(eps) - 1, 2):
        pairs += float(np.log(base_case(int(sizes[i]), int(sizes[i + 1]), eps[i], eps[i + 1])[0]))
    eps_total = min(float(eps.sum()), pairs)
    try:
        eps_total = min(eps_total, family(sizes, epsilons)[0].overall_epsilon())
    except InfeasibleError:
        pass
    return float(max(1.0 / np.expm1(eps_total), 1e-18))


def basis_dual(problem: LPProblem, v: np.ndarray, rel_tol: float = 1e-9) -> np.ndarray:
    """Dual vector of the basis of a polished solution: lam.h_S = 0 on free columns, lam.w = 1."""
    rows = np.vstack([problem.h[problem.free_columns(v, rel_tol)], problem.w[None, :]])
    rhs = np.zeros(rows.shape[0])
    rhs[-1] = 1.0
    lam, *_ = np.linalg.lstsq(rows, rhs, rcond=None)
    return lam


def optimal(sizes, epsilons, ctl=None) -> tuple[Mechanism, dict]:
    sizes = np.asarray(sizes, dtype=np.int64)
    k = sizes.size
    if k == 1:
        return Mechanism.single(IndependentBlock.from_epsilons(sizes, epsilons)), {"solver_status": "closed form"}
    check_lp_size(sizes, epsilons)
    if ctl is not None:
        ctl.check()
        ctl.report(0.0, "building the LP")
    problem = lp_problem(sizes, epsilons)
    scale = initial_scale(sizes, epsilons)
    t0 = time.perf_counter()
    best = None
    attempts = 0
    for attempts in range(1, 5):  # noqa: B007 - reported below
        res = solve_lp(problem, scale)
        if ctl is not None:
            ctl.check()
        if not res.optimal or res.x is None:
            raise OptRRError(f"the LP solver failed: {res.status}")
        v, s = res.x[:-1], float(res.x[-1])
        if s <= 0:
            raise OptRRError(
                "the exact LP cannot resolve this request numerically (the optimal whole-record epsilon is beyond "
                "about 35, i.e. probability ratios above e^35); use --method auto, family, classes or smaller epsilons"
            )
        raw_residual = problem.residual(v, s)
        polished = problem.polish(v, s)
        if polished is not None and problem.residual(*polished) < max(raw_residual, 1e-9):
            v, s = polished
        else:
            polished = None
        lower = problem.dual_lower_bound(basis_dual(problem, v))
        if res.row_dual is not None:
            lower = max(lower, problem.dual_lower_bound(res.row_dual))
        eps_total = float(np.log1p(1.0 / s))
        best = (v, s, raw_residual, polished, lower, res)
        if eps_total - lower <= eps_tolerance(eps_total):
            break  # certified optimal
        scale = s  # not certified: solve again with the scale of the value found
    solve_seconds = time.perf_counter() - t0
    if ctl is not None:
        ctl.report(0.95, "building the mechanism")
    assert best is not None  # the loop ran at least once
    v, s, raw_residual, polished, lower, res = best
    mech = problem.mechanism(v, s)
    info = {
        "solver": f"HiGHS dual simplex (highspy), {problem.shape}",
        "solver_status": res.status,
        "solver_iterations": res.iterations,
        "solver_seconds": solve_seconds,
        "solver_runs": attempts,
        "lp_rows": int(problem.w.size),
        "lp_columns": int(problem.upper.size) + 1,
        "residual_before_polish": raw_residual,
        "residual": problem.residual(v, s),
        "polished": polished is not None,
        "lower_bound": lower,
        "certified_gap": float(mech.overall_epsilon() - lower),
    }
    return mech, info
