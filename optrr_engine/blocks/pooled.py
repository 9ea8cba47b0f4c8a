"""Mechanisms on pools of attributes: X_S depends only on how many attributes of each pool differ.

A pool may hold attributes of different sizes (a classes block, :mod:`.classes`, is the special case of one size
per pool). With x_c > 0 given for every count vector c (one count per pool) and

    U_p(z) = prod_{i in pool p} (1 + (a_i - 1) z) / a_i,     u_c = prod_p [z^c_p] U_p(z)

(u_c: the share of all outputs whose pattern has counts c), X_S = x_{c(S)} / Z with Z = prod_i a_i E_u[x], so
sum_S t_S X_S = 1. Whole-record epsilon is max log x - min log x over the grid. Attribute i of pool p keeps its
value with weight sum_c x_c u_c^(-i, same) and takes one specific other value with sum_c x_c u_c^(-i, other),
where U_p's factor of attribute i is replaced by 1/a_i and by z/a_i: eps_i is the absolute log ratio.
Sampling draws c, then which attributes of each pool differ with probability proportional to
prod_{i in S} (a_i - 1) (the only pattern weight left given c), then a uniform other value for each.
Everything is in log space; the grid of count vectors is held explicitly (prod_p (n_p + 1) cells).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TooLargeError
from ..logmath import NEG_INF, logsumexp
from .base import Block, decode_logs, encode_logs
from .pattern_table import PatternBlock
from .patterns import group_counts

#: Largest grid a pooled block holds (the log x of every cell is stored).
MAX_POOLED_CELLS = 1 << 20


def log_convolve(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log of the convolution of exp(la) and exp(lb) (non-negative sequences; shifted by their maxima)."""
    ma, mb = float(np.max(la)), float(np.max(lb))
    if not (np.isfinite(ma) and np.isfinite(mb)):
        return np.full(la.size + lb.size - 1, NEG_INF)
    with np.errstate(divide="ignore"):
        return np.log(np.convolve(np.exp(la - ma), np.exp(lb - mb))) + ma + mb


def log_factor_poly(sizes) -> np.ndarray:
    """log coefficients of prod_i (1 + (a_i - 1) z) / a_i (a probability distribution over the count)."""
    out = np.zeros(1)
    for a in np.asarray(sizes, dtype=float):
        out = log_convolve(out, np.log(np.array([1.0 / a, (a - 1.0) / a])))
    return out


def grid_of(counts) -> np.ndarray:
    """Every count vector (rows), pool 0 varying fastest: row r has flat index r = sum_p c_p prod_{q<p}(n_q+1)."""
    shape = tuple(int(n) + 1 for n in np.asarray(counts)[::-1])
    cells = np.indices(shape, dtype=np.int64).reshape(len(shape), -1).T
    return np.ascontiguousarray(cells[:, ::-1])


class PooledBlock(Block):
    kind = "pooled"

    def __init__(self, sizes, pool, log_x):
        super().__init__(sizes)
        self.pool = np.asarray(pool, dtype=np.int64)
        if self.pool.shape != (self.k,) or self.k == 0 or np.any(self.pool < 0):
            raise InputError("pooled block: give one pool index (0, 1, ...) per attribute")
        self.pools = int(self.pool.max()) + 1
        # a pool index >= k leaves a lower one empty; refused before an array is sized by it (a crafted manifest
        # must not make the reader allocate gigabytes)
        self.counts = np.bincount(self.pool, minlength=self.pools) if self.pools <= self.k else np.zeros(1)
        if self.pools > self.k or np.any(self.counts == 0):
            raise InputError("pooled block: every pool index up to the largest must hold an attribute")
        if np.any(self.sizes < 2):
            raise InputError("pooled block: every attribute needs at least 2 categories")
        self.radix = self.counts + 1
        cells = int(np.prod(self.radix.astype(float)))
        if cells > MAX_POOLED_CELLS:
            raise TooLargeError(f"a pooled block's grid has {cells:.3g} cells; at most {MAX_POOLED_CELLS}")
        self.strides = np.concatenate(([1], np.cumprod(self.radix)[:-1])).astype(np.int64)
        self.log_x = np.asarray(log_x, dtype=float).ravel()
        if self.log_x.size != cells or not np.all(np.isfinite(self.log_x)):
            raise InputError(f"pooled block: give a finite log x for each of the {cells} count vectors")
        self.grid = grid_of(self.counts)
        self.members = [np.flatnonzero(self.pool == p) for p in range(self.pools)]
        self.log_u_pool = [log_factor_poly(self.sizes[m]) for m in self.members]
        self.log_u = self._log_weights(self.log_u_pool)
        self.log_ex = logsumexp(self.log_u + self.log_x)
        self.log_norm = float(np.sum(np.log(self.sizes.astype(float)))) + self.log_ex

    def _log_weights(self, polys) -> np.ndarray:
        """sum_p polys[p][c_p] for every grid cell (-inf where c_p is beyond a shorter polynomial)."""
        out = np.zeros(self.grid.shape[0])
        for p, poly in enumerate(polys):
            padded = np.full(self.counts[p] + 1, NEG_INF)
            padded[: poly.size] = poly
            out += padded[self.grid[:, p]]
        return out

    # -- Block interface ---------------------------------------------------------------------
    def log_pattern_probs(self) -> np.ndarray:
        return self.log_x[group_counts(self.pool, self.pools) @ self.strides] - self.log_norm

    def log_max_min(self) -> tuple[float, float]:
        return float(self.log_x.max()) - self.log_norm, float(self.log_x.min()) - self.log_norm

    def attribute_epsilons(self) -> np.ndarray:
        if getattr(self, "_eps_cache", None) is None:
            self._eps_cache = self._attribute_epsilons()
        return self._eps_cache.copy()

    def _attribute_epsilons(self) -> np.ndarray:
        out = np.empty(self.k)
        done: dict = {}
        for i, (p, a) in enumerate(zip(self.pool, self.sizes, strict=True)):
            key = (int(p), int(a))
            if key not in done:
                others = np.delete(self.members[p], np.flatnonzero(self.members[p] == i))
                rest = log_factor_poly(self.sizes[others])
                polys = list(self.log_u_pool)
                polys[p] = rest  # attribute i keeps its value: count c_p among the others
                log_same = logsumexp(self.log_x + self._log_weights(polys))
                polys[p] = np.concatenate(([NEG_INF], rest))  # i takes one specific other value
                log_other = logsumexp(self.log_x + self._log_weights(polys))
                done[key] = abs(log_same - log_other)
            out[i] = done[key]
        return out

    def log_mass(self) -> float:
        # sum_S t_S X_S = prod a E_u[x] / Z = sum_c u_c (the factor polynomials' mass, 1 up to rounding)
        return float(logsumexp(self.log_u))

    def marginal(self, positions) -> Block:
        positions = np.asarray([int(p) for p in positions], dtype=np.int64)
        if positions.size == self.k and np.array_equal(np.sort(positions), np.arange(self.k)):
            return PooledBlock(self.sizes[positions], self.pool[positions], self.log_x)
        if positions.size > 16:
            raise TooLargeError("marginals of a pooled block are built for at most 16 attributes at a time")
        # attributes of one pool and size are interchangeable: the marginal depends only on (pool, size) per position
        key = tuple((int(self.pool[i]), int(self.sizes[i])) for i in positions)
        cache = self.__dict__.setdefault("_marginal_cache", {})
        if key not in cache:
            cache[key] = self._marginal(positions)
        return cache[key]

    def _marginal(self, positions: np.ndarray) -> Block:
        kept = np.zeros(self.k, dtype=bool)
        kept[positions] = True
        # the dropped attributes of pool p, r of them differing, in prod_{i in S} (a_i - 1) ways each
        log_w = [
            log_factor_poly(self.sizes[m[~kept[m]]]) + float(np.sum(np.log(self.sizes[m[~kept[m]]].astype(float))))
            for m in self.members
        ]
        uniq, inverse = np.unique(group_counts(self.pool[positions], self.pools), axis=0, return_inverse=True)
        values = np.empty(len(uniq))
        for q, cp in enumerate(uniq):
            rest = self.grid - cp[None, :]  # counts among the dropped attributes
            ok = np.all(rest >= 0, axis=1)
            lw = np.zeros(int(ok.sum()))
            for p in range(self.pools):
                poly = log_w[p]
                r = rest[ok, p]
                lw += np.where(r < poly.size, poly[np.minimum(r, poly.size - 1)], NEG_INF)
            values[q] = logsumexp(lw + self.log_x[ok])
        return PatternBlock(self.sizes[positions], values[inverse.ravel()] - self.log_norm, normalize=False)

    def _cdf(self) -> np.ndarray:
        if getattr(self, "_cdf_cache", None) is None:
            w = self.log_u + self.log_x
            cdf = np.cumsum(np.exp(w - logsumexp(w)))
            cdf[-1] = 1.0
            self._cdf_cache = cdf
        return self._cdf_cache

    def _choice_probabilities(self, p: int) -> np.ndarray:
        """P[j, r]: the probability that member j of pool p differs when r of the members from j on must differ,
        w_j e_{r-1}(w_{j+1}, ...) / e_r(w_j, ...) with w = a - 1 and e_r the elementary symmetric sums (in log
        space); 0 for r = 0 and where r exceeds the members left (never reached). Kept: the sampler runs per chunk."""
        cache = self.__dict__.setdefault("_choice_cache", {})
        if p not in cache:
            w = np.log(self.sizes[self.members[p]].astype(float) - 1.0)
            n = w.size
            table = np.full((n + 1, n + 2), NEG_INF)  # table[j, r] = log e_r(w_j, ..., w_last)
            table[n, 0] = 0.0
            for j in range(n - 1, -1, -1):
                table[j] = np.logaddexp(table[j + 1], np.concatenate(([NEG_INF], table[j + 1, :-1] + w[j])))
            r = np.arange(1, n + 1)
            probs = np.zeros((n, n + 1))
            with np.errstate(invalid="ignore"):
                probs[:, 1:] = np.exp(w[:, None] + table[1:, r - 1] - table[:-1, r])
            cache[p] = np.nan_to_num(probs)
        return cache[p]

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw the count vector c, then for each pool which members differ (member j differs with probability
        w_j e_{r-1}(w_{j+1}..) / e_r(w_j..) when r of the members from j on must differ), then an offset each."""
        n = codes.shape[0]
        cdf = self._cdf()
        cell = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), cdf.size - 1)
        counts = self.grid[cell]
        out = np.array(codes, copy=True)
        for p, members in enumerate(self.members):
            probs = self._choice_probabilities(p)
            left = counts[:, p].copy()
            for j, i in enumerate(members):
                a = int(self.sizes[i])
                rows = np.flatnonzero(rng.random(n) < probs[j][left])
                out[rows, i] = (out[rows, i] + rng.integers(1, a, size=rows.size)) % a
                left[rows] -= 1
        return out

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "sizes": self.sizes.tolist(),
            "pool": self.pool.tolist(),
            "log_x": encode_logs(self.log_x),
        }

    @classmethod
    def from_dict(cls, d: dict) -> PooledBlock:
        return cls(d["sizes"], d["pool"], decode_logs(d["log_x"]))
