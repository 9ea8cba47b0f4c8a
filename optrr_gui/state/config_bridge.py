"""Between the session and the engine's release configuration: category counts and warnings.

The number of categories of a perturbed column is what the engine's ``Codec`` will encode (its ``sizes``);
until that module exists it is the length of the column's category list (or number of bins).
"""

from __future__ import annotations

from ..state.session import ColumnState, SessionState

#: A column with more categories than this gets a warning (estimates need many rows per category).
MANY_CATEGORIES = 50


def codec_available() -> bool:
    try:
        import optrr_engine.release.codec  # noqa: F401
    except ImportError:
        return False
    return True


def bin_edges(bins) -> list | None:
    """The edges of a bins specification (dict form or a plain list), or None when not computed yet."""
    if bins is None:
        return None
    if isinstance(bins, dict):
        return list(bins["edges"]) if bins.get("edges") is not None else None
    return list(bins)


def listed_count(col: ColumnState) -> int | None:
    """Categories of the column's configuration: the labels, plus the bins of a numeric column."""
    extra = len(col.categories or [])
    if col.type == "numeric":
        edges = bin_edges(col.bins)
        if edges is not None:
            return len(edges) - 1 + extra
        if isinstance(col.bins, dict) and col.bins.get("count"):
            return int(col.bins["count"]) + extra
        return None
    return extra if col.categories is not None else None


def perturbed_sizes(state: SessionState) -> list[int]:
    """a_i of every perturbed column, in order; from the engine's Codec when it is available."""
    if not state.perturbed_indices():
        return []
    if codec_available():
        from optrr_engine.release.codec import Codec

        return [int(a) for a in Codec(state.to_release_config()).sizes]
    counts = [listed_count(c) for c in state.perturbed_columns()]
    return [int(c) if c is not None else 0 for c in counts]


def column_counts(state: SessionState) -> list[int | None]:
    """Number of categories of every column (perturbed or not), for display."""
    out: list[int | None] = [listed_count(c) for c in state.columns]
    try:
        sizes = perturbed_sizes(state)
    except Exception:
        return out
    for i, a in zip(state.perturbed_indices(), sizes, strict=True):
        out[i] = a
    return out


def column_warnings(col: ColumnState, count: int | None) -> list[str]:
    """The schema's warnings plus the ones that depend on the user's choices."""
    warnings = [str(w) for w in col.warnings]
    if col.role == "keep":
        warnings.append("kept unchanged: this column is exported as is, NOT privatised")
    if col.role == "perturb" and count is not None:
        if count < 2:
            warnings.append("fewer than 2 categories: cannot be randomized")
        elif count > MANY_CATEGORIES and not any("categor" in w for w in col.warnings):
            warnings.append(f"{count} categories: estimates need many rows; consider merging or binning")
    return warnings
