"""Schema inference: one streaming pass over a file gives a release-configuration template.

Per column (rules in :func:`decide_column`):
- likely identifiers (a name such as id / mrn / name / email / date of birth, or a distinct value in nearly
  every row), free text (long texts with spaces) and columns with more than MAX_CATEGORIES categories get
  role "drop" with a warning saying why; so do empty and one-valued columns;
- numbers with more than ORDINAL_MAX distinct values become type "numeric" with DEFAULT_BIN_COUNT quantile
  bins (rounded, outer bins open); numbers with few values become "ordinal" (numeric order); other text
  is "nominal" (sorted alphabetically: the order reveals nothing about frequencies);
- everything else gets role "perturb" with epsilon DEFAULT_EPSILON; empty cells become the category
  "NA" where they occur.
Categories seen fewer than RARE_COUNT times are flagged: the codebook lists every category, so their
existence is disclosed.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np

from ..errors import InputError
from ..tasks import TaskControl
from .bins import DEFAULT_BIN_COUNT, equal_width_edges, quantile_edges
from .column_stats import ColumnStats, is_number_text
from .config import DEFAULT_EPSILON, MISSING_LABEL, ColumnConfig, ReleaseConfig

#: Number-valued columns with at most this many distinct values are ordinal categories, not bins.
ORDINAL_MAX = 12
#: More categories than this: dropped by default.
MAX_CATEGORIES = 100
#: More categories than this: a warning.
MANY_CATEGORIES = 30
#: Distinct values in at least this share of non-empty rows (and >= UNIQUE_MIN_ROWS rows): identifier.
UNIQUE_SHARE = 0.9
UNIQUE_MIN_ROWS = 20
#: Share of the values (missing-value markers aside) that must read as numbers for a numeric column.
NUMERIC_SHARE = 0.95
#: Categories seen fewer times than this are flagged.
RARE_COUNT = 5
#: Texts longer than this on average, or mostly with spaces and mostly distinct: free text.
FREE_TEXT_LENGTH = 40
MISSING_MARKERS = ("?", "NA", "N/A", "n/a", "NaN", "nan", "NULL", "null", "None", "none", ".", "-", "missing")
_ID_NAME = re.compile(
    r"(^|[^a-z])(id|ids|uid|uuid|guid|mrn|ssn|nhs|nino|bsn|passport|iban)([^a-z]|$)"
    r"|name|e-?mail|phone|mobile|address|street|post_?code|zip_?code|birth|dob|social.?security|record.?number"
    r"|patient.?(no|num|number)|identifier",
    re.IGNORECASE,
)


def _dense_integers(stats: ColumnStats) -> bool:
    """Whole numbers filling most of their range (1, 2, 3, ...): how record numbers look."""
    span = stats.num_max - stats.num_min + 1
    return stats.all_integral and np.isfinite(span) and span <= 2 * max(1, stats.numeric)


def looks_like_identifier_name(name: str) -> bool:
    return bool(_ID_NAME.search(name.strip()))


def _sort_key_numeric(decimal: str):
    def key(v: str):
        if is_number_text(v, decimal):
            return (0, float(v.replace(",", ".") if decimal == "," else v), v)
        return (1, 0.0, v)

    return key


def _alphabetical(v: str):
    return (v.casefold(), v)


def decide_column(stats: ColumnStats) -> ColumnConfig:
    """A column's configuration from its statistics (see the module docstring)."""
    name = stats.name
    col = ColumnConfig(name=name, role="perturb", type="nominal", epsilon=DEFAULT_EPSILON)
    warn = col.warnings
    rows = stats.present
    distinct = stats.distinct
    if rows == 0:
        col.role = "drop"
        warn.append("empty column: no values")
        return col
    has_missing = stats.missing > 0
    if looks_like_identifier_name(name):
        col.role = "drop"
        warn.append("likely identifier (its name); dropped - set role to perturb only if it is not identifying")
        return col
    markers = sum(stats.counts.get(m, 0) for m in MISSING_MARKERS)
    numeric = stats.numeric > 0 and stats.numeric >= NUMERIC_SHARE * (rows - markers)
    spaced = stats.with_space > 0.5 * rows and (distinct is None or distinct > 0.5 * rows)
    if not numeric and (stats.mean_length > FREE_TEXT_LENGTH or spaced):
        col.role = "drop"
        warn.append("looks like free text; dropped")
        return col
    nearly_unique = rows >= UNIQUE_MIN_ROWS and (distinct is None or distinct >= UNIQUE_SHARE * rows)
    if nearly_unique and (not numeric or _dense_integers(stats)):
        col.role = "drop"
        count = "more than 5,000" if distinct is None else f"{distinct:,}"
        warn.append(f"likely identifier: {count} distinct values in {rows:,} rows; dropped")
        return col
    extras = stats.non_numeric_values() if numeric else {}
    numeric_distinct = None if distinct is None else distinct - len(extras)
    if numeric and (numeric_distinct is None or numeric_distinct > ORDINAL_MAX):
        edges = quantile_edges(stats.sample, DEFAULT_BIN_COUNT)
        if len(edges) >= 3:
            col.type = "numeric"
            col.bins = {"method": "quantile", "count": DEFAULT_BIN_COUNT, "edges": edges}
            col.categories = sorted(extras, key=_alphabetical)
            warn.append("numbers grouped into quantile bins; the bin edges come from the data and are published")
            _add_missing(col, has_missing, set(extras))
            _flag_markers(col, extras)
            return col
    if distinct is None or distinct > MAX_CATEGORIES:
        col.role = "drop"
        count = "more than 5000" if distinct is None else f"{distinct:,}"
        warn.append(f"{count} categories: too many to randomize usefully; dropped - merge categories to use it")
        return col
    values = list(stats.counts)
    if numeric:
        col.type = "ordinal"
        col.categories = sorted(values, key=_sort_key_numeric(stats.decimal))
    else:
        col.categories = sorted(values, key=_alphabetical)
    _add_missing(col, has_missing, set(values))
    if len(col.categories) < 2:
        col.role = "drop"
        warn.append(f"only one value ({col.categories[0]!r}): nothing to randomize; dropped")
        return col
    if len(col.categories) > MANY_CATEGORIES:
        warn.append(f"{len(col.categories)} categories: estimates will need many rows; consider merging")
    rare = sum(1 for c in stats.counts.values() if c < RARE_COUNT)
    if rare:
        warn.append(
            f"{rare} categor{'y occurs' if rare == 1 else 'ies occur'} fewer than {RARE_COUNT} times; the codebook "
            "lists every category, so their existence is disclosed - consider merging"
        )
    _flag_markers(col, stats.counts)
    return col


def _add_missing(col: ColumnConfig, has_missing: bool, values: set) -> None:
    if not has_missing:
        return
    col.missing = "category"
    if MISSING_LABEL in values:
        col.warnings.append(f"empty cells and the text {MISSING_LABEL!r} become one category {MISSING_LABEL!r}")
    else:
        col.categories = [*(col.categories or []), MISSING_LABEL]


def _flag_markers(col: ColumnConfig, values) -> None:
    markers = [m for m in MISSING_MARKERS if m in values and m != MISSING_LABEL]
    if markers:
        shown = ", ".join(repr(m) for m in markers)
        col.warnings.append(
            f"values that look like missing-value markers ({shown}) are kept as categories; list them in "
            "missing_values to treat them as missing"
        )


def gather_stats(source, names: list[str], decimal: str, ctl: TaskControl) -> tuple[dict, int]:
    stats = {n: ColumnStats(n, decimal) for n in names}
    rows = 0
    for table in source.tables(names):
        ctl.check()
        for n in names:
            stats[n].add(table.column(n))
        rows += table.num_rows
        ctl.report(source.fraction_done(), f"read {rows:,} rows")
    return stats, rows


def infer_schema(path, options=None, progress=None, cancel=None) -> ReleaseConfig:
    """A release-configuration template for the file at ``path`` (one streaming pass)."""
    from ..io.readers import open_source

    ctl = TaskControl(progress, cancel)
    source = open_source(path, options)
    stats, rows = gather_stats(source, source.names, source.options.decimal or ".", ctl)
    if rows == 0:
        raise InputError(f"{os.path.basename(str(path))} has a header but no data rows")
    columns = [decide_column(stats[n]) for n in source.names]
    reader = {k: v for k, v in source.options.to_dict().items() if k in ("delimiter", "encoding", "decimal", "sheet")}
    cfg = ReleaseConfig(
        method="auto",
        columns=columns,
        input=reader,
        source={"file": os.path.basename(str(path)), "format": source.format, "rows": rows},
    )
    ctl.report(1.0, f"{rows:,} rows, {len(columns)} columns")
    return cfg


def needs_bins(cfg: ReleaseConfig) -> list[ColumnConfig]:
    return [c for c in cfg.perturbed() if c.type == "numeric" and c.bins and "edges" not in c.bins]


def resolve_bins(source, cfg: ReleaseConfig, ctl: TaskControl) -> list[str]:
    """Compute edges for numeric columns whose bins give only a method and count (one pass over those
    columns). Returns the names of the columns whose edges were computed."""
    todo = needs_bins(cfg)
    if not todo:
        return []
    stats, _ = gather_stats(source, [c.name for c in todo], source.options.decimal or ".", ctl)
    for c in todo:
        s = stats[c.name]
        count = int(c.bins.get("count", DEFAULT_BIN_COUNT))
        if c.bins["method"] == "equal_width":
            edges = equal_width_edges(s.num_min, s.num_max, count)
        else:
            edges = quantile_edges(s.sample, count)
        if len(edges) < 3 or any(math.isnan(e) for e in edges):
            raise InputError(f"column {c.name!r}: its values do not spread over 2 or more bins; list the edges")
        c.bins = {**c.bins, "edges": edges}
    return [c.name for c in todo]
