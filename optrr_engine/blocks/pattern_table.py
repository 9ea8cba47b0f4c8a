"""A block stored as the full table of log X_S over all 2^k patterns (general, small k)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..logmath import logsumexp
from . import table_math
from .base import Block, apply_patterns, decode_logs, encode_logs
from .patterns import log_multiplicities, require_pattern_k


class PatternBlock(Block):
    kind = "pattern_table"

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
        n = codes.shape[0]
        cdf = self._cdf if hasattr(self, "_cdf") else self.pattern_cdf()
        self._cdf = cdf
        masks = np.searchsorted(cdf, rng.random(n), side="right").astype(np.int64)
        np.minimum(masks, cdf.size - 1, out=masks)
        return apply_patterns(codes, masks, self.sizes, rng)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "sizes": self.sizes.tolist(), "log_x": encode_logs(self.log_x)}

    @classmethod
    def from_dict(cls, d: dict) -> PatternBlock:
        return cls(d["sizes"], decode_logs(d["log_x"]), normalize=False)
