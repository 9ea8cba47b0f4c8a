"""Public priors for the predicted error: the distribution the error is predicted at (never the data).

Each prior gives the table pi_A of a marginal A (shape (a_i for i in A)). The unbiased estimator's
covariance depends on pi only through lambda = M pi, so a rough public guess is enough.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


class UniformPrior:
    """Every cell equally likely (the default: no knowledge)."""

    def marginal(self, sizes, attrs) -> np.ndarray:
        shape = tuple(int(sizes[i]) for i in attrs)
        return np.full(shape, 1.0 / float(np.prod(shape)))


class IndependentPrior:
    """Product of 1-way guesses (one probability vector per attribute; None = uniform)."""

    def __init__(self, one_way):
        self.one_way = [None if p is None else _probabilities(p, f"attribute {i + 1}") for i, p in enumerate(one_way)]

    def marginal(self, sizes, attrs) -> np.ndarray:
        out = np.ones(())
        for i in attrs:
            p = self.one_way[i] if i < len(self.one_way) else None
            a = int(sizes[i])
            if p is None:
                p = np.full(a, 1.0 / a)
            elif p.size != a:
                raise InputError(f"the prior guess for attribute {i + 1} has {p.size} values; it has {a} categories")
            out = np.multiply.outer(out, p)
        return out


class TablePrior(IndependentPrior):
    """Guessed tables of some marginals (dict: attribute tuple -> table); other marginals use the independent
    product of the 1-way guesses (taken from the 1-way tables given, else uniform)."""

    def __init__(self, tables: dict, k: int):
        self.tables = {tuple(a): _probabilities(t, f"marginal {a}", flat=False) for a, t in tables.items()}
        super().__init__([self.tables.get((i,)) for i in range(k)])

    def marginal(self, sizes, attrs) -> np.ndarray:
        key = tuple(attrs)
        if key in self.tables:
            t = self.tables[key]
            if t.shape != tuple(int(sizes[i]) for i in attrs):
                raise InputError(f"the prior table of marginal {key} has shape {t.shape}")
            return t
        return super().marginal(sizes, attrs)


def _probabilities(p, what: str, flat: bool = True) -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if flat:
        arr = arr.reshape(-1)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0) or arr.sum() <= 0:
        raise InputError(f"the prior guess for {what} must be non-negative numbers with a positive sum")
    return arr / arr.sum()
