"""The utility design when the classes' grid is too large: classes pooled by size (issue 13 item 2, "beyond k =
16 by classes/blocks").

The exact reduction (:mod:`.objective`) lets X_S depend on the count of differing attributes per class (equal size
and cap); 77 survey columns of 11 sizes give prod_j (n_j + 1) = 4e9 count vectors. Letting X_S depend only on
the counts per *pool* (a group of classes of neighbouring sizes) restricts the family, so every point is still a
valid mechanism (:class:`~optrr_engine.blocks.PooledBlock`) and the problem stays convex, on a grid of
prod_p (N_p + 1) cells. The eigenvalue of a type tau at a pool count vector c is

    h_tau(c) = prod_p [z^c_p] prod_{j in p} q_{j, tau_j}(z) / u_c,   q_{j,t}(z) = sum_c u_j(c) h^j_t(c) z^c,

the per-class terms of the exact reduction (binomial pmf times the hypergeometric factor, each no larger than
the pmf) convolved within the pool, so the rounding is relative to u_c. With one class per pool this is the exact
reduction. Measured where both can be solved (bench/pooled_design.py: the bench files' size vectors and two
synthetic mixes, whole-record 1-8, all 1-way or all 1- and 2-way marginals), the pooled optimum's objective over
the exact one: median 1.024 (at most 1.123) with three pools, 1.286 (3.114) with one; a product of independent
blocks was 1.6-21x worse on 32 columns of 4 sizes, hence pools (docs/decisions.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..blocks.pooled import grid_of
from .objective import ClassStructure

#: Largest pooled grid the utility design solves (a pooled block stores every cell's log x).
POOLED_CELLS = 1 << 15
#: Certified relative gap the pooled solve stops at. The decomposition's tail only tightens the certificate: on 77
#: columns (all 1- and 2-way, eps 1, 11,322 cells) the objective after 2 s is 1.7e-5 above the one after 60 s, where
#: a gap of 1e-7 was still not certified. The pooled family itself costs 1-12 % (docs/utility.md).
POOLED_GAP = 1e-4


@dataclass
class PooledStructure:
    """Classes (of the exact reduction) grouped into pools; the solver's view: a grid over pool counts."""

    classes: ClassStructure
    pool_of_class: np.ndarray

    def __post_init__(self):
        self.pool_of_class = np.asarray(self.pool_of_class, dtype=np.int64)
        m = int(self.pool_of_class.max()) + 1
        self.pool_counts = np.bincount(self.pool_of_class, weights=self.classes.class_counts, minlength=m).astype(
            np.int64
        )

    # the class view the solver reads: types, weights and caps stay per class
    @property
    def class_sizes(self) -> np.ndarray:
        return self.classes.class_sizes

    @property
    def class_caps(self) -> np.ndarray:
        return self.classes.class_caps

    @property
    def class_counts(self) -> np.ndarray:
        return self.classes.class_counts

    @property
    def singletons(self) -> bool:
        return False

    @property
    def pool_of_attribute(self) -> np.ndarray:
        return self.pool_of_class[self.classes.member]

    @property
    def grid_cells(self) -> int:
        return int(np.prod(self.pool_counts + 1))

    @property
    def grid(self) -> np.ndarray:
        return grid_of(self.pool_counts)

    def _per_class(self, j: int, t: int) -> np.ndarray:
        """q_{j,t}: u_j(c) h^j_t(c) for c = 0..n_j (t = 0: the binomial pmf)."""
        from scipy.stats import binom, hypergeom

        a, n = float(self.class_sizes[j]), int(self.class_counts[j])
        c = np.arange(n + 1)
        pmf = binom.pmf(c, n, (a - 1.0) / a)
        if t == 0:
            return pmf
        ell = np.arange(t + 1)
        factor = hypergeom.pmf(ell[None, :], n, t, c[:, None]) @ (-1.0 / (a - 1.0)) ** ell
        return pmf * factor

    def _pooled(self, tau) -> np.ndarray:
        """prod_p [z^c_p] prod_{j in p} q_{j, tau_j}(z) at every grid cell."""
        grid = self.grid
        out = np.ones(grid.shape[0])
        for p in range(self.pool_counts.size):
            poly = np.ones(1)
            for j in np.flatnonzero(self.pool_of_class == p):
                poly = np.convolve(poly, self._per_class(int(j), int(tau[j])))
            out *= poly[grid[:, p]]
        return out

    def grid_probabilities(self, grid: np.ndarray) -> np.ndarray:
        return self._pooled(np.zeros(self.class_sizes.size, dtype=np.int64))

    def eigen_rows(self, types: np.ndarray, grid: np.ndarray) -> np.ndarray:
        u = self.grid_probabilities(grid)
        out = np.array([self._pooled(tau) for tau in types])
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(u > 0, out / u, 0.0)
        return np.clip(h, -1.0, 1.0)  # |h| <= 1 exactly; clipping only removes rounding on vanishing cells

    def start_point(self, grid: np.ndarray, u: np.ndarray, target: float):
        """Equal epsilon per attribute (target / k, within every cap): a Kronecker mechanism, which depends only
        on the total count of differing attributes, so it lies in the pooled family."""
        k = int(self.class_counts.sum())
        eps = min(float(np.min(self.class_caps)), target / k)
        x = np.exp((self.pool_counts[None, :] - grid).sum(axis=1) * eps)
        kappa = 1.0 / float(u @ x)
        return kappa * (x - 1.0), kappa


def choose_pools(cs: ClassStructure, limit: int = POOLED_CELLS, max_pools: int | None = None) -> PooledStructure:
    """Pools of classes adjacent in size (then cap) whose grid fits ``limit`` (and at most ``max_pools`` of them):
    start from one pool per class and merge the adjacent pair that costs the least spread of log a_i per unit of
    log grid removed, until it fits."""
    order = np.lexsort((cs.class_caps, cs.class_sizes))
    pools = [[int(j)] for j in order]
    log_a = np.log(cs.class_sizes.astype(float))
    n = cs.class_counts.astype(float)

    def spread(pool) -> float:
        w, v = n[pool], log_a[pool]
        return float(w @ (v - (w @ v) / w.sum()) ** 2)

    def cells(pool) -> float:
        return float(n[pool].sum()) + 1.0

    most = len(pools) if max_pools is None else max(1, int(max_pools))
    while (np.prod([cells(p) for p in pools]) > limit or len(pools) > most) and len(pools) > 1:
        costs = []
        for i in range(len(pools) - 1):
            merged = pools[i] + pools[i + 1]
            saved = np.log(cells(pools[i]) * cells(pools[i + 1]) / cells(merged))
            costs.append((spread(merged) - spread(pools[i]) - spread(pools[i + 1])) / saved)
        i = int(np.argmin(costs))
        pools[i : i + 2] = [pools[i] + pools[i + 1]]
    pool_of_class = np.empty(cs.class_sizes.size, dtype=np.int64)
    for p, members in enumerate(pools):
        pool_of_class[members] = p
    return PooledStructure(cs, pool_of_class)

