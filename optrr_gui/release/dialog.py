"""Release dialog: choose the output file and format, run the perturbation in the background with a progress
bar, the remaining time and Cancel, then show a summary (rows, the design by the window's name for it, epsilons
recomputed by the engine, the manifest's notes, where the manifest and report are) with "Open folder". A cancelled
run leaves nothing under the output name (the engine writes to a temporary file and renames it at the end).

Before the release the dialog says what the release will note on the needed tables that carry almost no
information at the file's rows (the engine's notes, computed in a worker process: :data:`NOTES_CHANNEL`), and, for
a delimited-text input whose delimiter is not a comma, that a CSV release keeps that delimiter. Kept columns that
single out records together are listed in orange once counted on the rows read (:data:`COMBINATION_CHANNEL`).
A kept column where (nearly) every row has its own value identifies the records (:func:`kept_identifier_columns`,
the engine's identifier rule): the tick of the orange list never approves it, only its own box naming it (as
``optrr perturb`` refuses it unless --allow-flagged-kept), or it is dropped.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
)

from optrr_engine.errors import InputError, OptRRError
from optrr_engine.release.audit import (
    ACCUMULATED_NOTE,
    AUDIT_NAME,
    RepeatReleaseError,
    accumulated_epsilon,
    accumulated_words,
)
from optrr_engine.release.manifest import mechanism_from_manifest
from optrr_engine.release.perturb import PublishRefusal
from optrr_engine.release.randomness import DEVELOPER_ENV, developer_mode, generate_key_file
from optrr_engine.release.schema import RARE_COUNT, kept_too_unique
from optrr_engine.release.schema import rare_categories as rare_of_column

from ..common.widgets import fmt_eps, fmt_seconds
from ..state.design_summary import (
    METHOD_LABELS,
    SAMPLING_ROWS,
    listed_labels,
    noise_note,
    short_label,
)
from ..state.needed_marginals import WAY_OUT, label_index_sets, name_lists
from ..state.needed_marginals import describe as describe_needed
from ..workers.jobs.release import kept_combination, needed_table_notes, remove_release_leftovers, run_release
from .configuration import release_configuration

#: Output formats offered: label -> (engine output_format, extension).
FORMATS = {
    "CSV (comma-separated text)": ("csv", ".csv"),
    "Excel workbook": ("xlsx", ".xlsx"),
    "Parquet": ("parquet", ".parquet"),
    "SPSS (.sav)": ("sav", ".sav"),
    "Stata (.dta)": ("dta", ".dta"),
}
CHANNEL = "release"
#: While designs compute, the dialog waits by default for those that were better before the last change when
#: each took at most this many seconds then (the user may still choose to release now).
DEFAULT_WAIT_S = 60.0
#: The runner's channel of the notes on needed tables without information (:meth:`ReleaseDialog.information_notes`).
NOTES_CHANNEL = "release-notes"
#: The runner's channel of the kept columns' combination on the rows read (:meth:`ReleaseDialog.kept_combination`).
COMBINATION_CHANNEL = "release-kept-combination"
#: Most of those notes written out in the dialog (every one in its tooltip, and in the manifest after the release).
NOTES_SHOWN = 3
#: Delimiters named in words beside the format (others are shown quoted).
DELIMITER_WORDS = {"\t": "tab", " ": "space"}
#: Said when a repeat release replaces the files of an earlier one: the ledger keeps counting the one replaced.
REPLACED_COUNTED = "The release you are replacing is counted too: it may already have been sent."
_NO_SUMMARIES: dict = {}  # never modified


def default_output(input_path: str, extension: str, folder: str | None = None) -> str:
    """``STEM_released.EXT`` in ``folder`` (the last release folder), else beside the input; never in the app's own
    sample folder (inside the installed application) nor in a folder it cannot write: then the home folder."""
    from ..state.paths import SAMPLE_DIR

    p = Path(input_path)
    folder = Path(folder) if folder else p.parent
    inside_app = Path(os.path.abspath(folder)) == Path(os.path.abspath(SAMPLE_DIR))
    if inside_app or not os.access(folder, os.W_OK):
        folder = Path.home()
    return str(folder / f"{p.stem}_released{extension}")


def remaining_seconds(elapsed: float, fraction: float) -> float | None:
    """Linear extrapolation of the time left; None until there is enough progress to say."""
    if fraction < 0.02 or elapsed < 0.5:
        return None
    return elapsed * (1.0 - fraction) / fraction


def manifest_paths(output_path: str) -> tuple[str, str]:
    return f"{output_path}.manifest.json", f"{output_path}.report.html"


def design_name(manifest: dict) -> str:
    """The design of a release as the rest of the window names it (METHOD_LABELS: "Sample-2 (2 columns per row)",
    never the engine's "sample-m"), from the manifest's design method and, for sample-m, its columns per row (the
    mechanism's m); "" when the manifest names none."""
    mechanism = manifest.get("mechanism") or {}
    method = (manifest.get("design") or {}).get("method") or mechanism.get("method", "")
    m = mechanism.get("m") if method == "sample-m" else None
    row = next((row for row, params in SAMPLING_ROWS.items() if params == (method, m)), method)
    return METHOD_LABELS.get(row, row)


def notes_html(notes) -> str:
    """The manifest's design notes as a list, those on tables that cannot be estimated in orange; "" for none."""
    from html import escape

    if not notes:
        return ""
    orange = " style='color:#b05000'"
    items = "".join(f"<li{orange if 'cannot be estimated' in str(n) else ''}>{escape(str(n))}</li>" for n in notes)
    return f"<p>Notes in the manifest:</p><ul>{items}</ul>"


def summary_html(manifest: dict, output_path: str, seconds: float, audit: dict | None = None, ledger=()) -> str:
    """What was written. The epsilons are recomputed from the manifest's mechanism (not copied); the design is
    named as the window names it (:func:`design_name`) and the manifest's design notes are listed (:func:`notes_html`);
    ``audit`` (this release's entry of the internal audit record) adds what the recipient is not told, ``ledger``
    the earlier releases of the same data."""
    from html import escape

    audit = audit or {}
    internal = str((audit.get("files") or {}).get("internal_report") or "")
    manifest_path, report_path = manifest_paths(output_path)
    mech = mechanism_from_manifest(manifest)
    eps = mech.attribute_epsilons()
    names = [str(a["name"]) for a in manifest.get("attributes", [])]
    requested = [a.get("requested_epsilon") for a in manifest.get("attributes", [])]
    method = design_name(manifest)
    rows = manifest.get("rows")
    lines = [f"<h3>Release written in {fmt_seconds(seconds)}</h3>", "<table cellspacing='4'>"]
    if isinstance(rows, int):
        excluded = audit.get("rows_excluded") or 0
        extra = f" ({excluded:,} rows left out for missing values)" if excluded else ""
        lines.append(f"<tr><td>Rows</td><td>{rows:,}{extra}</td></tr>")
    if method:
        lines.append(f"<tr><td>Design</td><td>{escape(method)}</td></tr>")
    value = fmt_eps(mech.overall_epsilon())
    lines.append(f"<tr><td>Whole-record ε</td><td><b>{value}</b> (lower = more private)</td></tr>")
    budget = (manifest.get("design") or {}).get("budget")
    if budget:  # a whole-record target: nothing was requested per column, the design chose each column's ε
        target = budget.get("target_total")
        within = f" within the whole-record target ε {fmt_eps(float(target))}" if target is not None else ""
        lines.append(f"</table><p>ε per perturbed column (chosen by the design{within}):</p><table cellspacing='4'>")
        for name, e in zip(names, eps, strict=False):
            lines.append(f"<tr><td>{name}</td><td align='right'>{fmt_eps(float(e))}</td></tr>")
    else:
        lines.append("</table><p>ε per perturbed column (requested → achieved):</p><table cellspacing='4'>")
        for name, req, e in zip(names, requested, eps, strict=False):
            req_text = fmt_eps(float(req)) if req is not None else "—"
            lines.append(f"<tr><td>{name}</td><td align='right'>{req_text}</td><td>→ {fmt_eps(float(e))}</td></tr>")
    lines.append("</table>")
    info = (manifest.get("design") or {}).get("info") or {}
    lines.append(f"<p>{suppression_sentence(info.get('suppression'), len(names))}</p>")
    noise = noise_note(eps, names)
    if noise:
        lines.append(f"<p>{escape(noise)}.</p>")
    lines.append(notes_html((manifest.get("design") or {}).get("notes")))
    kept = manifest.get("kept_columns") or []
    if kept:
        lines.append(f"<p style='color:#b05000'>Exported unchanged (NOT private): {', '.join(map(str, kept))}</p>")
    dropped = audit.get("dropped_columns") or []
    if dropped:
        lines.append(f"<p>Not exported: {', '.join(map(str, dropped))}</p>")
    randomness = manifest.get("randomness") or {}
    if randomness.get("private") is False:
        lines.append(
            f"<p style='color:#cc0000'><b>NOT PRIVATE</b>: made with test seed {randomness.get('test_seed')}; anyone "
            "who finds the seed can undo it. Never share it.</p>"
        )
    elif randomness.get("source") == "secret-key":
        lines.append("<p>Keyed: whoever holds the key file can reproduce this release exactly.</p>")
    if len(ledger) > 1:
        total = accumulated_epsilon(list(ledger))
        lines.append(
            f"<p style='color:#b05000'>This data has now been released {len(ledger)} times: accumulated "
            f"whole-record ε {fmt_eps(total)} ({ACCUMULATED_NOTE}).</p>"
        )
    unlisted = audit.get("unlisted_values_as_missing") or {}
    if unlisted:
        shown = ", ".join(f"{k}: {v:,}" for k, v in unlisted.items())
        lines.append(f"<p>Texts in numeric columns released as missing ({shown}).</p>")
    lines.append(
        f"<p>Data: {output_path}<br>Manifest: {manifest_path}<br>Report: {report_path}</p>"
        "<p>Send the data file together with its manifest and report; the receiver opens them in "
        "<i>Analyse a release</i>. The internal audit record and internal report (the input file, its hash, "
        "the privacy ledger) stay with you in the audit folder"
        + (f" {escape(os.path.dirname(internal))}" if internal else "")
        + ".</p>"
    )
    return "".join(lines)


def information_html(notes, shown: int = NOTES_SHOWN) -> str:
    """The dialog's warning on needed tables that carry almost no information (``notes``: the engine's, as the
    release will write them in its manifest), in plain text: a warning, nothing to tick; the first ``shown`` notes,
    the others counted (all of them are in the tooltip: :func:`information_tooltip`). "" for none."""
    from html import escape

    if not notes:
        return ""
    lines = [f"• {escape(str(n))}" for n in notes[:shown]]
    if len(notes) > shown:
        lines.append(f"… and {len(notes) - shown} more note(s): point here to read them all")
    head = "Almost no information in some needed tables (a warning; the release is not refused and notes it):"
    return "<br>".join([head, *lines])


def information_tooltip(notes) -> str:
    """Every note of :func:`information_html`, one paragraph each (rich text, so that the tooltip wraps)."""
    from html import escape

    return "".join(f"<p>{escape(str(n))}</p>" for n in notes or [])


def input_delimiter(path: str | None, reader_options: dict | None) -> str | None:
    """The delimiter the release reads a delimited-text input with: the one given in ``reader_options``, else the
    one the engine's reader detects (a bounded sample of the file: ~15 ms); None for another format or a file it
    cannot read (the release says why)."""
    from optrr_engine.io.formats import known_format
    from optrr_engine.io.readers import ReaderOptions, detect_options

    if not path or known_format(path) != "csv":
        return None
    given = (reader_options or {}).get("delimiter")
    if given:
        return str(given)
    try:
        return detect_options(path, ReaderOptions.from_dict(reader_options or {})).delimiter
    except (OptRRError, OSError, ValueError):
        return None


def delimiter_note(delimiter: str | None, output_format: str) -> str:
    """Beside the format: a CSV release keeps the input's ``delimiter`` (optrr_engine.release.perturb), said when it
    is not a comma ("CSV, with the input's delimiter ';'"); "" otherwise."""
    if output_format != "csv" or delimiter in (None, ","):
        return ""
    shown = DELIMITER_WORDS.get(str(delimiter), repr(delimiter))
    return f"CSV, with the input's delimiter {shown} (not commas)"


def suppression_sentence(suppression: str | None, k: int) -> str:
    """Whether the design suppresses columns, in words (sampling designs say what a row carries)."""
    if suppression:
        return f"Suppresses columns: {suppression}."
    return f"No column suppressed: every row carries all {k} randomized columns."


#: What is published outside the epsilons (ReleaseConfig.published_outside_epsilon), as the dialog says it.
OUTSIDE_EPSILON_TEXT = {
    "kept": "Exported in the clear, NOT private",
    "kept_together": "Kept columns that together single out records (NOT private)",
    "labels_of_dropped": "Randomized, but every category label is published in the codebook (OptRR proposed to "
    "drop them: a likely identifier, free text or too many categories)",
    "rows_left_out": "Rows left out where a value is missing (whether a person's record appears shows that the "
    "value is recorded for them; no ε protects it)",
    "bins_from_data": "Bin edges computed from the data, published rounded",
    "rare_categories": f"Rare categories released by name (fewer than {RARE_COUNT} rows each: their existence is "
    "disclosed)",
}


#: The release dialog's problem while something is orange and the tick is not given.
NEEDS_TICK = "Some things are published outside the ε (orange above): tick the box after checking them, or change them."


def outside_epsilon(state, refused=()) -> dict[str, list[str]]:
    """The engine's list of what this release publishes as it is (the one rule; the tick waits for it), without
    the ``refused`` columns (:func:`identifier_columns`: the release refuses them, so no tick can share them)."""
    outside = state.to_release_config().published_outside_epsilon()
    refused = set(refused)
    return {kind: [n for n in names if n not in refused] for kind, names in outside.items()}


def identifier_columns(state, summaries: dict, decimal: str = ".") -> list[tuple[str, int, int]]:
    """(name, distinct categories, rows) of every perturbed column that ``perturb`` will refuse as an identifier
    (:func:`optrr_engine.release.schema.identifier_like`, the engine's one rule), from the column ``summaries``
    of the rows read.

    The counts are the engine's own: it counts the distinct *codes* of the released categories (after
    missing-value texts, recoding and bins) in the rows it releases. So each distinct value of the summary is
    encoded with the column's codec (the engine's ``ColumnCodec``) and the distinct codes are counted, with the
    missing-value category when the column has empty cells; a column with ``missing: exclude`` counts neither its
    missing cells nor their rows. Neither the summary's distinct count (it ignores recoding, bins and missing
    values) nor the codec size (categories that never occur count too) would match. Not known here: rows left out
    for a missing value in *another* column (the engine counts the rows it releases; the difference is small).
    Columns the codec refuses are skipped (another problem says why), and so are columns without a summary."""
    import pyarrow as pa

    from optrr_engine.release.schema import UNIQUE_MIN_ROWS, identifier_like

    from ..state.config_bridge import column_codec, column_counts

    out = []
    for col, size in zip(state.columns, column_counts(state), strict=True):
        summary = summaries.get(col.name)
        if col.role != "perturb" or summary is None or size is None or size < UNIQUE_MIN_ROWS:
            continue  # distinct <= the codec size: such a column can never qualify
        if col.missing != "exclude" and not identifier_like(size, summary.rows):
            continue
        try:
            codec = column_codec(col)
            codec.decimal = decimal  # the engine's codec reads numbers with the file's decimal mark
            codes, excluded = codec.encode(pa.array([str(v) for v in summary.values], type=pa.string()))
        except OptRRError:
            continue
        kept = ~excluded
        seen = set(codes[kept].tolist())
        rows = int(summary.counts[kept].sum())
        if summary.missing and col.missing != "exclude":
            rows += summary.missing
            if codec.missing_code is not None:
                seen.add(codec.missing_code)
        if identifier_like(len(seen), rows):
            out.append((col.name, len(seen), rows))
    return out


def rare_categories(state, summaries: dict, refused=(), released=None) -> list[tuple[str, str, int]]:
    """(column, category, rows) of every rare released category (the Design tab's rule and order,
    :func:`optrr_engine.release.schema.rare_categories`), per column in column order, rarest first.

    Released categories: the labels a perturbed column's codebook lists, with the rows the release gives each (the
    engine's codec: after recoding, the missing-value texts and empty cells in the missing-value category, rows left
    out not counted), and the texts a kept column copies (after recoding; its empty cells stay empty). Numeric
    columns (:func:`~optrr_gui.state.config_bridge.rare_watched_rows`, the engine's rule): of a perturbed one only
    the categories listed beside its bins (its bins publish ranges, never its numbers); of a kept one none (exported
    in the clear whole, which the "kept" line and its tick already cover). Dropped columns, the ``refused`` ones
    (:func:`identifier_columns`) and columns without a summary in ``summaries``: none."""
    from ..state.config_bridge import rare_watched_rows

    refused = set(refused)
    out = []
    for col in state.columns:
        summary = summaries.get(col.name)
        if col.role not in ("perturb", "keep") or summary is None or col.name in refused:
            continue
        counts = rare_watched_rows(col, summary, _released(col, summary, released))  # the Design tab's counts
        out.extend((col.name, value, rows) for value, rows in rare_of_column(counts))
    return out


def _released(col, summary, released: dict | None) -> dict[str, int]:
    """:func:`~optrr_gui.state.config_bridge.released_rows` of ``col``, from ``released`` ({name: rows per category},
    computed once for the callers that share it) when it has the column."""
    from ..state.config_bridge import released_rows

    if released is not None and col.name in released:
        return released[col.name]
    counts = released_rows(col, summary)
    if released is not None:
        released[col.name] = counts
    return counts


def rare_entries(found: list[tuple[str, str, int]], shown: int = 10) -> list[str]:
    """One entry per column of :func:`rare_categories`' ``found``: "gender: 'Other' (1 row)", the first ``shown``
    categories named and the others counted."""
    by_column: dict[str, list[tuple[str, int]]] = {}
    for name, value, rows in found:
        by_column.setdefault(name, []).append((value, rows))
    out = []
    for name, rare in by_column.items():
        listed = ", ".join(f"{value!r} ({rows} row{'s' if rows != 1 else ''})" for value, rows in rare[:shown])
        more = f" and {len(rare) - shown:,} more" if len(rare) > shown else ""
        out.append(f"{name}: {listed}{more}")
    return out


def kept_unique_columns(state, summaries: dict, released=None) -> list[tuple[str, int, int]]:
    """(column, rows with a value no other row has, rows) of every kept column that ``perturb`` refuses without
    approval (:func:`optrr_engine.release.schema.kept_too_unique`, the engine's rule), from the column ``summaries``
    (rows per value, after recoding: :func:`released_rows`; empty cells are no value). Not known here: rows left out
    for a missing value in another column (the engine counts the rows it releases and says so: :func:`merge_found`).
    Columns without a summary: none."""

    return [(name, unique, rows) for name, unique, _distinct, rows in _kept_too_unique(state, summaries, released)]


def _kept_too_unique(state, summaries: dict, released=None) -> list[tuple[str, int, int, int]]:
    """(column, rows with a value no other row has, distinct values, rows) of :func:`kept_unique_columns`."""
    out = []
    for col in state.columns:
        summary = summaries.get(col.name)
        if col.role != "keep" or summary is None:
            continue
        counts = _released(col, summary, released)
        unique = sum(1 for rows in counts.values() if rows == 1)
        if kept_too_unique(unique, summary.rows):
            out.append((col.name, unique, len(counts), summary.rows))
    return out


def kept_identifier_columns(state, summaries: dict, released=None, found=()) -> list[tuple[str, int, int]]:
    """(column, distinct values, rows) of every kept column of :func:`kept_unique_columns` that the engine's refusal
    calls an identifier (:func:`optrr_engine.release.schema.kept_unique_refusal`: "it looks like an identifier", by
    :func:`~optrr_engine.release.schema.identifier_like`, the rule of the perturbed columns refused as identifiers:
    :func:`identifier_columns`): (nearly) every row has its own value. ``optrr perturb`` refuses such a column unless
    --allow-flagged-kept; the dialog asks for its own confirmation (:attr:`ReleaseDialog.accept_identifier`), never
    the tick of the orange list. ``found``: the kept columns the release refused, counted on the rows it releases
    (:attr:`PublishRefusal.kept_distinct`: (column, distinct values, rows released)); their counts come first, and
    they count whatever ``summaries`` hold (none while the rows are read, or when their read was cancelled)."""
    from optrr_engine.release.schema import identifier_like

    counted = {name: (distinct, rows) for name, _unique, distinct, rows in _kept_too_unique(state, summaries, released)}
    counted.update({str(name): (int(distinct), int(rows)) for name, distinct, rows in found})
    return [
        (col.name, *counted[col.name])
        for col in state.columns
        if col.role == "keep" and col.name in counted and identifier_like(*counted[col.name])
    ]


def _own_value(distinct: int, rows: int) -> str:
    """"every row has its own value" (or "nearly every"), with the counts."""
    every = "every" if distinct >= rows else "nearly every"
    return f"{every} row has its own value ({distinct:,} different values in {rows:,} rows)"


def kept_identifier_entry(name: str, distinct: int, rows: int) -> str:
    """The orange entry of a kept column of :func:`kept_identifier_columns` (the tick of the orange list does not
    approve it: :data:`KEPT_IDENTIFIER_BOX`)."""
    return f"{name!r}: {_own_value(distinct, rows)}: it identifies the records (its own box below)"


def kept_identifier_problem(found) -> str:
    """The release dialog's problem while kept columns of :func:`kept_identifier_columns` (``found``) are not
    confirmed by their own box: what it means and the ways out."""
    named = ", ".join(repr(name) for name, _distinct, _rows in found)
    it, verb = ("it", "identifies") if len(found) == 1 else ("them", "identify")
    every = "every" if all(distinct >= rows for _name, distinct, rows in found) else "(nearly) every"
    return (
        f"Kept {named} {verb} the records ({every} row has its own value): drop {it} or perturb {it}, or tick the box "
        f"naming {it} if the recipient may know who each record is."
    )


def kept_identifier_html(found) -> str:
    """The red line under the column list naming the kept columns of :func:`kept_identifier_columns` (``found``),
    what exporting them means and the way out; "" for none."""
    from html import escape

    if not found:
        return ""
    said = "; ".join(f"{name!r}: {_own_value(distinct, rows)}" for name, distinct, rows in found)
    it, s = ("it", "") if len(found) == 1 else ("them", "s")
    return (
        f"<br><span style='color:#cc0000'><b>Kept column{s} that identif{'ies' if not s else 'y'} the records</b>: "
        f"{escape(said, quote=False)}. Exporting {it} in the clear identifies the records: drop {it} (or perturb "
        f"{it}) unless the recipient may know who each record is.</span>"
    )


#: The text of the release dialog's own confirmation of the kept columns of :func:`kept_identifier_columns`.
KEPT_IDENTIFIER_BOX = "Export {names} in the clear anyway: the recipient may know who each record is"


def kept_rare_entry(name: str, values: int, held: int) -> str:
    """The orange entry of a kept column with values held by fewer than RARE_COUNT rows that the release found
    (:attr:`PublishRefusal.kept_rare`; before the release such values are named in the rare categories' line)."""
    what = "1 value" if values == 1 else f"{values:,} values"
    rows = "1 row" if held == 1 else f"{held:,} rows"
    return (
        f"{name!r}: {what} held by fewer than {RARE_COUNT} rows ({rows}), published in the clear: it can single the "
        "person out"
    )


def kept_entry(name: str, unique: int, rows: int) -> str:
    """The orange entry of a kept column with too many values held by one row (:func:`kept_unique_columns`)."""
    return f"{name!r}: {unique:,} of {rows:,} rows have a value no other row has: it can link a record to the person"


def kept_combination_entry(names, unique: int, rows: int) -> str:
    """The orange entry of the kept columns whose combination of values the release refused
    (:attr:`PublishRefusal.combination`)."""
    named = ", ".join(repr(n) for n in names)
    return (
        f"{named} together: {unique:,} of {rows:,} rows have a combination no other row has: it can link a record to "
        "the person"
    )


def merge_found(state, listed, found) -> list[tuple[str, str, int]]:
    """:func:`rare_categories`' ``listed`` with the engine's ``found`` ((column, category, rows) of a
    :class:`PublishRefusal`, counted on the rows it releases) added, the engine's rows for a category both name;
    per column in the session's column order, rarest first."""
    by_column: dict[str, dict[str, int]] = {}
    for name, value, rows in [*listed, *found]:
        by_column.setdefault(name, {})[value] = rows
    order = {c.name: i for i, c in enumerate(state.columns)}
    columns = sorted(by_column, key=lambda n: order.get(n, len(order)))
    return [(name, value, rows) for name in columns for value, rows in rare_of_column(by_column[name])]


#: Said above the engine's refusal of what the orange list did not name (it is added to the list).
FOUND_BY_RELEASE = (
    "The release found these on the rows it releases (after leaving out rows with a missing value), and they are now "
    "in orange: tick the box to publish them, or change the design."
)


def accumulated_text(exc: RepeatReleaseError) -> str:
    """The accumulated whole-record ε of a repeat as the engine says it: the sum over the releases found, "at most"
    when they were found as near repeats (each shares only part of the records)."""
    return accumulated_words(fmt_eps(exc.accumulated), bool(exc.near))


def repeat_sentence(exc: RepeatReleaseError) -> str:
    """What was released before (:class:`RepeatReleaseError`): the same data file, the same records found in
    another file (``exc.columns`` identical, value by value) or in another order (``exc.reordered``), or most of
    the records of earlier releases in the same order or, for distinctive records, in any order (``exc.near`` only:
    rows added, removed or changed), with the
    earlier releases' files."""
    from optrr_engine.release.audit import near_sentence

    times = len(exc.previous)
    when = f"{times} time{'s' if times != 1 else ''} before"
    files = list(dict.fromkeys(str((r.get("input") or {}).get("file") or "?") for r in exc.previous))
    in_files = f"(file{'s' if len(files) != 1 else ''} {', '.join(files)})"
    if exc.near and len(exc.near) == times:
        near = near_sentence(exc.near)
        return f"{near[:1].upper()}{near[1:]}; records of this file were released {when} {in_files}"
    if exc.reordered:
        return f"The same records, in another order, were released {when} {in_files}"
    if not exc.columns:
        return f"This data file was released {when}"
    named = ", ".join(repr(c) for c in exc.columns)
    columns = f"column{'s' if len(exc.columns) != 1 else ''} {named}"
    return f"The same records ({columns} identical) were released {when} {in_files}"


def identifier_problem(name: str, distinct: int, rows: int) -> str:
    """The release dialog's sentence for a column :func:`identifier_columns` found."""
    return (
        f"{name} has {distinct:,} different values in {rows:,} rows: it looks like an identifier, and the release "
        "refuses it (its categories, the identifiers themselves, would be published in the codebook); drop it (the "
        "Drop button above) or merge its values into far fewer categories."
    )


def columns_html(state, outside: dict | None = None, refused=()) -> str:
    """Before the release: every column randomized and dropped, in orange what is published outside the
    epsilons (``outside``: :func:`outside_epsilon`, with the dialog's "rare_categories": :func:`rare_entries`, and
    "kept_together" when the release found a combination: :func:`kept_combination_entry`) and
    in red the ``refused`` columns (:func:`identifier_columns`)."""
    from html import escape

    def names(cols) -> str:
        return ", ".join(escape(str(c), quote=False) for c in cols) or "none"

    outside = outside_epsilon(state, refused) if outside is None else outside
    perturbed = [c.name for c in state.columns if c.role == "perturb"]
    dropped = [c.name for c in state.columns if c.role == "drop"]
    lines = [f"Randomized ({len(perturbed)}): {names(perturbed)}"]
    if not outside["kept"]:
        lines.append("Exported in the clear: none")
    lines.append(f"Dropped, not exported ({len(dropped)}): {names(dropped)}")
    for kind, text in OUTSIDE_EPSILON_TEXT.items():
        if outside.get(kind):
            count = f" ({len(outside[kind])})" if kind == "kept" else ""
            listed = names(outside[kind])
            if kind in ("rare_categories", "kept_together"):  # entries naming columns or categories in quotes
                listed = "; ".join(escape(e, quote=False) for e in outside[kind])
            lines.append(f"<span style='color:#b05000'><b>{escape(text)}{count}</b>: {listed}</span>")
    if refused:
        lines.append(f"<span style='color:#cc0000'><b>Refused, they look like identifiers</b>: {names(refused)}</span>")
    return "<br>".join(lines)


class ReleaseDialog(QDialog):
    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window_ = window
        self.state = window.state
        self.runner = window.runner
        self.setWindowTitle("Release — randomize and export")
        self.resize(720, 600)
        self.manifest: dict | None = None
        self.output_path = ""
        self.started = 0.0
        self.result_state = "idle"  # idle | running | done | cancelled | failed
        self.allow_repeat = False  # set once the user confirms a repeat release of the same data
        self.replace_confirmed = False  # the user answered "replace?" for the release being retried (repeat)
        self.replacing = False  # the release started last replaces the files of an earlier one
        #: what the last successful release was made of (:meth:`release_key`): Release stays off until it changes
        self.released_key: tuple | None = None
        self.closed_running = False  # the dialog was closed while the release ran: the main window says how it ended
        self.closed = False  # closed (it stays connected to the designs until the next one opens): no background work
        self._notes: tuple = (None, None, None)  # (mechanism, (names, needed, rows), notes: None while computing)
        self._needed_summary = None  # the design summary the Needed row was last shown for
        self._delimiter: tuple = (None, None)  # (data path and reader options, the input's delimiter)

        self.design_label = QLabel()
        self.design_label.setWordWrap(True)
        self.format = QComboBox()
        self.format.addItems(list(FORMATS))
        self.format.setToolTip("File format of the released data. CSV opens everywhere.")
        self.delimiter_label = QLabel()
        self.delimiter_label.setToolTip(
            "A CSV release is written with the delimiter of the input file (the receiver's reader detects it)"
        )
        self.delimiter_label.hide()
        format_row = QHBoxLayout()
        format_row.addWidget(self.format)
        format_row.addWidget(self.delimiter_label, 1)
        self.output = QLineEdit()
        self.output.setToolTip("Where the released data is written; its manifest and report go next to it.")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.output, 1)
        out_row.addWidget(browse)
        self.shuffle = QCheckBox("Shuffle the rows")
        self.shuffle.setChecked(True)
        self.shuffle.setToolTip("Write the rows in random order so the row position cannot link a record to a person.")
        self.key_file = QLineEdit()
        self.key_file.setPlaceholderText("none: fresh randomness from the operating system (recommended)")
        self.key_file.setToolTip(
            "Optional. With a secret key file the same project, data and key give exactly the same release again.\n"
            "Keep the key with the hospital and never send it: anyone holding it could undo the release."
        )
        choose_key = QPushButton("Choose…")
        choose_key.clicked.connect(self.choose_key_file)
        new_key = QPushButton("New key…")
        new_key.setToolTip("Write a new 256-bit secret key file, readable by you only (never over an existing file)")
        new_key.clicked.connect(self.new_key_file)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_file, 1)
        key_row.addWidget(choose_key)
        key_row.addWidget(new_key)
        self.fixed_seed = QCheckBox(f"Insecure test seed (NOT private: anyone can undo the release; {DEVELOPER_ENV}=1)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_147_483_647)
        self.seed.setEnabled(False)
        self.fixed_seed.toggled.connect(self.seed.setEnabled)
        self.accept_changes = QCheckBox("I accept that some columns get a HIGHER ε than I asked for (less private)")
        self.accept_changes.hide()
        self.accept_clear = QCheckBox("I have checked that what is marked in orange above may be shared as it is")
        self.accept_clear.setToolTip(
            "Columns with the role 'keep' are copied unchanged, without any privacy protection, and the codebook lists "
            "every category label of a perturbed column (all patient numbers, if it is an identifier), so a category "
            f"seen in fewer than {RARE_COUNT} rows discloses that such a patient exists; a release with them needs "
            "this tick (set their role to drop, or merge the rare categories, in the Design tab otherwise)."
        )
        self._outside: dict | None = None  # what the tick was given for (a change clears it: _refresh_columns)
        # kept columns where (nearly) every row has its own value (kept_identifier_columns): never approved by the
        # tick above; their own confirmation (optrr perturb refuses them unless --allow-flagged-kept), or drop them
        self._kept_identifiers: tuple = ()  # (name, distinct, rows) of each, as last listed
        self.accept_identifier = QCheckBox()
        self.accept_identifier.setToolTip(
            "A kept column is copied unchanged. When every row has its own value, that value identifies the record "
            "(as a patient number does): whoever holds the same value elsewhere knows whose record it is. Tick only "
            "if the recipient may know who each record is; otherwise drop or perturb the column (the optrr perturb "
            "command refuses it unless --allow-flagged-kept)."
        )
        self.accept_identifier.toggled.connect(self._design_changed)
        self.drop_identifier_button = QPushButton()
        self.drop_identifier_button.setToolTip(
            "Set the role of the kept columns that identify the records to drop, as the Design tab does (Edit ▸ Undo "
            "brings them back)."
        )
        self.drop_identifier_button.clicked.connect(self.drop_kept_identifiers)
        # (rare (column, category) pairs, kept columns and the tuple of their names when their combination is) named
        self._approvable: tuple = (frozenset(), frozenset())
        # (session version, rare, kept, combination, kept_rare, kept_distinct) of the last PublishRefusal
        self._found_by_release: tuple = (None, [], [], None, [], [])
        self._identifiers: tuple = (None, [])  # (what they were counted for, identifier_columns)
        self._combination: tuple = (None, None)  # (what it is counted for, kept_combination: None while counted)
        self._columns_key: tuple | None = None  # what the column list and the tick were last shown for
        self.accept_clear.toggled.connect(self._design_changed)
        self.needed_label = QLabel()
        self.needed_label.setWordWrap(True)
        self.needed_label.setTextFormat(Qt.TextFormat.RichText)
        self.information_label = QLabel()  # plain text: a warning, nothing to tick (information_html)
        self.information_label.setWordWrap(True)
        self.information_label.setTextFormat(Qt.TextFormat.RichText)
        self.information_label.hide()  # shown with notes only
        policy = self.information_label.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Fixed)  # the height of its lines at its width, never squeezed
        self.information_label.setSizePolicy(policy)
        self.allow_unidentifiable = QCheckBox(
            "Release anyway, although a needed table cannot be estimated (recorded in the manifest and audit)"
        )
        self.allow_unidentifiable.setToolTip(
            "The override of optrr perturb --allow-unidentifiable: the release notes which needed tables the "
            "receiver cannot estimate."
        )
        self.allow_unidentifiable.hide()
        self.release_now = QRadioButton("Release now with the best design available")
        self.release_now.setToolTip("Use the best of the designs already computed; the slower ones are not waited for")
        self.wait_better = QRadioButton("Wait for the designs that were better")
        self.wait_better.setToolTip(
            "Release once the designs still computing that ranked above the best one finished (for your settings "
            "before the last change) are back; the others are not waited for"
        )
        self.wait_designs = QRadioButton("Wait for the designs still computing")
        self.wait_designs.setToolTip("Release is possible once every design has finished (or was cancelled)")
        self.release_now.setChecked(True)
        self._when_chosen = False  # the user chose one of the three: the dialog no longer picks for them
        self._setting_default = False
        for radio in (self.release_now, self.wait_better, self.wait_designs):
            radio.toggled.connect(self._when_toggled)
        self.running_label = QLabel()
        self.running_label.setWordWrap(True)
        self.running_label.setTextFormat(Qt.TextFormat.RichText)
        when = QVBoxLayout()
        when.addWidget(self.running_label)
        when.addWidget(self.release_now)
        when.addWidget(self.wait_better)
        when.addWidget(self.wait_designs)
        form = QFormLayout()
        form.addRow("Design", self.design_label)
        self.when_row = when
        form.addRow("", when)
        needed_box = QVBoxLayout()
        needed_box.addWidget(self.needed_label)
        needed_box.addWidget(self.information_label)
        form.addRow("Needed", needed_box)
        form.addRow("", self.allow_unidentifiable)
        self.columns_label = QLabel()
        self.columns_label.setWordWrap(True)
        self.columns_label.setTextFormat(Qt.TextFormat.RichText)
        self.columns_label.setToolTip("What leaves the building: check this before you release")
        form.addRow("Columns", self.columns_label)
        self.drop_refused_button = QPushButton()
        self.drop_refused_button.setToolTip(
            "Set the role of the columns the release refuses as identifiers to drop, as the Design tab does "
            "(Edit ▸ Undo brings them back)."
        )
        self.drop_refused_button.clicked.connect(self.drop_refused)
        self.drop_refused_button.hide()
        drop_row = QHBoxLayout()
        drop_row.addWidget(self.drop_refused_button)
        drop_row.addStretch(1)
        form.addRow("", drop_row)
        self._form, self._drop_row = form, drop_row  # the row is shown only with a refused column (no gap otherwise)
        form.addRow("", self.accept_clear)
        identifier_row = QHBoxLayout()  # what it means is the red line of the column list (kept_identifier_html)
        identifier_row.addWidget(self.accept_identifier)
        identifier_row.addStretch(1)
        identifier_row.addWidget(self.drop_identifier_button)
        form.addRow("", identifier_row)
        self._identifier_row = identifier_row  # shown only with a kept column that identifies the records
        form.setRowVisible(identifier_row, False)
        form.addRow("Format", format_row)
        form.addRow("Output file", out_row)
        form.addRow("", self.shuffle)
        form.addRow("Secret key", key_row)
        if developer_mode():  # the test seed is offered to developers only (OPTRR_DEVELOPER=1)
            seed_row = QHBoxLayout()
            seed_row.addWidget(self.fixed_seed)
            seed_row.addWidget(self.seed)
            form.addRow("", seed_row)
        else:
            self.fixed_seed.setChecked(False)
            self.fixed_seed.hide()
            self.seed.hide()
        self.audit_label = QLabel()
        self.audit_label.setWordWrap(True)
        self.audit_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.audit_label.setToolTip(
            "The internal audit record (input file, hash, privacy ledger) and internal report stay with you here; "
            "never send them. Set OPTRR_AUDIT_DIR to keep them elsewhere."
        )
        form.addRow("Audit record", self.audit_label)
        form.addRow("", self.accept_changes)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)  # a long problem wraps, never widens the dialog
        self.summary = QTextBrowser()
        self.summary.setOpenExternalLinks(False)
        self.summary.hide()

        self.release_button = QPushButton("Release")
        self.release_button.setDefault(True)
        self.release_button.setToolTip("Randomize every perturbed column and write the file, manifest and report")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop; nothing is left under the output name")
        self.cancel_button.setEnabled(False)
        self.folder_button = QPushButton("Open folder")
        self.folder_button.setEnabled(False)
        self.folder_button.setToolTip("Show the released files in the file manager")
        self.analyse_button = QPushButton("Analyse this release")
        self.analyse_button.setEnabled(False)
        self.close_button = QPushButton("Close")
        self.release_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.folder_button.clicked.connect(self.open_folder)
        self.analyse_button.clicked.connect(self.analyse)
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.release_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.folder_button)
        buttons.addWidget(self.analyse_button)
        buttons.addWidget(self.close_button)

        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.progress)
        lay.addWidget(self.progress_label)
        lay.addWidget(self.summary, 1)
        lay.addStretch(0)
        lay.addLayout(buttons)
        self.format.currentTextChanged.connect(self._format_changed)
        self.output.textChanged.connect(self._output_changed)
        for box in (self.accept_changes, self.allow_unidentifiable, self.shuffle, self.accept_identifier):
            box.toggled.connect(self._edited_after_release)
        self.key_file.textChanged.connect(self._edited_after_release)
        self._prepare()
        window.controller.changed.connect(self._design_changed)

    # -- set-up --------------------------------------------------------------------------------
    def chosen_method(self) -> str | None:
        """The design the release uses: the panel's choice; while designs are still computing and the user
        chose to release now, the best design already available when the chosen one is not (issue 14)."""
        controller = self.window_.controller
        picked = controller.picked()
        if picked is not None:  # the design the user chose, or none: never another in its place
            summary = controller.current().get(picked)
            return picked if summary is not None and summary.ok else None
        if self.waiting():
            return None
        return controller.recommended()

    def picked_problem(self) -> str:
        """Why the design the user chose for release cannot be released now ("" when it can, or none was chosen):
        still computing, failed (its error), or cancelled / not computed for these settings; with the way out."""
        controller = self.window_.controller
        picked = controller.picked()
        if picked is None:
            return ""
        label = short_label(picked)
        if controller.is_running(picked):
            return f"Waiting for {label}, the design you chose for release."
        summary = controller.current().get(picked)
        if summary is not None and summary.ok:
            return ""
        why = (
            f"failed: {summary.error}"
            if summary is not None
            else "is not computed for these settings (cancelled)"
        )
        return (
            f"The design you chose for release, {label}, {why}. Pick another design or press Follow recommendation "
            "(Design tab)."
        )

    def awaited(self) -> list[str]:
        """The designs the release waits for, as the user chose: none (release now), those still computing that
        were better (:meth:`DesignController.better_running`), or every one still computing."""
        controller = self.window_.controller
        picked = controller.picked()
        if picked is not None and controller.is_running(picked):
            return [picked]  # the design the user chose for release: never replaced by another
        if self.wait_designs.isChecked():
            return controller.running()
        if self.wait_better.isChecked():
            return controller.better_running()
        return []

    def waiting(self) -> bool:
        """The user chose to wait for designs still computing, and some of them are."""
        return bool(self.awaited())

    def _when_toggled(self, checked: bool) -> None:
        """One of the three choices changed (each change toggles two: the one left, then the one chosen). A default
        set by :meth:`_update_when` is already inside a refresh: nothing more to do."""
        if self._setting_default:
            return
        self._when_chosen = True
        if checked:
            self._design_changed()

    def _update_when(self, running: list[str]) -> None:
        """The three choices while designs compute. "Wait for the designs that were better" is offered when some
        of those still computing ranked above the best one finished before the last change (or have no result
        yet) and others do not; until the user clicks one, the dialog waits for them by default when each took
        at most :data:`DEFAULT_WAIT_S` seconds last time (an edit just restarted Auto and Utility: Kronecker,
        back first, is not released in their place), and releases now otherwise. Without results of these columns
        and mode before (a new file, a switch of mode) it waits for every design unless one took longer than that
        in any earlier result."""
        controller = self.window_.controller
        picked = controller.picked()
        if picked is not None:  # the user chose the design: nothing else to choose here (problems() says the rest)
            for w in (self.release_now, self.wait_better, self.wait_designs):
                w.setVisible(False)
            self.running_label.setVisible(controller.is_running(picked))
            self.running_label.setText(
                f"Waiting for {short_label(picked)}, the design you chose for release (Design tab), still computing."
            )
            return
        better = controller.better_running() if running else []
        offered = bool(better) and set(better) != set(running)
        for w in (self.running_label, self.release_now, self.wait_designs):
            w.setVisible(bool(running))
        self.wait_better.setVisible(offered)
        if not running:
            return
        labels = ", ".join(METHOD_LABELS.get(m, m) for m in running)
        text = f"Still computing: {labels}. Release now, or wait?"
        before = controller.ranked_before()
        known = [m for m in better if m in before]  # ranked at the settings before the last change
        took = max((controller.summaries[m].seconds for m in known), default=0.0)
        best_now = controller.recommended()
        self.release_now.setText(
            f"Release now with {short_label(best_now)}, the best design available" if best_now
            else "Release now with the best design available"
        )
        if known:
            verb = "was" if len(known) == 1 else "were"
            what = f"ranked above {short_label(best_now)}" if best_now else "recommended"
            text += (
                f"<br><span style='color:#8a5a00'>{listed_labels(known)} {verb} {what} at your settings before the "
                f"last change (about {fmt_seconds(took)} then).</span>"
            )
        self.running_label.setText(text)
        if offered:
            self.wait_better.setText(f"Wait for {listed_labels(better)} (Release is enabled when they are back)")
        if self._when_chosen:
            if self.wait_better.isChecked() and not offered:  # the same wait, shown by a visible choice
                self._check_quietly(self.wait_designs if better else self.release_now)
            return
        if before:  # results of these columns and mode before the change: wait for those that ranked higher
            quick = bool(known) and len(known) == len(better) and took <= DEFAULT_WAIT_S
        else:  # none (a new file, or the mode or columns changed): wait unless one of them took long last time
            last = [controller.summaries[m].seconds for m in running if m in controller.summaries]
            quick = bool(better) and max(last, default=0.0) <= DEFAULT_WAIT_S
        self._check_quietly((self.wait_better if offered else self.wait_designs) if quick else self.release_now)

    def _check_quietly(self, radio: QRadioButton) -> None:
        """Check ``radio`` for the user (a default, or the same wait shown by another choice): not their choice."""
        if radio.isChecked():
            return
        self._setting_default = True
        try:
            radio.setChecked(True)
        finally:
            self._setting_default = False

    def _refresh_columns(self) -> None:
        """The column list and the tick as the session is now (the dialog is not modal: the roles may change
        while it is open). A change of what is published outside the epsilons clears the tick."""
        refused = [name for name, _d, _r in self.identifier_columns()]
        summaries, _ = self._summaries()
        key = (self.state.data_version, tuple(c.name for c in self.state.columns), tuple(refused), id(summaries))
        if key == self._columns_key:  # called on every design change and check: build the configuration once
            return
        self._columns_key = key
        outside = outside_epsilon(self.state, refused)
        found_rare, found_kept, combination, found_kept_rare, found_distinct = self._current_found()
        combination = combination or self.kept_combination()  # the release's count first (on the rows it releases)
        released: dict = {}  # rows per category of each column, counted once for both lists
        rare = merge_found(self.state, rare_categories(self.state, summaries, refused, released), found_rare)
        # each flagged kept column's entry: values held by few rows (their names are in the rare categories' line
        # before the release; this entry when the release found them), unless too many are held by one (says more)
        flagged = {n: kept_rare_entry(n, v, h) for n, v, h in found_kept_rare}
        flagged.update({n: kept_entry(n, u, r) for n, u, r in kept_unique_columns(self.state, summaries, released)})
        flagged.update({n: kept_entry(n, u, r) for n, u, r in found_kept})
        # the same rule on the summaries and on what the release found (its counts first): whatever summaries hold
        identifiers = tuple(kept_identifier_columns(self.state, summaries, released, found_distinct))
        flagged.update({n: kept_identifier_entry(n, d, r) for n, d, r in identifiers})
        outside["rare_categories"] = rare_entries(rare)
        outside["kept"] = [flagged.get(n, n) for n in outside["kept"]]
        kept = tuple(c.name for c in self.state.columns if c.role == "keep")
        # the tick approves the kept columns counted (on the rows read, or by the release): one not counted yet (its
        # rows not read, or their read cancelled) is left to the release, which counts it and refuses it if it must
        counted = set(summaries) | {n for n, *_ in (*found_kept, *found_kept_rare, *found_distinct)}
        approvable_kept: set = {name for name in kept if name in counted}
        if combination is not None and combination[0] == kept:  # the kept columns the release found it for
            outside["kept_together"] = [kept_combination_entry(*combination)]
            approvable_kept.add(kept)  # the tick approves exactly that combination (perturb_file's tuple)
        self._approvable = (frozenset((name, value) for name, value, _rows in rare), frozenset(approvable_kept))
        if outside != self._outside:
            self._outside = outside
            self.accept_clear.setChecked(False)
        self.columns_label.setText(columns_html(self.state, outside, refused) + kept_identifier_html(identifiers))
        self.accept_clear.setVisible(any(outside.values()))
        self._show_kept_identifiers(identifiers)
        if refused:
            many = f"the {len(refused)} columns refused as identifiers"
            self.drop_refused_button.setText(f"Drop {refused[0]}, refused as an identifier" if len(refused) == 1
                                             else f"Drop {many}")
        self.drop_refused_button.setVisible(bool(refused))
        self._form.setRowVisible(self._drop_row, bool(refused))

    def _show_kept_identifiers(self, identifiers: tuple) -> None:
        """The own confirmation of the kept columns that identify the records (:func:`kept_identifier_columns`):
        shown, naming them, while there are any; cleared when they change."""
        if [n for n, _d, _r in identifiers] != [n for n, _d, _r in self._kept_identifiers]:
            self.accept_identifier.setChecked(False)
        self._kept_identifiers = identifiers
        self._form.setRowVisible(self._identifier_row, bool(identifiers))
        if not identifiers:
            return
        names = [n for n, _d, _r in identifiers]
        named = ", ".join(repr(n) for n in names)
        self.accept_identifier.setText(KEPT_IDENTIFIER_BOX.format(names=named))
        self.drop_identifier_button.setText(f"Drop {', '.join(names)}")
        self._fit_height()

    def kept_identifiers_unconfirmed(self) -> list[tuple[str, int, int]]:
        """The kept columns that identify the records (:func:`kept_identifier_columns`) while their own box is not
        ticked: the release waits for it (or their drop)."""
        self._refresh_columns()
        return [] if self.accept_identifier.isChecked() else list(self._kept_identifiers)

    def drop_kept_identifiers(self) -> None:
        """One undo step setting the role of every kept column that identifies the records to drop."""
        from ..common.commands import set_roles

        names = {name for name, _d, _r in self._kept_identifiers}
        indices = [i for i, c in enumerate(self.state.columns) if c.name in names and c.role == "keep"]
        if not indices:
            return
        text = f"drop {', '.join(self.state.columns[i].name for i in indices)} (identifies the records)"
        set_roles(self.window_.stack, self.state, indices, "drop", text)
        self._design_changed()

    def kept_combination(self) -> tuple | None:
        """The kept columns' combination that the release would refuse ((names, rows whose combination no other row
        has, rows): :func:`~optrr_gui.workers.jobs.release.kept_combination`), counted on the window's rows read in a
        worker process once per data, kept columns and recodings; None while it is counted, when none is refused,
        and before the file is read whole (the release counts it again on the rows it releases: :meth:`add_found`).
        The UI thread only hands over the data store's arrays."""
        kept = [c for c in self.state.columns if c.role == "keep"]
        store = getattr(self.window_, "store", None)
        if self.closed or len(kept) < 2 or store is None or not store.complete:
            return None
        if any(c.name not in store.columns for c in kept):
            return None
        names = tuple(c.name for c in kept)
        key = (self.state.data_version, id(store), store.rows, names)  # a recode or role moves data_version
        if self._combination[0] == key:
            return self._combination[1]
        self._combination = (key, None)
        self.runner.submit(
            COMBINATION_CHANNEL,
            kept_combination,
            {c.name: store.column_parts(store.columns.index(c.name)) for c in kept},
            {c.name: c.recode for c in kept},
            process=True,
            on_done=partial(self._combination_done, key),
            on_error=partial(self._combination_done, key, None),  # the release counts it again
        )
        return None

    def _combination_done(self, key, found, *_error) -> None:
        """:meth:`kept_combination` for ``key`` arrived: listed in orange if still current (the tick cleared)."""
        if self._combination[0] == key:
            self._combination = (key, found)
            if found is not None and self.result_state != "running":
                self._columns_key = None  # list again
                self._design_changed()

    def _session_version(self) -> tuple:
        """What the release's own findings hold for: the session's columns as they are now."""
        return (self.state.data_version, tuple(c.name for c in self.state.columns))

    def approved(self) -> dict[str, frozenset]:
        """The release's approvals (perturb_file's ``allow_rare_categories`` and ``allow_flagged_kept``): exactly the
        rare categories, kept columns and the kept columns' combination (the tuple of their names) the orange list
        names, when ticked; none otherwise. A kept column not counted yet (no summary, not found by the release) is
        never approved: the release counts it; one that identifies the records only with its own box."""
        rare, kept = self._approvable if self.accept_clear.isChecked() else (frozenset(), frozenset())
        identifiers = frozenset(name for name, _d, _r in self._kept_identifiers)
        if not self.accept_identifier.isChecked():  # their own box, never the tick (kept_identifier_columns)
            kept, identifiers = kept - identifiers, frozenset()
        # the engine refuses any other kept column that identifies the records on the rows released (the window's
        # counts are of every row read: a column leaving rows out can make a kept column an identifier)
        return {"allow_rare_categories": rare, "allow_flagged_kept": kept, "allow_identifier_kept": identifiers}

    def _current_found(self) -> tuple[list, list, tuple | None, list, list]:
        """(rare, kept, combination, kept_rare, kept_distinct) the last PublishRefusal found, or nothing (and
        forgotten) when the design changed since."""
        version, rare, kept, combination, kept_rare, kept_distinct = self._found_by_release
        if version != self._session_version():
            self._found_by_release = (None, [], [], None, [], [])
            return [], [], None, [], []
        return rare, kept, combination, kept_rare, kept_distinct

    def add_found(self, exc: PublishRefusal) -> bool:
        """Add what the release refused (:class:`PublishRefusal`: rare categories, kept columns and the kept columns'
        combination, counted on the rows it releases) to the orange list, the tick shown and cleared; False when it
        names nothing new."""
        rare, kept, combination, kept_rare, kept_distinct = self._current_found()
        before = self.published_outside()
        combination = exc.combination or combination
        self._found_by_release = (
            self._session_version(),
            [*rare, *exc.rare],
            [*kept, *exc.kept],
            combination,
            [*kept_rare, *exc.kept_rare],
            [*kept_distinct, *exc.kept_distinct],  # for kept_identifier_columns, whatever the summaries hold
        )
        self._columns_key = None  # list again
        return self.published_outside() != before

    def drop_refused(self) -> None:
        """One undo step (the window's stack, as the Design tab's role edits) setting the role of every column the
        release refuses as an identifier (:meth:`identifier_columns`) to drop."""
        from ..common.commands import set_roles

        names = {name for name, _d, _r in self.identifier_columns()}
        indices = [i for i, c in enumerate(self.state.columns) if c.name in names]
        if not indices:
            return
        why = "refused as an identifier" if len(indices) == 1 else "refused as identifiers"
        text = f"drop {', '.join(self.state.columns[i].name for i in indices)} ({why})"
        set_roles(self.window_.stack, self.state, indices, "drop", text)
        self._design_changed()

    def identifier_columns(self) -> list[tuple[str, int, int]]:
        """:func:`identifier_columns` of the session and the window's column summaries (counted again only when
        the columns or the summaries change)."""
        summaries, decimal = self._summaries()
        key = (self.state.data_version, id(summaries), tuple(c.name for c in self.state.columns), decimal)
        if self._identifiers[0] != key:
            self._identifiers = (key, identifier_columns(self.state, summaries, decimal))
        return self._identifiers[1]

    def _summaries(self) -> tuple[dict, str]:
        """The window's column summaries of the rows read and the decimal mark they were counted with (the one the
        release reads the file with: jobs/summaries.py)."""
        summaries = getattr(self.window_, "summaries", None) or _NO_SUMMARIES  # the same object: one key
        return summaries, next(iter(summaries.values())).decimal if summaries else "."

    def published_outside(self) -> dict[str, list[str]]:
        """What the orange lines list now, by kind (:func:`outside_epsilon` with the "rare_categories" entries of
        :func:`rare_entries`): exactly what the tick accepts."""
        self._refresh_columns()
        return {kind: list(entries) for kind, entries in (self._outside or {}).items()}

    def needs_check(self) -> bool:
        return bool(self._outside and any(self._outside.values())) and not self.accept_clear.isChecked()

    def _prepare(self) -> None:
        self._refresh_columns()
        try:
            self.audit_label.setText(os.path.join(self.window_.settings.audit_dir(), AUDIT_NAME))
        except InputError as exc:
            self.audit_label.setText(f"<span style='color:#cc0000'>{exc}</span>")
        if self.state.data_path:
            folder = self.window_.settings.value("dirs/release", None)
            self.output.setText(default_output(self.state.data_path, ".csv", folder))
        self._design_changed()

    def _design_changed(self, *_args) -> None:
        """The design shown and whether Release is possible (again whenever a design finishes)."""
        if self.result_state == "running":
            return
        self._refresh_columns()
        controller = self.window_.controller
        running = controller.running()
        self._update_when(running)
        method = self.chosen_method()
        summary = controller.current().get(method) if method else None
        if method and summary is not None and summary.ok:
            changed = ""
            if summary.exceeds_request:
                self.accept_changes.show()
                changed = " <span style='color:#cc0000'>(raises the ε of some columns)</span>"
            elif summary.changes:
                changed = f" <span style='color:#b36b00'>(lowers the ε of {len(summary.changes)} column(s))</span>"
            from optrr_engine.release.risk import record_sentence

            self.design_label.setText(
                f"{METHOD_LABELS.get(method, method)} — whole-record ε {fmt_eps(summary.overall_epsilon)}{changed}"
                f"<br><small>{record_sentence(summary.overall_epsilon)}</small>"
                f"<br><small>{suppression_sentence(summary.suppression, len(summary.achieved))}</small>"
            )
        else:
            self.design_label.setText("waiting for the designs" if running else "no design available yet")
        self._update_needed(summary)
        self._update_delimiter()
        problems = self.problems()
        if problems:
            self.progress_label.setText("<span style='color:#cc0000'>" + "<br>".join(problems) + "</span>")
        elif self.result_state == "idle":
            self.progress_label.setText("")
        self.release_button.setEnabled(not problems and not self.released_as_is())
        self._update_primary()

    def _edited_after_release(self, *_args) -> None:
        """A setting of the release changed after one was written: Release again possible (:meth:`released_as_is`)."""
        if self.result_state == "done":
            self._design_changed()

    def release_key(self) -> tuple:
        """What a release is made of, as far as the dialog can tell it changed: the session (every edit is a step of
        the window's undo stack), the design and its result, the output, its format and key, and the ticks."""
        method = self.chosen_method()
        summary = self.window_.controller.current().get(method) if method else None
        stack = self.window_.stack
        ticks = (self.accept_clear, self.accept_identifier, self.accept_changes, self.allow_unidentifiable)
        ticks += (self.shuffle,)
        return (
            stack.index(),
            stack.count(),
            self.state.data_version,
            method,
            id(summary),
            self.output.text().strip(),
            self.format.currentText(),
            self.key_file.text().strip(),
            tuple(box.isChecked() for box in ticks),
        )

    def released_as_is(self) -> bool:
        """The last release succeeded and nothing it was made of changed since: releasing again would only ask to
        replace its files and to release the same data again (a GUI review pressed Release twice)."""
        return self.result_state == "done" and self.released_key == self.release_key()

    def _update_primary(self) -> None:
        """The default button (Enter): Close once the release is written and unchanged, else Release."""
        done = self.released_as_is()
        self.release_button.setDefault(not done)
        self.release_button.setAutoDefault(not done)
        self.close_button.setDefault(done)
        self.release_button.setToolTip(
            "Released: change the output, the design or the columns to release again"
            if done
            else "Randomize every perturbed column and write the file, manifest and report"
        )

    def _update_delimiter(self) -> None:
        """Beside the format: the input's delimiter when a CSV release keeps one that is not a comma
        (:func:`delimiter_note`; the file sampled once per data file and reader options)."""
        key = (self.state.data_path, repr(sorted(self.state.reader_options.items())))
        if self._delimiter[0] != key:
            self._delimiter = (key, input_delimiter(self.state.data_path, self.state.reader_options))
        text = delimiter_note(self._delimiter[1], FORMATS[self.format.currentText()][0])
        self.delimiter_label.setText(text)
        self.delimiter_label.setVisible(bool(text))

    def information_notes(self, summary) -> list[str] | None:
        """The notes the release will write on the needed tables that carry almost no information with the design
        of ``summary`` at the file's rows (:func:`needed_table_notes`, in a worker process: seconds for many tables),
        computed once per design, perturbed columns, needed tables and rows; None while they are computed, and when
        the design or the rows are not known (or the dialog is closed)."""
        names = [c.name for c in self.state.perturbed_columns()]
        rows = self.state.n_rows
        mechanism = getattr(summary.design, "mechanism", None) if summary is not None and summary.ok else None
        if self.closed or mechanism is None or not rows or mechanism.k != len(names):
            return None
        try:
            needed = name_lists(self.state.needed_marginals, names)
        except ValueError:  # too many tables: problems() says so
            return None
        key = (tuple(names), tuple(map(tuple, needed)), int(rows))
        held, held_key, notes = self._notes
        if held is mechanism and held_key == key:
            return notes
        self._notes = (mechanism, key, None)
        self.runner.submit(
            NOTES_CHANNEL,
            needed_table_notes,
            mechanism,
            names,
            needed,
            int(rows),
            process=True,
            on_done=partial(self._notes_done, mechanism, key),
            on_error=partial(self._notes_done, mechanism, key, []),  # a warning only: the release checks again
        )
        return None

    def _fit_height(self) -> None:
        """Taller, up to the screen's height, when what the dialog shows needs more than it has (the notes on
        tables without information, the summary after a release): squeezed, its wrapped labels were cut."""
        screen = self.screen()
        most = screen.availableGeometry().height() - 40 if screen is not None else self.height()
        wanted = min(max(self.sizeHint().height(), self.heightForWidth(self.width())), most)  # its lines at this width
        if wanted > self.height():
            self.resize(self.width(), wanted)

    def _notes_done(self, mechanism, key, notes, *_error) -> None:
        """The notes of :meth:`information_notes` for ``mechanism`` and ``key`` arrived: shown if still current."""
        if self._notes[0] is mechanism and self._notes[1] == key:
            self._notes = (mechanism, key, list(notes))
            if self.result_state != "running":
                self._update_needed(self._needed_summary)

    def _update_needed(self, summary) -> None:
        self._needed_summary = summary
        notes = self.information_notes(summary)
        self.information_label.setText(information_html(notes))
        self.information_label.setToolTip(information_tooltip(notes))
        self.information_label.setVisible(bool(notes))
        if notes:
            self._fit_height()
        names = [c.name for c in self.state.perturbed_columns()]
        text = describe_needed(self.state.needed_marginals, len(names))
        known = summary is not None and summary.ok
        erased = summary.erased if known else []
        if erased:
            text += (
                f"<br><span style='color:#cc0000'>This design erases {len(erased)} needed table(s): "
                f"{label_index_sets(erased, names, 8)}. The release is refused unless you override it. "
                f"The way out: {WAY_OUT}.</span>"
            )
            self.allow_unidentifiable.show()
        noisy = summary.too_noisy if known else []
        if noisy:
            text += (
                f"<br><span style='color:#8a5a00'>At {self.state.n_rows or 'these'} rows, {len(noisy)} needed "
                f"table(s) are too noisy for confidence intervals: {label_index_sets(noisy, names, 8)}. Their "
                "estimates lean on the prior (the predicted error counts this); the release is not refused.</span>"
            )
        self.needed_label.setText(text)

    def data_problems(self) -> list[str]:
        """The reasons the release would fail or not do what the dialog shows, whatever the design: the window's
        (partly read, columns gone, values not among the categories), the perturbed columns the engine refuses as
        identifiers, needed column sets typed but refused (the release would use the sets applied before), and an
        output name whose extension contradicts the format."""
        out = list(self.window_.data_problems())
        out.extend(identifier_problem(*found) for found in self.identifier_columns())
        typed = getattr(self.window_, "needed_sets_error", lambda: "")()
        if typed:
            reason = typed.removeprefix("Not applied: ").rstrip(".")
            out.append(
                f"The needed column sets typed are not applied: {reason}. Correct them (Design tab, Needed) or press "
                "Default; the release would use the sets applied before."
            )
        mismatch = self.format_mismatch()
        if mismatch:
            out.append(mismatch)
        return out

    def format_mismatch(self) -> str:
        """The output name's extension names another format than the one chosen (the engine refuses it); ""."""
        from optrr_engine.io.formats import extension, known_format

        output = self.output.text().strip()
        by_name = known_format(output) if output else None
        chosen = FORMATS[self.format.currentText()][0]
        if by_name is None or by_name == chosen:
            return ""
        label = self.format.currentText()
        return f"The output name ends in {extension(output)} but the format is {label}: make them agree."

    def problems(self) -> list[str]:
        self._refresh_columns()
        out = []
        if not self.state.data_path:
            out.append("Open a data file first.")
        if not getattr(self.state, "columns_chosen", True):
            out.append("First choose the columns to share (Design tab, step 1), then confirm them.")
        if not self.state.perturbed_indices():
            out.append("Choose at least one column to perturb.")
        out.extend(self.data_problems())
        picked = self.picked_problem()
        if picked:
            out.append(picked)
        elif self.waiting():
            awaited = ", ".join(short_label(m) for m in self.awaited())
            out.append(f"Waiting for {awaited} (or choose to release now).")
        elif self.chosen_method() is None:
            message = self.window_.controller.message
            if self.window_.controller.running():
                out.append("No design is available yet; wait for the designs still computing.")
            elif message and self.state.perturbed_indices():
                out.append(f"No design can be computed: {message} (Design tab).")
            elif self.state.perturbed_indices():
                out.append("No design meets the requested ε; change the ε or pick a design in the mechanism panel.")
        if self.needs_check():
            out.append(NEEDS_TICK)
        unconfirmed = self.kept_identifiers_unconfirmed()
        if unconfirmed:
            out.append(kept_identifier_problem(unconfirmed))
        if self.state.needed_marginals is not None:
            from ..state.needed_marginals import applied_error, name_lists

            perturbed = [c.name for c in self.state.perturbed_columns()]
            try:
                name_lists(self.state.needed_marginals, perturbed)
            except ValueError as exc:
                out.append(f"Too many needed tables: {exc}.")
            # a set naming a column dropped, kept or renamed since: the release could not answer it
            roles = {c.name: c.role for c in self.state.columns}
            unanswerable = applied_error(self.state.needed_marginals, perturbed, roles)
            if unanswerable:
                out.append(unanswerable)
        return out

    def _format_changed(self, label: str) -> None:
        self._update_delimiter()
        ext = FORMATS[label][1]
        text = self.output.text()
        if text:
            self.output.setText(str(Path(text).with_suffix(ext)))

    def _output_changed(self, text: str) -> None:
        """A name typed or chosen with a known extension chooses the format (``.xlsx``: Excel workbook;
        ``.tsv``/``.txt``: CSV, tab- or comma-separated as the engine writes them); other names keep it."""
        from optrr_engine.io.formats import known_format

        by_name = known_format(text.strip()) if text.strip() else None
        label = next((label for label, (fmt, _ext) in FORMATS.items() if fmt == by_name), None)
        if label is not None and label != self.format.currentText():
            self.format.blockSignals(True)  # keep the name as typed (.tsv stays .tsv)
            self.format.setCurrentText(label)
            self.format.blockSignals(False)
        if self.result_state != "running":
            self._design_changed()

    def choose_key_file(self) -> None:
        start = self.key_file.text()
        path, _ = QFileDialog.getOpenFileName(self, "Secret key file", start, "OptRR key (*.key);;All (*)")
        if path:
            self.key_file.setText(path)

    def new_key_file(self) -> None:
        """Write a new key with the engine's generator (0600, never over an existing file) and use it."""
        path, _ = QFileDialog.getSaveFileName(self, "New secret key file", "release.key", "OptRR key (*.key)")
        if not path:
            return
        try:
            fingerprint = generate_key_file(path)
        except InputError as exc:
            self.progress_label.setText(str(exc))
            return
        self.key_file.setText(path)
        self.progress_label.setText(
            f"New secret key written to {path} (fingerprint {fingerprint}). Keep it with the hospital; never send it."
        )

    def browse(self) -> None:
        label = self.format.currentText()
        ext = FORMATS[label][1]
        path, _ = QFileDialog.getSaveFileName(self, "Release to", self.output.text(), f"{label} (*{ext})")
        if path:
            from optrr_engine.io.formats import known_format

            if known_format(path) is None:  # a name with a known extension chooses the format (_output_changed)
                path += ext
            self.output.setText(path)

    # -- run -------------------------------------------------------------------------------------
    def start(self) -> bool:
        output = self.output.text().strip()
        if not output:
            self.progress_label.setText("Choose an output file.")
            return False
        if os.path.abspath(output) == os.path.abspath(self.state.data_path or ""):
            self.progress_label.setText("The output cannot be the input file; choose another name.")
            return False
        data_problems = self.data_problems()  # a partly read file, or released columns no longer in it
        if data_problems:
            self.progress_label.setText("<span style='color:#cc0000'>" + "<br>".join(data_problems) + "</span>")
            return False
        method = self.chosen_method()
        summary = self.window_.controller.current().get(method) if method else None
        if summary is None or not summary.ok or summary.design is None:
            why = self.picked_problem() or "The design shown is being recomputed; wait for it, then release."
            self.progress_label.setText(why)
            return False
        self._refresh_columns()
        if self.needs_check():
            self.progress_label.setText("Tick the box after checking what is published as it is (orange).")
            return False
        unconfirmed = self.kept_identifiers_unconfirmed()
        if unconfirmed:
            self.progress_label.setText(f"<span style='color:#cc0000'>{kept_identifier_problem(unconfirmed)}</span>")
            return False
        if summary.exceeds_request and not self.accept_changes.isChecked():
            self.progress_label.setText("Tick the box to accept the higher ε, or choose another design.")
            return False
        if summary.erased and not self.allow_unidentifiable.isChecked():
            self.allow_unidentifiable.show()
            self.progress_label.setText(
                "<span style='color:#cc0000'>Refused: a needed table cannot be estimated from this design. The way "
                f"out: {WAY_OUT}; or tick the box to release anyway.</span>"
            )
            return False
        confirmed, self.replace_confirmed = self.replace_confirmed, False
        existing = [p for p in (output, *manifest_paths(output)) if os.path.exists(p)]
        if existing and not confirmed and not self.confirm_replace(existing):
            self.progress_label.setText("Not released: choose another output file.")
            return False
        self.replacing = bool(existing)
        try:
            audit_dir = self.window_.settings.audit_dir()
        except InputError as exc:
            self.progress_label.setText(f"<span style='color:#cc0000'>{exc}</span>")
            return False
        config = release_configuration(
            self.state, method, summary, self.accept_changes.isChecked(), self.allow_unidentifiable.isChecked()
        )
        options = {
            "force": bool(existing),
            "allow_repeat": self.allow_repeat,
            # the tick approves exactly what the orange list names: its kept columns and rare released categories
            **self.approved(),
            "seed": int(self.seed.value()) if developer_mode() and self.fixed_seed.isChecked() else None,
            "developer": developer_mode(),
            "key_file": self.key_file.text().strip() or None,
            "shuffle": self.shuffle.isChecked(),
            "output_format": FORMATS[self.format.currentText()][0],
            "audit_dir": audit_dir,
        }
        self.output_path = output
        self.window_.settings.set_last_dir("release", output)
        self.window_.settings.set_value("dirs/release", str(Path(output).parent))
        self.result_state = "running"
        self.closed_running = False
        self.started = time.perf_counter()
        self.progress.setValue(0)
        self.progress_label.setText("Starting…")
        self.summary.hide()
        self.release_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.folder_button.setEnabled(False)
        self.analyse_button.setEnabled(False)
        self.runner.submit(
            CHANNEL,
            run_release,
            self.state.data_path,
            config,
            output,
            options,
            on_done=self._done,
            on_error=self._failed,
            on_progress=self._progress,
            on_cancelled=self._cancelled,
            process=True,
            after_kill=partial(remove_release_leftovers, self.state.data_path, config, output, options),
        )
        return True

    def cancel(self) -> None:
        """Ask the engine to stop; the dialog says "cancelled" once the engine has cleaned up."""
        if self.runner.request_cancel(CHANNEL):
            self.cancel_button.setEnabled(False)
            self.progress_label.setText("Stopping…")

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * fraction))
        elapsed = time.perf_counter() - self.started
        left = remaining_seconds(elapsed, fraction)
        left_text = f", about {fmt_seconds(left)} left" if left is not None else ""
        self.progress_label.setText(f"{message} — {100 * fraction:.0f} %, {fmt_seconds(elapsed)} elapsed{left_text}")

    def _done(self, result: dict) -> None:
        manifest = result["manifest"]
        cancelled_late = self.result_state == "running" and not self.cancel_button.isEnabled()
        self.result_state = "done"
        self.manifest = manifest
        self.audit = result["audit"]  # this release's entry of the internal audit record
        seconds = time.perf_counter() - self.started
        self.progress.setValue(1000)
        self.progress_label.setText("Done (it finished before it could be cancelled)." if cancelled_late else "Done.")
        self.summary.setHtml(summary_html(manifest, self.output_path, seconds, result["audit"], result["ledger"]))
        self.summary.show()
        self._fit_height()  # the summary below everything else
        self.cancel_button.setEnabled(False)
        self.released_key = self.release_key()
        self.release_button.setEnabled(False)  # until something changes (:meth:`_design_changed`)
        self._update_primary()
        self.close_button.setFocus()
        self.folder_button.setEnabled(True)
        self.analyse_button.setEnabled(True)
        if self.closed_running:  # it finished before it could stop: the files exist, show what was written
            self._tell_window(f"The release finished before it could be stopped: written to {self.output_path}.")
            self.show()

    def confirm_replace(self, existing: list[str]) -> bool:
        names = "\n".join(Path(p).name for p in existing)
        answer = QMessageBox.question(
            self,
            "Replace the release?",
            f"These files exist and would be replaced:\n{names}\n\nReplace them?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def confirm_repeat(self, exc: RepeatReleaseError, replacing: bool = False) -> bool:
        """The same data was released before (the same file, or the same records in another: :func:`repeat_sentence`):
        its epsilons add up. Ask, showing the accumulated epsilon; when ``replacing`` the files of an earlier release,
        say that the ledger still counts the one replaced."""
        replaced = f" {REPLACED_COUNTED}" if replacing else ""
        if exc.reproduces is not None:  # the same key, configuration and version: the same noise again
            copy = exc.reproduces
            question = (
                f"This would write the release of {copy.get('created', '?')} (file "
                f"{(copy.get('input') or {}).get('file', '?')}) again, with the same noise: the same data, key, "
                "settings and OptRR version give the same noise (in any file format), so it reveals nothing more; the "
                "accumulated whole-record ε "
                f"stays {accumulated_text(exc)}.{replaced}\n\nWrite the copy?"
            )
        else:
            question = (
                f"{repeat_sentence(exc)} (see the privacy ledger in {self.window_.settings.audit_dir()}). Each release "
                "randomizes the same people anew, so together the releases reveal more: the accumulated whole-record "
                f"ε would be {accumulated_text(exc)}.{replaced}\n\nRelease again?"
            )
        answer = QMessageBox.warning(
            self,
            "Release the same data again?",
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _failed(self, exc: BaseException) -> None:
        if self.closed_running:  # stopped by closing the dialog: nothing to ask, nothing was written
            self._tell_window(f"The release stopped on an error after its dialog was closed, nothing written: {exc}")
        elif isinstance(exc, RepeatReleaseError) and not self.allow_repeat:
            self.result_state = "idle"
            self.cancel_button.setEnabled(False)
            self.release_button.setEnabled(True)
            if self.confirm_repeat(exc, self.replacing):
                self.allow_repeat = True
                self.replace_confirmed = True  # asked already for this click: do not ask again
                self.start()
            else:
                self.progress_label.setText("Not released: this data was released before.")
            return
        self.result_state = "failed"
        if isinstance(exc, PublishRefusal) and self.add_found(exc):  # orange now, the tick cleared: Release waits
            from html import escape

            self.cancel_button.setEnabled(False)
            self._design_changed()
            found = escape(str(exc), quote=False)
            self.progress_label.setText(f"<span style='color:#cc0000'>{FOUND_BY_RELEASE}<br>{found}</span>")
            return
        if isinstance(exc, InputError) and "cannot be estimated" in str(exc):
            self.allow_unidentifiable.show()
        self.progress_label.setText(f"<span style='color:#cc0000'>The release failed: {exc}</span>")
        self.cancel_button.setEnabled(False)
        self.release_button.setEnabled(True)

    def _cancelled(self) -> None:
        self._tell_window("The release was stopped: nothing was written.")
        self.result_state = "cancelled"
        self.progress_label.setText("Cancelled. Nothing was written under the output name.")
        self.cancel_button.setEnabled(False)
        self.release_button.setEnabled(True)

    # -- after ------------------------------------------------------------------------------------
    def open_folder(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.output_path).parent)))

    def analyse(self) -> None:
        window = self.window_
        window.tabs.setCurrentIndex(3)
        if window.analyse_view is not None:
            window.analyse_view.open_release(self.output_path)
        self.close()

    def changeEvent(self, event) -> None:
        """Back in the dialog (it is not modal): what may have changed in the main window meanwhile without a new
        design (e.g. the needed column sets typed there) is checked again."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow() and self.result_state != "running":
            self._design_changed()

    def closeEvent(self, event) -> None:
        """Closed while a release runs: asks whether to stop it (No: the dialog stays and the release goes on); once
        stopped, the main window's status bar says what became of it (:meth:`_tell_window`). A release already
        stopping closes without asking. A closed dialog starts no background work (:meth:`information_notes`)."""
        if self.result_state == "running":
            if self.cancel_button.isEnabled() and not self.confirm_stop():
                event.ignore()
                return
            self.closed_running = True
            self.cancel()
        self.closed = True
        self.runner.cancel(NOTES_CHANNEL)
        self.runner.cancel(COMBINATION_CHANNEL)
        self._notes = (None, None, None)
        self._combination = (None, None)  # counted again when shown again (the count was cancelled)
        super().closeEvent(event)

    def showEvent(self, event) -> None:
        """Shown again after a close: the checks follow the session again."""
        super().showEvent(event)
        if self.closed:
            self.closed = False
            if self.result_state != "running":
                self._design_changed()

    def confirm_stop(self) -> bool:
        """Ask before a close stops the running release; True to stop."""
        answer = QMessageBox.question(
            self,
            "Stop the release?",
            "Stop the release? Nothing will be written.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _tell_window(self, text: str) -> None:
        """How a release stopped by closing the dialog ended, in the main window's status bar (the dialog is gone)."""
        if self.closed_running:
            self.closed_running = False
            status = getattr(self.window_, "statusBar", None)
            if status is not None:
                status().showMessage(text, 15_000)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape and self.result_state == "running":
            self.cancel()
            return
        super().keyPressEvent(event)
