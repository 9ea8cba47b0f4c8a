"""Job of the column panel: one recoding of a column (group rare categories into Other, merge an ordinal column's rare
categories with their neighbours, or merge / rename categories; :mod:`optrr_engine.release.recode`), with everything
the window would otherwise compute from it on the UI thread: the rows per released category after the recoding (kept
in the column's summary) and the number of categories the codec will encode. A 70,000-category column takes a few
hundred milliseconds of Python, so the panel runs it in a worker process (in a thread, its bytecode took the GIL
from the window's every repaint: stalls of 150-240 ms); the session is changed only when the result arrives (cancel
= no change).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optrr_engine.errors import InputError, OptRRError
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.merge_rare import merge_column
from optrr_engine.release.recode import group_rare, merge
from optrr_engine.release.schema import category_rows, missing_category
from optrr_engine.tasks import TaskControl

from ...state.config_bridge import codec_size
from ...state.session import ColumnState

#: Why Group rare into 'Other' is refused for an ordinal column (its rare categories merge with their neighbours).
ORDINAL_OTHER_REFUSAL = (
    "an ordinal column's rare categories are not grouped into 'Other': that would put the lowest and the highest "
    "values together after the highest, breaking the order. Group rare merges each rare category with its "
    "neighbour instead (kind 'merge_rare'), or set the type to nominal first"
)


@dataclass
class RecodeResult:
    recode: dict | None
    categories: list
    #: the released labels merged (group rare: the rare ones; merge: the ones chosen)
    merged: list
    #: the codec's number of categories for the recoded column (None when the codec refuses it)
    size: int | None
    #: rows per released label after the recoding (None without a summary): the panel keeps them in its
    #: summary (``ColumnSummary.remember_recoded``), since the worker counted on a copy
    counts: dict | None = None
    #: rows per released category of the recoded column as the panel's list shows them (:func:`released_counts`;
    #: None without a summary): the panel shows them (``ColumnPanel.remember_rows``) instead of counting again
    rows: dict | None = None


def released_counts(column: ColumnState, summary, recode) -> dict[str, int]:
    """Rows per released label of ``column`` with ``recode``, counted from ``summary`` (its ColumnSummary) by the
    engine's rule (:func:`optrr_engine.release.schema.category_rows`, what perturb counts): empty cells and the
    texts listed as missing values in the missing-value category when missing values are a category."""
    rule = ColumnConfig(
        name=column.name,
        missing=column.missing,
        missing_label=column.missing_label,
        missing_values=column.missing_values,
        recode=recode,
    )
    return category_rows(rule, summary.as_dict(), summary.missing)


def merge_rare_neighbours(column: ColumnState, counts: dict[str, int]) -> tuple[dict | None, list, list]:
    """The rare categories of ordinal ``column`` merged by the engine's ordinal rule (``optrr schema
    --merge-rare``: :func:`optrr_engine.release.merge_rare.merge_column`; the rarest merges with its adjacent
    neighbour of fewer rows until none is rare, labels become ranges such as '20-29' or '80+'), from ``counts``
    (rows per released label). Returns (recode, categories, the labels merged away), the column's own when
    nothing is merged."""
    if column.type != "ordinal":
        raise InputError(f"only an ordinal column's rare categories merge with their neighbours; {column.name!r} is "
                         f"{column.type}")
    before = list(column.categories or [])
    merged_col, changed = merge_column(ColumnConfig(**column.copied_fields()), counts)
    if not changed:
        return column.recode, before, []
    after = set(merged_col.categories or [])
    return merged_col.recode, list(merged_col.categories or []), [c for c in before if c not in after]


def recode_column(column: ColumnState, summary, kind: str, params: dict, progress=None, cancel=None) -> RecodeResult:
    """``kind`` "group_rare" (params: min_rows, label; refused for an ordinal column: ORDINAL_OTHER_REFUSAL),
    "merge_rare" (no params: an ordinal column's rare categories merged with their neighbours,
    :func:`merge_rare_neighbours`) or "merge" (params: labels, new_label) applied to ``column``'s recode and
    categories; ``summary``: the column's ColumnSummary (rows per value), needed for "group_rare" and
    "merge_rare", optional for "merge"."""
    ctl = TaskControl(progress, cancel)
    recode, categories = column.recode, list(column.categories or [])
    if kind == "group_rare":
        if column.type == "ordinal":
            raise InputError(ORDINAL_OTHER_REFUSAL)
        ctl.report(0.0, "counting the rows per category")
        counts = released_counts(column, summary, recode)
        ctl.check()
        ctl.report(0.3, "grouping the rare categories")
        recode, categories, merged = group_rare(
            recode, categories, counts, params["min_rows"], params["label"], keep=(missing_category(column),)
        )
    elif kind == "merge_rare":
        ctl.report(0.0, "counting the rows per category")
        counts = released_counts(column, summary, recode)
        ctl.check()
        ctl.report(0.3, "merging the rare categories with their neighbours")
        recode, categories, merged = merge_rare_neighbours(column, counts)
    elif kind == "merge":
        ctl.report(0.0, "merging the categories")
        recode, categories = merge(recode, categories, params["labels"], params["new_label"])
        merged = list(params["labels"])
    else:
        raise ValueError(f"unknown recoding {kind!r}")
    recode = recode or None
    ctl.check()
    ctl.report(0.6, "counting the released categories")
    counts = summary.recoded(recode) if summary is not None else None
    rows = released_counts(column, summary, recode) if summary is not None else None
    ctl.check()
    ctl.report(0.8, "checking the recoded column")
    recoded = ColumnState(**{**column.copied_fields(), "recode": recode, "categories": categories})
    try:
        size = codec_size(recoded)
    except OptRRError:
        size = None
    ctl.report(1.0, "recoded")
    return RecodeResult(recode, categories, merged, size, counts, rows)


@dataclass
class MergedEverywhere:
    """What :func:`merge_rare_everywhere` found: ``changes`` {column index: {"recode", "categories"}} to set in one
    undo step, the names of the columns ``merged`` and of those ``still_rare`` after it (nothing the rule can merge:
    a column of two values with one rare, or a rare missing-value category); ``counts``: {column name: rows per
    released label after its new recode}, counted here on a copy of its summary: the window keeps them in its own
    summary (``ColumnSummary.remember_recoded``) before applying the change, so its warnings count nothing again."""

    changes: dict
    merged: list
    still_rare: list
    counts: dict = field(default_factory=dict)


def merge_rare_everywhere(columns: list[ColumnState], summaries: dict, progress=None, cancel=None) -> MergedEverywhere:
    """The rare categories of every perturbed nominal or ordinal column merged by ``optrr schema --merge-rare``
    itself (:func:`optrr_engine.release.merge_rare.merge_rare`: nominal into 'Other', ordinal with a neighbour), each
    from its rows as released now (``summaries``: ColumnSummary by column name; a column without one is left as it
    is). The columns' schema warnings are left out: the engine recomputes those of the columns it merges."""
    from optrr_engine.release.config import ReleaseConfig
    from optrr_engine.release.merge_rare import merge_rare

    ctl = TaskControl(progress, cancel)
    ctl.report(0.0, "counting the rows per category")
    configs = [ColumnConfig(**{**c.copied_fields(), "warnings": []}) for c in columns]
    counts = {
        c.name: released_counts(c, summaries[c.name], c.recode)
        for c in columns
        if c.role == "perturb" and c.type in ("nominal", "ordinal") and c.categories and summaries.get(c.name)
    }
    ctl.check()
    ctl.report(0.5, "merging the rare categories")
    done = merge_rare(ReleaseConfig(columns=configs), counts)
    changes = {
        i: {"recode": new.recode or None, "categories": list(new.categories or [])}
        for i, new in enumerate(done.config.columns)
        if new.name in done.merged
    }
    recoded = {columns[i].name: summaries[columns[i].name].recoded(c["recode"]) for i, c in changes.items()}
    ctl.report(1.0, "merged")
    return MergedEverywhere(changes, list(done.merged), list(done.still_rare), recoded)
