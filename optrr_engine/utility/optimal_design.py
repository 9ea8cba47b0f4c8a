"""Utility-optimal design: at a whole-record epsilon target E (and optional per-attribute caps), the
pattern-structured mechanism minimising the mean expected squared error of the needed marginals' unbiased
estimates (see :mod:`.objective`).

Variables, over the grid of class count vectors c (2^k cells when every attribute is its own class):
kappa = min_S X_S / E_u-normaliser and y_c >= 0 with P(c) = u_c (kappa + y_c), i.e. x_c = 1 + y_c / kappa in
[1, e^E] (ratio of X_S to the smallest). Then

    minimise  sum_tau w_tau s_tau
    s.t.      kappa + sum_c u_c y_c = 1                               (a distribution over patterns)
              0 <= y_c <= (e^E - 1) kappa                              (whole-record epsilon <= E)
              lambda_tau = sum_c u_c h_tau(c) y_c                      (E_u h_tau = 0 for tau non-empty)
              (s_tau, lambda_tau, 1) in K_pow(1/3), i.e. s lambda^2 >= 1, lambda >= 0
              lambda_i <= (e^cap_i - 1)/(e^cap_i + a_i - 1)            (eps_i <= cap_i; eps_i is a function of lambda_i)

solved by Clarabel (interior point, power cones); its primal-dual objective gap is the optimality gap. The
mechanism is rebuilt from x (clipped to [1, e^E]) as a pattern table (k <= 16) or a classes block, and every
epsilon is recomputed from it. Beyond one grid: whole orders over pooled classes (:mod:`.pooled`, a pooled block);
named tables on the columns they use, the others released as uniform noise (:func:`noise_outside_tables`).
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InputError, OptRRError, TooLargeError
from ..mechanism import Mechanism
from ..validation import check_target
from . import pooled as pooling
from .marginals import resolve_marginals
from .objective import ClassStructure, contrast_scores, detect_structure, order_weights, set_weights
from .pooled import PooledStructure

#: Largest (types x grid cells) eigenvalue matrix held densely (beyond: per-axis transforms).
DENSE_ENTRIES = 10_000_000
#: Whole orders whose (grid cells x eigenvalue types) exceed this are solved over pooled classes (:mod:`.pooled`).
POOLING_ENTRIES = DENSE_ENTRIES
#: Grids up to this many cells are solved as one conic problem; larger ones by simplicial decomposition.
DIRECT_CELLS = 2048
#: Decomposition steps after the conic solve (each tightens the certified bound; the optimum is near already).
POLISH_ITERATIONS = 25
#: Most grid cells of one class per attribute (named tables: 2^k cells, solved by per-axis transforms): k = 21
#: took 15 s, k = 22 is the largest taken; more is refused at once. Whole orders whose classes' grid would not
#: fit DENSE_ENTRIES (77 survey columns of 11 sizes: 4e9 cells) are solved over pooled classes (:mod:`.pooled`).
MAX_GRID_CELLS = 1 << 22
#: Certified relative gap the exact solve stops at (the pooled one: pooled.POOLED_GAP).
SOLVE_GAP = 1e-7
#: Largest k built as a full pattern table (beyond: a classes block).
PATTERN_TABLE_K = 16
#: The target is met with this relative margin so rounding can never push eps_total above it.
MARGIN = 1e-10
#: The decomposition stops at this much counted work (reference seconds, :func:`step_work`) when the certified gap
#: has not reached its tolerance: a count, not a clock, so the design is the same on any machine and under any load.
WORK_BUDGET = 20.0
#: Reference seconds per unit of work: CPU seconds per entry on the development machine (2 cores, one busy with
#: other work), fitted on 12 columns of sizes 2-13 (4,096 cells, dense rows) and 20 of sizes 2-21 (2^20 cells,
#: per-axis transforms); the counted work was within 10 % of the CPU time on both (docs/decisions.md).
MASTER_ENTRY_SECONDS = 1.25e-7  # per atom x eigenvalue type x interior-point iteration of the master
DENSE_ENTRY_SECONDS = 1.0e-9  # per cell x eigenvalue type of a dense pass
TRANSFORM_ENTRY_SECONDS = 2.0e-9  # per cell x column of a per-axis transform pass
SORT_ENTRY_SECONDS = 1.0e-7  # per cell of the oracle's sort
COMBINE_ENTRY_SECONDS = 2.0e-9  # per atom x cell of the convex combination of the atoms


def cap_eigenvalue(cap: float, a: float) -> float:
    """Largest lambda_i with eps_i <= cap (eps_i = ln((1 + (a - 1) lambda) / (1 - lambda)) for lambda >= 0)."""
    return float(np.expm1(cap) / (np.exp(cap) + a - 1.0))


class EigenOracle:
    """lambda_tau of a point (y, kappa) of the feasible set, and the contrast scores r_c = sum_tau g_tau h_tau(c):
    a dense (types x cells) matrix for small grids, per-axis transforms (O(k 2^k)) for one class per attribute."""

    def __init__(self, cs: ClassStructure | PooledStructure, types: np.ndarray, sizes):
        self.grid = cs.grid
        self.u = cs.grid_probabilities(self.grid)
        self.sizes = np.asarray(sizes, dtype=float)
        g, nt = self.grid.shape[0], types.shape[0]
        if float(g) * nt <= DENSE_ENTRIES:
            self.h: np.ndarray | None = cs.eigen_rows(types, self.grid)
        elif cs.singletons:
            self.h = None
            self.masks = types @ (np.int64(1) << np.arange(types.shape[1], dtype=np.int64))
        else:
            raise TooLargeError(f"the utility design's grid of {g} cells x {nt} eigenvalues is too large")

    def lam(self, y: np.ndarray, kappa: float) -> np.ndarray:
        if self.h is not None:
            return self.h @ (self.u * (kappa + y))
        from ..estimation.spectrum import eigenvalues_from_patterns

        # one class per attribute: X_S = (kappa + y_S) / prod a_i
        x = (kappa + y) * np.exp(-np.log(self.sizes).sum())
        return eigenvalues_from_patterns(self.sizes, x)[self.masks]

    def scores(self, g: np.ndarray) -> np.ndarray:
        if self.h is not None:
            return g @ self.h
        full = np.zeros(self.u.size)
        full[self.masks] = g
        return contrast_scores(full, self.sizes)


def best_vertex(oracle: EigenOracle, g: np.ndarray, beta: float):
    """Exact linear minimisation of g . lambda over the feasible set (no caps): a vertex has y = beta kappa 1_R,
    kappa = 1 / (1 + beta u(R)), and g . lambda = beta sum_R u_c r_c / (1 + beta u(R)) is minimised by a prefix
    of the cells sorted by r_c (fractional objective with a positive denominator)."""
    r = oracle.scores(g)
    order = np.argsort(r, kind="stable")
    cu = np.cumsum(oracle.u[order])
    cur = np.cumsum(oracle.u[order] * r[order])
    values = beta * cur / (1.0 + beta * cu)
    best = int(np.argmin(values))
    if values[best] >= 0.0:
        chosen = np.zeros(0, dtype=np.int64)
    else:
        chosen = order[: best + 1]
    kappa = 1.0 / (1.0 + beta * float(oracle.u[chosen].sum()))
    y = np.zeros(oracle.u.size)
    y[chosen] = beta * kappa
    return y, kappa


def step_work(oracle: EigenOracle, atoms: int, types: int, master_iterations: int) -> float:
    """Reference seconds of one decomposition step: the master's interior-point iterations (each over atoms x
    eigenvalue types), the oracle's two passes over the grid (dense rows: cells x types; per-axis transforms:
    cells x columns) and its sort, and the combination of the atoms (atoms x cells)."""
    cells = float(oracle.u.size)
    if oracle.h is not None:
        passes = cells * types * DENSE_ENTRY_SECONDS
    else:
        passes = cells * oracle.sizes.size * TRANSFORM_ENTRY_SECONDS
    return (
        MASTER_ENTRY_SECONDS * atoms * types * master_iterations
        + 2.0 * passes
        + (SORT_ENTRY_SECONDS + COMBINE_ENTRY_SECONDS * atoms) * cells
    )


def solve_power_cone_lp(q, a_mat, b, nonnegative: int, power_cones: int):
    """Clarabel on: minimise q.x subject to b - A x in {0} x R+^nonnegative x K_pow(1/3)^power_cones (one equality
    row first; each power cone (s, lambda, 1) encodes s >= lambda^-2), at tight tolerances."""
    import clarabel
    import scipy.sparse as sp

    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(nonnegative)]
    cones += [clarabel.PowerConeT(1.0 / 3.0)] * power_cones
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-10
    settings.tol_feas = 1e-10
    n = q.size
    return clarabel.DefaultSolver(sp.csc_matrix((n, n)), q, a_mat, b, cones, settings).solve()


def _master(lams: np.ndarray, weights: np.ndarray, cap_rows: np.ndarray, cap_values: np.ndarray, ref: np.ndarray):
    """min sum_tau w_tau lambda_tau^-2 over lambda = Lams alpha, alpha in the simplex, capped 1-way eigenvalues.
    Each lambda_tau is measured in units of ref_tau (the start's value) so that every cone is O(1)."""
    import scipy.sparse as sp

    cap_values = cap_values / ref[cap_rows]
    lams = lams / ref[:, None]
    weights = weights / ref**2
    nt, nv = lams.shape
    n = nv + nt
    wscale = float(weights.max())
    q = np.concatenate([np.zeros(nv), weights / wscale])
    nc = cap_rows.size
    dense = np.zeros((1 + nv + nc + 3 * nt, n))
    dense[0, :nv] = 1.0
    dense[1 : 1 + nv, :nv] = -np.eye(nv)
    dense[1 + nv : 1 + nv + nc, :nv] = lams[cap_rows]
    cone = 1 + nv + nc + 3 * np.arange(nt)
    dense[cone, nv + np.arange(nt)] = -1.0  # (s_tau, lambda_tau, 1) per type
    dense[cone + 1, :nv] = -lams
    a_mat = sp.csc_matrix(dense)
    b = np.concatenate([[1.0], np.zeros(nv), cap_values, np.tile([0.0, 0.0, 1.0], nt)])
    sol = solve_power_cone_lp(q, a_mat, b, nv + cap_rows.size, nt)
    status = str(sol.status)
    alpha = np.clip(np.asarray(sol.x[:nv]), 0.0, None)
    if "Solved" not in status and not (np.all(np.isfinite(alpha)) and alpha.sum() > 0):
        # the master always has a feasible point (the Kronecker start meets the target and every cap)
        raise OptRRError(f"the convex solver failed on the master problem ({status})")
    alpha /= alpha.sum()
    mu = np.clip(np.asarray(sol.z[1 + nv : 1 + nv + cap_rows.size]), 0.0, None) * wscale / ref[cap_rows]
    return alpha, mu, int(sol.iterations), "Solved" in status


def solve_direct(oracle: EigenOracle, weights, beta: float, cap_rows, cap_values, ref):
    """Small grids: one conic problem over (y, kappa, s) with the box 0 <= y <= beta kappa (Clarabel); the
    optimality gap is Clarabel's primal-dual objective gap."""
    import scipy.sparse as sp

    h = oracle.h * oracle.u[None, :] / ref[:, None]  # lambda_tau / ref_tau = h @ y
    g, nt, nc = oracle.u.size, ref.size, cap_rows.size
    w = weights / ref**2
    wscale = float(w.max())
    n = g + 1 + nt
    q = np.concatenate([np.zeros(g + 1), w / wscale])
    eye = sp.identity(g, format="csr")
    parts = [
        sp.csr_matrix(np.concatenate([oracle.u, [1.0], np.zeros(nt)])[None, :]),
        sp.hstack([-eye, sp.csr_matrix((g, 1 + nt))]),
        sp.hstack([eye, sp.csr_matrix(np.full((g, 1), -beta)), sp.csr_matrix((g, nt))]),
        sp.hstack([sp.csr_matrix(h[cap_rows]), sp.csr_matrix((nc, 1 + nt))]),
    ]
    cone = np.zeros((3 * nt, n))
    cone[3 * np.arange(nt), g + 1 + np.arange(nt)] = -1.0
    cone[3 * np.arange(nt) + 1, :g] = -h
    a_mat = sp.vstack([*parts, sp.csr_matrix(cone)], format="csc")
    b = np.concatenate([[1.0], np.zeros(2 * g), cap_values / ref[cap_rows], np.tile([0.0, 0.0, 1.0], nt)])
    sol = solve_power_cone_lp(q, a_mat, b, 2 * g + nc, nt)
    status = str(sol.status)
    x = np.asarray(sol.x)
    if not (np.all(np.isfinite(x)) and x[g] > 0):
        return None  # the decomposition then starts from the Kronecker point alone
    mu = np.clip(np.asarray(sol.z[1 + 2 * g : 1 + 2 * g + nc]), 0.0, None) * wscale / ref[cap_rows]
    return np.asarray(sol.x[:g]), float(sol.x[g]), status, int(sol.iterations), mu


def solve(
    cs: ClassStructure | PooledStructure,
    types,
    weights,
    target: float,
    sizes,
    rel_tol: float = SOLVE_GAP,
    max_iter: int = 2000,
    work_budget: float | None = None,
    ctl=None,
):
    """Simplicial decomposition: the master problem over the convex hull of a few points (Clarabel) and an exact
    linear-minimisation oracle over the whole feasible set (sorting); the Frank-Wolfe gap of the Lagrangian
    (objective + cap multipliers) bounds the distance to the optimum, so the result is certified. It stops at the
    gap ``rel_tol`` or after ``work_budget`` (default WORK_BUDGET) reference seconds of counted work
    (:func:`step_work`: the same point on every machine); ``ctl`` is checked between steps (cancel) and told the gap."""
    t0 = time.perf_counter()
    work_budget = WORK_BUDGET if work_budget is None else float(work_budget)
    oracle = EigenOracle(cs, types, sizes)
    beta = float(np.expm1(target))
    caps = cs.class_caps
    singles = np.flatnonzero(types.sum(axis=1) == 1)
    cap_rows = np.array([r for r in singles if np.isfinite(caps[int(np.flatnonzero(types[r])[0])])], dtype=np.int64)
    cap_values = np.array(
        [
            cap_eigenvalue(caps[int(np.flatnonzero(types[r])[0])], cs.class_sizes[int(np.flatnonzero(types[r])[0])])
            for r in cap_rows
        ]
    )
    points = [cs.start_point(oracle.grid, oracle.u, target)]
    lams = [oracle.lam(*points[0])]
    ref = lams[0].copy()
    how = "simplicial decomposition from the Kronecker start"
    mu_direct = None
    if oracle.h is not None and oracle.u.size <= DIRECT_CELLS:
        # one conic solve lands near the optimum; the decomposition below polishes and certifies it
        direct = solve_direct(oracle, weights, beta, cap_rows, cap_values, ref)
        if direct is not None:
            y, kappa, status, _, mu_direct = direct
            y = np.clip(y, 0.0, beta * kappa)
            mass = kappa + float(oracle.u @ y)  # the box is homogeneous: rescaling keeps the point feasible
            point = (y / mass, kappa / mass)
            points.append(point)
            lams.append(oracle.lam(*point))
            how = f"one conic solve (Clarabel: {status}), then {POLISH_ITERATIONS} decomposition steps at most"
            max_iter = POLISH_ITERATIONS
    best_bound, steps, master_iters, failures, work = -np.inf, 0, 0, 0, 0.0
    f = gap = np.inf
    stop = f"its step limit ({max_iter})"
    for _ in range(max_iter):
        if work > work_budget:
            stop = f"its work budget of {work_budget:g} reference seconds"
            break
        if ctl is not None:
            ctl.check()
        alpha, mu, mi, solved = _master(np.column_stack(lams), weights, cap_rows, cap_values, ref)
        work += step_work(oracle, len(lams), ref.size, mi)
        steps += 1
        master_iters += mi
        failures = 0 if solved else failures + 1
        keep = alpha > 1e-9 * alpha.max()  # interior-point weights are never exactly 0
        points = [p for p, kk in zip(points, keep, strict=True) if kk]
        lams = [lm for lm, kk in zip(lams, keep, strict=True) if kk]
        alpha = alpha[keep] / alpha[keep].sum()
        lam = np.column_stack(lams) @ alpha
        y = sum(a * p[0] for a, p in zip(alpha, points, strict=True))
        kappa = float(sum(a * p[1] for a, p in zip(alpha, points, strict=True)))
        f = float(weights @ lam**-2.0)
        grad = -2.0 * weights * lam**-3.0
        grad_l = grad.copy()
        grad_l[cap_rows] += mu
        vy, vk = best_vertex(oracle, grad_l, beta)
        vlam = oracle.lam(vy, vk)
        gap = float(grad_l @ (lam - vlam))
        best_bound = max(best_bound, f - gap)
        if mu_direct is not None and cap_rows.size:  # the conic solve's multipliers give a bound too
            grad_d = grad.copy()
            grad_d[cap_rows] += mu_direct
            dlam = oracle.lam(*best_vertex(oracle, grad_d, beta))
            work += step_work(oracle, 0, ref.size, 0)
            best_bound = max(best_bound, f - float(grad_d @ (lam - dlam)))
        if failures >= 3:
            stop = "the master problem failed three times in a row"
        if f - best_bound <= rel_tol * f or failures >= 3:
            break
        if ctl is not None:
            shown = max((f - best_bound) / f, rel_tol)
            done = np.log(1.0 / shown) / np.log(1.0 / rel_tol)  # the gap's digits towards the tolerance
            ctl.report(max(done, work / work_budget), f"convex solve: certified gap {shown:.1e} after {steps} steps")
        points.append((vy, vk))
        lams.append(vlam)
    return {
        "grid": oracle.grid,
        "y": y,
        "kappa": kappa,
        "objective": f,
        "dual_objective": best_bound,
        "status": f"{how}; certified gap {(f - best_bound) / f:.1e}"
        + ("" if f - best_bound <= rel_tol * f else f" (stopped before the tolerance {rel_tol:.0e}: {stop})"),
        "work": work,
        "iterations": steps,
        "master_iterations": master_iters,
        "atoms": len(points),
        "solve_seconds": time.perf_counter() - t0,
    }


def build_mechanism(cs: ClassStructure, sizes, grid, log_x_grid) -> Mechanism:
    """Pattern table (k <= 16) or classes block with every grid cell explicit."""
    from ..blocks import ClassBlock, PatternBlock
    from ..blocks.patterns import group_counts

    k = len(sizes)
    radix = cs.class_counts + 1
    strides = np.concatenate(([1], np.cumprod(radix[::-1])[:-1]))[::-1].astype(np.int64)
    if k <= PATTERN_TABLE_K:
        flat = group_counts(cs.member, cs.class_sizes.size) @ strides
        lookup = np.empty(int(np.prod(radix)))
        lookup[grid @ strides] = log_x_grid
        return Mechanism.single(PatternBlock(sizes, lookup[flat], normalize=True))
    block = ClassBlock(
        cs.class_sizes, cs.class_counts, cs.member, 0.0, 0.0, np.zeros(cs.class_sizes.size), grid, log_x_grid
    )
    return Mechanism.single(block)


def fits(cs: ClassStructure, n_types: int) -> bool:
    """The exact problem over these classes can be held: dense eigenvalue rows within DENSE_ENTRIES (POOLING_ENTRIES
    for the decision), or one class per column within MAX_GRID_CELLS (per-axis transforms)."""
    if cs.singletons:
        return cs.grid_cells <= MAX_GRID_CELLS
    return float(cs.grid_cells) * n_types <= POOLING_ENTRIES


def noise_outside_tables(sizes, target, sets, needed, caps_arr, ctl=None) -> tuple[Mechanism, dict]:
    """Named tables that leave columns out: the utility design on the columns they use, and uniform noise (eps 0)
    on the others. Exact: the channel any design induces on the used columns is feasible there (no larger
    whole-record epsilon, the same caps) with the same objective, and noise costs no budget and meets every cap."""
    from ..blocks import IndependentBlock

    local = {c: j for j, c in enumerate(needed)}
    sub_caps = [float(c) if np.isfinite(c) else None for c in caps_arr[needed]]
    sub = [tuple(local[int(i)] for i in A) for A in sets]
    used, info = utility_design(sizes[needed], target, {"sets": sub}, sub_caps, ctl)
    rest = np.array([i for i in range(sizes.size) if i not in local], dtype=np.int64)
    parts = [(np.asarray(needed, dtype=np.int64)[pos], block) for pos, block in used.parts]
    parts.append((rest, IndependentBlock.from_epsilons(sizes[rest], np.zeros(rest.size))))
    info["noise_columns"] = int(rest.size)
    return Mechanism(sizes, parts), info


def utility_design(sizes, target: float, marginals=None, caps=None, ctl=None) -> tuple[Mechanism, dict]:
    """The mechanism minimising the mean expected squared error of ``marginals`` (default all 1- and 2-way)
    at whole-record epsilon <= ``target`` and eps_i <= caps[i] (None = no cap)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    k = sizes.size
    if isinstance(target, bool) or not np.isfinite(float(target)) or float(target) <= 0:
        raise InputError(f"the whole-record target must be a positive number; got {target}")
    target = check_target(float(target), k)
    caps_arr = np.full(k, np.inf) if caps is None else np.asarray([np.inf if c is None else c for c in caps], float)
    if caps_arr.size != k or np.any(caps_arr <= 0):
        raise InputError("give one positive cap per attribute (or none)")
    spec = marginals if marginals is not None else {"orders": [1, 2]}
    symmetric = isinstance(spec, dict) and "orders" in spec
    pooled = None
    per_column = k <= MAX_GRID_CELLS.bit_length() - 1  # one class per column fits (per-axis transforms): exact
    if symmetric:
        orders = [int(o) for o in spec["orders"]]
        resolve_marginals(spec, k)  # validates the orders
        cs = detect_structure(sizes, caps_arr, True)
        types, weights = order_weights(cs, orders)
        if not fits(cs, types.shape[0]):
            if per_column:
                cs = detect_structure(sizes, caps_arr, False)
                types, weights = order_weights(cs, orders)
            else:
                pooled = pooling.choose_pools(cs, min(pooling.POOLED_CELLS, DENSE_ENTRIES // types.shape[0]))
    else:
        sets = resolve_marginals(spec, k)
        needed = sorted({int(i) for A in sets for i in A})
        if len(needed) < k:
            return noise_outside_tables(sizes, target, sets, needed, caps_arr, ctl)
        if not per_column:
            raise TooLargeError(
                f"the utility design handles named tables over at most {MAX_GRID_CELLS.bit_length() - 1} columns; "
                f"these span {k} (fewer or smaller tables, or whole orders instead of named tables)"
            )
        cs = detect_structure(sizes, caps_arr, False)
        types, weights = set_weights(cs, sets)
    structure = cs if pooled is None else pooled
    if ctl is not None:
        ctl.report(0.1, f"solving the convex problem over {structure.grid_cells} cells")
    goal = target * (1.0 - MARGIN)
    res = solve(
        structure,
        types,
        weights,
        goal,
        sizes,
        rel_tol=SOLVE_GAP if pooled is None else pooling.POOLED_GAP,
        ctl=None if ctl is None else ctl.sub(0.1, 0.95),
    )
    if ctl is not None:
        ctl.check()
    log_x = np.log1p(np.clip(res["y"] / res["kappa"], 0.0, np.expm1(goal)))
    if pooled is None:
        mech = build_mechanism(cs, sizes, res["grid"], log_x)
    else:
        from ..blocks import PooledBlock

        mech = Mechanism.single(PooledBlock(sizes, pooled.pool_of_attribute, log_x))
    achieved = mech.overall_epsilon()
    if achieved > target * (1.0 + 1e-12):
        raise OptRRError(f"internal error: the utility design reached eps_total {achieved} above {target}")
    gap = res["objective"] - res["dual_objective"]
    info = {
        "design": "utility",
        "target_total": target,
        "classes": int(cs.class_sizes.size),
        "grid_cells": int(res["grid"].shape[0]),
        "eigenvalue_terms": int(types.shape[0]),
        "solver": "simplicial decomposition: Clarabel (power cones) on the master, exact sorting oracle",
        "solver_status": res["status"],
        "solver_iterations": res["iterations"],
        "master_iterations": res["master_iterations"],
        "atoms": res["atoms"],
        "solver_seconds": res["solve_seconds"],
        "solver_work": res["work"],  # reference seconds counted (the budget is WORK_BUDGET)
        # objective = n * mean expected squared error - const (prior independent)
        "objective": res["objective"],
        "dual_bound": res["dual_objective"],
        # f - (a certified lower bound on the optimum): >= 0 up to rounding
        "optimality_gap": gap,
        "relative_gap": gap / max(abs(res["objective"]), 1e-300),
    }
    if pooled is not None:
        # the gap is certified within the pooled family only: the full family's grid is what is too large
        certified = info["relative_gap"] <= pooling.POOLED_GAP
        info["pools"] = int(pooled.pool_counts.size)
        info["pool_columns"] = [int(c) for c in pooled.pool_counts]
        info["full_grid_cells"] = float(cs.grid_cells)
        info["solver_status"] = (
            f"{k} columns in {cs.class_sizes.size} groups need {float(cs.grid_cells):.2g} grid cells, so X_S depends "
            f"on the count of differing columns in each of {pooled.pool_counts.size} pools of neighbouring sizes "
            f"({', '.join(str(int(c)) for c in pooled.pool_counts)} columns): "
            + ("optimal within that family" if certified else "the best point found in that family")
            + f", no certificate beyond it; {res['status']}"
        )
    if caps is not None:
        eps = mech.attribute_epsilons()
        over = np.flatnonzero(eps > caps_arr * (1.0 + 1e-6))
        if over.size:
            raise OptRRError(f"the utility design exceeded the cap of attribute(s) {(over + 1).tolist()}")
    return mech, info
