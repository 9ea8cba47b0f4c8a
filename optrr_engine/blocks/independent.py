"""Independent GRR per attribute (Wang et al.'s Kronecker product; RR-Independent).

Attribute i keeps its value with p_i = e^{eps_i}/(e^{eps_i}+a_i-1) and moves to each other value
with q_i = 1/(e^{eps_i}+a_i-1); X_S = prod_{i in S} q_i prod_{i not in S} p_i, eps_total = sum eps_i.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .base import Block, chunk_workspace, decode_logs, encode_logs, wrap_add_into
from .patterns import require_pattern_k, subset_sums


class IndependentBlock(Block):
    kind = "independent_grr"

    def __init__(self, sizes, log_keep, log_move):
        super().__init__(sizes)
        self.log_keep = np.asarray(log_keep, dtype=float)
        self.log_move = np.asarray(log_move, dtype=float)
        if self.log_keep.shape != (self.k,) or self.log_move.shape != (self.k,):
            raise InputError("independent GRR needs one keep and one move probability per attribute")

    @classmethod
    def from_epsilons(cls, sizes, epsilons) -> IndependentBlock:
        a = np.asarray(sizes, dtype=float)
        eps = np.asarray(epsilons, dtype=float)
        log_den = np.logaddexp(eps, np.log(a - 1.0))
        return cls(sizes, eps - log_den, -log_den)

    def log_pattern_probs(self) -> np.ndarray:
        require_pattern_k(self.k)
        return self.log_keep.sum() + subset_sums(self.log_move - self.log_keep)

    def log_max_min(self) -> tuple[float, float]:
        hi = np.maximum(self.log_keep, self.log_move).sum()
        lo = np.minimum(self.log_keep, self.log_move).sum()
        return float(hi), float(lo)

    def attribute_epsilons(self) -> np.ndarray:
        return np.abs(self.log_keep - self.log_move)

    def log_mass(self) -> float:
        per = np.logaddexp(self.log_keep, self.log_move + np.log(self.sizes - 1.0))
        return float(per.sum())

    def one_way_log_probs(self) -> np.ndarray:
        return np.stack([self.log_keep, self.log_move], axis=1)

    def marginal(self, positions) -> IndependentBlock:
        positions = list(positions)
        return IndependentBlock(self.sizes[positions], self.log_keep[positions], self.log_move[positions])

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One uniform u per cell, in cache-sized row blocks, integer arithmetic on a small unsigned dtype.

        With m_i = 1 - p_i (probability of moving) and v = min(u (a_i - 1) / m_i, a_i - 1): u >= m_i gives
        v = a_i - 1, and u < m_i gives floor(v) uniform on 0..a_i-2. The output (x + floor(v) + 1) mod a_i
        therefore keeps x with probability p_i and moves to each other value with m_i / (a_i - 1) = q_i.
        The modulo is one unsigned wrap-around: w = x + floor(v) + 1 - a_i, result min(w, w + a_i).
        Per-attribute constants are tiled to the block's shape so every step is a contiguous array operation.
        """
        codes = np.asarray(codes)
        n, k = codes.shape
        out = np.empty_like(codes)
        if n == 0 or k == 0:
            return out
        sizes = self.sizes
        rows, work, plus_a, (u_buf, w_buf, g_buf) = chunk_workspace(sizes, n, k)
        move = -np.expm1(self.log_keep)
        move = np.where(move > 0, move, 0.0)  # +0.0 when p_i rounds to 1 (e.g. eps_i = 50): scale +inf, never move
        with np.errstate(divide="ignore"):
            scale = np.tile((sizes - 1.0) / move, (rows, 1))
        top = np.tile(sizes - 1.0, (rows, 1))
        one_minus_a = np.tile((1 - sizes).astype(work), (rows, 1))
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            b = stop - start
            u, w, g = u_buf[:b], w_buf[:b], g_buf[:b]
            rng.random(out=u)
            np.multiply(u, scale[:b], out=u)
            np.fmin(u, top[:b], out=u)  # fmin: 0 * inf = NaN also becomes "stay"
            np.copyto(w, u, casting="unsafe")  # truncation = floor for v >= 0
            wrap_add_into(out[start:stop], codes[start:stop], w, g, one_minus_a[:b], plus_a[:b])
        return out

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "sizes": self.sizes.tolist(),
            "log_keep": encode_logs(self.log_keep),
            "log_move": encode_logs(self.log_move),
        }

    @classmethod
    def from_dict(cls, d: dict) -> IndependentBlock:
        return cls(d["sizes"], decode_logs(d["log_keep"]), decode_logs(d["log_move"]))
