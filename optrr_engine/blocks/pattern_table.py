"""A block stored as the full table of log X_S over all 2^k patterns (general, small k)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..logmath import logsumexp
from . import table_math
from .base import Block, chunk_workspace, decode_logs, encode_logs, wrap_add_into
from .patterns import log_multiplicities, require_pattern_k


class PatternBlock(Block):
    kind = "pattern_table"
    _cdf: np.ndarray  #: pattern_cdf(), computed on the first sample

    def __init__(self, sizes, log_x, normalize: bool = True):
        super().__init__(sizes)
        require_pattern_k(self.k)
        log_x = np.asarray(log_x, dtype=float)
        if log_x.shape != (1 << self.k,):
            raise InputError(f"pattern table needs 2^{self.k} = {1 << self.k} values, got {log_x.size}")
        if np.any(np.isnan(log_x)) or np.any(log_x == np.inf):
            raise InputError("pattern table has NaN or infinite values")
        if normalize:
            log_x = log_x - table_math.log_mass(self.sizes, log_x)
        self.log_x = log_x

    def log_pattern_probs(self) -> np.ndarray:
        return self.log_x.copy()

    def log_max_min(self) -> tuple[float, float]:
        return table_math.log_max_min(self.log_x)

    def attribute_epsilons(self) -> np.ndarray:
        return table_math.attribute_epsilons(self.sizes, self.log_x)

    def log_mass(self) -> float:
        return table_math.log_mass(self.sizes, self.log_x)

    def marginal(self, positions) -> PatternBlock:
        positions = list(positions)
        return PatternBlock(
            self.sizes[positions], table_math.marginal(self.sizes, self.log_x, positions), normalize=False
        )

    def pattern_cdf(self) -> np.ndarray:
        w = self.log_x + log_multiplicities(self.sizes)
        p = np.exp(w - logsumexp(w))
        cdf = np.cumsum(p)
        cdf[-1] = 1.0
        return cdf

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw the pattern S of each row with probability t_S X_S (one uniform per row), then one uniform per
        cell: offset d_i = floor(min(u (a_i - 1), a_i - 2)) + 1 (uniform on 1..a_i-1) for i in S and d_i = 0
        outside S; the output is (x + d) mod a, computed as an unsigned wrap-around: w = x + d - a_i,
        result min(w, w + a_i). The bits of S are unpacked per row (little-endian bytes of the pattern)."""
        codes = np.asarray(codes)
        n, k = codes.shape
        out = np.empty_like(codes)
        if n == 0:
            return out
        cdf = self._cdf if hasattr(self, "_cdf") else self.pattern_cdf()
        self._cdf = cdf
        sizes = self.sizes
        rows, work, plus_a, (u_buf, w_buf, g_buf) = chunk_workspace(sizes, n, k)
        steps = np.tile(sizes - 1.0, (rows, 1))
        inner = np.tile(sizes - 2.0, (rows, 1))
        minus_a = np.tile((-sizes).astype(work), (rows, 1))
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            b = stop - start
            u, w, g = u_buf[:b], w_buf[:b], g_buf[:b]
            masks = np.searchsorted(cdf, rng.random(b), side="right").astype("<u4")  # k <= 22 bits
            np.minimum(masks, cdf.size - 1, out=masks)
            moved = np.unpackbits(masks.view(np.uint8).reshape(b, 4), axis=1, count=k, bitorder="little")
            rng.random(out=u)
            np.multiply(u, steps[:b], out=u)
            np.fmin(u, inner[:b], out=u)  # u (a_i - 1) can round up to a_i - 1
            np.copyto(w, u, casting="unsafe")
            np.add(w, 1, out=w, casting="unsafe")
            np.multiply(w, moved, out=w, casting="unsafe")
            wrap_add_into(out[start:stop], codes[start:stop], w, g, minus_a[:b], plus_a[:b])
        return out

    def to_dict(self) -> dict:
        return {"kind": self.kind, "sizes": self.sizes.tolist(), "log_x": encode_logs(self.log_x)}

    @classmethod
    def from_dict(cls, d: dict) -> PatternBlock:
        return cls(d["sizes"], decode_logs(d["log_x"]), normalize=False)
