"""Apply a pattern-structured matrix (or its inverse) to a table with per-axis operations only.

A table over attributes with sizes (a_1..a_m) is an array of that shape (axis i = attribute i), with
optional trailing batch axes. Per axis, x = mean + (x - mean) splits it into the constant and contrast
eigen-components (docs/math.md §6); doing this on every axis gives the 2^m components P_T x side by side in
an array of shape (a_1 + 1, ..., a_m + 1): index 0 on axis i is the constant part, 1..a_i the contrast
part. An operator sum_T f_T P_T scales each component by f_T and sums back. Cost O(m * prod(a_i + 1)),
never a prod(a) x prod(a) matrix.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import TooLargeError
from .spectrum import (
    check_identifiable,
    eigenvalues_from_patterns,
    mechanism_eigenvalues,
    patterns_from_eigenvalues,
)

#: Largest prod(a_i + 1) of the split representation: 80 MB per float64 array; the default estimate keeps a few
#: dozen such arrays at its peak (measured: 1.8e6 split cells, 340 MB), so about 2 GB at this bound.
MAX_SPLIT_CELLS = 10_000_000


def check_table_size(sizes, what: str = "to estimate here") -> None:
    """Refuse a marginal whose split representation exceeds MAX_SPLIT_CELLS, before any array is made."""
    split = float(np.prod([int(a) + 1.0 for a in sizes]))
    if split > MAX_SPLIT_CELLS:
        raise TooLargeError(
            f"a marginal of {len(sizes)} attributes with {float(np.prod([float(a) for a in sizes])):.3g} cells is "
            f"too large {what}; choose fewer attributes"
        )


def component_masks(sizes) -> np.ndarray:
    """Integer array of shape (a_i + 1,...): the eigenspace mask T of each split cell."""
    grid = np.zeros((), dtype=np.int64)
    for i, a in enumerate(sizes):
        bit = (np.arange(int(a) + 1) > 0).astype(np.int64) << i
        grid = np.add.outer(grid, bit)
    return grid


#: Axes up to this size are split and merged by one small matrix product (BLAS); larger ones by a mean and a
#: subtraction (O(cells) whatever the size).
_MATMUL_MAX_SIZE = 32


def _rotate(x: np.ndarray, m: int, step) -> np.ndarray:
    """Apply ``step`` to each of the first m axes in turn: each step takes the leading axis as rows of a 2-D
    view (size, rest) and returns (rest, new size), so the transformed axis moves to the end and after m steps
    the axes are back in order with trailing batch axes in front; those are then moved back behind."""
    shape = x.shape
    batch = shape[m:]
    sizes = []
    for i in range(m):
        x = step(x.reshape(shape[i], -1))
        sizes.append(x.shape[1])
    x = x.reshape(batch + tuple(sizes))
    if batch:
        x = np.moveaxis(x, tuple(range(len(batch))), tuple(range(m, m + len(batch))))
    return x


@functools.lru_cache(maxsize=64)
def _axis_matrices(a: int) -> tuple[np.ndarray, np.ndarray]:
    """Transposed split ((a + 1) x a: mean row, then I - J/a) and merge (a x (a + 1): [1 | I]) matrices."""
    split = np.vstack([np.full((1, a), 1.0 / a), np.eye(a) - 1.0 / a])
    merge = np.hstack([np.ones((a, 1)), np.eye(a)])
    return split.T.copy(), merge.T.copy()


def _split_axis(rows: np.ndarray) -> np.ndarray:
    """(a, rest) -> (rest, a + 1): [mean, x - mean] along the rows."""
    a = rows.shape[0]
    if a <= _MATMUL_MAX_SIZE:
        return rows.T @ _axis_matrices(a)[0]
    out = np.empty((rows.shape[1], a + 1))
    mean = rows.mean(axis=0)
    out[:, 0] = mean
    np.subtract(rows.T, mean[:, None], out=out[:, 1:])
    return out


def _merge_axis(rows: np.ndarray) -> np.ndarray:
    """(a + 1, rest) -> (rest, a): constant part + contrast part."""
    a = rows.shape[0] - 1
    if a <= _MATMUL_MAX_SIZE:
        return rows.T @ _axis_matrices(a)[1]
    return rows[1:].T + rows[0][:, None]


def split_components(table: np.ndarray, m: int) -> np.ndarray:
    """[mean, x - mean] along each of the first m axes."""
    return _rotate(np.asarray(table, dtype=float), m, _split_axis)


def merge_components(parts: np.ndarray, m: int) -> np.ndarray:
    """Inverse of :func:`split_components`: constant part + contrast part along each axis."""
    return _rotate(np.asarray(parts, dtype=float), m, _merge_axis)


class StructuredOperator:
    """The mechanism matrix M on a marginal, through its eigenvalues lambda_T (T = mask of contrast axes)."""

    def __init__(self, sizes, eigenvalues: np.ndarray):
        self.sizes = tuple(int(a) for a in sizes)
        self.m = len(self.sizes)
        check_table_size(self.sizes)
        self.eigenvalues = np.asarray(eigenvalues, dtype=float)
        if self.eigenvalues.shape != (1 << self.m,):
            raise ValueError("one eigenvalue per mask over the attributes is needed")
        self._grid = component_masks(self.sizes)

    @classmethod
    def from_mechanism(cls, mechanism) -> StructuredOperator:
        return cls(mechanism.sizes, mechanism_eigenvalues(mechanism))

    @property
    def cells(self) -> int:
        return int(np.prod(self.sizes, dtype=np.int64))

    def apply_spectrum(self, table: np.ndarray, spectrum: np.ndarray) -> np.ndarray:
        """sum_T spectrum[T] P_T table (table may carry trailing batch axes)."""
        table = np.asarray(table, dtype=float)
        if table.shape[: self.m] != self.sizes:
            raise ValueError(f"table shape {table.shape} does not start with {self.sizes}")
        parts = split_components(table, self.m)
        scale = spectrum[self._grid]
        parts *= scale.reshape(scale.shape + (1,) * (table.ndim - self.m))
        return merge_components(parts, self.m)

    def apply(self, table: np.ndarray) -> np.ndarray:
        """M table: the distribution of the perturbed marginal given a true one."""
        return self.apply_spectrum(table, self.eigenvalues)

    def solve(self, table: np.ndarray) -> np.ndarray:
        """M^{-1} table (raises InputError when an eigenvalue is numerically zero)."""
        check_identifiable(self.eigenvalues)
        return self.apply_spectrum(table, 1.0 / self.eigenvalues)

    def inverse_pattern_coefficients(self) -> np.ndarray:
        """Z_S with M^{-1}[x, y] = Z_{S(x, y)}."""
        check_identifiable(self.eigenvalues)
        return patterns_from_eigenvalues(self.sizes, 1.0 / self.eigenvalues)

    def squared_inverse_spectrum(self) -> np.ndarray:
        """Eigenvalues of the matrix with entries (M^{-1}[x, y])^2 (again pattern-structured)."""
        z = self.inverse_pattern_coefficients()
        return eigenvalues_from_patterns(self.sizes, z * z)
