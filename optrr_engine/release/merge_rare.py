"""Merge rare categories away in one step (``optrr schema --merge-rare``), so that perturb need not refuse them.

A category released in 1..RARE_COUNT-1 rows is disclosed by the codebook (:func:`.schema.is_rare`). For each
perturbed nominal or ordinal column (numeric bins are left alone) :func:`merge_rare` writes ``recode`` entries
(:mod:`.recode`) and removes the merged texts from ``categories``:

- nominal: every rare category goes into one category "Other" (into the existing category "Other" if there is
  one; "Other (merged)" if the text "Other" means something else in the column: recoded to another label, a
  missing value or the missing-value label). While "Other" is still rare, the smallest remaining category joins
  it and names it ("Male or other": a category with rows of its own is never released as just "Other"), as long
  as another category remains besides it; the column's note then says that such a label tells recipients that
  some rows hold another value (OR_OTHER_NOTE);
- ordinal (categories in their order): the rarest category merges with its adjacent neighbour of fewer rows (the
  one before on a tie), repeated until none is rare. The merged label is a range when every label merged is a
  number, a range "a-b" or an open range "a+" and they follow one another ("12-14" and "15-17" give "12-17";
  "3" and "4" give "3-4"; "60-64" and "65+" give "60+"); otherwise the labels joined by "|" ("low|mid"). A range
  that takes in the column's highest (lowest) category when that one is rare is open at that end ("112" and a
  rare "222" give "112+"; a rare "0" and "1" give "<=1"): its end would name the extreme value a few records hold.
  An interior rare value can still be a range's end ("1" and a rare "2" give "1-2");
- the missing-value category (``missing_label``, "NA") is never merged (missing is not a value);
- a column always keeps two categories besides the missing one: when only merging everything would remove the
  rare ones, what is left stays rare and the column says so (drop it, or allow its rare categories).

The column's warnings are recomputed: the rare-category warning names what is still rare after the merge (from
the rows per released category, the missing one included, as perturb counts them) or disappears, and a note says
what was merged. Pure functions: the configuration given is not changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .config import ColumnConfig, ReleaseConfig
from .recode import OTHER_LABEL, merge, source_map
from .schema import (
    MANY_WARNING_END,
    RARE_WARNING_START,
    category_rows,
    is_rare,
    many_categories_warning,
    missing_category,
    rare_categories,
    rare_warned,
    rare_warning,
)

#: How the note on a column whose rare categories were merged starts.
MERGED_NOTE_START = "merged rare categories"
#: The note on a column whose rare categories cannot all be merged away.
LEFT_RARE_NOTE = (
    "rare categories left: merging them away would leave one category besides the missing one - drop the column, "
    "or give perturb --allow-rare-categories if publishing their existence is intended"
)
#: Added to the merge note when a category with rows of its own took the rare ones in ('Male or other').
OR_OTHER_NOTE = (
    "the label tells recipients that some rows hold another value: drop the column if even that must not be known"
)
#: The label for the merged categories when "Other" means something else in the column.
OTHER_MERGED = f"{OTHER_LABEL} (merged)"
_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)|(\+))?\s*$")


@dataclass
class MergedRare:
    """What :func:`merge_rare` made: the new ``config``, the columns it ``merged`` and the ones ``still_rare``
    (a category of 1..RARE_COUNT-1 rows is left: see their warnings), both in column order."""

    config: ReleaseConfig
    merged: list[str] = field(default_factory=list)
    still_rare: list[str] = field(default_factory=list)


def stats_rows(cfg: ReleaseConfig, stats: Mapping) -> dict[str, dict[str, int]]:
    """:func:`.schema.category_rows` of each column of ``cfg`` from the schema pass's ColumnStats (``stats``: {column:
    ColumnStats}, :func:`.schema.infer_schema`'s ``column_stats``); a column whose values were too many to count
    is left out."""
    out = {}
    for col in cfg.columns:
        s = stats.get(col.name)
        if s is not None and not s.overflow:
            out[col.name] = category_rows(col, s.counts, s.missing)
    return out


def merge_rare(cfg: ReleaseConfig, counts: Mapping[str, Mapping[str, int]]) -> MergedRare:
    """``cfg`` with the rare categories of its perturbed nominal and ordinal columns merged by the module's rules
    (``counts``: {column: rows per released category}, :func:`.schema.category_rows`; a column
    without counts is left as it is)."""
    columns, merged, still_rare = [], [], []
    for col in cfg.columns:
        rows = counts.get(col.name)
        new = col  # left as it is: a numeric column (its rare missing-value category is not merged), no counts...
        if col.role == "perturb" and col.type in ("nominal", "ordinal") and col.categories and rows is not None:
            new, changed = merge_column(col, rows)
            if changed:
                merged.append(col.name)
        columns.append(new)
        if rare_warned(new):
            still_rare.append(col.name)
    return MergedRare(replace(cfg, columns=columns), merged, still_rare)


def merge_column(col: ColumnConfig, rows: Mapping[str, int]) -> tuple[ColumnConfig, bool]:
    """One column with its rare categories merged (``rows``: rows per released category) and its warnings
    recomputed; whether anything was merged."""
    missing = missing_category(col)
    categories = [str(c) for c in col.categories or []]
    size = {c: int(rows.get(c, 0)) for c in categories}
    values = [c for c in categories if c != missing]
    if col.type == "ordinal":
        groups = _ordinal_groups(values, size)
    else:
        groups = _nominal_groups(values, size, _other_label(col, categories, missing))
    if not groups:
        return replace(col, warnings=_warnings(col, [], size, recoded=bool(col.recode))), False
    recode, listed, parts, after = col.recode, categories, [], dict(size)
    for given, members in groups:
        if given is not None:
            label = given
        else:  # ordinal: a rare end category's own value is not named (an open end instead)
            low_open = members[0] == values[0] and is_rare(size[members[0]])
            high_open = members[-1] == values[-1] and is_rare(size[members[-1]])
            label = _joined_label(members, set(listed) - set(members), low_open, high_open)
        recode, listed = merge(recode, listed, members, label)
        part = _merged_part(members, size, label)
        if col.type != "ordinal" and label.endswith(" or other"):  # a real category took the rare ones in
            part += f" ({OR_OTHER_NOTE})"
        parts.append(part)
        after = {c: n for c, n in after.items() if c not in members}
        after[label] = sum(size[m] for m in members)
    if col.type == "nominal":  # the merged category last, before the missing-value category
        tail = [label] + [c for c in listed if c == missing]
        listed = [c for c in listed if c not in tail] + tail
    warnings = _warnings(col, [f"{MERGED_NOTE_START} {'; '.join(parts)}"], after, recoded=True)
    return replace(col, categories=listed, recode=recode, warnings=warnings), True


def _other_label(col: ColumnConfig, categories: list[str], missing: str | None) -> str:
    """OTHER_LABEL (a category of the column or not), unless the text "Other" means something else in it: recoded
    to another label, a missing value, the missing-value label; then OTHER_MERGED (numbered if that is taken too)."""
    recoded = source_map(col.recode)
    elsewhere = (
        OTHER_LABEL in recoded or OTHER_LABEL in col.missing_values or OTHER_LABEL in (missing, col.missing_label)
    )
    if not elsewhere:
        return OTHER_LABEL
    return _free(OTHER_MERGED, {*categories, *col.missing_values, *recoded})


def _free(label: str, taken: set) -> str:
    """``label``, or ``label`` numbered ("Other (merged) 2") when it is taken."""
    n, out = 1, label
    while out in taken:
        n += 1
        out = f"{label} {n}"
    return out


def _nominal_groups(values: list[str], size: dict, label: str) -> list[tuple[str | None, list[str]]]:
    """[(label, categories merged into it)]: the rare ``values`` (and ``label`` when it is one of them) into
    ``label``, then the smallest others with rows while it is rare and another category with rows would remain (a
    group still rare then hides the rare labels, though perturb still asks about it); [] when nothing is rare or
    merging would leave no other category."""
    rare = [v for v, _n in rare_categories({v: size[v] for v in values})]
    if not rare:
        return []
    group = rare + ([label] if label in values and label not in rare else [])
    rest = [v for v in values if v not in group]
    if not rest:
        return []
    absorbed = []
    while is_rare(sum(size[v] for v in group)) and len([v for v in rest if size[v]]) > 1:
        smallest = min((v for v in rest if size[v]), key=lambda v: size[v])  # not a listed category without rows
        group.append(smallest)
        absorbed.append(smallest)
        rest.remove(smallest)
    if absorbed:  # a category with enough rows of its own joined: the label says so ('Male or other', not 'Other')
        label = _free(f"{', '.join(absorbed)} or other", set(values) - set(group))
    return [(label, group)]  # still rare when no other category could join: named no more, only counted


def _ordinal_groups(values: list[str], size: dict) -> list[tuple[str | None, list[str]]]:
    """[(None, adjacent categories merged together)], in their order: the rarest group merges with its neighbour
    of fewer rows (the one before on a tie) until none is rare or two groups are left; None: the label is
    :func:`_joined_label` of the members."""
    groups = [[v] for v in values]

    def rows(i: int) -> int:
        return sum(size[v] for v in groups[i])

    while len(groups) > 2:
        rare = [i for i in range(len(groups)) if is_rare(rows(i))]
        if not rare:
            break
        i = min(rare, key=rows)
        near = [j for j in (i - 1, i + 1) if 0 <= j < len(groups)]
        j = min(near, key=rows)
        lo, hi = min(i, j), max(i, j)
        groups[lo : hi + 1] = [groups[lo] + groups[hi]]
    return [(None, g) for g in groups if len(g) > 1]


def _joined_label(members: list[str], taken: set, low_open: bool = False, high_open: bool = False) -> str:
    """The label of adjacent ordinal ``members`` merged: a range from the first's low end to the last's high end
    when all read as numbers or ranges in increasing order, else the labels joined by "|"; another form (or a
    numbered one) when that label is already a category. ``high_open`` (``low_open``): the last (first) member is
    the column's highest (lowest) category and rare, so the range is open there ("112+", "<=8"): its end would name
    the extreme value that a few records hold (the oldest patient's age), which the merge is meant to hide."""
    joined = "|".join(members)
    for label in (_range_label(members, low_open, high_open), joined):
        if label is not None and label not in taken:
            return label
    return _free(joined, taken)


def _range_label(members: list[str], low_open: bool = False, high_open: bool = False) -> str | None:
    ends = []
    for m in members:
        found = _RANGE.match(m)
        if not found:
            return None
        low, high, open_end = found.groups()
        ends.append((low, None if open_end else high or low))
    if any(high is None for _low, high in ends[:-1]):
        return None  # an open range ("65+") can only come last
    numbers = [float(x) for low, high in ends for x in (low, high) if x is not None]
    if numbers != sorted(numbers):
        return None
    last = ends[-1][1]
    if last is None or high_open:
        return f"{ends[0][0]}+"
    return f"<={last}" if low_open else f"{ends[0][0]}-{last}"


def _merged_part(members: list[str], size: dict, label: str) -> str:
    """What the note says of one merge: its rare ``members`` (rows), the others merged with them, and ``label``."""
    rare = rare_categories({m: size[m] for m in members})
    names = {v for v, _n in rare}
    others = [m for m in members if m not in names and m != label]
    shown = ", ".join(f"{v!r} ({n})" for v, n in rare)
    also = f" with {', '.join(f'{m!r} ({size[m]})' for m in others)}" if others else ""
    return f"{shown}{also} into {label!r}"


def _warnings(col: ColumnConfig, notes: list[str], rows: dict, recoded: bool) -> list[str]:
    """The column's warnings after the merge: the rare-category warning recounted from ``rows`` (rows per released
    category), the category count's warning updated, the merge ``notes``, and LEFT_RARE_NOTE when a category is
    still rare only because merging it away would leave one category."""
    count = len(rows)
    out = []
    for w in col.warnings:
        w = str(w)
        if w.startswith(RARE_WARNING_START) or w.startswith(MERGED_NOTE_START) or w == LEFT_RARE_NOTE:
            continue
        if w.endswith(MANY_WARNING_END):  # the count's warning, for the categories left (or none)
            w = many_categories_warning(count) or ""
        if w:
            out.append(w)
    out.extend(notes)
    missing = missing_category(col)
    rare = rare_warning(rows, recoded=recoded, missing=missing)
    if rare:
        out.append(rare)
        if any(v != missing for v, _n in rare_categories(rows)):
            out.append(LEFT_RARE_NOTE)
    return out
