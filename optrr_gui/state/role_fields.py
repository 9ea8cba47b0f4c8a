"""What a role or type change sets besides the role or type: the categories of a column brought back from "drop"
or made nominal or ordinal from numeric, or ordinal from nominal (:func:`type_fields`).

The schema lists no categories for the columns it drops (identifiers, free text, too many categories), so a
column the user switches to perturb or keep gets them from the rows the window has read (its ColumnSummary:
every distinct text), in the order the schema would list them, in the same undo step. A column the schema
dropped that returns to "drop" with its categories still exactly the ones read loses them again, so a dropped
column never exports the categories it was given. A column the file's reader cannot read (a Parquet column of
lists) stays dropped: :func:`role_choices` offers it no other role. Qt-free.
"""

from __future__ import annotations

from optrr_engine.release.schema import listed_categories

from .config_bridge import column_summary, schema_dropped
from .session import ROLES, ColumnState, SessionState


def data_categories(col: ColumnState, summary) -> list[str] | None:
    """The categories of ``col`` read from ``summary`` (its ColumnSummary): its distinct texts but its
    missing-value codes, alphabetical (numeric order when ordinal), plus the missing label when missing values
    are a category; None for a numeric column or without a summary."""
    if summary is None or col.type == "numeric":
        return None
    codes = set(col.missing_values)
    values = [str(v) for v in summary.values if str(v) not in codes]
    categories = listed_categories(values, col.type == "ordinal", summary.decimal)
    has_missing = summary.missing > 0 or len(values) < summary.distinct
    if col.missing == "category" and has_missing and col.missing_label not in categories:
        categories.append(col.missing_label)
    return categories


def needs_categories(col: ColumnState, role: str) -> bool:
    """True when ``col`` given ``role`` would be released without the categories it needs."""
    return role in ("perturb", "keep") and col.type != "numeric" and not col.categories and not col.recode


def role_choices(col: ColumnState) -> tuple[str, ...]:
    """The roles ``col`` can be given: every role, or only "drop" for a column the reader cannot read
    (``ColumnState.unreadable``)."""
    return ("drop",) if col.unreadable is not None else ROLES


def settable_rows(state: SessionState, indices, role: str) -> list[int]:
    """The columns among ``indices`` that can be given ``role`` (:func:`role_choices`)."""
    return [i for i in indices if role in role_choices(state.columns[i])]


def role_fields(state: SessionState, index: int, role: str) -> dict:
    """The fields to set for ``role`` on column ``index``: the role, last (listeners read the role change),
    after the categories read from the rows when the column needs them, or None when a column the schema
    dropped returns to "drop" still listing exactly those."""
    col = state.columns[index]
    values: dict = {}
    if needs_categories(col, role):
        categories = data_categories(col, column_summary(state, col.name))
        if categories:
            values["categories"] = categories
    elif role == "drop" and col.categories and not col.recode and col.role != "drop":
        if schema_dropped(col) and col.categories == data_categories(col, column_summary(state, col.name)):
            values["categories"] = None
    values["role"] = role
    return values


def type_fields(state: SessionState, index: int, type_: str) -> dict:
    """The fields to set for type ``type_`` on column ``index``: the type, last, after the categories read from
    the rows when a released numeric column (perturb or keep, not recoded) becomes nominal or ordinal, as a role
    change lists them (:func:`role_fields`): a numeric column lists only the texts beside its bins, so its numbers
    become categories, in the order of the new type, the texts it listed that the rows lack kept after them. Its
    bins stay (unused while it is not numeric), so a change back to numeric finds them."""
    col = state.columns[index]
    values: dict = {}
    if col.type == "numeric" and type_ != "numeric" and col.role in ("perturb", "keep") and not col.recode:
        as_type = ColumnState(**{**col.copied_fields(), "type": type_})
        categories = data_categories(as_type, column_summary(state, col.name))
        if categories:
            values["categories"] = categories + [c for c in col.categories or [] if c not in categories]
    elif col.type == "nominal" and type_ == "ordinal" and col.categories:
        ordered = ordinal_order(col, column_summary(state, col.name))
        if ordered is not None:
            values["categories"] = ordered
    values["type"] = type_
    return values


def ordinal_order(col: ColumnState, summary) -> list[str] | None:
    """The categories of nominal ``col`` in the order an ordinal column lists them (numbers in numeric order: '9'
    before '10'), when they are still in the nominal column's alphabetical order (an order the user chose is
    kept: None), the missing-value category last; None when nothing moves."""
    decimal = summary.decimal if summary is not None else "."
    missing = col.missing_label if col.missing == "category" else None
    values = [c for c in col.categories or [] if c != missing]
    if values != listed_categories(values, False, decimal):
        return None
    ordered = listed_categories(values, True, decimal)
    if ordered == values:
        return None
    return ordered + [c for c in col.categories or [] if c == missing]


def missing_categories(state: SessionState) -> dict[int, dict]:
    """{index: {"categories": [...]}} of every perturbed column that lists none yet and whose rows are read (its
    role changed before the column summaries were ready). Kept columns need none to be released, so a project
    opened with one is not changed by the rows arriving."""
    changes = {}
    for i, col in enumerate(state.columns):
        if col.role == "perturb" and needs_categories(col, col.role):
            categories = data_categories(col, column_summary(state, col.name))
            if categories:
                changes[i] = {"categories": categories}
    return changes
