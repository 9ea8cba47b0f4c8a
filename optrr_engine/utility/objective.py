"""The utility objective in terms of the eigenvalues (docs/math.md §6) and its symmetric reduction.

For a needed marginal A (N_A = prod_{i in A} a_i cells) the unbiased estimate from n rows has

    E||pi_hat_A - pi_A||^2 = (1/n) (sum_{T subset A} d_T / (N_A lambda_T^2) - ||pi_A||^2),

with d_T = prod_{i in T}(a_i - 1),

because the column sums of (M^{-1})^{o2} are all trace(M^{-2}) / N_A and sum_y lambda_y = 1. Only the first term
depends on the design (not on the prior), so the mean over the needed marginals is, up to a constant,

    f(lambda) = sum_T w_T lambda_T^{-2},   w_T = d_T sum_{A needed, A contains T} 1 / (N_A * #needed),

convex for lambda_T > 0. With a pattern distribution over S, lambda_T = E[prod_{i in S n T} (-1/(a_i - 1))].

Symmetric reduction: attributes with equal a_i and equal caps, and a needed set made of whole orders, are
interchangeable, so an optimum exists in which X_S depends only on the count vector c of differing attributes per
class (average any optimum over the permutations within classes: feasible, objective no larger by convexity).
Then lambda_T depends only on the class composition tau of T, lambda_tau = sum_c P(c) h_tau(c) with
h_tau(c) = prod_j E[(-1/(a_j - 1))^L_j], L_j ~ Hypergeometric(n_j attributes, tau_j in T, c_j differing).
Every attribute its own class (n_j = 1) is the general problem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import comb

import numpy as np

from ..errors import InputError


@dataclass
class ClassStructure:
    class_sizes: np.ndarray  # a_j
    class_counts: np.ndarray  # n_j
    class_caps: np.ndarray  # eps cap of class j (inf = none)
    member: np.ndarray  # class of each attribute

    @property
    def singletons(self) -> bool:
        return bool(np.all(self.class_counts == 1))

    @property
    def grid_cells(self) -> int:
        """Number of count vectors c, prod_j (n_j + 1) (an exact integer, however large)."""
        return math.prod(int(n) + 1 for n in self.class_counts)

    @property
    def grid(self) -> np.ndarray:
        """All count vectors c (rows), class 0 varying fastest (for one class per attribute: row = bitmask S)."""
        from ..blocks.pooled import grid_of

        return grid_of(self.class_counts)

    def grid_probabilities(self, grid: np.ndarray) -> np.ndarray:
        """u_c: the share of all outputs whose pattern has counts c (product of binomial pmfs)."""
        from scipy.stats import binom  # here: scipy.stats takes ~0.9 s to import, and only class designs need it

        u = np.ones(grid.shape[0])
        for j, (a, n) in enumerate(zip(self.class_sizes, self.class_counts, strict=True)):
            u *= binom.pmf(grid[:, j], int(n), (a - 1.0) / a)
        return u

    def eigen_rows(self, types: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """h_tau(c) for every type (rows) and grid cell (columns)."""
        from scipy.stats import hypergeom

        out = np.ones((types.shape[0], grid.shape[0]))
        for j, (a, n) in enumerate(zip(self.class_sizes, self.class_counts, strict=True)):
            factor = {}
            for tj in np.unique(types[:, j]):
                ell = np.arange(int(tj) + 1)
                pmf = hypergeom.pmf(ell[None, :], int(n), int(tj), grid[:, j][:, None])
                factor[int(tj)] = pmf @ (-1.0 / (a - 1.0)) ** ell
            for r, tj in enumerate(types[:, j]):
                out[r] *= factor[int(tj)]
        return out


    def start_point(self, grid: np.ndarray, u: np.ndarray, target: float):
        """The Kronecker mechanism with eps_j = min(cap_j, target / k) per attribute as a point (y, kappa) of the
        utility design's feasible set: log x_c = sum_j (n_j - c_j) eps_j."""
        eps = np.minimum(self.class_caps, target / float(self.class_counts.sum()))
        x = np.exp((self.class_counts[None, :] - grid) @ eps)
        kappa = 1.0 / float(u @ x)
        return kappa * (x - 1.0), kappa


def detect_structure(sizes, caps, symmetric: bool) -> ClassStructure:
    """Classes of identical (a_i, cap_i) when the needed marginals are whole orders, else one class each."""
    sizes = np.asarray(sizes, dtype=np.int64)
    caps = np.asarray(caps, dtype=float)
    if symmetric:
        keys: dict = {}
        member = np.array([keys.setdefault((int(a), float(c)), len(keys)) for a, c in zip(sizes, caps, strict=True)])
        class_sizes = np.array([k[0] for k in keys], dtype=np.int64)
        class_caps = np.array([k[1] for k in keys], dtype=float)
    else:
        member = np.arange(sizes.size)
        class_sizes, class_caps = sizes.copy(), caps.copy()
    counts = np.bincount(member, minlength=class_sizes.size)
    return ClassStructure(class_sizes, counts, class_caps, member)


def order_weights(cs: ClassStructure, orders) -> tuple[np.ndarray, np.ndarray]:
    """Types tau (1 <= |tau| <= max order) and w_tau for 'all marginals of these orders' (summed over the
    C(n, tau) sets T of each type and the needed A containing T; divided by the number of marginals).

    The needed sets A of order o containing a given T add e_j further attributes of class j (sum e_j = o - |tau|)
    in prod_j C(n_j - tau_j, e_j) ways, each with N_A = prod_j a_j^(tau_j + e_j): their sum of 1 / N_A is
    prod_j a_j^-tau_j times the coefficient of z^(o - |tau|) in prod_j (1 + z / a_j)^(n_j - tau_j), a polynomial
    truncated at the largest order (never an enumeration of the grid)."""
    a, n = cs.class_sizes.astype(float), cs.class_counts
    k = int(n.sum())
    top = max(orders)
    n_marginals = sum(comb(k, o) for o in orders)
    types, weights = [], []
    for tau in bounded_count_vectors(n, top):
        t = int(tau.sum())
        poly = np.zeros(top - t + 1)
        poly[0] = 1.0
        for aj, nj, tj in zip(a, n, tau, strict=True):
            free = int(nj - tj)
            series = np.array([comb(free, e) / aj**e for e in range(min(free, top - t) + 1)])
            poly = np.convolve(poly, series)[: top - t + 1]
        per_set = sum(poly[o - t] for o in orders if o >= t) / np.prod(a**tau)  # poly has degree top - t
        count = np.prod([comb(int(nj), int(tj)) for nj, tj in zip(n, tau, strict=True)])
        d = np.prod((a - 1.0) ** tau)
        types.append(tau)
        weights.append(count * d * per_set / n_marginals)
    return np.array(types, dtype=np.int64), np.array(weights)


def bounded_count_vectors(counts, top: int):
    """Every count vector tau with 0 <= tau_j <= counts_j and 1 <= sum tau <= top (no enumeration of the
    (top + 1)^classes box: 77 columns in 11 classes, top 3, have 364 such vectors)."""
    counts = [int(c) for c in counts]

    def extend(j: int, left: int):
        if j == len(counts):
            yield []
            return
        for t in range(min(counts[j], left) + 1):
            for rest in extend(j + 1, left - t):
                yield [t, *rest]

    for vec in extend(0, top):
        if sum(vec):
            yield np.array(vec, dtype=np.int64)


def set_weights(cs: ClassStructure, sets) -> tuple[np.ndarray, np.ndarray]:
    """Types (0/1 vectors over singleton classes = subsets T) and weights for a list of needed sets."""
    if np.any(cs.class_counts != 1):
        raise InputError("named marginals need one class per attribute")
    k = cs.class_sizes.size
    a = cs.class_sizes.astype(float)
    acc: dict = {}
    for A in sets:
        n_a = float(np.prod(a[list(A)]))
        for bits in range(1, 1 << len(A)):
            T = tuple(A[j] for j in range(len(A)) if (bits >> j) & 1)
            acc[T] = acc.get(T, 0.0) + float(np.prod(a[list(T)] - 1.0)) / n_a / len(sets)
    types = np.zeros((len(acc), k), dtype=np.int64)
    for r, T in enumerate(acc):
        types[r, list(T)] = 1
    return types, np.array(list(acc.values()))


def contrast_scores(g_full: np.ndarray, sizes) -> np.ndarray:
    """r_S = sum_T g_T prod_{i in S n T} (-1/(a_i - 1)) for every bitmask S, from g over all masks T, in
    O(k 2^k) by per-axis 2x2 transforms [[1, 1], [1, -1/(a_i - 1)]] (rows S_i, columns T_i)."""
    out = np.array(g_full, dtype=float, copy=True)
    for i, a in enumerate(np.asarray(sizes, dtype=float)):
        v = out.reshape(-1, 2, 1 << i)
        lo = v[:, 0, :].copy()
        hi = v[:, 1, :].copy()
        v[:, 0, :] = lo + hi
        v[:, 1, :] = lo - hi / (a - 1.0)
    return out
