"""The Bloom-filter mechanism of a whole record: encoding, one flip probability per attribute, epsilons.

``attribute_epsilons()`` / ``overall_epsilon()`` are recomputed from the filters themselves (the worst pair of
values, :mod:`.privacy`); ``stated_*`` are the paper's formula. The true value is never above the stated one.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .encoding import DEFAULT_FALSE_POSITIVE, DEFAULT_HASHES, BloomEncoding
from .perturb import check_flip, flip_probability, perturb_bits
from .privacy import stated_attribute_epsilon, true_attribute_epsilon


class BloomMechanism:
    def __init__(self, sizes, flips, hashes: int = DEFAULT_HASHES, false_positive: float = DEFAULT_FALSE_POSITIVE):
        self.encoding = BloomEncoding(tuple(sizes), hashes, false_positive)
        flips = check_flip(flips)
        if flips.size == 1:
            flips = np.full(len(self.encoding.sizes), float(flips[0]))
        if flips.size != len(self.encoding.sizes):
            raise InputError("give one flip probability, or one per attribute")
        self.flips = flips

    @classmethod
    def from_epsilons(
        cls, sizes, attribute_epsilons, hashes: int = DEFAULT_HASHES, false_positive: float = DEFAULT_FALSE_POSITIVE
    ):
        """f per attribute from the paper's formula (the stated epsilon equals the one asked)."""
        eps = np.broadcast_to(np.asarray(attribute_epsilons, dtype=float), (len(sizes),))
        return cls(sizes, [flip_probability(float(e), hashes) for e in eps], hashes, false_positive)

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.encoding.sizes

    @property
    def hashes(self) -> int:
        return self.encoding.hashes

    def bit_flips(self) -> np.ndarray:
        """The flip probability of every bit column of the concatenated vector."""
        return np.repeat(self.flips, self.encoding.lengths)

    def sample(self, codes, rng: np.random.Generator | None = None) -> np.ndarray:
        """(n, k) codes -> (n, sum m_j) perturbed bits (uint8)."""
        return perturb_bits(self.encoding.encode(codes), self.bit_flips(), rng)

    def stated_attribute_epsilons(self) -> np.ndarray:
        return np.array([stated_attribute_epsilon(self.hashes, f) for f in self.flips])

    def attribute_epsilons(self) -> np.ndarray:
        return np.array([true_attribute_epsilon(b, f) for b, f in zip(self.encoding.filters, self.flips, strict=True)])

    def stated_overall_epsilon(self) -> float:
        return float(self.stated_attribute_epsilons().sum())

    def overall_epsilon(self) -> float:
        return float(self.attribute_epsilons().sum())
