"""Counts of a marginal, accumulated chunk by chunk (memory independent of the number of rows).

Codes (n, m) with values 0..a_i-1 map to the mixed-radix index sum_i c_i * stride_i (C order: the last
attribute fastest), and np.bincount accumulates them into a table of shape (a_1, ..., a_m).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TooLargeError

#: Largest number of cells of a counted marginal (a table of int64 counts: 800 MB).
MAX_COUNT_CELLS = 100_000_000


def strides(sizes) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=np.int64)
    out = np.ones(sizes.size, dtype=np.int64)
    for i in range(sizes.size - 2, -1, -1):
        out[i] = out[i + 1] * sizes[i + 1]
    return out


def flat_index(codes: np.ndarray, sizes) -> np.ndarray:
    """Mixed-radix index of each row (C order)."""
    codes = np.asarray(codes)
    st = strides(sizes)
    cells = int(np.prod(np.asarray(sizes, dtype=np.int64)))
    dtype = np.int32 if cells < 2**31 else np.int64
    idx = codes[:, 0].astype(dtype) * dtype(st[0])
    for i in range(1, codes.shape[1]):
        idx += codes[:, i].astype(dtype) * dtype(st[i])
    return idx


def count_codes(codes: np.ndarray, sizes) -> np.ndarray:
    """Table of counts (shape sizes) of the rows of ``codes``."""
    sizes = tuple(int(a) for a in sizes)
    cells = int(np.prod(sizes, dtype=np.int64))
    if cells > MAX_COUNT_CELLS:
        raise TooLargeError(f"a table of {cells} cells is too large to count; choose fewer or smaller attributes")
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(sizes):
        raise InputError(f"codes must have shape (rows, {len(sizes)})")
    if codes.size and (codes.min() < 0 or np.any(codes.max(axis=0) >= np.asarray(sizes))):
        raise InputError("a code is outside its attribute's categories")
    return np.bincount(flat_index(codes, sizes), minlength=cells).reshape(sizes)


class StreamingCounter:
    """Accumulate counts of the marginal over chunks of codes."""

    def __init__(self, sizes):
        self.sizes = tuple(int(a) for a in sizes)
        cells = int(np.prod(self.sizes, dtype=np.int64))
        if cells > MAX_COUNT_CELLS:
            raise TooLargeError(f"a table of {cells} cells is too large to count; choose fewer or smaller attributes")
        self.table = np.zeros(self.sizes, dtype=np.int64)
        self.rows = 0

    def add(self, codes: np.ndarray) -> None:
        if len(codes):
            self.table += count_codes(codes, self.sizes)
            self.rows += len(codes)


def count_replicates(codes: np.ndarray, sizes, replicate: np.ndarray, replicates: int) -> np.ndarray:
    """Counts per replicate: array (replicates, *sizes); ``replicate`` gives each row's replicate id."""
    sizes = tuple(int(a) for a in sizes)
    cells = int(np.prod(sizes, dtype=np.int64))
    idx = flat_index(codes, sizes).astype(np.int64) + np.asarray(replicate, dtype=np.int64) * cells
    return np.bincount(idx, minlength=cells * replicates).reshape((replicates,) + sizes)
