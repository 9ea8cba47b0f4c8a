"""Perturb a file into a release: stream chunks, encode, sample the mechanism, shuffle, write atomically.

Flow: check paths (the outputs must not exist unless ``force``, and never be the input, the configuration,
the key or the audit record; the folder must be writable; temporaries of killed runs are removed) -> read
the header and build the codec from the configuration -> run the design (honesty rule in
:mod:`.design_step`) -> hash the input and look it up in the audit record's ledger (a repeat release needs
``allow_repeat``) -> one streaming pass: encode each chunk, perturb it with the mechanism's vectorised
sampler, and either write it or spill it into the external shuffle (:mod:`.shuffle`) -> refuse what the pass
found (identifier-like perturbed columns, rare released categories, kept columns with a value unique to one row
in many rows: :class:`IdentifierGuard`, :class:`RareGuard`, :class:`KeptUniqueGuard`) -> write the shuffled
records -> hash the output -> write the manifest and the external report (beside the release) and the audit
record and internal report (in the audit folder; the audit record, read again under its lock, refuses a repeat
found by the records' fingerprints, :class:`.audit.ColumnFingerprints`, unless ``allow_repeat``) -> rename the
temporary files into place, the audit record first (so the ledger never misses a release). Memory is bounded by
the chunk size and the shuffle's bucket size, not by the file, except 8 bytes per row per kept column
(:class:`KeptUniqueGuard`). A cancel, an error or a kill leaves nothing under the final names (only hidden
temporary files for a kill, removed by the next run in that folder).

Randomness (:mod:`.randomness`): AES-128-CTR keyed from the operating system by default (nothing recorded,
not reproducible); with a hospital ``key`` (``optrr keygen``) the release is reproducible by the key holder
alone; ``insecure_test_seed`` is for tests and marks the release NOT PRIVATE.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..tasks import TaskControl


@dataclass(frozen=True)
class Release:
    """What :func:`perturb_file` made: ``manifest`` (the recipient's, as written beside the release),
    ``audit_entry`` (this release's entry of the internal audit record, as appended) and ``ledger`` (every
    release of the same input in the audit record, this one last)."""

    manifest: dict
    audit_entry: dict
    ledger: list


def as_config(config):
    from .config import ReleaseConfig, load_config

    if isinstance(config, ReleaseConfig):
        return copy.deepcopy(config).validate()
    if isinstance(config, dict):
        return ReleaseConfig.from_dict(copy.deepcopy(config))
    if isinstance(config, (str, os.PathLike)):
        return load_config(config)
    raise InputError("config must be a ReleaseConfig, a dict or the path of a release configuration")


def choose_output_format(output_path, requested: str | None, input_format: str) -> str:
    from ..io.formats import OUTPUT_FORMATS, extension, known_format

    by_name = known_format(output_path)
    if requested:
        fmt = str(requested).lower().lstrip(".")
        if fmt not in OUTPUT_FORMATS:
            raise InputError(f"output format {requested!r} is unknown; choose {', '.join(OUTPUT_FORMATS)}")
        if by_name is not None and by_name != fmt:
            raise InputError(
                f"the output name ends in {extension(output_path)} but format {fmt} was asked; "
                "make the name and the format agree"
            )
        return fmt
    return by_name or input_format


def _write(fn, path, *args):
    """Run a write step; an OSError (disk full, permissions...) becomes a one-line InputError."""
    from ..io.atomic import describe_os_error

    try:
        return fn(*args)
    except InputError:
        raise
    except OSError as exc:
        raise InputError(describe_os_error(exc, path)) from None


def perturb_file(
    input_path,
    config,
    output_path,
    *,
    key: bytes | None = None,
    key_path=None,
    insecure_test_seed=None,
    developer: bool | None = None,
    shuffle: bool = True,
    output_format: str | None = None,
    force: bool = False,
    allow_repeat: bool = False,
    allow_rare_categories: bool = False,
    allow_flagged_kept: bool = False,
    audit_dir=None,
    progress=None,
    cancel=None,
    reader_options=None,
    design_check=None,
    rows_check=None,
    at_commit=None,
) -> Release:
    """Write the release OUTPUT, OUTPUT.manifest.json and OUTPUT.report.html (for the recipient) and update
    the audit record optrr-audit.json with OUTPUT.TAG.STAMP.internal-report.html (for the hospital, in ``audit_dir``,
    default: :func:`.audit.default_audit_dir`, a per-user folder never shipped); return the :class:`Release`
    (manifest, audit entry and ledger: no need to read the audit record again).

    ``design_check(mechanism, attribute_names, config)``, when given, runs after the design and before any file is
    written: it raises InputError to refuse the release or returns notes for the manifest and report.
    ``rows_check(mechanism, attribute_names, config, rows)``, when given, runs after the pass (``rows``: the rows
    released) and returns notes for the manifest and report (it never refuses).
    ``at_commit()``, when given, is called once at the commit point, just before the audit record is appended: from
    there on the release is completed, not abandoned (the command line holds Ctrl-C from there).
    ``config``: a ReleaseConfig, its dict, or the path of its JSON. ``key``: a hospital key (bytes, from
    :func:`.randomness.read_key_file` of ``key_path``); ``insecure_test_seed``: tests only, accepted in developer
    mode (``developer``; default: ``OPTRR_DEVELOPER=1`` in this process); the release is marked NOT PRIVATE in its
    first column, manifest and report. ``force``:
    replace existing outputs. ``allow_repeat``: release a source that the audit record shows was released
    before, by its bytes (refused before the pass) or by its records (a column of another input with the same
    values, refused at the commit point); otherwise :class:`.audit.RepeatReleaseError`. After the pass, before any
    file gets its final name, the release is refused (InputError) when a perturbed column releases a rare category
    (:class:`RareGuard`) unless ``allow_rare_categories``, or when a kept column holds a value unique to one row in
    too many rows (:class:`KeptUniqueGuard`) unless ``allow_flagged_kept``. ``reader_options``
    (ReaderOptions) override the configuration's ``input`` options.
    """
    from ..io.atomic import AtomicFile, check_new_output, remove_stale_temporaries, sha256_file
    from ..io.formats import format_of
    from ..io.readers import ReaderOptions, _check_input, open_source
    from ..io.source_base import prefetched
    from ..io.writers import check_stat_names, open_writer
    from .audit import (
        ColumnFingerprints,
        RepeatReleaseError,
        accumulated_epsilon,
        append_release,
        audit_folder,
        audit_path,
        file_stamp,
        internal_report_path,
        load_audit,
        releases_of,
        repeat_message,
    )
    from .codec import Codec
    from .design_step import make_design
    from .manifest import build_audit_entry, build_manifest, manifest_path, manifest_text, report_path, utc_now
    from .randomness import NOT_PRIVATE_COLUMN, ReleaseRandomness, context_digest, mark_not_private
    from .report import render_internal_report, render_report
    from .schema import resolve_bins
    from .shuffle import ExternalShuffle, bucket_count

    ctl = TaskControl(progress, cancel)
    input_path = _check_input(input_path)
    if key is None and key_path is not None:
        from .randomness import read_key_file

        key = read_key_file(key_path)
    randomness = ReleaseRandomness.choose(key, insecure_test_seed, developer)
    config_path = os.fspath(config) if isinstance(config, (str, os.PathLike)) else None
    cfg = as_config(config)
    cfg.check_releasable()
    output_path = os.fspath(output_path)
    in_format = format_of(input_path)
    out_format = choose_output_format(output_path, output_format, in_format)
    # SPSS / Stata refuse or alter some column names: find out now, not after the whole pass (out_columns below)
    check_stat_names(out_format, [NOT_PRIVATE_COLUMN] * (not randomness.private) + [c.name for c in cfg.released()])
    folder = audit_folder(audit_dir)
    apath, ipath = audit_path(folder), internal_report_path(folder, output_path, file_stamp(utc_now()))
    mpath, rpath = manifest_path(output_path), report_path(output_path)
    protected = [(input_path, "input file"), (config_path, "configuration"), (key_path, "key file")]
    protected.append((apath, "audit record"))
    for path, what in ((output_path, "output"), (mpath, "manifest"), (rpath, "report"), (ipath, "internal report")):
        check_new_output(path, protected, what, force)
    if len({os.path.abspath(p) for p in (output_path, mpath, rpath, ipath)}) < 4:
        raise InputError(f"output {output_path}: its files would collide with the internal report; choose another name")
    audit = load_audit(apath)
    for stale in {os.path.dirname(os.path.abspath(output_path)), folder}:
        remove_stale_temporaries(stale)
    AtomicFile(output_path).discard()  # the folder must be writable: find out before any long pass
    AtomicFile(apath).discard()

    options = ReaderOptions.from_dict(cfg.input)
    if reader_options is not None:
        given = {k: v for k, v in reader_options.__dict__.items() if v is not None and k != "chunk_rows"}
        options = ReaderOptions.from_dict({**options.__dict__, **given, "chunk_rows": reader_options.chunk_rows})
    source = open_source(input_path, options)
    absent = [c.name for c in cfg.released() if c.name not in source.names]
    if absent:
        raise InputError(f"column {absent[0]!r} of the configuration is not in {os.path.basename(input_path)}")
    if resolve_bins(source, cfg, ctl.sub(0.0, 0.05)):
        source = open_source(input_path, source.options)
    codec = Codec(cfg, decimal=source.options.decimal or ".")
    out_columns = list(codec.columns)
    if not randomness.private:  # the data file itself says NOT PRIVATE, in its first column
        if NOT_PRIVATE_COLUMN in out_columns:
            raise InputError(f"column {NOT_PRIVATE_COLUMN!r} is OptRR's marker of a test-seed release; rename it")
        out_columns.insert(0, NOT_PRIVATE_COLUMN)
    release_design = make_design(cfg, codec.sizes, codec.attributes, ctl.sub(0.05, 0.1).progress, cancel)
    mechanism = release_design.mechanism
    if design_check is not None:
        release_design.notes.extend(design_check(mechanism, codec.attributes, cfg) or [])
    selection = cfg.row_selection_note()
    if selection:
        release_design.notes.append(selection)
    ctl.check()
    input_sha = sha256_file(input_path, ctl.sub(0.1, 0.15))
    previous = releases_of(audit, input_sha)
    if previous and not allow_repeat:
        this_eps = float(mechanism.overall_epsilon())
        raise RepeatReleaseError(repeat_message(previous, this_eps), previous, accumulated_epsilon(previous, this_eps))

    chunk_rows = source.chunk_rows(codec.columns)
    context = None
    if randomness.needs_context:
        context = context_digest(
            input_sha256=input_sha,
            codebook=codec.codebook(),
            mechanism=mechanism.to_dict(),
            kept=codec.kept,
            shuffle=bool(shuffle),
            chunk_rows=chunk_rows,
        )
    rng_sample, rng_shuffle = randomness.streams(context)
    delimiter = source.options.delimiter if in_format == "csv" else ("\t" if output_path.endswith(".tsv") else ",")
    bom = in_format == "csv" and (source.options.encoding or "").lower().replace("_", "-") == "utf-8-sig"
    output_options = {}
    if out_format == "csv":
        output_options = {"delimiter": delimiter, "encoding": "utf-8-sig" if bom else "utf-8"}

    data_tmp = AtomicFile(output_path)
    temps = [data_tmp]
    writer = spill = None
    try:
        writer = _write(open_writer, output_path, out_format, data_tmp.path, out_columns, delimiter, bom)
        if shuffle:
            rows_est = source.row_count or getattr(source, "estimated_rows", lambda: chunk_rows)()
            per_row = codec.sizes.size * np.dtype(codec.dtype).itemsize + 24 * len(codec.kept) + 8
            out_folder = os.path.dirname(os.path.abspath(output_path))
            spill = _write(ExternalShuffle, output_path, out_folder, bucket_count(rows_est, per_row), rng_shuffle)
        stream = ctl.sub(0.15, 0.75 if shuffle else 0.95)
        rows_read = rows_out = 0
        excluded: dict[str, int] = {}
        seen = IdentifierGuard(codec)
        rare = RareGuard(codec, enabled=not allow_rare_categories)
        unique = KeptUniqueGuard(codec.kept if not allow_flagged_kept else [])
        records = ColumnFingerprints(codec.columns)  # the ledger's check at the commit point (append_release)
        for n, codes, kept, ex in prefetched(encoded_chunks(source, codec, records)):
            stream.check()
            seen.add(codes)
            rare.add(codes)
            for k, v in ex.items():
                excluded[k] = excluded.get(k, 0) + v
            out = codec.output_table(mechanism.sample(codes, rng_sample), kept)
            if not randomness.private:
                out = mark_not_private(out)
            unique.add(out)  # the kept columns as released (after recoding)
            _write(spill.add if spill is not None else writer.write, output_path, out)
            rows_read += n
            rows_out += out.num_rows
            stream.report(source.fraction_done(), f"randomized {rows_read:,} rows")
        if rows_read == 0:
            raise InputError(f"{os.path.basename(input_path)} has a header but no data rows")
        if rows_out == 0:
            raise InputError("every row has a missing value in a column with missing: exclude; nothing to release")
        seen.check(rows_out)
        check_published(rare, unique, rows_out)
        check_unlisted_share(codec.unlisted, rows_read, source.options.decimal)
        if rows_check is not None:  # e.g. needed tables that carry no information at this row count
            release_design.notes.extend(rows_check(mechanism, codec.attributes, cfg, rows_out) or [])
        if spill is not None:
            for table in spill.tables(chunk_rows, ctl.sub(0.75, 0.95)):
                _write(writer.write, output_path, table)
        _write(writer.close, output_path)
        writer = None
        output_sha = sha256_file(data_tmp.path, ctl.sub(0.95, 0.99))
        manifest = build_manifest(
            codec=codec,
            release_design=release_design,
            rows=rows_out,
            output_path=output_path,
            output_format=out_format,
            output_sha256=output_sha,
            shuffled=bool(shuffle),
            randomness=randomness.manifest_entry(),
            output_options=output_options,
            created=utc_now(),
        )
        manifest["columns"] = out_columns
        entry = build_audit_entry(
            manifest=manifest,
            config=cfg.to_dict(),
            input_path=input_path,
            input_format=in_format,
            input_sha256=input_sha,
            rows_read=rows_read,
            rows_excluded=excluded,
            reader_options=source.options.to_dict(),
            dropped_columns=[n for n in source.names if n not in codec.columns],
            chunk_rows=chunk_rows,
            randomness=randomness.audit_entry(),
            design_seconds=release_design.design.design_seconds,
            unlisted_values=codec.unlisted,
            files={
                "release": os.path.abspath(output_path),
                "manifest": os.path.abspath(mpath),
                "report": os.path.abspath(rpath),
                "internal_report": ipath,
            },
        )
        if source.empty_rows_skipped:  # rows whose every cell is empty: not records (the hospital's record only)
            entry["empty_rows_skipped"] = int(source.empty_rows_skipped)
        entry["input"]["column_fingerprints"] = records.result()  # the hospital's record only, never sent
        written = []
        for path, text in (
            (ipath, render_internal_report(manifest, entry, previous + [entry])),
            (mpath, manifest_text(manifest)),
            (rpath, render_report(manifest)),
        ):
            tmp = AtomicFile(path, private=path == ipath)  # the internal report: its owner only, like the audit
            written.append(tmp)
            _write(_write_text, path, tmp.path, text)
        temps = written + temps
        ctl.check()
        if at_commit is not None:
            at_commit()
        # The audit record first (so the ledger never misses a release), read again and appended under its lock:
        # parallel runs never lose an entry, and a release of the same input recorded meanwhile is caught.
        history = _write(append_release, apath, apath, entry, allow_repeat)
        if len(history) != len(previous) + 1:
            _write(_write_text, ipath, written[0].path, render_internal_report(manifest, entry, history))
        for tmp in temps:
            _write(tmp.commit, tmp.final)
        ctl.report(1.0, f"released {rows_out:,} rows")
        return Release(manifest, entry, history)
    finally:
        if writer is not None:
            writer.abort()
        if spill is not None:
            spill.cleanup()
        for tmp in temps:
            tmp.discard()


#: A numeric column is refused when more than this share of its cells are neither numbers nor listed categories.
MAX_UNLISTED_SHARE = 0.5


def check_unlisted_share(unlisted: dict, rows: int, decimal: str | None) -> None:
    """Refuse numeric columns where most cells (over MAX_UNLISTED_SHARE of ``rows``) are neither numbers nor listed
    categories: released as missing, the column would say nothing (a decimal comma read with '.', thousands
    separators such as '137.334,00'). A few such cells stay a note (``unlisted_values_as_missing``)."""
    bad = {name: n for name, n in unlisted.items() if rows and n > MAX_UNLISTED_SHARE * rows}
    if bad:
        named = ", ".join(f"{name!r} ({n:,} of {rows:,} cells)" for name, n in bad.items())
        raise InputError(
            f"numeric column(s) whose cells are mostly not numbers: {named}; they would all be released as missing. "
            f"Check the decimal mark (read with {decimal or '.'!r}; --decimal) and thousands separators, or make the "
            "column nominal"
        )


class IdentifierGuard:
    """Refuses the perturbed columns with a different category in nearly every row (schema's
    :func:`.schema.identifier_like`, checked on the data actually released): their categories would be the
    identifiers themselves, published in the codebook. Counts the distinct codes seen per column with enough
    categories to qualify; :meth:`check` names every such column in one error."""

    def __init__(self, codec):
        from .schema import UNIQUE_MIN_ROWS

        self.names = codec.attributes
        self.columns = [j for j, a in enumerate(codec.sizes) if a >= UNIQUE_MIN_ROWS]
        self.seen = {j: np.zeros(int(codec.sizes[j]), dtype=bool) for j in self.columns}

    def add(self, codes: np.ndarray) -> None:
        for j in self.columns:
            self.seen[j][codes[:, j]] = True

    def found(self, rows: int) -> list[tuple[str, int]]:
        """(name, distinct categories seen) of every identifier-like column, in column order."""
        from .schema import identifier_like

        distinct = {j: int(self.seen[j].sum()) for j in self.columns}
        return [(str(self.names[j]), d) for j, d in distinct.items() if identifier_like(d, rows)]

    def check(self, rows: int) -> None:
        from .schema import identifier_refusal

        found = self.found(rows)
        if found:
            raise InputError(identifier_refusal(found, rows))


class RareGuard:
    """Refuses the rare categories a perturbed column releases (schema's :func:`.schema.rare_categories`, the rule of
    the Design tab and the release dialog, checked on the rows actually released): the codebook lists every
    category, so a category of 1..RARE_COUNT-1 rows discloses that such a person exists. Counts the rows per
    category (code) of every column of categories, its missing-value category included; a listed category with no
    rows is not rare, and numeric columns are not watched (they publish bins, never their numbers; the dialog lists
    none of theirs either). ``enabled=False``: watches nothing (the release allows rare categories)."""

    def __init__(self, codec, enabled: bool = True):
        self.names = codec.attributes
        self.labels = [spec.labels for spec in codec.specs]
        self.columns = [j for j, spec in enumerate(codec.specs) if spec.type != "numeric"] if enabled else []
        self.counts = {j: np.zeros(int(codec.sizes[j]), dtype=np.int64) for j in self.columns}

    def add(self, codes: np.ndarray) -> None:
        for j in self.columns:
            self.counts[j] += np.bincount(codes[:, j], minlength=self.counts[j].size)

    def found(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """(name, its rare categories with their rows, rarest first) of every column with any, in column order."""
        from .schema import rare_categories

        out = []
        for j in self.columns:
            rare = rare_categories(dict(zip(self.labels[j], self.counts[j].tolist(), strict=True)))
            if rare:
                out.append((str(self.names[j]), rare))
        return out

    def problem(self) -> str | None:
        """The refusal naming every column with rare categories (:func:`.schema.rare_refusal`), or None."""
        from .schema import rare_refusal

        found = self.found()
        return rare_refusal(found) if found else None


class KeptUniqueGuard:
    """Refuses the kept columns (copied unchanged, in the clear) where too many released rows hold a value that no
    other released row has (:func:`.schema.kept_too_unique`): such a value can link the record to the person in
    another data set. Each non-empty released value (after recoding) is hashed to 64 bits per chunk; the rows per
    value are counted once, at the end. Memory: 8 bytes per released row per watched column (and a sorted copy of
    one column's hashes at the end); a hash collision (about n²/2⁶⁵ for n rows) can only hide a unique value."""

    def __init__(self, names):
        self.names = list(names)
        self.hashes: dict[str, list[np.ndarray]] = {n: [] for n in self.names}

    def add(self, table) -> None:
        """The kept columns of a release table (as written)."""
        import pandas as pd

        for name in self.names:
            column = table.column(name).drop_null()
            values = column.to_numpy(zero_copy_only=False).astype(object, copy=False)
            self.hashes[name].append(pd.util.hash_array(values, categorize=True).astype(np.uint64, copy=False))

    def found(self, rows: int) -> list[tuple[str, int, int]]:
        """(name, rows with a value no other row has, distinct values) of every column refused, in column order."""
        from .schema import kept_too_unique

        out = []
        for name in self.names:
            hashes = np.concatenate(self.hashes[name]) if self.hashes[name] else np.empty(0, dtype=np.uint64)
            counts = np.unique(hashes, return_counts=True)[1]
            unique = int((counts == 1).sum())
            if kept_too_unique(unique, rows):
                out.append((name, unique, int(counts.size)))
        return out

    def problem(self, rows: int) -> str | None:
        """The refusal naming every such column (:func:`.schema.kept_unique_refusal`), or None."""
        from .schema import kept_unique_refusal

        found = self.found(rows)
        return kept_unique_refusal(found, rows) if found else None


def check_published(rare: RareGuard, unique: KeptUniqueGuard, rows: int) -> None:
    """After the pass (``rows`` released), one InputError naming every rare category and every too-unique kept
    column that would be published (a guard built disabled finds nothing)."""
    problems = [p for p in (rare.problem(), unique.problem(rows)) if p]
    if problems:
        raise InputError("\n".join(problems))


def encoded_chunks(source, codec, fingerprints=None):
    """(rows read, codes, kept columns of the rows kept, excluded counts) per chunk; each chunk read is added to
    ``fingerprints`` (:class:`.audit.ColumnFingerprints`) when given. Runs in the prefetch thread, so reading,
    hashing and encoding overlap with sampling and writing."""
    import pyarrow as pa

    first = 0
    for table in source.tables(codec.columns):
        if fingerprints is not None:
            fingerprints.add(table)
        codes, rows, excluded = codec.encode_table(table, first)
        kept = None
        if codec.kept:
            kept = table.select(codec.kept)
            if rows.size < table.num_rows:
                kept = kept.take(pa.array(rows))
        yield table.num_rows, codes, kept, excluded
        first += table.num_rows


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
