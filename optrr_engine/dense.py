"""Dense transition matrices for small domains (verification and teaching only).

M[y, x] = P(output = y | input = x), records enumerated in mixed radix (attribute 0 fastest).
"""

from __future__ import annotations

import numpy as np

from .errors import TooLargeError

#: Largest number of records (prod a_i) for a dense matrix: 4096^2 doubles = 128 MiB.
MAX_DENSE_RECORDS = 4096


def enumerate_records(sizes) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(np.prod(sizes))
    idx = np.arange(total)
    out = np.empty((total, sizes.size), dtype=np.int64)
    for i, a in enumerate(sizes):
        out[:, i] = idx % a
        idx = idx // a
    return out


def dense_matrix(mechanism, max_records: int = MAX_DENSE_RECORDS) -> np.ndarray:
    sizes = mechanism.sizes
    total = float(np.prod(sizes.astype(float)))
    if total > max_records:
        raise TooLargeError(f"a dense matrix needs prod(a_i) <= {max_records} records; this domain has {total:.3g}")
    records = enumerate_records(sizes)
    log_x = mechanism.log_pattern_probs()
    diff = records[:, None, :] != records[None, :, :]
    masks = (diff * (1 << np.arange(sizes.size))).sum(axis=2)
    return np.exp(log_x[masks])


def dense_epsilons(matrix: np.ndarray, sizes) -> tuple[float, np.ndarray]:
    """Brute force: whole-record eps = max over y, x, x' of ln M[y,x]/M[y,x'];
    attribute i: the same on the induced channel P(y_i | x), which must not depend on x's other values."""
    sizes = np.asarray(sizes, dtype=np.int64)
    with np.errstate(divide="ignore"):
        logm = np.log(matrix)
    overall = float(np.max(np.max(logm, axis=1) - np.min(logm, axis=1)))
    records = enumerate_records(sizes)
    per = np.empty(sizes.size)
    for i, a in enumerate(sizes):
        chan = np.zeros((a, matrix.shape[1]))
        for u in range(a):
            chan[u] = matrix[records[:, i] == u].sum(axis=0)
        # channel rows u, columns x; must depend on x only through x_i
        for v in range(a):
            cols = chan[:, records[:, i] == v]
            if not np.allclose(cols, cols[:, :1], rtol=1e-9, atol=1e-15):
                raise AssertionError(f"induced channel of attribute {i} depends on other attributes")
        reduced = np.stack([chan[:, records[:, i] == v][:, 0] for v in range(a)], axis=1)
        lr = np.log(reduced)
        per[i] = float(np.max(np.max(lr, axis=1) - np.min(lr, axis=1)))
    return overall, per
