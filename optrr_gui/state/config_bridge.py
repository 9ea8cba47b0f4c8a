"""Between the session and the engine's release configuration: category counts and warnings.

The number of categories of a perturbed column is what the engine's codec will encode (``ColumnCodec.size``).
:func:`category_counts` computes the counts of every column once per ``SessionState.data_version`` (a new file
or an edit of roles, types, categories, bins or missing values; never an epsilon edit) and returns the SAME
object until then, so the attribute table, the column panel and the design controller share one computation.
Each column's codec size is also kept per column specification, so a bulk role change rebuilds nothing.
Once the rows are read (:func:`set_summaries`), the rare-category warning of a recoded column is recomputed
from the rows per released category, so it never names a category that was merged away. The schema's warnings
are shown as they read for the column's current role (:func:`role_warning`), and the engine's refusals are
worded for the GUI (:func:`gui_wording`: no command-line steps). A column the file's reader cannot read is
described by the reader's reason it carries (``ColumnState.unreadable``: :func:`unreadable`), never by matching
warning texts. A kept column is copied as it is: its NOT-private warning comes first, and a kept numeric column
neither has the schema's warning on bins nor counts bins (:func:`kept_count`).
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass

from optrr_engine.errors import OptRRError
from optrr_engine.release.codec import ColumnCodec
from optrr_engine.release.config import ColumnConfig
from optrr_engine.release.recode import recode_key

from .session import COUNT_FIELDS, ColumnState, SessionState

#: A column with more categories than this gets a warning (estimates need many rows per category).
MANY_CATEGORIES = 50
#: The warning of every kept column, shown first (what matters most about it).
KEPT_WARNING = "kept unchanged: this column is exported as is, NOT privatised"
#: The engine's command-line steps in its messages, and what a GUI user does instead: (the engine's phrasings of
#: one step, the GUI's wording of it).
_GUI_STEPS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("; run optrr schema to fill them in",), ": they are filled in from the data once its rows are read"),
    (("; give bins or run optrr schema",), ": type its bin edges in the side panel"),
    (("; run optrr schema or list them",), ": type them in the side panel"),
    ((" or run optrr schema again",), ""),
    (("; list them in missing_values to treat them as missing",), "; select them under Categories and press Treat "
     "as missing to treat them as missing"),
    (("give the right --delimiter",), "open it again and choose the right separator in the import dialog"),
    (("check --delimiter",), "open it again and choose the separator in the import dialog"),
    (
        (
            ", or give --allow-rare-categories if publishing their existence is intended",
            ", or give --allow-flagged-kept if publishing its values is intended",
            ", or give --allow-flagged-kept if publishing their values is intended",
        ),
        ", or tick the box under the orange list if that is intended",
    ),
)

#: The engine's suggestion of rows to skip (the fixed end of its header errors): the import dialog's box does it.
_SKIP_ROWS_ADVICE = re.compile(r"give --skip-rows (\d+) \(rows above the header\)")
#: The engine's way to merge rare categories (what ``--merge-rare`` would do to the columns, quoted), and the GUI's.
_MERGE_RARE_ADVICE = re.compile(
    r"`optrr schema INPUT -o CONFIG --merge-rare` writes a new configuration, inferred from the file again, that "
    r"merges them(?:; on this configuration's columns)?: .*?; or recode by hand",
    re.S,
)
_MERGE_RARE_GUI = (
    "Group rare… in the column's side panel does: into one category, or into a neighbour in an ordinal column; or "
    "Merge… by hand"
)


def gui_wording(message: str) -> str:
    """An engine message with its command-line steps ("run optrr schema ...", "give --skip-rows 2 ...") replaced by
    what to do in the GUI."""
    for phrasings, gui in _GUI_STEPS:
        for cli in phrasings:
            message = message.replace(cli, gui)
    message = _MERGE_RARE_ADVICE.sub(lambda _m: _MERGE_RARE_GUI, message)
    return _SKIP_ROWS_ADVICE.sub(r"set 'Rows above the header' to \1 in the import dialog", message)


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


@dataclass(frozen=True)
class CategoryCounts:
    """Counts derived from one version of the session's columns."""

    #: Categories of every column, for display (the codec's count; the listed count where the codec refuses; for a
    #: kept numeric column the values it copies: :func:`kept_count`).
    counts: tuple
    #: a_i of the perturbed columns, in order (what the designs are computed for).
    sizes: tuple
    #: Why ``sizes`` is unknown (a perturbed column the codec refuses), else None.
    error: str | None
    #: The warnings of every column (schema warnings plus the ones that depend on the user's choices).
    warnings: tuple


def _spec_key(col: ColumnState):
    """An exact, hashable key of what the codec size depends on (tuples: ~2 ms for a 70,000-category column,
    where a JSON text took ~16 ms)."""
    parts = [col.name]
    for f in sorted(COUNT_FIELDS - {"role"}):
        value = getattr(col, f)
        if f == "recode":
            parts.append(recode_key(value))
        elif isinstance(value, list):
            parts.append(tuple(value))
        elif isinstance(value, dict):
            parts.append(json.dumps(value, sort_keys=True, default=str))
        else:
            parts.append(value)
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:  # an unusual value inside a list: fall back to its text
        return json.dumps([col.name] + [getattr(col, f) for f in sorted(COUNT_FIELDS - {"role"})], default=str)
    return key


def column_codec(col: ColumnState) -> ColumnCodec:
    """The engine's codec of the column as if it is perturbed (raises ``OptRRError`` when the column cannot be
    perturbed as configured)."""
    d = col.copied_fields()
    d.update(role="perturb", epsilon=1.0, weight=1.0)  # the coding never depends on the privacy level
    cfg = ColumnConfig(**d)
    cfg.validate()
    return ColumnCodec(cfg)


def codec_size(col: ColumnState) -> int:
    """The number of categories the engine's codec encodes for the column if it is perturbed (raises
    ``OptRRError`` when the column cannot be perturbed as configured)."""
    return column_codec(col).size


class _Cache:
    def __init__(self):
        self.version: int | None = None
        self.counts: CategoryCounts | None = None
        self.sizes: dict = {}  # spec key -> codec size (or the error), of the columns in use
        self.previous: dict = {}  # ... of the version before (an undo finds them again)
        self.summaries: dict = {}
        #: (spec key, role, count) -> the column's warnings, for the summaries set (an edit of one column
        #: recomputes only its own: each builds the column's codec and labels every distinct value), of the columns
        #: in use
        self.warnings: dict = {}
        self.previous_warnings: dict = {}  # ... of the version before (an undo or redo of the last step finds them)
        #: (data version, summaries) -> :func:`column_shares` of them (computed once per version of the columns)
        self.shares: tuple | None = None


_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cache(state: SessionState) -> _Cache:
    cache = _CACHES.get(state)
    if cache is None:
        cache = _CACHES[state] = _Cache()
    return cache


def set_summaries(state: SessionState, summaries: dict) -> None:
    """The column summaries of the rows read (``ColumnSummary`` by column name; {} for a new file): the next
    :func:`category_counts` recomputes the warnings of recoded columns from them."""
    cache = _cache(state)
    cache.summaries = dict(summaries or {})
    cache.counts = None
    cache.warnings, cache.previous_warnings = {}, {}


def category_counts(state: SessionState) -> CategoryCounts:
    """The counts of the session's current columns; the same object until ``state.data_version`` changes (or
    new summaries are set)."""
    cache = _cache(state)
    if cache.counts is not None and cache.version == state.data_version:
        return cache.counts
    known: dict[str, int | OptRRError] = {}
    counts, sizes, error, keys = [], [], None, []
    for col in state.columns:
        key = _spec_key(col)
        keys.append(key)
        if key not in known:
            size = cache.sizes.get(key, cache.previous.get(key))
            if size is None:
                try:
                    size = codec_size(col)
                except OptRRError as exc:
                    size = exc
            known[key] = size
        size = known[key]
        if col.role == "keep" and col.type == "numeric":
            counts.append(kept_count(col, cache.summaries.get(col.name)))
        else:
            counts.append(listed_count(col) if isinstance(size, OptRRError) else size)
        if col.role == "perturb":
            if isinstance(size, OptRRError):
                error = error or gui_wording(str(size))
            else:
                sizes.append(int(size))
    cache.previous, cache.sizes = cache.sizes, known  # only the specifications in use (and the last ones) kept
    done: dict = {}
    for c, n, spec in zip(state.columns, counts, keys, strict=True):
        key = (spec, c.role, n)
        if key not in done:
            found = cache.warnings.get(key, cache.previous_warnings.get(key))
            done[key] = found if found is not None else tuple(column_warnings(c, n, cache.summaries.get(c.name)))
    warnings = tuple(done[(spec, c.role, n)] for c, n, spec in zip(state.columns, counts, keys, strict=True))
    cache.previous_warnings, cache.warnings = cache.warnings, done  # only the columns in use (and the last ones) kept
    cache.counts = CategoryCounts(tuple(counts), tuple(sizes), error, warnings)
    cache.version = state.data_version
    return cache.counts


#: A column with more different values than this in the file keeps uniform margins in the Design tab's test power
#: (:func:`column_shares`): its shares would be counted on the UI thread at every edit (a 70,000-code column took
#: 100 ms), and a table that wide has no test anyway (over 900 degrees of freedom, ``analysis.power``).
SHARES_MAX_VALUES = 1000


def shares_digest(shares) -> int | None:
    """A digest of :func:`column_shares` for the design request's key (equal shares, equal digests)."""
    if shares is None:
        return None
    return hash(tuple(None if s is None else tuple(s) for s in shares))


def column_shares(state: SessionState) -> list | None:
    """Per perturbed column (in order), the shares of its released categories in the rows read, in the order of the
    engine's codec (the design's category order): :func:`released_rows` of its summary; None for a column whose
    rows are not summarised yet or whose released labels are not the codec's categories yet (bins computed at the
    release) or that has more than SHARES_MAX_VALUES different values in the file; None for them all before the
    rows are read. Only for what the Design tab tells the data manager (the tests' power at the file's own
    margins): never part of a release. Computed once per version of the columns and of the summaries."""
    cache = _cache(state)
    if not cache.summaries:
        return None
    if cache.shares is not None and cache.shares[0] == state.data_version and cache.shares[1] is cache.summaries:
        return cache.shares[2]
    out: list = []
    for col in state.perturbed_columns():
        summary = cache.summaries.get(col.name)
        shares = None
        if summary is not None and summary.counts.size <= SHARES_MAX_VALUES:
            try:
                labels = column_codec(col).labels
                rows = released_rows(col, summary)
            except (OptRRError, TypeError, ValueError):
                rows, labels = {}, []
            counts = [int(rows.get(label, 0)) for label in labels]
            total = sum(counts)
            if total > 0 and total == sum(rows.values()):  # every released row in one of the codec's categories
                shares = [c / total for c in counts]
        out.append(shares)
    cache.shares = (state.data_version, cache.summaries, out)
    return out


def kept_count(col: ColumnState, summary) -> int | None:
    """The number of different values a kept numeric column releases: its numbers are copied as they are (with its
    recoding), never binned, so they are counted in the rows read (``summary``: its ColumnSummary; None until they
    are read), not as bins."""
    return None if summary is None else len(summary.recoded(col.recode))


def column_summary(state: SessionState, name: str):
    """The ColumnSummary of column ``name`` from the rows read (None until they are summarised)."""
    return _cache(state).summaries.get(name)


def remember_codec_size(state: SessionState, col: ColumnState, size: int) -> None:
    """Record the codec size of a column specification computed elsewhere (a worker that recoded a column
    with many categories), so the next :func:`category_counts` does not compute it again on the UI thread."""
    _CACHES.setdefault(state, _Cache()).sizes[_spec_key(col)] = int(size)


def perturbed_sizes(state: SessionState) -> list[int]:
    """a_i of every perturbed column, in order (raises ``ValueError`` when the codec refuses one)."""
    counts = category_counts(state)
    if counts.error is not None:
        raise ValueError(counts.error)
    return list(counts.sizes)


def column_counts(state: SessionState) -> list[int | None]:
    """Number of categories of every column (perturbed or not), for display."""
    return list(category_counts(state).counts)


def recoded_rare(warning: str) -> str:
    """``warning``, or for the schema's rare-category warning of a recoded column whose rows are not read yet, that
    it is recounted then (with the rows, :func:`follow_state` recounts it)."""
    from optrr_engine.release.schema import RARE_WARNING_START

    if not warning.startswith(RARE_WARNING_START):
        return warning
    return f"{RARE_WARNING_START}: recounted after recoding once the rows are read"


def too_many_warning(reason: str, count: int | None) -> str | None:
    """For a perturbed column the schema dropped for its many categories (``reason``): what to do with the
    ``count`` it has now (None once there are few enough)."""
    from optrr_engine.release.schema import MAX_CATEGORIES

    if count is None:
        return f"{reason}: its categories are listed once the rows are read"
    if count > MAX_CATEGORIES:
        return f"{count:,} categories: too many to randomize usefully; merge or group rare ones (buttons below)"
    return None


def unreadable_text(reason: str) -> str:
    """Why a column the reader cannot give as text is not released, in plain words (the reader's ``reason``)."""
    from optrr_engine.io.typed_sources import NESTED

    plain = {NESTED: "a column of lists or other nested values"}.get(reason, reason)
    return f"{plain}: it cannot be released"


def not_read_text(name: str, reason: str) -> str:
    """The Data tab's sentence on column ``name`` whose values the reader cannot read (its ``reason``)."""
    return f"{name}: {unreadable_text(reason)}. Its values are not read."


def unreadable(col: ColumnState) -> str | None:
    """Why ``col`` can be neither read nor released (:func:`unreadable_text` of the reader's reason,
    ``ColumnState.unreadable``: it stays dropped), or None for a column the file's reader reads."""
    return None if col.unreadable is None else unreadable_text(col.unreadable)


def role_warning(warning: str, col: ColumnState, count: int | None) -> str | None:
    """A schema warning as it reads for the column's current role (optrr_engine.release.schema.warning_for_role);
    the drop for too many categories of a perturbed column says what to do with the ``count`` it has now; the
    warning on quantile bins applies only while the column's bin edges come from the data (release.bins.bins_from_data):
    not to a kept column, whose numbers are copied unbinned, nor once the user typed the edges or the column is no
    longer numeric (None)."""
    from optrr_engine.release.bins import bins_from_data
    from optrr_engine.release.schema import BINS_WARNING, TOO_MANY, drop_reason, warning_for_role

    if warning == BINS_WARNING and (col.role == "keep" or not bins_from_data(col)):
        return None
    reason = drop_reason(warning)
    if col.role == "perturb" and reason is not None and reason.endswith(TOO_MANY):
        return too_many_warning(reason, count)
    return warning_for_role(warning, col.role)


def schema_dropped(col: ColumnState) -> bool:
    """True for a column the schema dropped (a warning explains why), whatever its role now."""
    from optrr_engine.release.schema import drop_reason

    return any(drop_reason(str(w)) is not None for w in col.warnings)


def read_rare(col: ColumnState, summary) -> str | None:
    """For a column the schema dropped and the user perturbs: the rare-category warning the schema gives the
    columns it perturbs (it has none stored), from the rows per released category in ``summary``."""
    from optrr_engine.release.schema import missing_category, rare_warning

    if col.role != "perturb" or summary is None or not schema_dropped(col):
        return None
    return rare_warning(summary.recoded(col.recode), recoded=bool(col.recode), missing=missing_category(col))


#: "Released as" of every value of a dropped column.
NOT_RELEASED = "not released (column dropped)"


def value_labels(col: ColumnState, summary) -> list[str]:
    """Per value of ``summary`` (its order): the label the release makes of it with the column as it is now. A
    dropped column is not released (NOT_RELEASED); a kept one is copied with its recoding only; a perturbed one is
    coded by the engine's codec (:meth:`ColumnCodec.released_labels`, numbers read with the summary's decimal mark;
    a preview codec, so bins not computed yet read BIN_AT_RELEASE)."""
    from optrr_engine.release.recode import released_label

    values = [str(v) for v in summary.values]
    if col.role == "drop":
        return [NOT_RELEASED] * len(values)
    if col.role == "keep":
        return [released_label(v, col.recode) for v in values]
    try:
        codec = ColumnCodec(ColumnConfig(**col.copied_fields()), summary.decimal, check=False)
    except (OptRRError, TypeError, ValueError):  # bins the side panel refuses too: the texts as they are recoded
        return [released_label(v, col.recode) for v in values]
    return codec.released_labels(values)


def released_rows(col: ColumnState, summary, labels: list[str] | None = None) -> dict[str, int]:
    """Rows per category the column releases now, from ``summary`` (its ColumnSummary), by :func:`value_labels`
    (the engine's codec; ``labels``: those already computed); a perturbed column's empty cells count in its
    missing-value category when missing values are a category; rows left out are not released ({} for a dropped
    column)."""
    from optrr_engine.release.codec import ROW_LEFT_OUT
    from optrr_engine.release.recode import released_label

    if col.role == "drop":
        return {}
    counts: dict[str, int] = {}
    labels = value_labels(col, summary) if labels is None else labels
    for label, rows in zip(labels, summary.counts.tolist(), strict=True):
        counts[label] = counts.get(label, 0) + int(rows)
    if col.role == "perturb" and col.missing == "category" and summary.missing:
        label = released_label(col.missing_label, col.recode)
        counts[label] = counts.get(label, 0) + summary.missing
    counts.pop(ROW_LEFT_OUT, None)
    return counts


def rare_watched_rows(col: ColumnState, summary, released: dict[str, int] | None = None) -> dict[str, int]:
    """The part of :func:`released_rows` (or ``released``, those already counted) that the release's rare-category
    rule watches (the engine's ``CategoryGuard``): every category of a column of categories; of a perturbed numeric
    column only the categories listed beside its bins (a text such as 'unknown', its missing-value category): its
    bins publish ranges, never its numbers; of a kept numeric column none (exported in the clear whole: its kept
    warning, and the release dialog's tick, cover it)."""
    counts = released_rows(col, summary) if released is None else released
    if col.type != "numeric":
        return counts
    listed = set(col.categories or []) if col.role == "perturb" else set()
    return {label: rows for label, rows in counts.items() if label in listed}


def current_rare(col: ColumnState, summary) -> str | None:
    """The rare-category warning of the column as it is now (:func:`rare_watched_rows`; "after recoding" once
    recoded), or None."""
    from optrr_engine.release.schema import missing_category, rare_warning

    return rare_warning(rare_watched_rows(col, summary), recoded=bool(col.recode), missing=missing_category(col))


def current_markers(col: ColumnState) -> str | None:
    """The warning about missing-value markers still released as categories (not treated as missing), or None."""
    from optrr_engine.release.schema import marker_warning

    kept = [c for c in col.categories or [] if c not in col.missing_values]
    return marker_warning(kept)


def follow_state(warnings: list[str], col: ColumnState, summary) -> list[str]:
    """The schema's warnings about the column's values recomputed for its current state: the markers still kept as
    categories (once its categories are listed) and, with ``summary``, the rare categories released now (also
    when the schema gave none, for a released column: a kept one with or without categories, as the release dialog
    lists them); a warning that no longer holds disappears."""
    from optrr_engine.release.schema import (
        MARKER_WARNING_START,
        NEAR_DUPLICATE_START,
        RARE_WARNING_START,
        near_duplicate_warning,
    )

    out: list[str | None] = []
    rare_seen = False
    for w in warnings:
        if w.startswith(MARKER_WARNING_START) and col.categories is not None:
            w = current_markers(col)
            out.append(gui_wording(w) if w else None)
        elif w.startswith(NEAR_DUPLICATE_START) and col.categories is not None:
            decimal = summary.decimal if summary is not None else "."
            out.append(near_duplicate_warning(col.categories, decimal))  # gone once the variants are merged
        elif w.startswith(RARE_WARNING_START) and summary is not None:
            rare_seen = True
            out.append(current_rare(col, summary))
        else:
            out.append(w)
    listed = col.categories is not None or col.role == "keep"  # a kept column copies its texts, listed or not
    if not rare_seen and summary is not None and col.role != "drop" and listed:
        out.append(current_rare(col, summary))
    return [w for w in out if w]


def column_warnings(col: ColumnState, count: int | None, summary=None) -> list[str]:
    """The schema's warnings (worded for the column's current role: :func:`role_warning`) plus the ones that
    depend on the user's choices; a kept column's KEPT_WARNING comes first. The warnings about the column's values
    follow its current state (:func:`follow_state`): the rare-category warning is recomputed from ``summary`` (its
    ColumnSummary) after the recoding and the missing values (it names the released categories still seen in fewer
    than RARE_COUNT rows with their rows, or disappears); the missing-value markers still kept as categories are
    named, or the warning disappears. A column the reader cannot read (``ColumnState.unreadable``) has one warning:
    why (:func:`unreadable`), whatever its schema warnings say."""
    from optrr_engine.release.schema import RARE_WARNING_START

    unread = unreadable(col)
    if unread is not None:
        return [unread]
    warnings = [gui_wording(w) for w in (role_warning(str(w), col, count) for w in col.warnings) if w]
    if col.recode and summary is None:
        warnings = [recoded_rare(w) for w in warnings]
    warnings = follow_state(warnings, col, summary)
    if not any(w.startswith(RARE_WARNING_START) for w in warnings):  # read_rare only when follow_state gave none
        rare = read_rare(col, summary)
        if rare:
            warnings.append(rare)
    if col.role == "keep":
        warnings.insert(0, KEPT_WARNING)  # first: the Warnings cell shows the start of its text only
    if col.role == "perturb" and count is not None:
        if count < 2:
            warnings.append("fewer than 2 categories: cannot be randomized")
        elif count > MANY_CATEGORIES and not any("categor" in w for w in warnings):
            warnings.append(f"{count} categories: estimates need many rows; consider merging or binning")
    return warnings
