"""Per-column statistics gathered in one streaming pass, with bounded memory.

For each column: non-missing and missing counts; the count of every distinct value up to DISTINCT_CAP
values (beyond that only "many"); how many values read as numbers, their minimum and maximum, and a
uniform random sample of RESERVOIR of them (for quantile bins; a fixed seed keeps schema output stable);
the total text length and how many values contain a space (free-text detection).

:class:`ColumnSummary` is what the application shows of a loaded column (counts and shares per value,
missing cells, rare values named with their counts, a numeric histogram with its bin edges), built once
per data load from value counts with numpy / pandas (a 70,000-value column takes milliseconds).
"""

from __future__ import annotations

import re

import numpy as np

#: Recodings whose rows per released label a ColumnSummary keeps (the current one, undo, redo).
RECODED_KEPT = 4
#: Distinct values tracked per column.
DISTINCT_CAP = 5000
#: Numbers sampled per column for quantiles.
RESERVOIR = 20_000
#: A number as text: optional sign, digits with an optional fraction (or a leading fraction), exponent, with
#: optional surrounding ASCII white space. ASCII only, written without \d or \s, so that Python's ``re``
#: (:func:`is_number_text`) and Arrow's RE2 (:func:`numeric_values`) agree: a full-width "１２" is text in both.
NUMBER_PATTERN = r"^[ \t\n\r\f\v]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r\f\v]*$"
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
    """Whether ``text`` reads as a number (NUMBER_PATTERN, ``decimal`` as the decimal mark): the same rule as
    :func:`numeric_values`."""
    return _NUMBER.fullmatch(text.replace(",", ".") if decimal == "," else text) is not None


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


# -- summaries for display: computed once per data load ------------------------------------------------

#: Bars of the display histogram of a numeric column.
HISTOGRAM_BINS = 20
#: The label :meth:`.codec.ColumnCodec.released_labels` gives a number outside the bin edges (the release would stop).
OUTSIDE_BINS = "outside the bins"


def merge_value_counts(parts) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, summed counts) of several (values, counts) pairs; vectorised (pandas groupby)."""
    import pandas as pd

    parts = [(np.asarray(v, dtype=object), np.asarray(c, dtype=np.int64)) for v, c in parts]
    parts = [(v, c) for v, c in parts if v.size]
    if not parts:
        return np.empty(0, dtype=object), np.empty(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    values = np.concatenate([v for v, _ in parts])
    counts = np.concatenate([c for _, c in parts])
    summed = pd.Series(counts).groupby(values, sort=False).sum()
    return np.asarray(summed.index, dtype=object), summed.to_numpy(dtype=np.int64)


class ColumnSummary:
    """What a column holds: rows, missing cells, every distinct text with its count (most frequent first),
    the rare ones, and for a mostly numeric column the numbers' range and a histogram. Texts are compared
    exactly as read (the release's own rule)."""

    def __init__(self, name: str, values, counts, missing: int, decimal: str = "."):
        import pyarrow as pa

        values = np.asarray(values, dtype=object)
        counts = np.asarray(counts, dtype=np.int64)
        order = np.lexsort((np.arange(values.size), -counts))  # by count, ties in first-seen order
        self.name = str(name)
        self.values = values[order]
        self.counts = counts[order]
        self.missing = int(missing)
        self.present = int(self.counts.sum())
        self.decimal = decimal
        texts = pa.array([str(v) for v in self.values], type=pa.string())
        mask, numbers = numeric_values(texts, decimal) if len(texts) else (np.zeros(0, bool), np.zeros(0))
        finite = np.isfinite(numbers)
        self._num_values, self._num_counts = numbers[finite], self.counts[mask][finite]
        self.numeric_rows = int(self._num_counts.sum())
        #: each value's number (NaN for a text that does not read as one)
        self._number_of = np.full(self.values.size, np.nan)
        self._number_of[np.flatnonzero(mask)] = numbers
        self._recoded: dict = {}

    @property
    def rows(self) -> int:
        return self.present + self.missing

    @property
    def distinct(self) -> int:
        return int(self.values.size)

    @property
    def shares(self) -> np.ndarray:
        """Share of the non-missing rows of each distinct value."""
        return self.counts / self.present if self.present else np.zeros(self.counts.size)

    def count_of(self, value: str) -> int:
        hit = np.flatnonzero(self.values == value)
        return int(self.counts[hit[0]]) if hit.size else 0

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.values.tolist(), self.counts.tolist(), strict=True))

    def rare(self, numbers: bool = True) -> list[tuple[str, int]]:
        """The rare values (:func:`.schema.rare_categories`, the one rule and order) with their counts; without the
        values that read as numbers when ``numbers`` is False (a binned column publishes their bins, never the
        numbers)."""
        from .schema import RARE_COUNT, rare_categories

        rare = self.counts < RARE_COUNT
        if not numbers:
            rare &= ~self.is_number
        hit = np.flatnonzero(rare)
        return rare_categories(dict(zip(self.values[hit].tolist(), self.counts[hit].tolist(), strict=True)))

    @property
    def is_number(self) -> np.ndarray:
        """Per value: whether it reads as a number with the summary's decimal mark (the release's rule)."""
        return ~np.isnan(self._number_of)

    def top(self, n: int) -> tuple[list[str], list[int], int]:
        """The ``n`` most frequent values, their counts, and the rows of all the others together."""
        rest = int(self.counts[n:].sum())
        return [str(v) for v in self.values[:n]], self.counts[:n].tolist(), rest

    @property
    def numeric_share(self) -> float:
        return self.numeric_rows / self.present if self.present else 0.0

    def numeric_range(self) -> tuple[float, float] | None:
        if not self._num_values.size:
            return None
        return float(self._num_values.min()), float(self._num_values.max())

    def histogram(self, edges=None) -> tuple[np.ndarray, np.ndarray]:
        """(counts, edges) of the numbers: in the given bin ``edges`` (the release's rule: e_j <= v <
        e_{j+1}, the last bin closed; numbers outside are not counted) or, by default, HISTOGRAM_BINS equal
        bins over the numbers' range."""
        from .bins import assign

        if edges is None:
            rng = self.numeric_range()
            if rng is None:
                return np.zeros(0, dtype=np.int64), np.zeros(0)
            lo, hi = rng
            edges = np.linspace(lo, hi if hi > lo else lo + 1.0, HISTOGRAM_BINS + 1)
        edges = np.asarray(edges, dtype=float)
        idx, outside = assign(self._num_values, edges)
        counts = np.bincount(idx[~outside], weights=self._num_counts[~outside], minlength=edges.size - 1)
        return counts.astype(np.int64), edges

    def recoded(self, recode) -> dict[str, int]:
        """Rows per released label after ``recode`` (see :mod:`.recode`). The last few results are kept by the
        recode's content, so the threads showing one summary count a 70,000-value column once per recoding;
        the dict returned is shared: read it, never modify it."""
        from .recode import recode_counts, recode_key

        key = recode_key(recode)  # (a tuple of every recoded text: built once per call)
        counts = self._recoded.get(key)
        if counts is None:
            counts = recode_counts(self.values, self.counts, recode)
            self._keep(key, counts)
        return counts

    def remember_recoded(self, recode, counts: dict[str, int]) -> None:
        """Keep ``counts`` as :meth:`recoded`'s result for ``recode`` (counted elsewhere, e.g. in a worker
        process that had a copy of this summary)."""
        from .recode import recode_key

        self._keep(recode_key(recode), counts)

    def _keep(self, key, counts: dict[str, int]) -> None:
        """The cache of :meth:`recoded`: at most RECODED_KEPT recodings, the oldest dropped first."""
        if key not in self._recoded and len(self._recoded) >= RECODED_KEPT:
            self._recoded.pop(next(iter(self._recoded)), None)
        self._recoded[key] = counts


def summarize_coded(name: str, parts, decimal: str = ".") -> ColumnSummary:
    """Summary from chunks of (integer codes with -1 = missing, distinct values the codes index)."""
    import pandas as pd

    pairs, missing = [], 0
    for codes, uniques in parts:
        codes = np.asarray(codes)
        valid = codes >= 0
        missing += int(codes.size - np.count_nonzero(valid))
        uniques = np.asarray(uniques, dtype=object)
        counts = np.bincount(codes[valid].astype(np.int64), minlength=uniques.size)
        if uniques.size and pd.api.types.infer_dtype(uniques, skipna=False) != "string":
            uniques = np.asarray([str(u) for u in uniques], dtype=object)
        pairs.append((uniques, counts))
    values, counts = merge_value_counts(pairs)
    keep = counts > 0
    return ColumnSummary(name, values[keep], counts[keep], missing, decimal)


def summarize_frame(frame, decimal: str = ".") -> dict[str, ColumnSummary]:
    """Summaries of every column of a pandas DataFrame or pyarrow Table (NaN / null = missing)."""
    import pandas as pd

    out = {}
    names = list(frame.column_names) if hasattr(frame, "column_names") else list(frame.columns)
    for name in names:
        col = frame.column(name).to_pandas() if hasattr(frame, "column_names") else frame[name]
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        out[str(name)] = summarize_coded(str(name), [(codes, np.asarray(uniques, dtype=object))], decimal)
    return out
