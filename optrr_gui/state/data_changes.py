"""Qt-free: what differs between a reopened project and its data file as read now (columns gone or new, values of a
perturbed column outside its categories, another row count), in words for the window's message bar."""

from __future__ import annotations

from optrr_engine.errors import OptRRError

from .config_bridge import column_codec
from .session import ColumnState

#: At most this many values (and columns) are named in one sentence.
SHOWN = 3


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def absent_released(columns: list[ColumnState], file_columns: list[str] | None) -> list[str]:
    """The released (perturbed or kept) columns the file no longer has (a release refuses to start)."""
    if file_columns is None:
        return []
    present = set(file_columns)
    return [c.name for c in columns if c.role != "drop" and c.name not in present]


def unknown_values(col: ColumnState, summary) -> list[tuple[str, int]]:
    """(value, rows) of the values of a perturbed nominal or ordinal column that the release refuses (the engine's
    codec decides: neither among its categories nor recoded nor missing-value texts); [] when not known, not
    checked, or when the column cannot be coded at all (the column table says why)."""
    if col.role != "perturb" or col.type == "numeric" or col.categories is None or summary is None:
        return []
    try:
        refused = set(column_codec(col).not_listed(summary.values))
    except OptRRError:
        return []
    return [(str(v), int(n)) for v, n in zip(summary.values, summary.counts, strict=True) if str(v) in refused]


def data_changes(
    columns: list[ColumnState],
    file_columns: list[str] | None,
    summaries: dict | None = None,
    saved_rows: int | None = None,
    rows: int | None = None,
) -> list[str]:
    """One phrase per difference between the project's ``columns`` and the file (its ``file_columns``, the
    column ``summaries`` of its rows, its ``rows`` against the ``saved_rows`` of the project)."""
    out = []
    names = [c.name for c in columns]
    if file_columns is not None:
        present = set(file_columns)
        for c in columns:
            if c.name not in present:
                note = "" if c.role != "drop" else " (it was dropped)"
                out.append(f"column {c.name} is no longer in the file{note}")
        new = [n for n in file_columns if n not in set(names)]
        if new:
            out.append(f"the file has new columns, not released: {_names(new)}")
    for c in columns:
        bad = unknown_values(c, (summaries or {}).get(c.name))
        if bad:
            listed = _names([f"'{v}' ({n:,} {'row' if n == 1 else 'rows'})" for v, n in bad])
            out.append(
                f"{c.name} has values that are not among its categories: {listed} — add them or merge them "
                "before releasing"
            )
    if saved_rows is not None and rows is not None and saved_rows != rows:
        out.append(f"the file has {rows:,} rows, it had {saved_rows:,}")
    return out


def changes_message(changes: list[str]) -> str:
    return "Since the project was saved: " + "; ".join(changes) + "."
