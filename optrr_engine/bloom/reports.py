"""The server's view of Bloom-filter reports: corrected bit counts and candidate bit matrices.

Corrected counts (the paper's Eq. 5): y_j[b] = (yhat_j[b] - f_j N / 2) / (1 - f_j), yhat_j[b] = number of
reports with bit b of attribute j set. Candidate matrix of attributes D = (j_1..j_k) (Eq. 6): one column per
combination (v_1..v_k) in C order (the last attribute fastest, as ``estimation.counts``), the concatenation of
the filters H_{j_1}(v_1) .. H_{j_k}(v_k); then y = M beta with beta the counts of the combinations.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TooLargeError
from .mechanism import BloomMechanism

#: Largest candidate matrix (rows x columns, float64: 64 MB) built for one subset of attributes.
MAX_CANDIDATE_ENTRIES = 8_000_000


class BloomReports:
    """Perturbed bit vectors (n, sum m_j) together with the mechanism that produced them."""

    def __init__(self, mechanism: BloomMechanism, bits: np.ndarray):
        bits = np.asarray(bits, dtype=np.uint8)
        if bits.ndim != 2 or bits.shape[1] != mechanism.encoding.bits:
            raise InputError(f"expected reports of {mechanism.encoding.bits} bits")
        self.mechanism, self.bits = mechanism, bits

    @property
    def rows(self) -> int:
        return int(self.bits.shape[0])

    def attribute_bits(self, j: int) -> np.ndarray:
        return self.bits[:, self.mechanism.encoding.columns(j)]

    def corrected_counts(self, attrs) -> np.ndarray:
        """y = (y_{j_1}[1..m], ..., y_{j_k}[1..m]) of Eq. (5)."""
        out = []
        for j in attrs:
            f = float(self.mechanism.flips[j])
            if f >= 1.0:
                raise InputError("with f = 1 the reports carry no information")
            raw = self.attribute_bits(j).sum(axis=0, dtype=np.int64)
            out.append((raw - f * self.rows / 2.0) / (1.0 - f))
        return np.concatenate(out)


def subset_sizes(mechanism: BloomMechanism, attrs) -> tuple[int, ...]:
    return tuple(int(mechanism.sizes[j]) for j in attrs)


def combinations(sizes) -> np.ndarray:
    """(k, prod sizes) codes of every combination, C order."""
    return np.indices(tuple(sizes)).reshape(len(sizes), -1)


def candidate_matrix(mechanism: BloomMechanism, attrs) -> np.ndarray:
    """M of Eq. (6): (sum_{j in D} m_j, prod_{j in D} |Omega_j|) float64 of 0/1."""
    sizes = subset_sizes(mechanism, attrs)
    rows = sum(mechanism.encoding.lengths[j] for j in attrs)
    cols = int(np.prod(sizes, dtype=np.int64))
    if rows * cols > MAX_CANDIDATE_ENTRIES:
        raise TooLargeError(
            f"the candidate matrix of {len(attrs)} attributes would have {rows} x {cols} entries "
            f"(at most {MAX_CANDIDATE_ENTRIES:,}); choose fewer or smaller attributes"
        )
    combos = combinations(sizes)
    enc = mechanism.encoding
    return np.concatenate([enc.filters[j][combos[i]].T for i, j in enumerate(attrs)], axis=0).astype(float)
