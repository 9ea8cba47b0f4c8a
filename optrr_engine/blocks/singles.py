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
from .base import Block, chunk_workspace, decode_logs, encode_logs, wrap_add_into
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
        keep = np.zeros(self.k, dtype=bool)
        keep[positions] = True
        dropped = np.flatnonzero(~keep)
        if dropped.size == 0:
            return SinglesBlock(self.sizes[positions], self.log_y0, self.log_y[positions])
        if len(positions) == 1:
            j = positions[0]
            return PatternBlock(self.sizes[[j]], self.one_way_log_probs()[j], normalize=False)
        log_pb = float(self.log_sizes[dropped].sum())
        log_eb = float(logsumexp(np.log(self.sizes[dropped] - 1.0) + self.log_y[dropped]))
        return SinglesBlock(
            self.sizes[positions], float(np.logaddexp(self.log_y0, log_eb)) - log_pb, self.log_y[positions] - log_pb
        )

    def one_way_log_probs(self) -> np.ndarray:
        """Every attribute's induced mechanism at once: with the others summed out (P_j = P / a_j, E_j = E minus
        attribute j's term), X_same = y_0 + E_j + P_j and X_other = y_j + P_j (units of X_b), normalised so that
        X_same + (a_j - 1) X_other = 1."""
        log_pb = self.log_P - self.log_sizes
        log_eb = log_excluding_each(np.log(self.sizes - 1.0) + self.log_y)
        same = logsumexp(np.stack([np.full(self.k, self.log_y0), log_eb, log_pb]), axis=0)
        other = np.logaddexp(self.log_y, log_pb)
        norm = np.logaddexp(same, np.log(self.sizes - 1.0) + other)
        return np.stack([same - norm, other - norm], axis=1)

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Sample the family as a mixture (no rejection). With X_b = 1 / (P + y_0 + E),

            X_S = X_b (1 + y_0 [S = {}] + y_i [S = {i}]),

        so the output is: a uniform record of the whole domain with probability P X_b, the input itself with
        y_0 X_b, the input with attribute i moved to a uniform other value with (a_i - 1) y_i X_b. A uniform
        record is x + U{0..a_i-1} mod a_i per cell (one uniform each; the modulo is an unsigned wrap-around,
        w = x + U - a_i, result min(w, w + a_i)). Row blocks are processed densely when uniform records are
        common (P X_b >= 1/4); otherwise only the uniform-record rows draw per-cell uniforms.
        """
        codes = np.asarray(codes)
        n, k = codes.shape
        out = np.empty_like(codes)
        if n == 0:
            return out
        if getattr(self, "_mixture", None) is None:
            w = np.concatenate(([self.log_P, self.log_y0], np.log(self.sizes - 1.0) + self.log_y))
            p = np.exp(w - logsumexp(w))
            cdf = np.cumsum(p)
            cdf[-1] = 1.0
            self._mixture = (cdf, float(p[0]))
        cdf, p_uniform = self._mixture
        sizes = self.sizes
        rows, work, plus_a, (u_buf, w_buf, g_buf) = chunk_workspace(sizes, n, k)
        a_float = np.tile(sizes.astype(float), (rows, 1))
        top = np.tile(sizes - 1.0, (rows, 1))
        minus_a = np.tile((-sizes).astype(work), (rows, 1))

        def single_offsets(cat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """Rows that move one attribute: (rows, attributes, offsets in 1..a_i-1)."""
            rows_ = np.flatnonzero(cat >= 2)
            attr = cat[rows_] - 2
            a = sizes[attr]
            off = (rng.random(rows_.size) * (a - 1)).astype(np.int64)
            np.minimum(off, a - 2, out=off)
            return rows_, attr, off + 1

        def add_offsets(x: np.ndarray, dest: np.ndarray, cat: np.ndarray | None) -> None:
            """dest = (x + offset) mod a_i per cell: uniform U{0..a_i-1} offsets on uniform-record rows
            (cat == 0, or every row if cat is None), one offset on single-move rows, none on kept rows."""
            b = len(x)
            u, w, g = u_buf[:b], w_buf[:b], g_buf[:b]
            rng.random(out=u)
            np.multiply(u, a_float[:b], out=u)
            np.fmin(u, top[:b], out=u)  # u a_i can round up to a_i
            np.copyto(w, u, casting="unsafe")
            if cat is not None:
                np.multiply(w, np.repeat((cat == 0).astype(work), k).reshape(b, k), out=w)
                rows_, attr, off = single_offsets(cat)
                w.reshape(-1)[rows_ * k + attr] = off
            wrap_add_into(dest, x, w, g, minus_a[:b], plus_a[:b])

        for start in range(0, n, rows):
            stop = min(n, start + rows)
            block = out[start:stop]
            cat = np.searchsorted(cdf, rng.random(stop - start), side="right")
            np.minimum(cat, k + 1, out=cat)
            if p_uniform >= 0.25:
                add_offsets(codes[start:stop], block, cat)
                continue
            block[...] = codes[start:stop]
            uni = np.flatnonzero(cat == 0)
            if uni.size:
                moved = np.empty((uni.size, k), dtype=codes.dtype)
                add_offsets(block[uni], moved, None)
                block[uni] = moved
            rows_, attr, off = single_offsets(cat)
            if rows_.size:
                a = sizes[attr]
                block[rows_, attr] = (block[rows_, attr] + off) % a
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
