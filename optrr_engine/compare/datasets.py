"""Real tabular data prepared for the comparisons: every column becomes a categorical attribute.

Rules (stated in every report that uses them):
- identifier columns are dropped (named id / caseid / *_id, or all values distinct in more than 20 rows);
- a numeric column with more than ``max_categories`` distinct values is continuous: it is cut into
  ``bins`` quantile bins (labels q1..qB); missing cells become their own category "missing";
- a non-numeric column with more than ``max_categories`` values keeps the most frequent ``max_categories - 1``
  and lumps the rest into "other";
- missing-value markers of categorical columns ("?", "NA", "") stay categories of their own (they are values
  that a release would perturb too);
- columns with a single value are dropped (RR needs at least two categories).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

MISSING = {"", "?", "NA", "N/A", "NaN", "nan", "null"}
RULES = (
    "identifier columns dropped; numeric columns with more than {mc} distinct values cut into {b} quantile bins "
    "(missing = own category); other columns with more than {mc} values keep the {mc1} most frequent plus "
    "'other'; missing markers are categories; single-valued columns dropped"
)


@dataclass
class CategoricalData:
    name: str
    codes: np.ndarray  # (n, k) int
    columns: list[str]
    categories: list[list[str]]
    notes: list[str] = field(default_factory=list)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(c) for c in self.categories], dtype=np.int64)

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])


def _is_identifier(name: str, values) -> bool:
    low = name.strip().lower()
    if low in ("id", "caseid") or low.endswith("_id") or re.fullmatch(r"id\W*", low):
        return True
    return len(values) > 20 and values.nunique() == len(values)


def _numeric(values) -> np.ndarray | None:
    import pandas as pd

    present = values[~values.isin(MISSING)]
    if present.empty:
        return None
    nums = pd.to_numeric(present, errors="coerce")
    if nums.isna().any():
        return None
    out = pd.to_numeric(values.where(~values.isin(MISSING)), errors="coerce").to_numpy(dtype=float)
    return out


def prepare_frame(frame, name: str = "data", max_categories: int = 12, bins: int = 4) -> CategoricalData:
    """Turn a DataFrame of strings into category codes by the module's rules."""
    import pandas as pd

    cols, cats, codes, notes = [], [], [], []
    for col in frame.columns:
        values = frame[col].astype(str).str.strip()
        if _is_identifier(str(col), values):
            notes.append(f"{col}: identifier, dropped")
            continue
        nums = _numeric(values)
        if nums is not None and pd.Series(nums).nunique() > max_categories:
            finite = nums[np.isfinite(nums)]
            edges = np.unique(np.quantile(finite, np.linspace(0, 1, bins + 1)))
            idx = np.clip(np.searchsorted(edges, nums, side="right") - 1, 0, len(edges) - 2)
            labels = np.array([f"q{i + 1}" for i in range(len(edges) - 1)] + ["missing"], dtype=object)
            idx = np.where(np.isfinite(nums), idx, len(edges) - 1)
            values = pd.Series(labels[idx])
            notes.append(f"{col}: continuous, cut into {len(edges) - 1} quantile bins")
        elif values.nunique() > max_categories:
            top = values.value_counts().index[: max_categories - 1]
            values = values.where(values.isin(top), "other")
            notes.append(f"{col}: {frame[col].nunique()} values, rare ones lumped into 'other'")
        uniq = sorted(values.unique(), key=str)
        if len(uniq) < 2:
            notes.append(f"{col}: single value, dropped")
            continue
        cols.append(str(col))
        cats.append([str(u) for u in uniq])
        codes.append(pd.Index(uniq).get_indexer(values))
    if len(cols) < 2:
        raise InputError(f"{name}: fewer than two usable categorical columns")
    return CategoricalData(name, np.stack(codes, axis=1).astype(np.int64), cols, cats, notes)


def load_dataset(path: str, max_categories: int = 12, bins: int = 4, options=None) -> CategoricalData:
    """Read any file ``schema``/``perturb`` read, through the same readers (optrr_engine.io.readers: format,
    encoding, delimiter and every bad-input check alike); empty cells become "" (a missing marker)."""
    import pandas as pd

    from ..io.readers import open_source, table_to_frame

    source = open_source(path, options)
    frames = [table_to_frame(table) for table in source.tables()]  # the readable columns (not a column of lists)
    base = os.path.basename(str(path))
    if not frames:
        if not source.names:
            raise InputError(f"{base} has no columns")
        raise InputError(f"{base} has a header but no data rows")
    frame = pd.concat(frames, ignore_index=True).fillna("")
    name = os.path.splitext(base)[0]
    return prepare_frame(frame, name, max_categories, bins)


def rules_text(max_categories: int = 12, bins: int = 4) -> str:
    return RULES.format(mc=max_categories, b=bins, mc1=max_categories - 1)
