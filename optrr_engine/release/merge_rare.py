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
- ordinal (categories in their order), when at least one category is rare: the column becomes a partition placed
  by its common categories alone, the anchors (those of at least RARE_COUNT rows; a listed category without rows
  is not one), never by where the rare values are or how many rows they have: every category, rare or not, goes
  into the group of the nearest anchor at or below it in the order, and those below the first anchor into the
  first group. When every category reads as a whole number ("7", "07", "7.0"), a range "a-b", an open range
  "<=a" (first) or "a+" (last), in increasing order, anchor c_i's group is released as the range from c_i's lowest
  number to one below c_(i+1)'s lowest, written as c_i writes its numbers (as many digits, "08-09"; the same
  decimals on both ends, "66.0-69.0"); the first group is always open below ("<=2") and the last always open above
  ("5+"), whether or not rare values lie beyond, and a range of one number is released as c_i writes it ("1",
  rare "2", "3", "5" give "<=2", "3-4", "5+"; the same for a rare "4" instead of "2", or for both with any rows).
  Otherwise (texts, numbers with decimals or a sign) every group is released as "c_i (and neighbours)"
  (NEIGHBOURS_MARK), all of them, not only those that took rare values in, and the merge note explains the mark
  (NEIGHBOURS_NOTE). A label that is already a category of another group is numbered ("x (and neighbours) 2").
  The codebook thus discloses one thing about the rare values: that the column had at least one (its labels are
  ranges or marked, where without rare values they would be its own categories); whether the labels are ranges or
  marked texts is read from every category's form, so a rare category that is not a whole number in order (a text
  in a numeric column) also tells that much of itself by making them texts. With fewer than two anchors
  nothing is merged and the column stays rare (LEFT_RARE_NOTE: drop it, or allow its rare categories);
- the missing-value category (``missing_label``, "NA") is never merged (missing is not a value), unless the
  recoding put the missing values into a number of an ordinal column's order ('NA' -> '1'): then it is that number;
- a column always keeps two categories besides the missing one: when only merging everything would remove the
  rare ones (an ordinal column of fewer than two anchors), what is left stays rare and the column says so (drop
  it, or allow its rare categories).

The column's warnings are recomputed: the rare-category warning names what is still rare after the merge (from
the rows per released category, the missing one included, as perturb counts them) or disappears, and a note says
what was merged, naming the rare values with their rows: it is for the data owner, a warning of the configuration
that the manifest does not carry. Pure functions: the configuration given is not changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .config import ColumnConfig, ReleaseConfig
from .recode import OTHER_LABEL, merge_many, source_map
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
#: Follows the common category naming each group of a merged ordinal column that is not integer-valued (every
#: group, whether or not it took rare values in).
NEIGHBOURS_MARK = "(and neighbours)"
#: Added to the merge note of an ordinal column whose labels carry NEIGHBOURS_MARK.
NEIGHBOURS_NOTE = (
    f"'{NEIGHBOURS_MARK}' in a label: each category may also hold less common values next to it in the order, "
    "merged in unnamed; the labels tell recipients only that the column had such values somewhere: drop the column "
    "if even that must not be known"
)
#: The label for the merged categories when "Other" means something else in the column.
OTHER_MERGED = f"{OTHER_LABEL} (merged)"
#: A whole number ("7", "07", "7.0"), a range "3-8", an open range "65+" or "<=1": an integer-valued ordinal category.
_NUMBER = r"\d+(?:\.0+)?"
_SPAN = re.compile(
    rf"^\s*(?:<=\s*(?P<upto>{_NUMBER})|(?P<low>{_NUMBER})\s*(?:-\s*(?P<high>{_NUMBER})|(?P<open>\+))?)\s*$"
)


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
    labelled, marked = _labelled_groups(col, categories, missing, size)
    if not labelled:
        return replace(col, warnings=_warnings(col, [], size, recoded=bool(col.recode))), False
    parts, after = [], dict(size)
    for members, label in labelled:
        if len(members) > 1:  # (an ordinal category only relabelled, '5' released as '5+', is not a merge)
            part = _merged_part(members, size, label)
            if col.type != "ordinal" and label.endswith(" or other"):  # a real category took the rare ones in
                part += f" ({OR_OTHER_NOTE})"
            parts.append(part)
        for m in members:
            after.pop(m, None)
        after[label] = sum(size[m] for m in members)
    recode, listed = merge_many(col.recode, categories, labelled)
    if marked:
        parts[-1] += f" ({NEIGHBOURS_NOTE})"
    if col.type == "nominal":  # the merged category last, before the missing-value category
        tail = [label] + [c for c in listed if c == missing]
        listed = [c for c in listed if c not in tail] + tail
    warnings = _warnings(col, [f"{MERGED_NOTE_START} {'; '.join(parts)}"], after, recoded=True)
    return replace(col, categories=listed, recode=recode, warnings=warnings), True


def merged_labels(col: ColumnConfig, rows: Mapping[str, int]) -> dict[str, str]:
    """{category: the label it would be released as} of every category of ``col`` that :func:`merge_column` (the
    merge of ``optrr schema --merge-rare``) merges or relabels (``rows``: rows per released category), e.g.
    {'Other': 'Male or other', 'Male': 'Male or other'}; {} when it merges nothing."""
    missing = missing_category(col)
    categories = [str(c) for c in col.categories or []]
    size = {c: int(rows.get(c, 0)) for c in categories}
    labelled, _marked = _labelled_groups(col, categories, missing, size)
    return {m: label for members, label in labelled for m in members}


def _labelled_groups(
    col: ColumnConfig, categories: list[str], missing: str | None, size: dict
) -> tuple[list[tuple[list[str], str]], bool]:
    """([(categories, the label they are released as)], whether an ordinal column's labels carry NEIGHBOURS_MARK):
    the merges of :func:`merge_column` in turn, each label free among the categories listed after the ones before it;
    ([], False) when nothing is merged."""
    values = [c for c in categories if c != missing]
    if col.type == "ordinal" and missing in categories and _integer_spans(categories) is not None:
        # the missing values recoded into a number of the order ('NA' -> '1'): a value like the others, placed in
        # the partition (left out, it overlapped a range: '1' beside '<=3')
        values = categories
    marked = False  # an ordinal column's labels carry NEIGHBOURS_MARK
    if col.type == "ordinal":
        groups, marked = _ordinal_groups(values, size)
    else:
        groups = _nominal_groups(values, size, _other_label(col, categories, missing))
    # (kept as a set, all made by one merge_many: a merge per group was quadratic, 6,000 categories took seconds)
    listed_now, labelled = set(categories), []
    for given, members in groups:
        listed_now.difference_update(members)
        label = given if col.type != "ordinal" else _free(given, listed_now)
        listed_now.add(label)
        labelled.append((members, label))
    return labelled, marked


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


def _nominal_groups(values: list[str], size: dict, label: str) -> list[tuple[str, list[str]]]:
    """[(label, categories merged into it)]: the rare ``values`` (and ``label`` when it is one of them) into
    ``label``, then the smallest others with rows while it is rare and another category with rows would remain (a
    group still rare then hides the rare labels, though perturb still asks about it); [] when nothing is rare or
    merging would leave no other category."""
    rare = [v for v, _n in rare_categories({v: size[v] for v in values})]
    if not rare:
        return []
    group = rare + ([label] if label in values and label not in rare else [])
    grouped = set(group)
    rest = [v for v in values if v not in grouped]
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


def _ordinal_groups(values: list[str], size: dict) -> tuple[list[tuple[str, list[str]]], bool]:
    """([(label, categories released as it)], whether the labels carry NEIGHBOURS_MARK), in their order: the
    partition by the anchors (:func:`_anchors`) when at least one category is rare, every category in the group of
    the nearest anchor at or below it (those below the first anchor in the first group), labelled by
    :func:`_integer_labels` or :func:`_text_labels`; groups released under their own text are left out. ([], False)
    when nothing is rare, or when fewer than two anchors are left (the column stays rare)."""
    if not any(is_rare(size[v]) for v in values):
        return [], False
    anchors = _anchors(values, size)
    if len(anchors) < 2:
        return [], False
    groups: list[list[str]] = [[] for _ in anchors]
    k = 0
    for v in values:
        if k + 1 < len(anchors) and v == anchors[k + 1]:
            k += 1
        groups[k].append(v)
    spans = _integer_spans(values)
    if spans is not None:
        labels = _integer_labels(anchors, spans)
    else:
        labels = [f"{a} {NEIGHBOURS_MARK}" for a in anchors]
    out = [(label, g) for label, g in zip(labels, groups, strict=True) if g != [label]]
    return out, spans is None


def _anchors(values: list[str], size: dict) -> list[str]:
    """The categories that place an ordinal column's groups: those of at least RARE_COUNT rows (not rare, and not
    empty: a listed category without rows would make a group of rare ones only), in their order."""
    return [v for v in values if size[v] and not is_rare(size[v])]


def _integer_spans(values: list[str]) -> dict[str, tuple[str | None, str | None]] | None:
    """{category: (lowest, highest) whole number it stands for as written, None where open} when every category
    reads as a whole number, a range "a-b", "<=a" (first only) or "a+" (last only), in increasing order without
    overlap; else None (the labels are then texts)."""
    spans: dict[str, tuple[str | None, str | None]] = {}
    previous: int | None = None
    for i, v in enumerate(values):
        found = _SPAN.match(v)
        if not found:
            return None
        if found["upto"] is not None:
            low, high = None, found["upto"]
        else:
            low, high = found["low"], None if found["open"] else found["high"] or found["low"]
        if (low is None and i > 0) or (high is None and i < len(values) - 1):
            return None  # an open end inside the order
        if (low is not None and high is not None and _int(high) < _int(low)) or (
            previous is not None and (low is None or _int(low) <= previous)
        ):
            return None
        previous = None if high is None else _int(high)
        spans[v] = (low, high)
    return spans


def _int(text: str) -> int:
    return int(text.split(".")[0])


def _integer_labels(anchors: list[str], spans: dict[str, tuple[str | None, str | None]]) -> list[str]:
    """The range labels of the groups of an integer-valued column, one per anchor (two at least): anchor i's group
    runs from its lowest number to one below anchor i+1's lowest, written as anchor i writes its numbers; the first
    is always open below ("<=9"), the last always open above ("65+"); a range of one number is that number."""
    out = []
    last = len(anchors) - 1
    for i, a in enumerate(anchors):
        low, high = spans[a]
        written = low if low is not None else high
        assert written is not None  # "<=a" or "a", "a-b", "a+"
        if i == last:
            assert low is not None  # only the first category is open below, and there are two anchors at least
            out.append(f"{low}+")
            continue
        nxt = spans[anchors[i + 1]][0]
        assert nxt is not None  # only the first category is open below
        top = _written(_int(nxt) - 1, written)
        if i == 0:
            out.append(f"<={top}")
        else:
            assert low is not None
            out.append(low if _int(low) == _int(top) else f"{low}-{top}")
    return out


def _written(number: int, like: str) -> str:
    """The whole number written as ``like`` writes its number: as many digits at least (zero-padded: "08" and 9
    give "09") and the same decimals ("67.0" and 69 give "69.0")."""
    whole, dot, decimals = like.partition(".")
    return f"{str(number).zfill(len(whole))}{dot}{decimals}"


def _merged_part(members: list[str], size: dict, label: str) -> str:
    """What the note says of one merge: its rare ``members`` (rows), the others merged with them (all of them, for
    an ordinal group that took in only categories without rows), and ``label``."""
    rare = rare_categories({m: size[m] for m in members})
    names = {v for v, _n in rare}
    others = [m for m in members if m not in names and m != label]
    shown = ", ".join(f"{v!r} ({n})" for v, n in rare)
    also = ", ".join(f"{m!r} ({size[m]})" for m in others)
    if shown and also:
        also = f" with {also}"
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
