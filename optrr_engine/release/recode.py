"""Recoding of a column's categories before the release: merge, rename, group rare values into "Other".

A column's ``recode`` maps each *released* label to the input texts it stands for:

    "recode": {"Other": ["Tibet", "Zanzibar"], "Female": ["F"]}

Every input text listed under a label is released as that label (merge = several texts, rename = one);
texts not listed are released as they are. The labels must be among the column's ``categories`` (which
keep their role as the released domain, in code order: reordering = reordering ``categories``), and an
input text that is recoded must not stay in ``categories`` as itself. Recoding is a pure function of the
cell's text, so ``optrr perturb`` applies it identically to every row; the missing-value label follows
the recoding too (``{"Unknown": ["NA", "?"]}`` puts empty cells under "Unknown").

The functions below edit a (recode, categories) pair the way the GUI's commands do; each returns new
objects and leaves its arguments unchanged.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

OTHER_LABEL = "Other"


def normalize_recode(recode, column: str) -> dict[str, list[str]] | None:
    """Validate the shape of a ``recode`` object: {label: [text, ...]} (a single text is read as a list).
    An input text may appear under one label only. Empty -> None."""
    if recode is None:
        return None
    if not isinstance(recode, dict):
        raise InputError(f"column {column!r}: recode must be an object {{released label: [input texts]}}")
    out: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for label, sources in recode.items():
        if not isinstance(label, str) or label == "":
            raise InputError(f"column {column!r}: recode labels must be non-empty texts; got {label!r}")
        if isinstance(sources, str):
            sources = [sources]
        if not isinstance(sources, (list, tuple)) or not sources:
            raise InputError(f"column {column!r}: recode {label!r} must list the input texts it stands for")
        texts: dict[str, None] = {}
        for s in sources:
            if not isinstance(s, str):
                raise InputError(f"column {column!r}: recode {label!r} lists {s!r}; write input values as texts")
            if s in owner and owner[s] != label:
                raise InputError(f"column {column!r}: the value {s!r} is recoded twice ({owner[s]!r} and {label!r})")
            texts[s] = None
            owner[s] = label
        out[label] = list(texts)
    return out or None


def source_map(recode) -> dict[str, str]:
    """{input text: released label} of every text that changes (identity entries left out)."""
    return {s: label for label, sources in (recode or {}).items() for s in sources if s != label}


def check_against_categories(recode, categories, column: str) -> None:
    """The labels must be released categories; a recoded text must not stay a category of its own."""
    if not recode or categories is None:
        return
    listed = set(categories)
    for label in recode:
        if label not in listed:
            raise InputError(f"column {column!r}: recode label {label!r} is not among its categories; add it there")
    for s, label in source_map(recode).items():
        if s in listed and s not in recode:  # a label of its own (other sources) may share a recoded text's name
            raise InputError(
                f"column {column!r}: {s!r} is recoded to {label!r} but is still listed in categories; remove it there"
            )


def recode_key(recode) -> tuple | None:
    """A hashable, exact key of a recode's content (for caches keyed by the recoding; None when empty)."""
    if not recode:
        return None
    return tuple((label, tuple(sources)) for label, sources in recode.items())


def released_label(text: str, recode) -> str:
    return source_map(recode).get(text, text)


def recode_counts(values, counts, recode) -> dict[str, int]:
    """Counts per released label of distinct input ``values`` with ``counts`` (order of first appearance).
    Linear: one dictionary lookup per value, then pandas' factorize (a 70,000-value column: ~30 ms)."""
    import pandas as pd

    values = np.asarray(values, dtype=object)
    mapping = source_map(recode)
    labels = np.fromiter((mapping.get(v, v) for v in values), dtype=object, count=len(values)) if mapping else values
    codes, uniques = pd.factorize(labels, sort=False)
    valid = codes >= 0
    sums = np.bincount(codes[valid], weights=np.asarray(counts, dtype=np.float64)[valid], minlength=len(uniques))
    return dict(zip(map(str, np.asarray(uniques, dtype=object).tolist()), sums.astype(np.int64).tolist(), strict=True))


def recode_arrow(col, recode):
    """A string Arrow array with every recoded text replaced by its label (nulls stay null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mapping = source_map(recode)
    if not mapping:
        return col
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], type=pa.string())
    sources = pa.array(list(mapping), type=pa.string())
    targets = pa.array(list(mapping.values()), type=pa.string())
    index = pc.index_in(col, value_set=sources)
    return pc.if_else(pc.is_valid(index), pc.take(targets, pc.fill_null(index, 0)), col)


# -- edits, as the application makes them ---------------------------------------------------------


def merge(recode, categories: list[str], labels: list[str], new_label: str) -> tuple[dict, list[str]]:
    """Merge released ``labels`` into ``new_label``, placed where the first of them was. Returns
    (recode, categories). Linear in the number of categories and recoded texts."""
    return merge_many(recode, categories, [(labels, new_label)])


#: Where a merged category was in :func:`merge_many`'s list of categories (no category is this object).
_GONE = object()


def merge_many(recode, categories: list[str], groups) -> tuple[dict, list[str]]:
    """:func:`merge` of each group of ``groups`` ([(labels, new_label)], usually disjoint) in turn, in one pass:
    the same (recode, categories) and the same error (that of the first group :func:`merge` would refuse) as
    calling it once per group on what the previous call returned, linear in the number of categories, recoded
    texts and labels given (calling :func:`merge` per group is quadratic: each call copies the whole column).

    Each category keeps the slot (index in ``categories``) it had; a merge puts ``new_label`` in the smallest of
    its labels' slots (each label's last one, as in :func:`merge`) and frees the others, so the order of the slots
    is the order of the list. ``recoded`` counts, per input text, the labels other than itself listing it:
    ``source_map(recode)`` maps a text to another label exactly when its count is positive."""
    groups = list(groups)
    if not groups:
        raise InputError("choose the categories to merge")
    out: list = list(categories)
    slots = {c: i for i, c in enumerate(out)}  # each category's (last) slot
    earlier: dict = {}  # the other slots of a category listed more than once (they go with it)
    if len(slots) != len(out):
        for i, c in enumerate(out):
            if slots[c] != i:
                earlier.setdefault(c, []).append(i)
    recoded: dict[str, int] = {}
    for step, (given, target) in enumerate(groups):
        labels = list(dict.fromkeys(str(x) for x in given))
        if not labels:
            raise InputError("choose the categories to merge")
        missing = [x for x in labels if x not in slots]
        if missing:
            raise InputError(f"{missing[0]!r} is not a category of this column")
        new_label = str(target).strip()
        if not new_label:
            raise InputError("the merged category needs a name")
        chosen = set(labels)
        if new_label in slots and new_label not in chosen:
            raise InputError(f"{new_label!r} is already a category; merge it too or choose another name")
        if step == 0:  # (copied once the first merge is known to be valid, as merge does)
            recode = {k: list(v) for k, v in (recode or {}).items()}
            for label, texts in recode.items():
                _count(recoded, label, texts, 1)
        sources: dict[str, None] = {}
        for label in labels:  # the input texts released as each label, as the recode stands before this merge:
            # those listed under it, and the text itself unless that text is recoded to another label (after renaming
            # "Other" to "M", a new "Other" holds only what is merged in)
            listed = recode.get(label, [])
            if label not in listed and not recoded.get(label):
                sources[label] = None
            sources.update(dict.fromkeys(listed))
        for label in labels:
            _count(recoded, label, recode.pop(label, []), -1)
        ordered = list(sources)
        if new_label in sources:
            ordered = [new_label, *[s for s in ordered if s != new_label]]
        if ordered != [new_label]:
            _count(recoded, new_label, recode.get(new_label, []), -1)
            recode[new_label] = ordered
            _count(recoded, new_label, ordered, 1)
        if step == 0:  # the whole recode tidied, as merge returns it; from then on only the entry written can be untidy
            recode = _tidy(recode)
        elif new_label in recode and _untidy(new_label, recode[new_label]):
            del recode[new_label]  # an empty or identity entry: no text is counted in ``recoded`` for it
        first = min(slots[x] for x in labels)
        for label in labels:
            out[slots.pop(label)] = _GONE
            for i in earlier.pop(label, ()):
                out[i] = _GONE
        out[first] = new_label
        slots[new_label] = first
    return recode, [c for c in out if c is not _GONE]


def _count(recoded: dict[str, int], label: str, texts, step: int) -> None:
    """Add ``step`` to the count of each text ``label`` lists that is not ``label`` itself (:func:`merge_many`)."""
    for s in texts:
        if s != label:
            recoded[s] = recoded.get(s, 0) + step


def rename(recode, categories: list[str], old: str, new: str) -> tuple[dict, list[str]]:
    """Release the category ``old`` as ``new`` (same position)."""
    return merge(recode, categories, [old], new)


def group_rare(recode, categories: list[str], counts: dict, min_rows: int, label: str = OTHER_LABEL, keep=()):
    """Merge every released category seen in fewer than ``min_rows`` rows (``counts``: rows per released
    label; absent = 0) into ``label``, at the end of the list; never those in ``keep`` (the missing-value category:
    a missing value is not a value to merge). Returns (recode, categories, merged labels)."""
    if not isinstance(min_rows, (int, np.integer)) or isinstance(min_rows, bool) or min_rows < 1:
        raise InputError(f"the row threshold must be a whole number of at least 1; got {min_rows!r}")
    rare = [c for c in categories if counts.get(c, 0) < min_rows and c != label and c not in keep]
    if not rare:
        return {k: list(v) for k, v in (recode or {}).items()}, list(categories), []
    recode, merged = merge(recode, categories, [label, *rare] if label in categories else rare, label)
    return recode, [*(c for c in merged if c != label), label], rare


def reorder(categories: list[str], order: list[str]) -> list[str]:
    """``categories`` in the new ``order`` (a permutation of them)."""
    if sorted(order) != sorted(categories):
        raise InputError("the new order must list every category exactly once")
    return list(order)


def _tidy(recode) -> dict:
    return {k: v for k, v in recode.items() if not _untidy(k, v)}


def _untidy(label, texts) -> bool:
    """Whether a recode entry says nothing: no texts, or only the label itself."""
    return not texts or texts == [label]
