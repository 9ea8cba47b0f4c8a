"""The heuristic's family: X_empty, one value X_i per single-attribute pattern, one value for |S| >= 2.

Parameters are stored relative to the |S| >= 2 value X_b and in log space: x_0 = X_empty/X_b = 1 + y_0,
x_i = X_{i}/X_b = 1 + y_i with y >= 0 (the |S| >= 2 value is the smallest), as log y. With
P = prod a_i and E = sum_i (a_i - 1) y_i (all in units of X_b):

- normalisation: X_b = 1 / (P + y_0 + E)
- eps_i = ln( (y_0 + E - (a_i-1) y_i + P/a_i) / (y_i + P/a_i) )
- eps_total = ln(1 + max(y_0, max_i y_i))

so nothing overflows at k = 100,000. Joint GRR on a cluster is the member with y_i = 0.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..logmath import NEG_INF, log1pexp, log_count_outside, log_excluding_each, logsumexp
from .base import Block, decode_logs, encode_logs
from .pattern_table import PatternBlock
from .patterns import popcounts, require_pattern_k


class SinglesBlock(Block):
    kind = "singles_family"

    def __init__(self, sizes, log_y0: float, log_y):
        super().__init__(sizes)
        if self.k < 2:
            raise InputError("the singles family needs at least two attributes")
        self.log_y0 = float(log_y0)
        self.log_y = np.asarray(log_y, dtype=float)
        if self.log_y.shape != (self.k,):
            raise InputError("the singles family needs one value per attribute")
        if (
            np.isnan(self.log_y0)
            or np.any(np.isnan(self.log_y))
            or np.any(self.log_y == np.inf)
            or self.log_y0 == np.inf
        ):
            raise InputError("the singles family has NaN or infinite parameters")
        self.log_sizes = np.log(self.sizes.astype(float))
        self.log_P = float(self.log_sizes.sum())
        self.log_E = float(logsumexp(np.log(self.sizes - 1.0) + self.log_y))

    @classmethod
    def joint_grr(cls, sizes, epsilon: float) -> SinglesBlock:
        """GRR on the Cartesian product: X_empty = e^eps X_other."""
        k = len(sizes)
        return cls(sizes, float(np.log(np.expm1(epsilon))), np.full(k, NEG_INF))

    # -- normalisation --------------------------------------------------------------------
    def log_norm(self) -> float:
        """log(P + y0 + E): log of 1/X_b."""
        return float(logsumexp([self.log_P, self.log_y0, self.log_E]))

    def log_rest_count(self) -> float:
        """log of the number of outputs with |S| >= 2: P - 1 - sum(a_i - 1)."""
        return log_count_outside(self.log_P, 1.0 + float(np.sum(self.sizes - 1)))

    # -- Block interface --------------------------------------------------------------------
    def log_pattern_probs(self) -> np.ndarray:
        require_pattern_k(self.k)
        ln = self.log_norm()
        pc = popcounts(self.k)
        out = np.full(pc.size, -ln)
        out[0] = log1pexp(self.log_y0) - ln
        out[1 << np.arange(self.k)] = log1pexp(self.log_y) - ln
        return out

    def log_max_min(self) -> tuple[float, float]:
        ln = self.log_norm()
        top = max(self.log_y0, float(np.max(self.log_y)))
        return float(log1pexp(top) - ln), -ln

    def attribute_epsilons(self) -> np.ndarray:
        log_share = self.log_P - self.log_sizes  # log(P / a_i)
        log_e_minus = log_excluding_each(np.log(self.sizes - 1.0) + self.log_y)
        num = logsumexp(np.stack([np.full(self.k, self.log_y0), log_e_minus, log_share]), axis=0)
        den = np.logaddexp(self.log_y, log_share)
        return np.abs(num - den)

    def log_mass(self) -> float:
        parts = [log1pexp(self.log_y0), float(logsumexp(np.log(self.sizes - 1.0) + log1pexp(self.log_y)))]
        rest = self.log_rest_count()
        if rest > NEG_INF:
            parts.append(rest)
        return float(logsumexp(parts) - self.log_norm())

    def marginal(self, positions) -> Block:
        positions = [int(p) for p in positions]
        dropped = np.setdiff1d(np.arange(self.k), positions)
        if dropped.size == 0:
            return SinglesBlock(self.sizes[positions], self.log_y0, self.log_y[positions])
        log_pb = float(self.log_sizes[dropped].sum())
        log_eb = float(logsumexp(np.log(self.sizes[dropped] - 1.0) + self.log_y[dropped]))
        if len(positions) >= 2:
            return SinglesBlock(
                self.sizes[positions], float(np.logaddexp(self.log_y0, log_eb)) - log_pb, self.log_y[positions] - log_pb
            )
        j = positions[0]
        same = float(logsumexp([self.log_y0, log_eb, log_pb]))
        other = float(np.logaddexp(self.log_y[j], log_pb))
        return PatternBlock(self.sizes[[j]], np.array([same, other]), normalize=True)

    def category_log_weights(self) -> np.ndarray:
        """log weights (units of X_b) of: no change, change only attribute i (k entries), |S| >= 2."""
        return np.concatenate(
            ([log1pexp(self.log_y0)], np.log(self.sizes - 1.0) + log1pexp(self.log_y), [self.log_rest_count()])
        )

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw the category; then one offset for a single change, else a uniform record differing in >= 2."""
        n, k = codes.shape
        if getattr(self, "_cdf", None) is None:
            w = self.category_log_weights()
            p = np.exp(w - logsumexp(w))
            cdf = np.cumsum(p)
            cdf[-1] = 1.0
            self._cdf = cdf
        cat = np.searchsorted(self._cdf, rng.random(n), side="right")
        np.minimum(cat, k + 1, out=cat)
        out = np.array(codes, copy=True)
        a = self.sizes.astype(codes.dtype)
        single = np.flatnonzero((cat >= 1) & (cat <= k))
        if single.size:
            attr = cat[single] - 1
            off = (rng.random(single.size) * (self.sizes[attr] - 1)).astype(np.int64) + 1
            out[single, attr] = (out[single, attr] + off) % self.sizes[attr]
        pending = np.flatnonzero(cat == k + 1)
        while pending.size:
            offs = (rng.random((pending.size, k)) * a).astype(codes.dtype)
            np.minimum(offs, a - 1, out=offs)
            ok = np.count_nonzero(offs, axis=1) >= 2
            rows = pending[ok]
            out[rows] = (out[rows] + offs[ok]) % a
            pending = pending[~ok]
        return out

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "sizes": self.sizes.tolist(),
            "log_y0": encode_logs([self.log_y0])[0],
            "log_y": encode_logs(self.log_y),
        }

    @classmethod
    def from_dict(cls, d: dict) -> SinglesBlock:
        return cls(d["sizes"], decode_logs([d["log_y0"]])[0], decode_logs(d["log_y"]))
