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
        import pyarrow.compute as pc

        nulls = col.null_count
        present = len(col) - nulls
        self.missing += nulls
        self.present += present
        if present == 0:
            return
        if not self.overflow:
            vc = pc.value_counts(pc.drop_null(col))
            values = vc.field("values").to_pylist()
            if len(values) + len(self.counts) > DISTINCT_CAP and len(set(values) | self.counts.keys()) > DISTINCT_CAP:
                self.overflow = True
                self.counts = {}
            else:
                for v, c in zip(values, vc.field("counts").to_pylist(), strict=True):
                    self.counts[v] = self.counts.get(v, 0) + c
        lengths = pc.utf8_length(col)
        self.text_length += int(pc.sum(lengths).as_py() or 0)
        self.with_space += int(pc.sum(pc.cast(pc.fill_null(pc.match_substring(col, " "), False), "int64")).as_py())
        mask, values = numeric_values(col, self.decimal)
        if values.size:
            self.numeric += int(values.size)
            finite = values[np.isfinite(values)]
            if finite.size:
                self.num_min = min(self.num_min, float(finite.min()))
                self.num_max = max(self.num_max, float(finite.max()))
                self.all_integral = self.all_integral and bool(np.all(finite == np.floor(finite)))
                self._reservoir(finite)

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
