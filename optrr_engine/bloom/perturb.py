"""Bit flipping (the paper's Section 2.5.2): each bit is kept with probability 1 - f, set to 1 with f/2, set to 0
with f/2; vectorised over rows, in chunks so that memory stays bounded."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

#: Rows perturbed at once (bounds the temporary uniform draws to CHUNK_ROWS x bits doubles).
CHUNK_ROWS = 65_536


def flip_probability(attribute_epsilon: float, hashes: int) -> float:
    """The f for which the paper's formula eps = 2h ln((1 - f/2) / (f/2)) gives ``attribute_epsilon``:
    f = 2 / (1 + exp(eps / (2h)))."""
    if not attribute_epsilon > 0 or not math.isfinite(attribute_epsilon):
        raise InputError(f"the epsilon per attribute must be positive and finite, not {attribute_epsilon:g}")
    return 2.0 / (1.0 + math.exp(attribute_epsilon / (2.0 * hashes)))


def check_flip(f) -> np.ndarray:
    f = np.atleast_1d(np.asarray(f, dtype=float))
    if np.any(~(f > 0) | ~(f <= 1)):
        raise InputError("the flip probability f must be in (0, 1]")
    return f


def perturb_bits(bits: np.ndarray, f, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomized bits (uint8) of the same shape. ``f``: one flip probability, or one per bit column.
    ``rng`` defaults to a generator seeded from OS entropy."""
    rng = np.random.default_rng() if rng is None else rng
    bits = np.asarray(bits, dtype=np.uint8)
    f = check_flip(f)
    out = np.empty_like(bits)
    for start in range(0, bits.shape[0], CHUNK_ROWS):
        block = bits[start : start + CHUNK_ROWS]
        u = rng.random(block.shape)
        # u < f/2: set to 1; f/2 <= u < f: set to 0; else keep
        out[start : start + CHUNK_ROWS] = np.where(u < f / 2, 1, np.where(u < f, 0, block))
    return out
