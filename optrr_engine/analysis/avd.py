"""Average variation distance (LOPUB / LOCOP / BRR paper): AVD(P, Q) = 1/2 sum |P - Q|."""

from __future__ import annotations

import numpy as np


def avd(p, q) -> float:
    """Half the L1 distance between two distributions of the same shape (each should sum to 1)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"distributions of different shapes {p.shape} and {q.shape}")
    return 0.5 * float(np.abs(p - q).sum())
