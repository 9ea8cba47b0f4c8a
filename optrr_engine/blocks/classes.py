"""Mechanisms on attribute classes: X_S depends only on how many attributes of each class differ.

Class j has n_j attributes with a_j categories. For a count vector c = (c_1..c_m), with
u_c = prod_j Binomial(c_j; n_j, (a_j - 1)/a_j) (the share of all outputs whose pattern has counts c),
the block stores x_c (relative values) by a rule plus explicit cells:

    x_c = explicit[c]                 for the listed cells (the boundary band of the optimum),
    x_c = T   if theta - beta.c > 0,  x_c = 1 otherwise.

X_S = x_{c(S)} / Z with Z = P E_u[x]; attribute i of class j has
eps_i = | ln E_u[x (1 - c_j/n_j)] - ln( E_u[x c_j/n_j] / (a_j - 1) ) |. Everything is in log space, so a
class of 10,000 attributes is fine; sums run over the grid of count vectors (prod (n_j + 1) cells).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TooLargeError
from ..logmath import logsumexp
from .base import Block, decode_logs, encode_logs
from .pattern_table import PatternBlock
from .patterns import group_counts

#: Largest grid of count vectors a classes block may have.
MAX_GRID_CELLS = 40_000_000
_CHUNK = 2_000_000
#: Marginals of a classes block kept per block (keyed by the classes of their positions: :meth:`ClassBlock.marginal`).
_MARGINAL_CACHE = 4096


def log_binomial_row(n: int) -> np.ndarray:
    """ln C(n, c) for c = 0..n (scipy.special.gammaln; imported here to keep the CLI's start-up light)."""
    from scipy.special import gammaln

    c = np.arange(n + 1, dtype=float)
    return gammaln(n + 1.0) - gammaln(c + 1.0) - gammaln(n - c + 1.0)


def log_binomial_pmf(n: int, p: float) -> np.ndarray:
    """ln P(C = c) for C ~ Binomial(n, p), c = 0..n."""
    c = np.arange(n + 1, dtype=float)
    out = log_binomial_row(n)
    with np.errstate(divide="ignore"):
        out += c * np.log(p) + (n - c) * np.log1p(-p)
    return out


class ClassBlock(Block):
    kind = "classes"

    def __init__(
        self, class_sizes, class_counts, member_class, log_T, theta, beta, explicit_cells=None, explicit_log_x=None
    ):
        self.class_sizes = np.asarray(class_sizes, dtype=np.int64)
        self.class_counts = np.asarray(class_counts, dtype=np.int64)
        self.member_class = np.asarray(member_class, dtype=np.int64)
        m = self.class_sizes.size
        out_of_range = self.member_class.ndim != 1 or np.any((self.member_class < 0) | (self.member_class >= m))
        # the range is checked before bincount sizes an array by a class index (a crafted manifest must not
        # make the reader allocate gigabytes)
        if out_of_range or self.class_counts.size != m or np.any(
            np.bincount(self.member_class, minlength=m) != self.class_counts
        ):
            raise InputError("classes block: member classes do not match the class counts")
        super().__init__(self.class_sizes[self.member_class])
        self.log_T = float(log_T)
        self.theta = float(theta)
        self.beta = np.asarray(beta, dtype=float)
        self.radix = self.class_counts + 1
        self.grid_cells = int(np.prod(self.radix.astype(float)))
        if self.grid_cells > MAX_GRID_CELLS:
            raise TooLargeError(
                f"classes block grid has {self.grid_cells:.3g} cells; at most {MAX_GRID_CELLS} supported"
            )
        self.strides = np.concatenate(([1], np.cumprod(self.radix[::-1])[:-1]))[::-1].astype(np.int64)
        cells = (
            np.zeros((0, m), dtype=np.int64) if explicit_cells is None else np.asarray(explicit_cells, dtype=np.int64)
        )
        flat = cells.reshape(-1, m) @ self.strides if cells.size else np.zeros(0, dtype=np.int64)
        order = np.argsort(flat)
        self.explicit_flat = flat[order]
        self.explicit_log_x = (np.zeros(0) if explicit_log_x is None else np.asarray(explicit_log_x, dtype=float))[
            order
        ]
        p = (self.class_sizes - 1.0) / self.class_sizes
        self.log_pmf = [log_binomial_pmf(int(n), float(pj)) for n, pj in zip(self.class_counts, p, strict=True)]
        self.log_P = float(np.sum(self.class_counts * np.log(self.class_sizes.astype(float))))
        self._stats = None
        self._marginal_cache: dict[tuple[int, ...], np.ndarray] = {}  # log pattern probabilities by positions' classes

    # -- grid ------------------------------------------------------------------------------
    def counts_of(self, flat: np.ndarray) -> np.ndarray:
        return (flat[:, None] // self.strides[None, :]) % self.radix[None, :]

    def log_x_of(self, counts: np.ndarray, flat: np.ndarray | None = None) -> np.ndarray:
        score = self.theta - counts @ self.beta
        lx = np.where(score > 0, self.log_T, 0.0)
        if self.explicit_flat.size:
            flat = counts @ self.strides if flat is None else flat
            pos = np.searchsorted(self.explicit_flat, flat)
            pos = np.minimum(pos, self.explicit_flat.size - 1)
            hit = self.explicit_flat[pos] == flat
            lx = np.where(hit, self.explicit_log_x[pos], lx)
        return lx

    def log_u_of(self, counts: np.ndarray) -> np.ndarray:
        out = np.zeros(counts.shape[0])
        for j, lp in enumerate(self.log_pmf):
            out += lp[counts[:, j]]
        return out

    def iter_grid(self):
        for start in range(0, self.grid_cells, _CHUNK):
            flat = np.arange(start, min(start + _CHUNK, self.grid_cells), dtype=np.int64)
            counts = self.counts_of(flat)
            yield flat, counts, self.log_u_of(counts), self.log_x_of(counts, flat)

    def stats(self) -> dict:
        """One pass over the grid: log E_u[x], log E_u[x c_j / n_j], log E_u[x (1 - c_j/n_j)], max/min log x."""
        if self._stats is not None:
            return self._stats
        m = self.class_sizes.size
        diff: list[list[float]] = [[] for _ in range(m)]
        same: list[list[float]] = [[] for _ in range(m)]
        tot, hi, lo, mass = [], -np.inf, np.inf, []
        for _, counts, lu, lx in self.iter_grid():
            w = lu + lx
            tot.append(logsumexp(w))
            mass.append(logsumexp(lu))
            frac = counts / self.class_counts[None, :]
            with np.errstate(divide="ignore"):
                for j in range(m):
                    diff[j].append(float(logsumexp(w + np.log(frac[:, j]))))
                    same[j].append(float(logsumexp(w + np.log1p(-frac[:, j]))))
            hi, lo = max(hi, float(lx.max())), min(lo, float(lx.min()))
        self._stats = {
            "log_ex": float(logsumexp(tot)),
            "log_u_mass": float(logsumexp(mass)),
            "log_diff": np.array([logsumexp(d) for d in diff]),
            "log_same": np.array([logsumexp(s) for s in same]),
            "max": hi,
            "min": lo,
        }
        return self._stats

    def log_norm(self) -> float:
        return self.log_P + self.stats()["log_ex"]

    # -- Block interface ---------------------------------------------------------------------
    def log_pattern_probs(self) -> np.ndarray:
        return self.log_x_of(group_counts(self.member_class, self.class_sizes.size)) - self.log_norm()

    def log_max_min(self) -> tuple[float, float]:
        st = self.stats()
        return st["max"] - self.log_norm(), st["min"] - self.log_norm()

    def class_epsilons(self) -> np.ndarray:
        st = self.stats()
        return np.abs(st["log_same"] - (st["log_diff"] - np.log(self.class_sizes - 1.0)))

    def attribute_epsilons(self) -> np.ndarray:
        return self.class_epsilons()[self.member_class]

    def log_mass(self) -> float:
        st = self.stats()
        # sum_S t_S X_S = P E_u[x] / Z with E_u[x] recomputed, times the binomial mass (which must be 1)
        return float(st["log_u_mass"])

    def marginal(self, positions) -> Block:
        positions = [int(p) for p in positions]
        if sorted(positions) == list(range(self.k)):
            return ClassBlock(
                self.class_sizes,
                self.class_counts,
                self.member_class[positions],
                self.log_T,
                self.theta,
                self.beta,
                self.counts_of(self.explicit_flat) if self.explicit_flat.size else None,
                self.explicit_log_x,
            )
        if len(positions) > 16:
            raise TooLargeError("marginals of a classes block are built for at most 16 attributes at a time")
        kept = self.member_class[positions]
        # members of a class are interchangeable: the marginal depends only on the classes of the positions, in order
        # (the 2,211 pairs of 67 census columns in 5 classes are 25 marginals; each is a pass over a large grid)
        key = tuple(int(c) for c in kept)
        if key not in self._marginal_cache:
            if len(self._marginal_cache) >= _MARGINAL_CACHE:
                self._marginal_cache.clear()
            self._marginal_cache[key] = self._marginal_log_y(kept)
        return PatternBlock(self.sizes[positions], self._marginal_cache[key], normalize=False)

    def _marginal_log_y(self, kept: np.ndarray) -> np.ndarray:
        """log pattern probabilities of the marginal on attributes of the classes ``kept`` (in their order)."""
        m = self.class_sizes.size
        alpha = np.bincount(kept, minlength=m)
        rest = self.class_counts - alpha
        # weights of the dropped attributes: r_j of them differ, in binom(rest_j, r_j) (a_j - 1)^r_j ways
        log_w = []
        for j in range(m):
            r = np.arange(rest[j] + 1, dtype=float)
            log_w.append(log_binomial_row(int(rest[j])) + r * np.log(self.class_sizes[j] - 1.0))
        uniq, inverse = np.unique(group_counts(kept, m), axis=0, return_inverse=True)
        r_radix = rest + 1
        r_cells = int(np.prod(r_radix))
        r_strides = np.concatenate(([1], np.cumprod(r_radix[::-1])[:-1]))[::-1]
        values = np.empty(len(uniq))
        for q, cp in enumerate(uniq):
            acc = []
            for start in range(0, r_cells, _CHUNK):
                flat = np.arange(start, min(start + _CHUNK, r_cells), dtype=np.int64)
                rc = (flat[:, None] // r_strides[None, :]) % r_radix[None, :]
                lw = np.zeros(flat.size)
                for j in range(m):
                    lw += log_w[j][rc[:, j]]
                acc.append(logsumexp(lw + self.log_x_of(rc + cp[None, :])))
            values[q] = logsumexp(acc)
        return values[inverse.ravel()] - self.log_norm()

    def _cdf(self) -> np.ndarray:
        if getattr(self, "_cdf_cache", None) is None:
            chunks = [lu + lx for _, _, lu, lx in self.iter_grid()]
            w = np.concatenate(chunks)
            p = np.exp(w - logsumexp(w))
            cdf = np.cumsum(p)
            cdf[-1] = 1.0
            self._cdf_cache = cdf
        return self._cdf_cache

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw the count vector c, then c_j members of class j uniformly, then an offset per changed cell."""
        n = codes.shape[0]
        cdf = self._cdf()
        flat = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), cdf.size - 1)
        counts = self.counts_of(flat.astype(np.int64))
        out = np.array(codes, copy=True)
        for j in range(self.class_sizes.size):
            members = np.flatnonzero(self.member_class == j)
            a = int(self.class_sizes[j])
            keys = rng.random((n, members.size))
            ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
            chosen = ranks < counts[:, j : j + 1]
            off = rng.integers(1, a, size=chosen.shape)
            block = out[:, members]
            out[:, members] = np.where(chosen, (block + off) % a, block)
        return out

    def to_dict(self) -> dict:
        cells = self.counts_of(self.explicit_flat) if self.explicit_flat.size else np.zeros((0, self.class_sizes.size))
        return {
            "kind": self.kind,
            "sizes": self.sizes.tolist(),
            "class_sizes": self.class_sizes.tolist(),
            "class_counts": self.class_counts.tolist(),
            "member_class": self.member_class.tolist(),
            "log_T": self.log_T,
            "theta": self.theta,
            "beta": self.beta.tolist(),
            "explicit_cells": np.asarray(cells, dtype=int).tolist(),
            "explicit_log_x": encode_logs(self.explicit_log_x),
        }

    @classmethod
    def from_dict(cls, d: dict) -> ClassBlock:
        cells = d.get("explicit_cells") or None
        return cls(
            d["class_sizes"],
            d["class_counts"],
            d["member_class"],
            d["log_T"],
            d["theta"],
            d["beta"],
            cells,
            decode_logs(d.get("explicit_log_x", [])) if cells else None,
        )
