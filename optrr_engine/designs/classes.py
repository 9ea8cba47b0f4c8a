"""Exact optimum when attributes fall into a few classes of identical (a, eps).

By symmetry (docs/math.md §3) an optimum exists with x depending only on the count vector c of differing
attributes per class. With u_c the product of Binomial(n_j, (a_j-1)/a_j) pmfs, mu_j = n_j / (1 + r_j),
r_j = e^{eps_j}/(a_j - 1), nu_j = n_j (a_j-1)/a_j and delta = nu - mu > 0, the problem is

    minimise T  s.t.  E_u[x (c_j - mu_j)] = 0 (j = 1..m),  1 <= x <= T,

i.e. with x = 1 + z/s, z in [0, 1]:  maximise s  s.t.  E_u[z (mu - c)] = s delta.  Its dual is
s* = min over lam with lam.delta = 1 of G(lam) = E_u[(lam.(mu - c))_+], so T* = 1 + 1/s* and an
optimal x is T on the half-space lam*.(mu - c) > 0 and 1 beyond, fractional only on its boundary.

- m = 1: closed form (Hamming ball): T = E[(c - mu)_+] / E[(mu - c)_+].
- m = 2, 3: G is minimised over the (m-1)-dimensional hyperplane (Nelder-Mead), each evaluation
  summing the innermost class by prefix sums (O(prod of the other grids)); then a
  small HiGHS LP over the boundary band of cells fixes the fractional cells exactly, and the band is
  widened until the primal value equals the dual bound G(lam) (the certificate).
All sums are in log space, so classes of thousands of attributes stay finite.
"""

from __future__ import annotations

import numpy as np

from ..blocks.classes import MAX_GRID_CELLS, ClassBlock, log_binomial_pmf
from ..errors import InputError, OptRRError, TooLargeError
from ..logmath import logsumexp
from ..mechanism import Mechanism
from ..tolerance import eps_tolerance

MAX_CLASSES = 3


def detect_classes(sizes, epsilons):
    """Group attributes with identical (a_i, eps_i). Returns (class_sizes, class_eps, member_class)."""
    keys = {}
    member = np.empty(len(sizes), dtype=np.int64)
    for i, (a, e) in enumerate(zip(sizes, epsilons, strict=True)):
        member[i] = keys.setdefault((int(a), float(e)), len(keys))
    class_sizes = np.array([k[0] for k in keys], dtype=np.int64)
    class_eps = np.array([k[1] for k in keys], dtype=float)
    return class_sizes, class_eps, member


def grid_size(counts) -> float:
    return float(np.prod(np.asarray(counts, dtype=float) + 1.0))


class ClassProblem:
    def __init__(self, class_sizes, class_eps, class_counts):
        self.a = np.asarray(class_sizes, dtype=float)
        self.eps = np.asarray(class_eps, dtype=float)
        self.n = np.asarray(class_counts, dtype=np.int64)
        self.m = self.a.size
        self.p = (self.a - 1.0) / self.a
        self.r = np.exp(self.eps) / (self.a - 1.0)
        self.mu = self.n / (1.0 + self.r)
        self.nu = self.n * self.p
        self.delta = self.nu - self.mu
        self.log_pmf = [log_binomial_pmf(int(n), float(p)) for n, p in zip(self.n, self.p, strict=True)]
        self.inner = int(np.argmax(self.n))
        self.outer = [j for j in range(self.m) if j != self.inner]
        self._prepare_inner()
        self._prepare_outer()

    def _prepare_inner(self):
        lp = self.log_pmf[self.inner]
        c = np.arange(lp.size, dtype=float)
        with np.errstate(divide="ignore"):
            lpc = lp + np.log(c)
        self.f0 = np.logaddexp.accumulate(lp)
        self.f1 = np.logaddexp.accumulate(lpc)
        self.s0 = np.logaddexp.accumulate(lp[::-1])[::-1]
        self.s1 = np.logaddexp.accumulate(lpc[::-1])[::-1]

    def _prepare_outer(self):
        if not self.outer:
            self.outer_counts = np.zeros((1, 0), dtype=np.int64)
            self.outer_log_u = np.zeros(1)
            return
        grids = np.meshgrid(*[np.arange(self.n[j] + 1) for j in self.outer], indexing="ij")
        self.outer_counts = np.stack([g.ravel() for g in grids], axis=1)
        self.outer_log_u = np.zeros(self.outer_counts.shape[0])
        for col, j in enumerate(self.outer):
            self.outer_log_u += self.log_pmf[j][self.outer_counts[:, col]]

    def log_g(self, lam: np.ndarray) -> float:
        """log E_u[(lam.(mu - c))_+] (exact, by prefix sums over the innermost class)."""
        lam = np.asarray(lam, dtype=float)
        li = lam[self.inner]
        base = float(lam @ self.mu) - self.outer_counts @ lam[self.outer]
        n_in = int(self.n[self.inner])
        with np.errstate(divide="ignore", invalid="ignore"):
            if li > 0:
                kstar = np.floor(base / li)
                valid = kstar >= 0
                k = np.clip(kstar, 0, n_in).astype(np.int64)
                mean = np.exp(self.f1[k] - self.f0[k])
                val = base - li * mean
                contrib = np.where(valid & (val > 0), self.f0[k] + np.log(np.maximum(val, 1e-300)), -np.inf)
            elif li < 0:
                kmin = np.floor(base / li) + 1
                valid = kmin <= n_in
                k = np.clip(kmin, 0, n_in).astype(np.int64)
                mean = np.exp(self.s1[k] - self.s0[k])
                val = base - li * mean
                contrib = np.where(valid & (val > 0), self.s0[k] + np.log(np.maximum(val, 1e-300)), -np.inf)
            else:
                contrib = np.where(base > 0, np.log(np.maximum(base, 1e-300)), -np.inf)
        return float(logsumexp(self.outer_log_u + contrib))

    def lower_bound(self, lam: np.ndarray) -> float:
        """Certified lower bound on eps_total from any lam with lam.delta > 0: ln(1 + lam.delta / G(lam))."""
        ld = float(lam @ self.delta)
        if ld <= 0:
            return 0.0
        lg = self.log_g(lam)
        return float(np.logaddexp(0.0, np.log(ld) - lg))

    def hyperplane(self):
        d = self.delta
        base = d / float(d @ d)
        q, _ = np.linalg.qr(np.column_stack([d, np.eye(self.m)]))
        return base, q[:, 1 : self.m]

    def minimise(self, max_evaluations: int = 4000):
        """lam* minimising G on lam.delta = 1 (Nelder-Mead over the hyperplane, at most ``max_evaluations`` of G;
        the band LP that follows makes the result exact and certifies it, so this only needs to land near the
        optimum)."""
        base, basis = self.hyperplane()
        if self.m == 1:
            return base
        from scipy.optimize import minimize

        span = 20.0 * float(np.max(np.abs(base)))
        dim = self.m - 1
        simplex = np.vstack([np.zeros(dim), np.eye(dim) * 0.1 * span])
        res = minimize(
            lambda th: self.log_g(base + basis @ th),
            np.zeros(dim),
            method="Nelder-Mead",
            options={"xatol": 1e-10 * span, "fatol": 1e-13, "initial_simplex": simplex, "maxfev": max_evaluations},
        )
        return base + basis @ res.x


def _one_class(prob: ClassProblem):
    """Closed form for m = 1: x = T on c < mu, 1 on c >= mu (c = mu contributes nothing)."""
    lp = prob.log_pmf[0]
    c = np.arange(lp.size, dtype=float)
    mu = float(prob.mu[0])
    with np.errstate(divide="ignore"):
        num = logsumexp(np.where(c > mu, lp + np.log(np.abs(c - mu)), -np.inf))
        den = logsumexp(np.where(c < mu, lp + np.log(np.abs(mu - c)), -np.inf))
    log_T = float(num - den)  # T E[(mu - c)_+] = E[(c - mu)_+]
    return log_T, mu, np.ones(1)


def _grid_chunks(prob: ClassProblem, chunk: int = 2_000_000):
    radix = prob.n + 1
    total = int(np.prod(radix))
    strides = np.concatenate(([1], np.cumprod(radix[::-1])[:-1]))[::-1].astype(np.int64)
    for start in range(0, total, chunk):
        flat = np.arange(start, min(start + chunk, total), dtype=np.int64)
        counts = (flat[:, None] // strides[None, :]) % radix[None, :]
        log_u = np.zeros(flat.size)
        for j in range(prob.m):
            log_u += prob.log_pmf[j][counts[:, j]]
        yield counts, log_u


def _region_and_band(prob: ClassProblem, lam: np.ndarray, width: float):
    """Per row j: log of the positive and negative parts of sum_{region} u_c (mu_j - c_j)/n_j, and the
    band cells |lam.(mu - c)| <= width with their log u. The innermost class is summed by prefix sums."""
    li = float(lam[prob.inner])
    if li == 0.0:
        return _region_and_band_grid(prob, lam, width)
    m, n_in = prob.m, int(prob.n[prob.inner])
    base = float(lam @ prob.mu) - prob.outer_counts @ lam[prob.outer]
    lu_out = prob.outer_log_u
    if li > 0:  # region: c < (base - width)/li ; band: (base - width)/li <= c <= (base + width)/li
        hi_region = np.ceil((base - width) / li) - 1
        valid = hi_region >= 0
        k = np.clip(hi_region, 0, n_in).astype(np.int64)
        log_f0, log_f1 = prob.f0[k], prob.f1[k]
        band_lo, band_hi = np.ceil((base - width) / li), np.floor((base + width) / li)
    else:
        lo_region = np.floor((base - width) / li) + 1
        valid = lo_region <= n_in
        k = np.clip(lo_region, 0, n_in).astype(np.int64)
        log_f0, log_f1 = prob.s0[k], prob.s1[k]
        band_lo, band_hi = np.ceil((base + width) / li), np.floor((base - width) / li)
    log_f0 = np.where(valid, log_f0, -np.inf)
    pos, neg = np.full(m, -np.inf), np.full(m, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for col, j in enumerate(prob.outer):
            fac = (prob.mu[j] - prob.outer_counts[:, col]) / prob.n[j]
            w = lu_out + log_f0 + np.log(np.abs(fac))
            pos[j] = logsumexp(np.where(fac > 0, w, -np.inf))
            neg[j] = logsumexp(np.where(fac < 0, w, -np.inf))
        mean = np.exp(log_f1 - log_f0)
        fac = (prob.mu[prob.inner] - mean) / n_in
        w = lu_out + log_f0 + np.log(np.abs(fac))
        pos[prob.inner] = logsumexp(np.where(valid & (fac > 0), w, -np.inf))
        neg[prob.inner] = logsumexp(np.where(valid & (fac < 0), w, -np.inf))
    band_lo = np.clip(band_lo, 0, n_in + 1).astype(np.int64)
    band_hi = np.clip(band_hi, -1, n_in).astype(np.int64)
    lengths = np.maximum(band_hi - band_lo + 1, 0)
    rows = np.repeat(np.arange(base.size), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    inner_c = band_lo[rows] + offsets
    cells = np.zeros((rows.size, m), dtype=np.int64)
    for col, j in enumerate(prob.outer):
        cells[:, j] = prob.outer_counts[rows, col]
    cells[:, prob.inner] = inner_c
    log_ub = lu_out[rows] + prob.log_pmf[prob.inner][inner_c]
    return pos, neg, cells, log_ub


def _region_and_band_grid(prob: ClassProblem, lam: np.ndarray, width: float):
    """The same by a pass over the whole grid (used when the innermost multiplier is 0)."""
    m = prob.m
    pos_parts, neg_parts, band_counts, band_log_u = [], [], [], []
    for counts, log_u in _grid_chunks(prob):
        coef = (prob.mu[None, :] - counts) / prob.n[None, :]
        score = (prob.mu[None, :] - counts) @ lam
        region = score > width
        band = np.abs(score) <= width
        with np.errstate(divide="ignore"):
            log_abs = np.log(np.abs(coef))
        pos_parts.append(
            [logsumexp(np.where(region & (coef[:, j] > 0), log_u + log_abs[:, j], -np.inf)) for j in range(m)]
        )
        neg_parts.append(
            [logsumexp(np.where(region & (coef[:, j] < 0), log_u + log_abs[:, j], -np.inf)) for j in range(m)]
        )
        band_counts.append(counts[band])
        band_log_u.append(log_u[band])
    pos = logsumexp(np.array(pos_parts), axis=0)
    neg = logsumexp(np.array(neg_parts), axis=0)
    return pos, neg, np.concatenate(band_counts), np.concatenate(band_log_u)


def _band_lp(prob: ClassProblem, lam: np.ndarray, width: float):
    """Fix cells with lam.(mu - c) > width at T, < -width at 1, solve the band exactly by LP + polish."""
    from .highs_lp import maximise

    pos, neg, cells, log_ub = _region_and_band(prob, lam, width)
    coef_b = (prob.mu[None, :] - cells) / prob.n[None, :]
    log_k = max(float(np.max(pos)), float(np.max(neg)), float(np.max(log_ub)) if log_ub.size else -np.inf)
    fixed = np.exp(pos - log_k) - np.exp(neg - log_k)  # region sum / K, per row
    upper = np.exp(log_ub - log_k)
    a_dense = np.hstack([coef_b.T, -(prob.delta / prob.n)[:, None]])
    c = np.zeros(cells.shape[0] + 1)
    c[-1] = 1.0
    sol = maximise(c, a_dense, -fixed, np.zeros(cells.shape[0] + 1), np.append(upper, np.inf))
    if not sol.optimal or sol.x is None:
        return None
    y, s_scaled = sol.x[:-1], float(sol.x[-1])
    # polish: re-solve the fractional cells and s exactly from the m equalities
    frac = (y > 1e-9 * upper) & (y < (1 - 1e-9) * upper)
    at_up = ~frac & (y >= 0.5 * upper)
    rhs = -fixed - coef_b[at_up].T @ upper[at_up]
    sys_m = np.hstack([coef_b[frac].T, -(prob.delta / prob.n)[:, None]])
    solp, *_ = np.linalg.lstsq(sys_m, rhs, rcond=None)
    yp = np.where(at_up, upper, 0.0)
    yp[frac] = solp[:-1]
    if solp[-1] > 0 and np.all(yp >= -1e-12 * upper) and np.all(yp <= upper * (1 + 1e-12)):
        y, s_scaled = np.clip(yp, 0, upper), float(solp[-1])
    if not s_scaled > 0:
        return None  # degenerate band (e.g. extreme epsilons): widen and retry
    log_s = np.log(s_scaled) + log_k
    z = np.clip(y / upper, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        band_log_x = np.log1p(z * np.exp(-log_s))
    log_T = float(np.logaddexp(0.0, -log_s))
    return {
        "log_T": log_T,
        "band_cells": cells,
        "band_log_x": band_log_x,
        "row_dual": sol.row_dual,
        "band_size": int(cells.shape[0]),
    }


def classes_design(sizes, epsilons, ctl=None) -> tuple[Mechanism, dict]:
    sizes = np.asarray(sizes, dtype=np.int64)
    class_sizes, class_eps, member = detect_classes(sizes, epsilons)
    m = class_sizes.size
    counts = np.bincount(member, minlength=m)
    if m > MAX_CLASSES:
        raise InputError(
            f"the classes method needs at most {MAX_CLASSES} groups of identical (size, epsilon); found {m}"
        )
    if grid_size(counts) > MAX_GRID_CELLS:
        raise TooLargeError(f"the classes grid would have {grid_size(counts):.3g} cells; at most {MAX_GRID_CELLS}")
    prob = ClassProblem(class_sizes, class_eps, counts)
    if ctl is not None:
        ctl.check()
    if m == 1:
        log_T, theta, beta = _one_class(prob)
        block = ClassBlock(class_sizes, counts, member, log_T, theta, beta)
        lam = np.array([1.0 / prob.delta[0]])
        info = {"classes": 1, "lower_bound": prob.lower_bound(lam), "band_cells": 0}
        return Mechanism.single(block), info
    lam = prob.minimise()
    lower = prob.lower_bound(lam)
    if ctl is not None:
        ctl.check()
    scale = float(np.max(np.abs(lam * prob.n)))
    width = 1e-6 * scale
    result = None
    for _ in range(12):
        result = _band_lp(prob, lam, width)
        if result is not None:
            gap = result["log_T"] - lower
            if result["row_dual"] is not None:
                for cand in (result["row_dual"] / prob.n, -result["row_dual"] / prob.n):
                    lower = max(lower, prob.lower_bound(cand))
                gap = result["log_T"] - lower
            if gap <= eps_tolerance(result["log_T"]):
                break
        width *= 4.0
        if ctl is not None:
            ctl.check()
    if result is None:
        raise OptRRError(
            "the classes LP cannot resolve this request numerically (extreme epsilons); "
            "use --method auto, family or smaller epsilons"
        )
    block = ClassBlock(
        class_sizes,
        counts,
        member,
        result["log_T"],
        float(lam @ prob.mu) - width,
        lam,
        result["band_cells"],
        result["band_log_x"],
    )
    info = {"classes": int(m), "lower_bound": lower, "band_cells": result["band_size"], "band_width": width}
    return Mechanism.single(block), info
