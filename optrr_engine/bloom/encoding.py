"""Bloom-filter encoding of categorical values (the paper's Section 2.5.1, Eq. 3).

Attribute j with |Omega_j| values gets m_j = ceil(|Omega_j| ln(1/p) / (ln 2)^2) bits (p: false-positive rate).
Value v of attribute j sets the bits H_{j,1}(v), ..., H_{j,h}(v) (a position may repeat: fewer than h bits set).
The hash functions are deterministic and the same on every machine: H_{j,i}(v) = the first 8 bytes of
BLAKE2b(str(v), salt = "optrr-bf" + i) read as a little-endian integer, modulo m_j, where v is the value's code
(0 .. |Omega_j| - 1, the category's position in the release's category list) and i = 1..h. The attribute enters
through m_j only, so two attributes of the same size share their filters (as in the paper, H_j depends on U_j
through its domain).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

#: The paper's defaults: h = 4 hash functions, false-positive rate p = 0.022.
DEFAULT_HASHES = 4
DEFAULT_FALSE_POSITIVE = 0.022


def bloom_length(size: int, p: float = DEFAULT_FALSE_POSITIVE) -> int:
    """m = ceil(|Omega| ln(1/p) / (ln 2)^2), Eq. (3)."""
    if not 0.0 < p < 1.0:
        raise InputError(f"the false-positive rate must be in (0, 1), not {p:g}")
    if size < 1:
        raise InputError("an attribute needs at least one value")
    return max(1, math.ceil(size * math.log(1.0 / p) / math.log(2.0) ** 2))


def hash_position(value: int, i: int, m: int) -> int:
    """H_i(value) in 0..m-1 (BLAKE2b, see the module docstring)."""
    salt = f"optrr-bf{i}".encode()[:16]
    digest = hashlib.blake2b(str(int(value)).encode(), digest_size=8, salt=salt).digest()
    return int.from_bytes(digest, "little") % m


def bloom_filters(size: int, m: int, h: int = DEFAULT_HASHES) -> np.ndarray:
    """(size, m) uint8 matrix: row v is the Bloom filter of value v (h hash functions, m bits)."""
    if h < 1:
        raise InputError("the number of hash functions must be at least 1")
    out = np.zeros((int(size), int(m)), dtype=np.uint8)
    for v in range(int(size)):
        for i in range(1, h + 1):
            out[v, hash_position(v, i, m)] = 1
    return out


@dataclass
class BloomEncoding:
    """The encoding of a whole record: one Bloom filter per attribute, concatenated."""

    sizes: tuple[int, ...]
    hashes: int = DEFAULT_HASHES
    false_positive: float = DEFAULT_FALSE_POSITIVE
    lengths: tuple[int, ...] = field(init=False)
    filters: list[np.ndarray] = field(init=False, repr=False)
    offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.sizes = tuple(int(a) for a in self.sizes)
        self.lengths = tuple(bloom_length(a, self.false_positive) for a in self.sizes)
        self.filters = [bloom_filters(a, m, self.hashes) for a, m in zip(self.sizes, self.lengths, strict=True)]
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)

    @property
    def bits(self) -> int:
        return int(self.offsets[-1])

    def columns(self, j: int) -> slice:
        """The bit columns of attribute j in the concatenated vector."""
        return slice(int(self.offsets[j]), int(self.offsets[j + 1]))

    def encode(self, codes: np.ndarray) -> np.ndarray:
        """(n, k) codes -> (n, sum m_j) uint8 concatenated Bloom filters."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.sizes):
            raise InputError(f"expected codes with {len(self.sizes)} columns")
        return np.concatenate([self.filters[j][codes[:, j]] for j in range(len(self.sizes))], axis=1)
