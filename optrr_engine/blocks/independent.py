"""Independent GRR per attribute (Wang et al.'s Kronecker product; RR-Independent).

Attribute i keeps its value with p_i = e^{eps_i}/(e^{eps_i}+a_i-1) and moves to each other value
with q_i = 1/(e^{eps_i}+a_i-1); X_S = prod_{i in S} q_i prod_{i not in S} p_i, eps_total = sum eps_i.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .base import Block, decode_logs, encode_logs
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

    def marginal(self, positions) -> IndependentBlock:
        positions = list(positions)
        return IndependentBlock(self.sizes[positions], self.log_keep[positions], self.log_move[positions])

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One uniform per cell: u < P(move) moves; u / P(move) then picks the offset 1..a-1."""
        n, k = codes.shape
        move = -np.expm1(self.log_keep)  # 1 - p_i, accurate for p_i near 1
        u = rng.random((n, k))
        moved = u < move
        steps = (self.sizes - 1).astype(float)
        off = np.floor(u / move * steps).astype(codes.dtype)
        np.minimum(off, (self.sizes - 2).astype(codes.dtype), out=off)
        off += 1
        out = (codes + off) % self.sizes.astype(codes.dtype)
        return np.where(moved, out, codes)

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
