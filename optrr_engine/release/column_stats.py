"""Per-column statistics gathered in one streaming pass, with bounded memory.

For each column: non-missing and missing counts; the count of every distinct value up to DISTINCT_CAP
values (beyond that only "many"); how many values read as numbers, their minimum and maximum, and a
uniform random sample of RESERVOIR of them (for quantile bins; a fixed seed keeps schema output stable);
the total text length and how many values contain a space (free-text detection).
"""

from __future__ import annotations

import re

import numpy as np

#: Distinct values tracked per column.
DISTINCT_CAP = 5000
#: Numbers sampled per column for quantiles.
RESERVOIR = 20_000
#: A number as text: optional sign, digits with an optional fraction (or a leading fraction), exponent.
NUMBER_PATTERN = r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$"
_NUMBER = re.compile(NUMBER_PATTERN)


def numeric_values(col, decimal: str = "."):
    """(mask of values that read as numbers, their float values) for a string Arrow column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.replace_substring(col, ",", ".") if decimal == "," else col
    mask = pc.fill_null(pc.match_substring_regex(text, NUMBER_PATTERN), False)
    values = pc.cast(pc.utf8_trim_whitespace(pc.filter(text, mask)), pa.float64())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.float64())
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks() if mask.num_chunks else pa.array([], pa.bool_())
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool), values.to_numpy(zero_copy_only=False)


def is_number_text(text: str, decimal: str = ".") -> bool:
    return bool(_NUMBER.match(text.replace(",", ".") if decimal == "," else text))


class ColumnStats:
    def __init__(self, name: str, decimal: str = ".", seed: int = 0):
        self.name = name
        self.decimal = decimal
        self.present = 0
        self.missing = 0
        self.counts: dict[str, int] = {}
        self.overflow = False
        self.numeric = 0
        self.num_min = np.inf
        self.num_max = -np.inf
        self.all_integral = True
        self._sample = np.empty(0)
        self._keys = np.empty(0)
        self._rng = np.random.default_rng(seed)
        self.text_length = 0
        self.with_space = 0

    def add(self, col) -> None:
        """Count one chunk. Work per cell is one hash pass (value counts); everything else is done on the
        chunk's distinct values, weighted by their counts."""
        import pyarrow.compute as pc

        nulls = col.null_count
        self.missing += nulls
        self.present += len(col) - nulls
        if len(col) == nulls:
            return
        vc = pc.value_counts(pc.drop_null(col))
        values = vc.field("values")
        counts = np.asarray(vc.field("counts").to_numpy(zero_copy_only=False), dtype=np.int64)
        if not self.overflow:
            self._merge(values, counts)
        lengths = np.asarray(pc.utf8_length(values).to_numpy(zero_copy_only=False), dtype=np.int64)
        self.text_length += int(np.dot(lengths, counts))
        spaced = np.asarray(pc.match_substring(values, " ").to_numpy(zero_copy_only=False), dtype=bool)
        self.with_space += int(counts[spaced].sum())
        mask, numbers = numeric_values(values, self.decimal)
        if numbers.size:
            weights = counts[mask]
            self.numeric += int(weights.sum())
            finite = np.isfinite(numbers)
            numbers, weights = numbers[finite], weights[finite]
            if numbers.size:
                self.num_min = min(self.num_min, float(numbers.min()))
                self.num_max = max(self.num_max, float(numbers.max()))
                self.all_integral = self.all_integral and bool(np.all(numbers == np.floor(numbers)))
                self._reservoir(np.repeat(numbers, weights))

    def _merge(self, values, counts: np.ndarray) -> None:
        if len(values) > DISTINCT_CAP:
            self.overflow, self.counts = True, {}
            return
        texts = values.to_pylist()
        if len(texts) + len(self.counts) > DISTINCT_CAP and len(set(texts) | self.counts.keys()) > DISTINCT_CAP:
            self.overflow, self.counts = True, {}
            return
        for v, c in zip(texts, counts.tolist(), strict=True):
            self.counts[v] = self.counts.get(v, 0) + c

    def _reservoir(self, values: np.ndarray) -> None:
        """Keep the RESERVOIR values with the smallest uniform keys: a uniform sample without replacement."""
        keys = self._rng.random(values.size)
        allv = np.concatenate((self._sample, values))
        allk = np.concatenate((self._keys, keys))
        if allv.size > RESERVOIR:
            keep = np.argpartition(allk, RESERVOIR)[:RESERVOIR]
            allv, allk = allv[keep], allk[keep]
        self._sample, self._keys = allv, allk

    @property
    def sample(self) -> np.ndarray:
        return np.sort(self._sample)

    @property
    def distinct(self) -> int | None:
        """Number of distinct values (None when more than DISTINCT_CAP)."""
        return None if self.overflow else len(self.counts)

    def non_numeric_values(self) -> dict[str, int]:
        return {v: c for v, c in self.counts.items() if not is_number_text(v, self.decimal)}

    @property
    def numeric_fraction(self) -> float:
        return self.numeric / self.present if self.present else 0.0

    @property
    def mean_length(self) -> float:
        return self.text_length / self.present if self.present else 0.0
