"""The estimate of a joint distribution of a few attributes, with its intervals and how it was made."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

#: What each method means, for reports.
METHOD_NOTES = {
    "map": "smoothed maximum likelihood: the posterior mode under a uniform prior worth min(cells, sqrt(rows)) "
    "pseudo-records in all (on a single column, fewer where the release's columns together are shown further from "
    "uniform) (EM, SQUAREM-accelerated): non-negative, sums to 1, consistent, lower error than "
    "maximum likelihood on sparse or noisy tables, pulled towards uniform where the data say little; the default "
    "for shown and exported distributions",
    "ibu": "maximum-likelihood estimate (iterative Bayesian update = EM, SQUAREM-accelerated): non-negative, "
    "sums to 1, consistent",
    "unbiased": "unbiased estimate M^-1 lambda_hat, for inference and confidence intervals (may contain negative "
    "values)",
    "clip": "unbiased estimate with negatives set to 0 and rescaled to sum 1 (Domingo-Ferrer & Soria-Comas 6.4)",
}

INTERVAL_NOTE = (
    "intervals: estimate of the unbiased estimator +/- z * standard error, where the standard error comes from "
    "the multinomial covariance of the observed frequencies pushed through M^-1 (records i.i.d.; a count of 0 "
    "taken as 1 record, so that it never gives a standard error of 0), truncated to [0, 1]; an unbiased estimate "
    "below 0 (above 1) gives [0, z * standard error] ([1 - z * standard error, 1]), never the empty [0, 0]; with "
    "fewer than 5 records per cell every interval is the whole [0, 1] (unknown: too few records for an interval); "
    "they are per-cell (not simultaneous) and do not depend on the point-estimate method"
)


@dataclass
class MarginalEstimate:
    sizes: tuple
    method: str
    estimate: np.ndarray  # proportions, shape sizes
    unbiased: np.ndarray
    std_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    confidence: float
    rows: int
    observed: np.ndarray  # counts of the perturbed marginal, shape sizes
    attributes: list = field(default_factory=list)
    categories: list = field(default_factory=list)
    info: dict = field(default_factory=dict)

    @property
    def negative_cells(self) -> int:
        return int(np.count_nonzero(self.unbiased < 0))

    @property
    def outside_interval(self) -> np.ndarray:
        """Cells whose shown estimate lies outside their interval (the interval is the unbiased estimate's; the
        default estimate, pulled towards uniform, can lie outside it where the unbiased one is far off)."""
        tol = 1e-12
        with np.errstate(invalid="ignore"):
            return (self.estimate < self.ci_low - tol) | (self.estimate > self.ci_high + tol)

    @property
    def outside_interval_note(self) -> str:
        """One sentence when some cell's shown estimate lies outside its interval ("" otherwise)."""
        n = int(np.count_nonzero(self.outside_interval))
        if not n:
            return ""
        cells = f"{n} cell{'s' if n != 1 else ''}"
        if self.method == "unbiased":  # the interval is its own, cut to [0, 1] around the nearest bound
            return (
                f"in {cells} the unbiased estimate is below 0 or above 1, outside its interval (which is cut to "
                "[0, 1]), a sign that the table has too few rows for its noise; read such cells as unknown"
            )
        return (
            f"in {cells} the {self.method} estimate lies outside the interval, which belongs to the unbiased "
            "estimate: there the two disagree by more than the interval's width, a sign that the table has too few "
            "rows for its noise; read such cells as unknown"
        )

    def labels(self) -> list[list[str]]:
        if self.categories:
            return [list(map(str, c)) for c in self.categories]
        return [[str(v) for v in range(a)] for a in self.sizes]

    def names(self) -> list[str]:
        return list(self.attributes) if self.attributes else [f"attribute {i + 1}" for i in range(len(self.sizes))]

    def cells(self) -> list[dict]:
        """One object per cell, C order (last attribute fastest)."""
        labels = self.labels()
        out = []
        for idx in itertools.product(*[range(a) for a in self.sizes]):
            out.append(
                {
                    "values": [labels[i][j] for i, j in enumerate(idx)],
                    "estimate": float(self.estimate[idx]),
                    "ci_low": float(self.ci_low[idx]),
                    "ci_high": float(self.ci_high[idx]),
                    "unbiased": float(self.unbiased[idx]),
                    "std_error": float(self.std_error[idx]),
                    "observed": int(self.observed[idx]),
                }
            )
        return out

    def to_json_dict(self) -> dict:
        return {
            "attributes": self.names(),
            "method": self.method,
            "method_note": METHOD_NOTES.get(self.method, ""),
            "confidence": self.confidence,
            "interval_note": INTERVAL_NOTE,
            "rows": self.rows,
            "negative_cells_in_unbiased": self.negative_cells,
            "cells_outside_their_interval": int(np.count_nonzero(self.outside_interval)),
            "info": self.info,
            "cells": self.cells(),
        }

    def to_frame(self):
        """One row per cell: the attributes' values (an attribute named like a statistic column, e.g. "estimate",
        becomes "estimate (attribute)"), the statistics, and what they are (method, confidence, the rows the table
        was estimated from), so that an exported CSV says what it holds."""
        import pandas as pd

        stats = ["estimate", "ci_low", "ci_high", "unbiased", "std_error", "observed", "method", "confidence", "rows"]
        names = [f"{n} (attribute)" if n in stats else n for n in self.names()]
        rows = []
        for c in self.cells():
            row = dict(zip(names, c["values"], strict=True))
            row.update({k: v for k, v in c.items() if k != "values"})
            row.update(method=self.method, confidence=self.confidence, rows=self.rows)
            rows.append(row)
        return pd.DataFrame(rows, columns=names + stats)

    def marginal_of(self, axes) -> np.ndarray:
        """Point estimate summed over the other attributes (axes kept in the given order)."""
        axes = list(axes)
        other = tuple(i for i in range(len(self.sizes)) if i not in axes)
        kept = [i for i in range(len(self.sizes)) if i in axes]
        summed = self.estimate.sum(axis=other)
        return np.transpose(summed, [kept.index(a) for a in axes])
