"""Schema inference: one streaming pass over a file gives a release-configuration template.

Per column (rules in :func:`decide_column`):
- likely identifiers (a name such as id / mrn / name / email / date of birth, or a distinct value in nearly
  every row), free text (a name such as comment / notes / Bemerkung, long texts with spaces on average, or any
  value of LONG_WORDS or more words or more than FREE_TEXT_LENGTH characters) and columns with more than
  MAX_CATEGORIES categories get role "drop" with a warning saying why; so do empty and one-valued columns;
- numbers with more than ORDINAL_MAX distinct values become type "numeric" with DEFAULT_BIN_COUNT quantile
  bins (rounded, outer bins open); numbers with few values become "ordinal" (numeric order); other text
  is "nominal" (sorted alphabetically, digit runs as numbers: "5-9" before "10-14"; the order reveals nothing
  about frequencies);
- everything else gets role "perturb" with epsilon DEFAULT_EPSILON; empty cells become the category
  "NA" where they occur.
Values that differ only by spaces or letter case, or are equal as numbers ("yes"/"Yes ", "1"/"1.0"), are named
in a warning (:func:`near_duplicate_warning`): they are released as different categories unless recoded. A column
name with spaces at its start or end, or a line break, is named in a warning (:func:`name_warning`).
SPSS / Stata value labels (``labels`` of :func:`decide_column`, from the file) list the categories in the order of
their codes, ordinal when the codes are 3 or more consecutive whole numbers; codes without a label and the file's
user-missing values (read as missing) are named in warnings; labelled columns are never taken for free text.
Categories seen fewer than RARE_COUNT times are flagged by name and count: the codebook lists every category,
so their existence is disclosed (``perturb`` refuses to release them unless allowed: :func:`rare_refusal`).
Non-numeric cells of a numeric column that are not missing-value markers
(e.g. ``deceased 2019-03-04 (Mrs J. Smith)`` in ``age``) are never copied into the configuration: the
column is flagged (how many cells, not which) and perturb releases them as missing unless the user lists
them. Identifier and free-text columns get no categories at all. ``codebook`` (:mod:`.codebook_import`)
declares the categories of some columns from a data dictionary instead of the data.

A warning explaining a drop reads "<reason>; dropped[ - advice]" (:data:`DROPPED`); :func:`warning_for_role`
rewords it for a column whose role the user changed since.
"""

from __future__ import annotations

import heapq
import math
import os
import re
from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ..tasks import TaskControl
from .bins import DEFAULT_BIN_COUNT, equal_width_edges, quantile_edges
from .column_stats import ColumnStats, is_number_text
from .config import DEFAULT_EPSILON, INPUT_KEYS, MISSING_LABEL, ColumnConfig, ReleaseConfig
from .recode import released_label, source_map

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
#: Categories seen fewer times than this are flagged (the first RARE_SHOWN named with their counts).
RARE_COUNT = 5
RARE_SHOWN = 10
#: Start of the warning on non-numeric cells in a numeric column (the GUI shows warnings as they are).
NON_NUMERIC_FLAG = "text in a numeric column"
#: Texts longer than this on average, or mostly with spaces and mostly distinct: free text; so is a column with
#: any value longer than this or of LONG_WORDS or more words (a category label rarely is).
FREE_TEXT_LENGTH = 40
LONG_WORDS = 3
MISSING_MARKERS = ("?", "NA", "N/A", "n/a", "NaN", "nan", "NULL", "null", "None", "none", ".", "-", "missing")
_ID_NAME = re.compile(
    r"(^|[^a-z])(id|ids|uid|uuid|guid|mrn|ssn|nhs|nino|bsn|passport|iban)([^a-z]|$)"
    r"|name|e-?mail|phone|mobile|address|street|post_?code|zip_?code|birth|dob|social.?security|record.?number"
    r"|patient.?(no|num|number)(?![a-z])|identifier",
    re.IGNORECASE,
)
#: Words of a column name saying it holds free text (whole words of the name: "patient_comment", "Notes",
#: "freeText"; not "denote", "keynote", "notebook_id"), and word endings for German compounds ("Arztbemerkung").
_FREE_TEXT_WORDS = frozenset(
    "comment comments commentary note notes remark remarks description descriptions freetext narrative annotation "
    "annotations memo commentaire commentaires remarque remarques observacion observación observaciones comentario "
    "comentarios commento commenti osservazioni opmerking opmerkingen toelichting".split()
)
_FREE_TEXT_ENDINGS = tuple(
    "bemerkung bemerkungen kommentar kommentare notiz notizen anmerkung anmerkungen freitext".split()
)
_FREE_TEXT_PAIRS = frozenset({("free", "text"), ("free", "form"), ("texte", "libre"), ("texto", "libre")})
#: Words that make such a name one of a category about the text ("comment_type", "has_notes", "note_count").
_ABOUT_TEXT_WORDS = frozenset(
    "type types category cat code codes flag flags count counts n num number yn present has any status class kind "
    "length len".split()
)
#: What follows the reason of a warning explaining why a column was dropped ("looks like free text; dropped").
DROPPED = "; dropped"
#: The reason given for a column with more than MAX_CATEGORIES categories (after their count).
TOO_MANY = "categories: too many to randomize usefully"


def drop_reason(warning: str) -> str | None:
    """The reason of a warning explaining a drop ("likely identifier (its name)": the text before DROPPED, which
    ends it or is followed by " - " and advice); None for other warnings."""
    reason, mark, rest = str(warning).partition(DROPPED)
    return reason if mark and reason and (not rest or rest.startswith(" - ")) else None


def warning_for_role(warning: str, role: str) -> str:
    """``warning`` as it reads for a column whose role is now ``role``: a drop warning keeps its reason and says
    what the role does instead ("likely identifier (its name): exported IN THE CLEAR" when kept; the reason alone
    when perturbed); other warnings, and every warning of a dropped column, unchanged."""
    reason = drop_reason(warning)
    if reason is None or role == "drop":
        return warning
    if role == "keep":
        return f"{reason}: exported IN THE CLEAR"
    return reason


def _dense_integers(stats: ColumnStats) -> bool:
    """Whole numbers filling most of their range (1, 2, 3, ...): how record numbers look."""
    span = stats.num_max - stats.num_min + 1
    return stats.all_integral and np.isfinite(span) and span <= 2 * max(1, stats.numeric)


def identifier_like(distinct: int, rows: int) -> bool:
    """The release's identifier rule on the data actually released: a perturbed column whose ``rows`` released
    rows (at least UNIQUE_MIN_ROWS) hold ``distinct`` different categories, at least UNIQUE_SHARE of the rows. Its
    categories (the identifiers themselves) would be published in the codebook, so ``perturb`` refuses it
    (:class:`.perturb.CategoryGuard`, which watches the columns of UNIQUE_MIN_ROWS or more categories) and the
    GUI's release dialog says so before Release. Qt-free: both use this one function."""
    return rows >= UNIQUE_MIN_ROWS and distinct >= UNIQUE_SHARE * rows


def identifier_refusal(found, rows: int) -> str:
    """The perturb-time error naming every identifier-like column at once (``found``: (name, distinct
    categories) of each, in column order; ``rows``: the rows released)."""
    found = list(found)
    if len(found) == 1:
        name, distinct = found[0]
        return (
            f"column {name!r} has {distinct:,} different values in {rows:,} rows: it looks like an identifier, and "
            "its categories (the identifiers themselves) would be published in the codebook; drop it, or merge its "
            "values into far fewer categories"
        )
    listed = ", ".join(f"{name!r} ({distinct:,} different values)" for name, distinct in found)
    return (
        f"columns {listed} in {rows:,} rows look like identifiers, and their categories (the identifiers "
        "themselves) would be published in the codebook; drop them, or merge their values into far fewer categories"
    )


def looks_like_identifier_name(name: str) -> bool:
    return bool(_ID_NAME.search(name.strip()))


def _name_words(name: str) -> list[str]:
    """The words of a column name, case-folded: runs of letters, split at camelCase ("freeText": free, text)."""
    spaced = re.sub(r"(?<=[a-zß-öø-ÿ])(?=[A-ZÀ-ÖØ-Þ])", " ", name)
    return [w.casefold() for w in re.findall(r"[^\W\d_]+", spaced)]


def looks_like_free_text_name(name: str) -> bool:
    """Whether a column's name says it holds free text: a word such as comment(s), note(s), remark(s),
    description, "free text", Bemerkung, Kommentar, Notiz, Anmerkung, commentaire, remarque, observación,
    comentario (whole words; German compounds by their ending), unless another word makes it a category about
    the text (type, code, count, has, ...)."""
    words = _name_words(name)
    if any(w in _ABOUT_TEXT_WORDS for w in words):
        return False
    if any(w in _FREE_TEXT_WORDS or w.endswith(_FREE_TEXT_ENDINGS) for w in words):
        return True
    return any(pair in _FREE_TEXT_PAIRS for pair in zip(words, words[1:], strict=False))


def long_text(value: str) -> bool:
    """A value no category label is likely to be: LONG_WORDS or more words, or more than FREE_TEXT_LENGTH
    characters ("Patient Müller, call back"; not "Never smoked" or "Self-employed")."""
    return len(value) > FREE_TEXT_LENGTH or len(value.split()) >= LONG_WORDS


def name_warning(name: str) -> str | None:
    """The warning about a column name with white space at its start or end, or a line break or tab inside (it
    must be spelled so in a configuration, and looks like another name where it is shown); None otherwise."""
    if name != name.strip():
        return (
            f"the column name {name!r} has spaces at its start or end; they are part of the name (a configuration "
            "must spell it with them) - rename the column in the file to remove them"
        )
    if any(ch in name for ch in "\r\n\t"):
        return (
            f"the column name {name!r} contains a line break or tab; it is part of the name (a configuration must "
            "spell it so) - rename the column in the file"
        )
    return None


def _number(value: str, decimal: str) -> float | None:
    """The number ``value`` reads as with the ``decimal`` mark (the release's rule, :func:`is_number_text`), or None."""
    if not is_number_text(value, decimal):
        return None
    return float(value.replace(",", ".") if decimal == "," else value)


def _sort_key_numeric(decimal: str):
    def key(v: str):
        number = _number(v, decimal)
        return (1, 0.0, v) if number is None else (0, number, v)

    return key


_DIGITS = re.compile(r"\d+")


def _alphabetical(v: str) -> str:
    """Natural alphabetical order: digit runs compare as numbers ("5-9" before "10-14", as a reader expects of
    bands), the rest case-insensitively; ties by the text itself.

    One flat string compared as plain text (sorting 70,000 texts by it takes a fraction of comparing nested
    tuples), in exactly the order of comparing ``v.casefold()``'s parts (text, digit run, text, ..., text: texts as
    texts, digit runs as numbers, a list that begins another first), then ``v``: each text ends with "\\x00", below
    any of its characters ("\\x00" and "\\x01" in it are escaped as "\\x01\\x01" and "\\x01\\x02", order
    kept), so a text comes before the texts it begins; each digit run is its number (``int``: leading zeros and any
    script's digits) as its count of digits (one character, never "\\x00") and its digits, so a longer number is
    larger; "\\x00" ends the parts (before any further number), then ``v`` breaks ties."""
    escaped = v.casefold().replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")
    return _DIGITS.sub(_number_key, escaped) + "\x00\x00" + v


def _number_key(run: re.Match) -> str:
    """:func:`_alphabetical`'s text of a digit run: the end of the text before it, then its number's count of
    digits (one character) and digits."""
    run_text = run.group()
    # int() only for other scripts' digits: a run of ASCII digits is its number without its leading zeros (int()
    # refused runs longer than 4,300 digits, an unclear crash of the schema on such a value)
    digits = (run_text.lstrip("0") or "0") if run_text.isascii() else str(int(run_text))
    return "\x00" + chr(len(digits)) + digits


def listed_categories(values, ordinal: bool, decimal: str = ".") -> list[str]:
    """Distinct ``values`` in the order a configuration lists them: numeric order for an ordinal column, else
    alphabetical (the order reveals nothing about the frequencies)."""
    return sorted(values, key=_sort_key_numeric(decimal) if ordinal else _alphabetical)


def decide_column(stats: ColumnStats, labels: dict[float, str] | None = None) -> ColumnConfig:
    """A column's configuration from its statistics (see the module docstring); ``labels``: the value labels
    {code: label} the file declares for it (SPSS / Stata), if any."""
    name = stats.name
    col = ColumnConfig(name=name, role="perturb", type="nominal", epsilon=DEFAULT_EPSILON)
    warn = col.warnings
    named = name_warning(name)
    if named:
        warn.append(named)
    rows = stats.present
    distinct = stats.distinct
    if rows == 0:
        col.role = "drop"
        warn.append("empty column: no values")
        return col
    has_missing = stats.missing > 0
    if looks_like_identifier_name(name):
        col.role = "drop"
        warn.append(f"likely identifier (its name){DROPPED} - set role to perturb only if it is not identifying")
        return col
    marker_cells = sum(stats.counts.get(m, 0) for m in MISSING_MARKERS)
    numeric = stats.numeric > 0 and stats.numeric >= NUMERIC_SHARE * (rows - marker_cells)
    spaced = stats.with_space > 0.5 * rows and (distinct is None or distinct > 0.5 * rows)
    if not numeric and not labels and looks_like_free_text_name(name):
        col.role = "drop"
        warn.append(f"likely free text (its name){DROPPED} - set role to perturb only if it holds a few fixed labels")
        return col
    if not numeric and not labels and (stats.mean_length > FREE_TEXT_LENGTH or spaced):
        col.role = "drop"
        warn.append(f"looks like free text{DROPPED}")
        return col
    # rare long texts: a survey's "Neither agree nor disagree", answered in many rows, is a label
    seen = stats.counts.items() if not numeric and not labels else ()
    long = {v for v, c in seen if is_rare(c) and long_text(v)}
    if long:
        col.role = "drop"
        others = [v for v in stats.counts if v not in long]
        listed = distinct is not None and 0 < len(others) <= MAX_CATEGORIES
        if listed:  # a user who knows them for labels lists them; the long texts are never copied
            col.categories = listed_categories(others, False, stats.decimal)
            _add_missing(col, has_missing, set(others))
        more = " (the other values are listed as categories; perturb names the long ones to add or recode)"
        warn.append(
            f"likely free text ({len(long):,} value{'s' if len(long) != 1 else ''} of {LONG_WORDS} or more words "
            f"or over {FREE_TEXT_LENGTH} characters in fewer than {RARE_COUNT} rows each, not copied here){DROPPED} "
            "- set role to perturb only if they are category labels"
            + (more if listed else "")
        )
        return col
    nearly_unique = rows >= UNIQUE_MIN_ROWS and (distinct is None or distinct >= UNIQUE_SHARE * rows)
    if nearly_unique and (not numeric or _dense_integers(stats)):
        col.role = "drop"
        count = "more than 5,000" if distinct is None else f"{distinct:,}"
        warn.append(f"likely identifier: {count} distinct values in {rows:,} rows{DROPPED}")
        return col
    extras = stats.non_numeric_values() if numeric else {}
    numeric_distinct = None if distinct is None else distinct - len(extras)
    if numeric and (numeric_distinct is None or numeric_distinct > ORDINAL_MAX):
        edges = quantile_edges(stats.sample, DEFAULT_BIN_COUNT)
        if len(edges) >= 3:
            col.type = "numeric"
            col.bins = {"method": "quantile", "count": len(edges) - 1, "edges": edges}  # rounded edges may merge
            markers = {v: c for v, c in extras.items() if v in MISSING_MARKERS}
            texts = {v: c for v, c in extras.items() if v not in MISSING_MARKERS}
            col.categories = sorted(markers, key=_alphabetical)
            warn.append(BINS_WARNING)
            _add_missing(col, has_missing or bool(texts), set(markers))
            _flag_markers(col, markers)
            _flag_texts(col, texts)
            # the categories beside the bins are published by name (perturb's rare rule): the markers listed, and
            # the missing-value category (empty cells and the texts not listed)
            released = category_rows(col, markers, stats.missing + sum(texts.values()))
            rare = rare_warning(released, missing=missing_category(col))
            if rare:
                warn.append(rare)
            return col
    if distinct is None or distinct > MAX_CATEGORIES:
        col.role = "drop"
        count = "more than 5000" if distinct is None else f"{distinct:,}"
        warn.append(f"{count} {TOO_MANY}{DROPPED} - merge categories to use it")
        return col
    values = list(stats.counts)
    if numeric:
        col.type = "ordinal"
    col.categories = listed_categories(values, numeric, stats.decimal)
    if labels:
        _apply_labels(col, values, labels, stats)
    _add_missing(col, has_missing, set(values))
    if len(col.categories) < 2:
        col.role = "drop"
        warn.append(f"only one value ({col.categories[0]!r}): nothing to randomize{DROPPED}")
        return col
    many = many_categories_warning(len(col.categories))
    if many:
        warn.append(many)
    rare = rare_warning(category_rows(col, stats.counts, stats.missing), missing=missing_category(col))
    if rare:
        warn.append(rare)
    _flag_markers(col, stats.counts)
    near = near_duplicate_warning([c for c in col.categories if c in stats.counts], stats.decimal)
    if near:
        warn.append(near)
    return col


#: How the warning on a column with many categories ends (:func:`many_categories_warning`).
MANY_WARNING_END = " categories: estimates will need many rows; consider merging"


def many_categories_warning(count: int) -> str | None:
    """The warning on a column released with ``count`` categories, more than MANY_CATEGORIES; None otherwise."""
    return f"{count}{MANY_WARNING_END}" if count > MANY_CATEGORIES else None


def _code(value: str, labels: dict[float, str], decimal: str) -> float | None:
    """The code of a value of a labelled column: its label's (the smallest, for a label given twice), or the
    number itself for an unlabelled code; None for another text."""
    codes = [c for c, label in labels.items() if label == value]
    if codes:
        return min(codes)
    return _number(value, decimal)


#: How the warning naming the codes without a value label starts.
UNLABELLED_START = "codes without a value label in the file"


def _apply_labels(col: ColumnConfig, values: list[str], labels: dict[float, str], stats: ColumnStats) -> None:
    """Categories of a labelled column in the order of their codes (other texts after them); ordinal when the
    codes are 3 or more consecutive whole numbers (codes the file labels fill gaps); warnings naming the codes
    without a label and saying where an ordinal order comes from."""
    codes = {v: _code(v, labels, stats.decimal) for v in values}
    col.categories = sorted(
        values, key=lambda v: (0, codes[v], v, "") if codes[v] is not None else (1, 0.0, "", _alphabetical(v))
    )
    unlabelled = [v for v in col.categories if codes[v] is not None and v not in labels.values()]
    if unlabelled:
        shown = ", ".join(f"{v!r} ({stats.counts[v]:,})" for v in unlabelled[:RARE_SHOWN])
        more = f" and {len(unlabelled) - RARE_SHOWN} more" if len(unlabelled) > RARE_SHOWN else ""
        col.warnings.append(
            f"{UNLABELLED_START}: {shown}{more} - recode them to a label, or set them missing if they mean missing"
        )
    present = sorted({c for c in codes.values() if c is not None})
    whole = all(c == math.floor(c) for c in present) and None not in codes.values()
    if (
        whole
        and len(present) >= 3
        and all(k in present or k in labels for k in range(int(present[0]), int(present[-1]) + 1))
    ):
        col.type = "ordinal"
        listed = ", ".join(
            f"{format_code(codes[v])} = {v!r}" if v in labels.values() else format_code(codes[v])
            for v in col.categories[:RARE_SHOWN]
        )
        more = ", ..." if len(col.categories) > RARE_SHOWN else ""
        col.warnings.append(
            f"categories in the order of their codes in the file ({listed}{more}), proposed as ordinal - set type "
            "nominal if that order means nothing"
        )


def format_code(code: float | None) -> str:
    """A code as the file shows it: 3.0 as 3."""
    return "" if code is None else str(int(code)) if code == math.floor(code) else repr(code)


#: How the warning naming values that differ only by spaces, letter case or number format starts.
NEAR_DUPLICATE_START = "values that differ only by spaces or letter case (or are equal as numbers)"


def _near_key(value: str, decimal: str):
    number = _number(value, decimal)
    return (1, " ".join(value.split()).casefold()) if number is None else (0, number)


def near_duplicate_warning(values, decimal: str = ".") -> str | None:
    """The warning naming the groups of ``values`` (categories as read) that differ only by white space (at the
    start, end or inside) or letter case, or are equal as numbers ("1" and "1.0"): each is released as a
    category of its own unless recoded; None when there are none. Groups and values in the order of ``values``
    (the first RARE_SHOWN groups)."""
    groups: dict = {}
    for v in values:
        groups.setdefault(_near_key(v, decimal), []).append(v)
    found = [g for g in groups.values() if len(g) > 1]
    if not found:
        return None
    shown = "; ".join("/".join(repr(v) for v in g) for g in found[:RARE_SHOWN])
    more = f"; and {len(found) - RARE_SHOWN} more" if len(found) > RARE_SHOWN else ""
    return f"{NEAR_DUPLICATE_START}: {shown}{more} - merge them (recode), or each is released as its own category"


#: How the rare-category warning starts (the GUI recomputes it after recoding).
#: The warning on a numeric column grouped into bins (the GUI leaves it out for a kept column, copied as it is).
BINS_WARNING = "numbers grouped into quantile bins; the bin edges come from the data and are published"
RARE_WARNING_START = f"rare categories (fewer than {RARE_COUNT} rows)"


def is_rare(rows: int) -> bool:
    """The rare-category rule: a category released in 1..RARE_COUNT-1 rows (the codebook discloses that it
    exists). A listed category with no rows is not rare: nobody is disclosed by it."""
    return 0 < rows < RARE_COUNT


def rare_categories(counts) -> list[tuple[str, int]]:
    """(category, rows) of every rare category (:func:`is_rare`) of ``counts`` ({category: rows}), rarest first,
    ties in natural alphabetical order: the one list every rare-category warning and listing shows."""
    rare = _rare(counts)
    rare.sort(key=_rarest_first)
    return rare


def _rare(counts) -> list[tuple[str, int]]:
    """(category, rows) of every rare category of ``counts``, in its order."""
    return [(str(v), int(c)) for v, c in counts.items() if is_rare(c)]


def _rarest_first(found: tuple[str, int]) -> tuple[int, str]:
    """The order of :func:`rare_categories`: by rows, ties in natural alphabetical order."""
    return found[1], _alphabetical(found[0])


def rare_warned(col) -> bool:
    """Whether perturbed column ``col`` (a configuration's) carries the rare-category warning: perturb will refuse
    it as written."""
    return col.role == "perturb" and any(str(w).startswith(RARE_WARNING_START) for w in col.warnings)


def rare_warning(counts, recoded: bool = False, missing: str | None = None) -> str | None:
    """The warning naming the :func:`rare_categories` of ``counts`` ({category: rows}), rarest first (the first
    RARE_SHOWN with their counts), or None when there are none. ``missing``: the column's missing-value category
    (:func:`missing_category`; None when it has none): when it is the only rare one, the way out says that nothing
    can be merged into it."""
    rare = _rare(counts)
    if not rare:
        return None
    first = heapq.nsmallest(RARE_SHOWN, rare, key=_rarest_first)  # rare_categories' first, the rest never sorted
    shown = ", ".join(f"{v!r} ({c})" for v, c in first)
    more = f" and {len(rare) - RARE_SHOWN} more" if len(rare) > RARE_SHOWN else ""
    after = " after recoding" if recoded else ""
    way_out = "merge them or set them missing"
    if missing is not None and all(v == missing for v, _c in rare):  # nothing to merge the missing-value category into
        way_out = "it is the missing-value category (a value is missing): allow it at release, or drop the column"
    return (
        f"{RARE_WARNING_START}{after}: {shown}{more}; the codebook lists every category, so their existence is "
        f"disclosed - {way_out}"
    )


def rows_text(n: int) -> str:
    """ "1 row", "1,234 rows": a number of rows in words, everywhere a message counts rows."""
    return f"{n:,} row{'s' if n != 1 else ''}"


def _missing_named(labels: list[str]) -> tuple[str, bool]:
    """("'NA'" or "'NA' and 'Unknown'", whether more than one) of the missing-value categories ``labels``."""
    distinct = list(dict.fromkeys(labels))
    shown = ", ".join(repr(v) for v in distinct[:-1]) + " and " if len(distinct) > 1 else ""
    return shown + repr(distinct[-1]), len(distinct) > 1


#: Fewer data rows than this and nothing can be released: every column holds a single value, nothing to randomize.
MIN_RELEASE_ROWS = 2


def too_few_rows(rows: int | None, name: str) -> str | None:
    """Why nothing can be released from file ``name`` of ``rows`` data rows (fewer than MIN_RELEASE_ROWS), or None
    (enough rows, or not counted yet). ``optrr schema`` and the window say it in these words."""
    if rows is None or rows >= MIN_RELEASE_ROWS:
        return None
    return (
        f"nothing can be released from {name}: it has {rows} data row{'' if rows == 1 else 's'}, so every column holds "
        "a single value and there is nothing to randomize (a release needs many rows)"
    )


def rare_refusal(
    found, missing: Mapping[str, str | None] | None = None, merges: Mapping[str, Mapping[str, str]] | None = None
) -> str:
    """The perturb-time error naming the perturbed columns with rare released categories (``found``: (column,
    :func:`rare_categories` of its released rows) of each, in column order; the first RARE_SHOWN columns named, the
    others counted; the first RARE_SHOWN categories of a column named with their rows, the others counted) and the
    ways out, ``optrr schema --merge-rare`` (:mod:`.merge_rare`) first. ``missing``: {column: its missing-value
    category (:func:`missing_category`)}: such a category only says that a value is missing and is never merged.
    ``merges``: {column: {category: the label --merge-rare would release it as}} (:func:`.merge_rare.merged_labels`),
    quoted for the columns named ('Other' into 'Male or other'); without it the way out is told in general."""
    found = list(found)
    missing = missing or {}
    listed = []
    for name, rare in found[:RARE_SHOWN]:
        shown = ", ".join(f"{v!r} ({rows_text(c)})" for v, c in rare[:RARE_SHOWN])
        more = f" and {len(rare) - RARE_SHOWN:,} more" if len(rare) > RARE_SHOWN else ""
        listed.append(f"{name!r}: {shown}{more}")
    others = len(found) - RARE_SHOWN
    columns = f"; and {others:,} more column{'s' if others != 1 else ''}" if others > 0 else ""
    values = [(v, v == missing.get(name)) for name, rare in found for v, _c in rare]
    missing_rare = [v for v, is_missing in values if is_missing]
    start = f"{RARE_WARNING_START} would be released by name in {'; '.join(listed)}{columns}"
    merge_rare = _merge_rare_does(found[:RARE_SHOWN], merges)
    if not missing_rare:
        return _merge_ways_out(start, "", merge_rare)
    named, plural = _missing_named(missing_rare)
    if len(missing_rare) == len(values):  # only missing-value categories: merging and missing values do not apply
        what = (
            "are the missing-value categories: they only say that a value is missing, and nothing can be merged into "
            "them or them into another"
            if plural
            else "is the missing-value category: it only says that a value is missing, and nothing can be merged into "
            "it or it into another"
        )
        return (
            f"{start}; the codebook lists every category, so their existence is disclosed. {named} {what}. Drop the "
            "column, or give --allow-rare-categories if publishing their existence is intended"
        )
    what = (
        "the missing-value categories, only say that a value is missing and are not merged: allow them"
        if plural
        else "the missing-value category, only says that a value is missing and is not merged: allow it"
    )
    return _merge_ways_out(start, f" ({named}, {what} if that may be known, or drop the column)", merge_rare)


#: What ``optrr schema --merge-rare`` does, told in general (when the refusal does not quote it for the columns).
MERGE_RARE_IN_GENERAL = (
    "nominal: into one category with enough rows, 'Other' or, when the smallest other categories must join it, "
    "named after them ('Male or other'); ordinal: into a neighbour"
)


def _merge_rare_does(found, merges: Mapping[str, Mapping[str, str]] | None) -> str:
    """What --merge-rare would do to the rare categories of the columns ``found`` ((column, [(category, rows)])):
    quoted from ``merges`` ("'gender': 'Other' into 'Male or other'"), the columns it leaves as they are named; in
    general (MERGE_RARE_IN_GENERAL) without ``merges``."""
    if merges is None:
        return MERGE_RARE_IN_GENERAL
    done, left = [], []
    for name, rare in found:
        into: dict[str, list[str]] = {}
        for value, _n in rare[:RARE_SHOWN]:
            label = (merges.get(name) or {}).get(value)
            if label is not None:
                into.setdefault(label, []).append(repr(value))
        if into:
            done.append(f"{name!r}: " + ", ".join(f"{' and '.join(v)} into {label!r}" for label, v in into.items()))
        else:
            left.append(repr(name))
    if left:
        done.append(f"{' and '.join(left)} left as {'they are' if len(left) > 1 else 'it is'}")
    return ", ".join(done)


def _merge_ways_out(start: str, missing_note: str, merge_rare: str) -> str:
    """:func:`rare_refusal` of rare categories that can be merged: ``start`` (what would be released), the
    ``missing_note`` on the missing-value categories among them ("" when none), what ``merge_rare`` does
    (:func:`_merge_rare_does`: quoted for this configuration's columns, or the rule in general) and the ways out."""
    where = "" if merge_rare == MERGE_RARE_IN_GENERAL else "; on this configuration's columns"
    return (
        f"{start}; the codebook lists every "
        f"category, so their existence is disclosed{missing_note}. Merge them into a category with enough rows "
        "(`optrr schema INPUT -o CONFIG --merge-rare` writes a new configuration, inferred from the file again, "
        f"that merges them{where}: {merge_rare}; or recode by hand), list them as missing values with missing: "
        "category (the "
        "codebook counts such texts without naming them; it helps only when the missing-value category then holds "
        "enough rows; missing: exclude would leave their rows out, which no epsilon protects), "
        "drop the column, or give --allow-rare-categories if publishing their existence is intended"
    )


#: A kept column (copied unchanged, in the clear) is refused by perturb when more than this share of the released
#: rows hold a value no other released row has (:func:`kept_unique_refusal`): such a value is a linkage key.
KEPT_UNIQUE_SHARE = 0.05


def kept_too_unique(unique_rows: int, rows: int) -> bool:
    """The rule for kept columns: more than KEPT_UNIQUE_SHARE of the ``rows`` released have a value of the column
    that no other released row has (``unique_rows``)."""
    return unique_rows > KEPT_UNIQUE_SHARE * rows


def kept_rare_refusal(found) -> str:
    """The perturb-time error naming every kept column with values held by fewer than RARE_COUNT rows (``found``:
    (name, such values, rows holding them) of each, in column order: :meth:`KeptUniqueGuard.rare`), why it matters and
    the ways out."""
    named = ", ".join(
        f"{name!r} ({values:,} value{'s' if values != 1 else ''} held by fewer than {RARE_COUNT} rows, "
        f"{rows_text(held)} in all)"
        for name, values, held in found
    )
    return (
        f"kept column(s) {named} would be published as they are, in the clear: a value that fewer than {RARE_COUNT} "
        "records have discloses that such a person is in the data and can single them out (the rule of the perturbed "
        "columns' rare categories). Merge the rare values into a value with enough rows or recode the column into "
        "groups (its recode in the configuration, e.g. ages into bands), perturb it, drop it, or give "
        "--allow-flagged-kept if publishing its values is intended"
    )


def kept_unique_refusal(found, rows: int) -> str:
    """The perturb-time error naming every kept column that :func:`kept_too_unique` refuses (``found``: (name, rows
    with a value no other row has, distinct values) of each, in column order; ``rows``: the rows released), saying
    which look like identifiers (:func:`identifier_like`), why it matters and the ways out."""
    named = []
    for name, unique, distinct in found:
        like = "; it looks like an identifier" if identifier_like(distinct, rows) else ""
        named.append(f"{name!r} ({unique:,} of {rows:,} rows have a value no other row has{like})")
    return (
        f"kept column(s) {', '.join(named)} would be published as they are, in the clear: a value that only one "
        "record has can link that record to the person in another data set holding the same value (refused when "
        f"more than {KEPT_UNIQUE_SHARE:.0%} of the rows hold such a value). Drop the column, perturb it (numeric "
        "columns with bins), or give --allow-flagged-kept if publishing its values is intended"
    )


def kept_combination_refusal(names, unique: int, rows: int) -> str:
    """The perturb-time error for kept columns (``names``, in column order) whose combination of values is held by
    one row only in ``unique`` of the ``rows`` released, more than :func:`kept_too_unique` allows and more than any
    of them alone: which columns, how many rows, why it matters and the ways out."""
    named = ", ".join(repr(n) for n in names)
    return (
        f"kept columns {named} together would be published as they are, in the clear: {unique:,} of {rows:,} rows "
        "have a combination of these values that no other row has. Each value may be common, but the combination "
        "can link that record to the person in another data set holding the same values (refused when more than "
        f"{KEPT_UNIQUE_SHARE:.0%} of the rows hold such a combination). Coarsen one of these columns (recode its "
        "values into fewer groups, e.g. ages into bands), perturb it (a numeric one with bins) or drop it, or give "
        "--allow-flagged-kept if publishing their values is intended"
    )


def missing_category(col: ColumnConfig) -> str | None:
    """The released category of the column's missing values (its ``missing_label`` after recoding), or None when
    its missing rows are left out."""
    return released_label(col.missing_label, col.recode) if col.missing == "category" else None


def category_rows(col: ColumnConfig, texts: Mapping[str, int], missing: int) -> dict[str, int]:
    """Rows per released category of ``col``, as perturb counts them, from the rows of each text read (``texts``)
    and of the empty cells (``missing``): texts of ``missing_values`` and empty cells count in the missing-value
    category (none with ``missing: exclude``), the others under their recoded label. Reads only the column's
    ``missing``, ``missing_label``, ``missing_values`` and ``recode``; linear (a 70,000-text column: ~10 ms)."""
    missing_label = missing_category(col)
    moved: dict[str, str | None] = {**source_map(col.recode), **dict.fromkeys(col.missing_values, missing_label)}
    rows = {text: int(n) for text, n in texts.items()}
    # every moved text taken out first: a recoding may swap two texts' labels
    taken = [(label, rows.pop(text)) for text, label in moved.items() if text in rows]
    for label, n in taken:
        if label is not None:
            rows[label] = rows.get(label, 0) + n
    if missing_label is not None and missing:
        rows[missing_label] = rows.get(missing_label, 0) + int(missing)
    return rows


def _add_missing(col: ColumnConfig, has_missing: bool, values: set) -> None:
    if not has_missing:
        return
    col.missing = "category"
    if MISSING_LABEL in values:
        col.warnings.append(f"empty cells and the text {MISSING_LABEL!r} become one category {MISSING_LABEL!r}")
    else:
        col.categories = [*(col.categories or []), MISSING_LABEL]


#: How the warning about missing-value markers kept as categories starts (the GUI recomputes it as they change).
MARKER_WARNING_START = "values that look like missing-value markers"


def marker_warning(values) -> str | None:
    """The warning naming the MISSING_MARKERS among ``values`` (the texts released as categories; the missing-value
    category itself excepted), or None when there are none."""
    markers = [m for m in MISSING_MARKERS if m in values and m != MISSING_LABEL]
    if not markers:
        return None
    shown = ", ".join(repr(m) for m in markers)
    return (
        f"{MARKER_WARNING_START} ({shown}) are kept as categories; list them in missing_values to treat them as "
        "missing"
    )


def _flag_markers(col: ColumnConfig, values) -> None:
    warning = marker_warning(values)
    if warning:
        col.warnings.append(warning)


def _flag_texts(col: ColumnConfig, texts: dict) -> None:
    """Non-numeric cells of a numeric column that are not missing-value markers (e.g. a note with a name)
    are never copied into the configuration: they become missing unless the user lists them."""
    if texts:
        cells = sum(texts.values())
        col.warnings.append(
            f"{NON_NUMERIC_FLAG}: {cells:,} cell{'s' if cells != 1 else ''} ({len(texts):,} distinct text"
            f"{'s' if len(texts) != 1 else ''}, not copied here) are not numbers; they are released as missing "
            "unless you list them in categories"
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


def declared_column(stats: ColumnStats, categories: list[str], source: str) -> ColumnConfig:
    """A column whose categories a data dictionary declares: nothing about its values comes from the data
    (the warning says how many cells fall outside the dictionary, not which)."""
    col = ColumnConfig(name=stats.name, role="perturb", type="nominal", epsilon=DEFAULT_EPSILON)
    col.categories = list(categories)
    named = name_warning(stats.name)
    if named:
        col.warnings.append(named)
    col.warnings.append(f"categories declared by the data dictionary {source}, not read from the data")
    _add_missing(col, stats.missing > 0, set(categories))
    if stats.overflow:
        col.warnings.append("more than 5,000 distinct values in the data: check them against the dictionary")
    else:
        outside = {v: c for v, c in stats.counts.items() if v not in categories}
        if outside:
            cells = sum(outside.values())
            col.warnings.append(
                f"{cells:,} cells ({len(outside):,} distinct values, not copied here) are not in the dictionary; "
                "perturb stops on them: correct the data or extend the dictionary"
            )
    if len(col.categories) < 2:
        col.role = "drop"
        col.warnings.append(f"the dictionary declares fewer than 2 categories: nothing to randomize{DROPPED}")
    return col


def infer_schema(path, options=None, progress=None, cancel=None, codebook=None, column_stats=None) -> ReleaseConfig:
    """A release-configuration template for the file at ``path`` (one streaming pass). ``codebook``: the path
    of a data dictionary (:mod:`.codebook_import`) declaring the categories of some columns. ``column_stats``: a
    dict to fill with the pass's ColumnStats of each readable column (its counts: :mod:`.merge_rare`)."""
    from ..io.readers import open_source

    declared = {}
    if codebook is not None:
        from .codebook_import import read_codebook

        declared = read_codebook(codebook)
    ctl = TaskControl(progress, cancel)
    source = open_source(path, options)
    absent = [c for c in declared if c not in source.names]
    if absent:
        file = os.path.basename(str(path))
        raise InputError(f"the data dictionary declares column {absent[0]!r}, which {file} lacks")
    unreadable = source.unreadable
    stats, rows = gather_stats(source, source.readable_names(), source.options.decimal or ".", ctl)
    if column_stats is not None:
        column_stats.update(stats)
    if rows == 0:
        raise InputError(f"{os.path.basename(str(path))} has a header but no data rows")
    name = os.path.basename(str(codebook)) if codebook is not None else ""
    labels = getattr(source, "value_labels", {})

    def column(n: str) -> ColumnConfig:
        if n in unreadable:
            return unreadable_column(n, unreadable[n])
        if n in declared:
            return declared_column(stats[n], declared[n], name)
        return decide_column(stats[n], labels.get(n))

    columns = [column(n) for n in source.names]
    notes = source.column_warnings()
    for col in columns:
        user_missing = getattr(source, "user_missing", {}).get(col.name)
        if user_missing:
            col.warnings.append(user_missing_warning(user_missing))
        col.warnings.extend(notes.get(col.name, []))
    reader = {k: v for k, v in source.options.to_dict().items() if k in INPUT_KEYS}
    facts: dict = {"file": os.path.basename(str(path)), "format": source.format, "rows": rows}
    if source.empty_rows_skipped:  # rows whose every cell is empty: not records (io.source_base)
        facts["empty_rows_skipped"] = int(source.empty_rows_skipped)
    cfg = ReleaseConfig(method="auto", columns=columns, input=reader, source=facts)
    ctl.report(1.0, f"{rows:,} rows, {len(columns)} columns")
    return cfg


def unreadable_column(name: str, reason: str) -> ColumnConfig:
    """A column the reader cannot give as text (``reason``: the source's, e.g. "holds nested values
    (lists/structs)"): dropped, its ``unreadable`` the reason, with a warning saying why."""
    col = ColumnConfig(name=name, role="drop", type="nominal", unreadable=reason)
    col.warnings.append(f"{reason}{DROPPED} - it cannot be released")
    return col


def user_missing_warning(values: str) -> str:
    """The note on a column's user-missing values (``values``: as the file declares them, e.g. "9 = 'refused'"):
    they are read as missing, so they are released with the empty cells and cannot be told apart from them."""
    return (
        f"user-missing values declared in the file ({values}) are read as missing, like empty cells: they are "
        "released together with them and cannot be told apart"
    )


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
        bins = c.bins
        assert isinstance(bins, dict)  # normalised by the configuration; needs_bins: a method, no edges
        count = int(bins.get("count", DEFAULT_BIN_COUNT))
        if bins["method"] == "equal_width":
            edges = equal_width_edges(s.num_min, s.num_max, count)
        else:
            edges = quantile_edges(s.sample, count)
        if len(edges) < 3 or any(math.isnan(e) for e in edges):
            raise InputError(f"column {c.name!r}: its values do not spread over 2 or more bins; list the edges")
        c.bins = {**bins, "count": len(edges) - 1, "edges": edges}  # the bins made (rounded edges may merge)
    return [c.name for c in todo]
