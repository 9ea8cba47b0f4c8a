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
  one before on a tie), repeated until none is rare. A merged group's label never depends on which rare values
  occur: it is derived only from members that are not rare (:func:`.schema.is_rare`), never from a rare member's
  value, so the codebook does not tell which rare values some records hold. When every category reads as a whole
  number ("7", "07", "7.0"), a range "a-b", an open range "a+" (last) or "<=a" (first), in increasing order, the
  labels are ranges whose ends are placed by common values: between a group G and the group H above it, G ends
  at its highest member when that is not rare and H starts at its lowest when that is not rare; a rare side takes
  the common side's value +1 (H starts one above G's common highest) or -1 (G ends one below H's common lowest);
  when both sides are rare, G and H merge into one group. The first group is open below ("<=8") when its lowest
  member is rare, the last open above ("112+") when its highest is; a category not merged keeps its own label
  ("12-14" and "15-17" give "12-17"; "0", "1" and a rare "2" before "5" give "0", "1-4", "5": "1-4" is the same
  whichever of 2..4 the rare records hold; a rare "0" and "1" give "<=1"). Otherwise (texts, numbers with
  decimals) a merged group is named by its members that are not rare, joined by "|", followed by NEIGHBOURS_MARK
  ("mid (and neighbours)"; a group without such a member first merges with its neighbour of fewer rows), and the
  column's note explains the mark (NEIGHBOURS_NOTE). A label that is already a category is numbered ("2-3 2");
- the missing-value category (``missing_label``, "NA") is never merged (missing is not a value);
- a column always keeps two categories besides the missing one: when only merging everything would remove the
  rare ones (or name them: an ordinal column whose groups could only be told apart by a rare value), what is left
  stays rare and the column says so (drop it, or allow its rare categories).

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
#: Follows the non-rare members named by an ordinal group's label when rare ones were merged in unnamed.
NEIGHBOURS_MARK = "(and neighbours)"
#: Added to the merge note of an ordinal column whose merged labels carry NEIGHBOURS_MARK.
NEIGHBOURS_NOTE = (
    f"'{NEIGHBOURS_MARK}' in a label: adjacent categories of too few rows were merged in unnamed; the label tells "
    "recipients that some rows hold a value next to the ones named: drop the column if even that must not be known"
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
    values = [c for c in categories if c != missing]
    marked = False  # an ordinal column's labels carry NEIGHBOURS_MARK
    if col.type == "ordinal":
        groups, marked = _ordinal_groups(values, size)
    else:
        groups = _nominal_groups(values, size, _other_label(col, categories, missing))
    if not groups:
        return replace(col, warnings=_warnings(col, [], size, recoded=bool(col.recode))), False
    recode, listed, parts, after = col.recode, categories, [], dict(size)
    for given, members in groups:
        label = given if col.type != "ordinal" else _free(given, set(listed) - set(members))
        recode, listed = merge(recode, listed, members, label)
        part = _merged_part(members, size, label)
        if col.type != "ordinal" and label.endswith(" or other"):  # a real category took the rare ones in
            part += f" ({OR_OTHER_NOTE})"
        parts.append(part)
        after = {c: n for c, n in after.items() if c not in members}
        after[label] = sum(size[m] for m in members)
    if marked:
        parts[-1] += f" ({NEIGHBOURS_NOTE})"
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


def _nominal_groups(values: list[str], size: dict, label: str) -> list[tuple[str, list[str]]]:
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


def _ordinal_groups(values: list[str], size: dict) -> tuple[list[tuple[str, list[str]]], bool]:
    """([(label, adjacent categories merged together)], whether the labels carry NEIGHBOURS_MARK), in their order:
    the rarest group merges with its neighbour of fewer rows (the one before on a tie) until none is rare or two
    groups are left; then the labels (:func:`_integer_labels`, else :func:`_text_labels`), which may merge more.
    ([], False) when nothing is merged, or when labels that name no rare value would leave one group."""
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
    if all(len(g) == 1 for g in groups):
        return [], False
    spans = _integer_spans(values)
    labelled = _integer_labels(groups, size, spans) if spans is not None else _text_labels(groups, size)
    if labelled is None:
        return [], False
    merged = [(label, g) for label, g in labelled if len(g) > 1]
    return merged, spans is None and any(label.endswith(NEIGHBOURS_MARK) for label, _g in merged)


def _common(member: str, size: dict) -> bool:
    """Whether a category's own value may place or name a merged label: it is not rare (its existence is not
    disclosed by being named)."""
    return not is_rare(size[member])


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


def _integer_labels(
    groups: list[list[str]], size: dict, spans: dict[str, tuple[str | None, str | None]]
) -> list[tuple[str, list[str]]] | None:
    """Range labels of the ``groups`` of an integer-valued column, placed by common values only (the module's
    rule): two groups that meet between two rare members merge; None when that would leave one group."""
    groups = [list(g) for g in groups]
    i = 0
    while i < len(groups) - 1:
        if _common(groups[i][-1], size) or _common(groups[i + 1][0], size):
            i += 1
        else:  # the boundary could only be placed by a rare value
            groups[i : i + 2] = [groups[i] + groups[i + 1]]
    if len(groups) < 2:
        return None
    out = []
    last = len(groups) - 1
    for k, g in enumerate(groups):
        if len(g) == 1:
            out.append((g[0], g))  # not merged: its own label
            continue
        first, top = g[0], g[-1]
        if _common(first, size):
            low = spans[first][0]
        elif k == 0:
            low = None  # a rare lowest value: open below
        else:  # one above the common highest of the group below
            low = _step(spans[groups[k - 1][-1]][1], 1)
        if _common(top, size):
            high = spans[top][1]
        elif k == last:
            high = None  # a rare highest value: open above
        else:  # one below the common lowest of the group above
            high = _step(spans[groups[k + 1][0]][0], -1)
        if low is None:
            assert high is not None  # two groups at least: never open at both ends
            label = f"<={high}"
        elif high is None:
            label = f"{low}+"
        else:
            label = low if _int(low) == _int(high) else f"{low}-{high}"
        out.append((label, g))
    return out


def _step(text: str | None, step: int) -> str:
    """The whole number ``text`` + ``step``, written as ``text`` is ("07" + 1: "08"; "67.0" + 1: "68.0")."""
    assert text is not None  # only the first category is open below, the last open above
    whole, dot, decimals = text.partition(".")
    width = len(whole) if len(whole) > 1 and whole.startswith("0") else 0
    return f"{str(int(whole) + step).zfill(width)}{dot}{decimals}"


def _text_labels(groups: list[list[str]], size: dict) -> list[tuple[str, list[str]]] | None:
    """Labels of the ``groups`` of an ordinal column that is not integer-valued: a merged group is named by its
    members that are not rare joined by "|", with NEIGHBOURS_MARK when rare ones are in it; a merged group without
    such a member first merges with its neighbour of fewer rows (the one before on a tie); None when that would
    leave one group."""
    groups = [list(g) for g in groups]

    def rows(i: int) -> int:
        return sum(size[v] for v in groups[i])

    while True:
        unnamed = [i for i, g in enumerate(groups) if len(g) > 1 and not any(_common(m, size) for m in g)]
        if not unnamed:
            break
        if len(groups) <= 2:
            return None
        i = unnamed[0]
        near = [j for j in (i - 1, i + 1) if 0 <= j < len(groups)]
        j = min(near, key=rows)
        lo, hi = min(i, j), max(i, j)
        groups[lo : hi + 1] = [groups[lo] + groups[hi]]
    out = []
    for g in groups:
        if len(g) == 1:
            out.append((g[0], g))
            continue
        named = "|".join(m for m in g if _common(m, size))
        hidden = any(not _common(m, size) for m in g)
        out.append((f"{named} {NEIGHBOURS_MARK}" if hidden else named, g))
    return out


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
