"""Perturb a file into a release: stream chunks, encode, sample the mechanism, shuffle, write atomically.

Flow: check paths (the outputs must not exist unless ``force``, and never be the input, the configuration,
the key or the audit record; the folder must be writable; temporaries of killed runs are removed) -> read
the header and build the codec from the configuration -> run the design (honesty rule in
:mod:`.design_step`) -> hash the input and look it up in the audit record's ledger (a repeat release needs
``allow_repeat``) -> one streaming pass: encode each chunk, perturb it with the mechanism's vectorised
sampler, and either write it or spill it into the external shuffle (:mod:`.shuffle`) -> refuse what the pass
found (identifier-like perturbed columns, and, unless approved, rare released categories, kept columns with a
value unique to one row in many rows or a value of fewer than RARE_COUNT rows, and kept columns whose combination
of values is unique to one row in many rows: :class:`CategoryGuard`,
:class:`KeptUniqueGuard`, :class:`PublishRefusal`) ->
write the shuffled records (kept in the input's order without ``shuffle``: a note warns that row positions can
disclose values, naming the columns whose values come in runs, :class:`RowOrder`) -> hash the output -> write the
manifest and the external report (beside the release) and the audit record and internal report (in the audit folder;
the audit record, read again under its lock, refuses a repeat found by the records' fingerprints,
:class:`.audit.ColumnFingerprints`, unless ``allow_repeat``) -> rename the temporary files into place, the audit
record first (so the ledger never misses a release); without ``force`` the renames never replace a file
(:func:`.io.atomic.commit_new`): an output that another run wrote during the pass refuses the release, and this run's
files and audit entry are removed again (:func:`place_release`). Memory is bounded by the chunk size and the
shuffle's bucket size, not by the file, except the distinct values of the kept columns and
of their combination (:class:`KeptUniqueGuard`). A cancel, an error or a kill leaves nothing under the final names
(only hidden temporary files for a kill, removed by the next run in that folder).

Randomness (:mod:`.randomness`): AES-128-CTR keyed from the operating system by default (nothing recorded,
not reproducible); with a hospital ``key`` (``optrr keygen``) the release is reproducible by the key holder
alone; ``insecure_test_seed`` is for tests and marks the release NOT PRIVATE.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Collection
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


def appeared_message(path: str, what: str) -> str:
    """The refusal of an output that another run wrote while this one was working (:func:`check_still_new`)."""
    return (
        f"{what} {path} was written by another run while this release was being made; nothing was released and "
        "the audit record is unchanged: choose another name, or use --force to replace it"
    )


def check_still_new(finals: dict[str, str]) -> None:
    """At the commit point: refuse when one of ``finals`` ({path: what}, checked free before the pass) now exists."""
    for path, what in finals.items():
        if os.path.lexists(path):
            raise InputError(appeared_message(path, what))


def place_release(temps: list, finals: dict[str, str], force: bool, apath, entry: dict) -> None:
    """Give the release's temporary files (AtomicFile) their final names, ``entry`` already in the audit record
    ``apath``. With ``force`` each replaces what is there. Without it none replaces anything
    (:func:`.io.atomic.commit_new`): when a name is taken (another run wrote it since :func:`check_still_new`) or a
    rename fails, the files this run placed are removed again and ``entry`` is taken out of the audit record, so
    nothing of this run is left and the ledger records no release that was refused."""
    from ..io.atomic import commit_new, describe_os_error
    from .audit import withdraw_release

    if force:
        for tmp in temps:
            _write(tmp.commit, tmp.final)
        return
    placed: list[tuple[str, tuple[int, int]]] = []
    for tmp in temps:
        try:
            st = os.stat(tmp.path)
            commit_new(tmp)
        except OSError as exc:
            _remove_placed(placed)
            _write(withdraw_release, apath, apath, entry)
            if isinstance(exc, FileExistsError):
                raise InputError(appeared_message(tmp.final, finals.get(tmp.final, "output"))) from None
            raise InputError(describe_os_error(exc, tmp.final)) from None
        placed.append((tmp.final, (st.st_dev, st.st_ino)))


def _remove_placed(placed: list[tuple[str, tuple[int, int]]]) -> None:
    """Remove the files this run gave a final name (path, (device, inode)), each only while it is still this run's."""
    for path, ident in placed:
        try:
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) == ident:
                os.unlink(path)
        except OSError:
            pass


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
    allow_rare_categories: bool | Collection[tuple[str, str]] = False,
    allow_flagged_kept: bool | Collection[str] = False,
    allow_identifier_kept: bool | Collection[str] | None = None,
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
    ``at_commit()``, when given, is called once just before the audit record is appended, after every check of the
    pass: from there on the release is either completed or refused as a repeat of the same records
    (:class:`.audit.RepeatReleaseError`, found by their fingerprints under the audit record's lock), refused because
    another run wrote one of its output names meanwhile (:func:`place_release`) or stopped by a write error, never
    abandoned by a cancel (the command line holds Ctrl-C from there); nothing has its final name yet when it is called.
    ``config``: a ReleaseConfig, its dict, or the path of its JSON. ``key``: a hospital key (bytes, from
    :func:`.randomness.read_key_file` of ``key_path``); ``insecure_test_seed``: tests only, accepted in developer
    mode (``developer``; default: ``OPTRR_DEVELOPER=1`` in this process); the release is marked NOT PRIVATE in its
    first column, manifest and report. ``force``:
    replace existing outputs; without it an output written meanwhile (another run finishing first) refuses the release
    at the commit point, its own files and audit entry removed (:func:`place_release`). Without ``shuffle`` the rows
    keep the input's order and the manifest and report say what that can disclose (:func:`order_kept_note`); the
    columns in long runs are named to the hospital only (:func:`order_runs_warning`).
    ``allow_repeat``: release a source that the audit record shows was released
    before, by its bytes (refused before the pass) or by its records (a column of another input with the same
    values, refused at the commit point); otherwise :class:`.audit.RepeatReleaseError`. After the pass, before any
    file gets its final name, the release is refused (:class:`PublishRefusal`, naming them) when a perturbed column
    releases a rare category (:meth:`CategoryGuard.rare`) not approved by ``allow_rare_categories``, or when a kept
    column not approved by ``allow_flagged_kept`` holds a value unique to one row in too many rows or a value of
    fewer than RARE_COUNT rows (:meth:`KeptUniqueGuard.rare`), or the kept
    columns together (two or more) hold a combination of values unique to one row in too many rows
    (:class:`KeptUniqueGuard`). Each is True (approve all: the command line's flags), False (approve none) or the
    collection of what was approved: (column, category) pairs, and kept column names and the tuple of every kept
    column's name in column order (their combination). ``allow_identifier_kept`` (None: as ``allow_flagged_kept``,
    the command line's rule): the kept columns approved even when they identify the records
    (:func:`.schema.identifier_like` of the rows released); a column approved by ``allow_flagged_kept`` but not here
    is still counted and refused when it does (the window's own box for it; its counts before the release may miss
    rows left out). ``reader_options`` (ReaderOptions) override the configuration's ``input`` options.
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
        held_by,
        internal_report_path,
        load_audit,
        noise_key,
        releases_of,
        repeat_message,
        repeats_of,
        reproduced_release,
        reproduction_message,
    )
    from .codec import Codec
    from .design_step import make_design
    from .manifest import (
        build_audit_entry,
        build_manifest,
        manifest_path,
        manifest_text,
        report_path,
        tool_entry,
        utc_now,
    )
    from .randomness import NOT_PRIVATE_COLUMN, ReleaseRandomness, context_digest, mark_not_private
    from .report import render_internal_report, render_report
    from .schema import resolve_bins, rows_text
    from .shuffle import ExternalShuffle, bucket_count

    ctl = TaskControl(progress, cancel)
    rare_ok = approved_set(allow_rare_categories, "allow_rare_categories")
    kept_ok = approved_set(allow_flagged_kept, "allow_flagged_kept")
    # a kept column that identifies the records (schema.identifier_like, counted on the rows released) needs its own
    # approval when one is given (the window's box naming it); the command line's --allow-flagged-kept covers both
    id_ok = kept_ok if allow_identifier_kept is None else approved_set(allow_identifier_kept, "allow_identifier_kept")
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
    finals = {output_path: "output", mpath: "manifest", rpath: "report", ipath: "internal report"}
    for path, what in finals.items():  # never a key or an audit record, whatever its name (as every command)
        check_new_output(path, protected, what, force, recognise=held_by)
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
    if NOT_PRIVATE_COLUMN in out_columns:  # a private release with it would read as NOT PRIVATE to its recipient
        raise InputError(f"column {NOT_PRIVATE_COLUMN!r} is OptRR's marker of a test-seed release; rename it")
    if not randomness.private:  # the data file itself says NOT PRIVATE, in its first column
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
        this_noise = noise_key(
            input_sha, randomness.audit_entry(), tool_entry(), cfg.to_dict(), source.options.to_dict(), shuffle
        )
        copy_of = reproduced_release(previous, this_noise)
        if copy_of is not None:  # a keyed reproduction: the same noise again; its ledger is the copied release's
            ledger, _columns, _reordered, near = repeats_of(audit, copy_of)
            raise RepeatReleaseError(
                reproduction_message(ledger, copy_of, near), ledger, accumulated_epsilon(ledger), near=near,
                reproduces=copy_of,
            )
        raise RepeatReleaseError(repeat_message(previous, this_eps), previous, accumulated_epsilon(previous, this_eps))

    chunk_rows = source.chunk_rows(codec.columns)
    context = None
    if randomness.needs_context:
        context = context_digest(  # everything that shapes the codes: another recode or reader option, another stream
            input_sha256=input_sha,
            config=cfg.to_dict(),
            reader_options=source.options.to_dict(),
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
        categories = CategoryGuard(codec)
        unique = KeptUniqueGuard.for_release(codec, kept_ok, id_ok)
        records = ColumnFingerprints(codec.columns)  # the ledger's check at the commit point (append_release)
        order = None if shuffle else RowOrder.for_release(codec)
        for n, codes, kept, ex in prefetched(encoded_chunks(source, codec, records, unique)):
            stream.check()
            categories.add(codes)
            if order is not None:
                order.add(codes, kept)
            for k, v in ex.items():
                excluded[k] = excluded.get(k, 0) + v
            out = codec.output_table(mechanism.sample(codes, rng_sample), kept)
            if not randomness.private:
                out = mark_not_private(out)
            _write(spill.add if spill is not None else writer.write, output_path, out)
            rows_read += n
            rows_out += out.num_rows
            stream.report(source.fraction_done(), f"randomized {rows_text(rows_read)}")
        if rows_read == 0:
            raise InputError(f"{os.path.basename(input_path)} has a header but no data rows")
        if rows_out == 0:
            raise InputError("every row has a missing value in a column with missing: exclude; nothing to release")
        categories.check_identifiers(rows_out)
        check_published(categories, unique, rows_out, rare_ok)
        check_unlisted_share(codec.unlisted, rows_read, source.options.decimal)
        if rows_check is not None:  # e.g. needed tables that carry no information at this row count
            release_design.notes.extend(rows_check(mechanism, codec.attributes, cfg, rows_out) or [])
        in_runs = None if order is None else order.in_runs()  # the hospital's only: it describes the raw order
        if in_runs is not None:
            release_design.notes.append(order_kept_note())
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
        entry["input"]["records_multiset"] = records.multiset()  # the same records in any order (never sent)
        entry["input"]["records_sketch"] = records.sketch()  # near repeats: rows added, removed, changed (never sent)
        entry["input"]["records_set_sketch"] = records.record_set()  # near repeats in another order (never sent)
        if release_design.config_warnings:  # about the configuration, not the release: the hospital's only
            entry["config_warnings"] = list(release_design.config_warnings)
        if in_runs is not None:
            entry["order_in_runs"] = in_runs  # the columns by which the raw file is sorted or grouped (never sent)
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
        if not force:  # another run may have written one of these names during the pass
            check_still_new(finals)
        # The audit record first (so the ledger never misses a release), read again and appended under its lock:
        # parallel runs never lose an entry, and a release of the same input recorded meanwhile is caught.
        history = _write(append_release, apath, apath, entry, allow_repeat)
        if len(history) != len(previous) + 1:
            _write(_write_text, ipath, written[0].path, render_internal_report(manifest, entry, history))
        place_release(temps, finals, force, apath, entry)
        ctl.report(1.0, f"released {rows_text(rows_out)}")
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


class PublishRefusal(InputError):
    """After the pass, what the release would publish without approval (:func:`check_published`): ``rare``, the
    rare categories of perturbed columns, [(column, category, rows)], per column in column order, rarest first;
    ``kept``, the kept columns where too many rows hold a value no other row has, [(column, unique rows, rows
    released)], in column order; ``combination``, None or (the kept columns' names in column order, rows whose
    combination of their values no other row has, rows released) when that combination is refused; ``kept_rare``,
    the other kept columns with values held by fewer than RARE_COUNT rows, [(column, such values, rows holding them)],
    in column order; ``kept_distinct``, the columns of ``kept`` with their distinct values, [(column, distinct
    values, rows released)], in column order (what :func:`.schema.identifier_like` needs: the message says which
    look like identifiers). The message is :func:`.schema.rare_refusal`, :func:`.schema.kept_unique_refusal`,
    :func:`.schema.kept_rare_refusal` and :func:`.schema.kept_combination_refusal`, one per line."""

    def __init__(self, message: str, rare=(), kept=(), combination=None, kept_rare=(), kept_distinct=()):
        super().__init__(message)
        self.rare = [(str(c), str(v), int(n)) for c, v, n in rare]
        self.kept = [(str(c), int(u), int(n)) for c, u, n in kept]
        self.kept_distinct = [(str(c), int(d), int(n)) for c, d, n in kept_distinct]
        self.kept_rare = [(str(c), int(v), int(h)) for c, v, h in kept_rare]
        self.combination: tuple[tuple[str, ...], int, int] | None = None
        if combination is not None:
            names, unique, rows = combination
            self.combination = (tuple(str(n) for n in names), int(unique), int(rows))

    def reworded(self, message: str) -> PublishRefusal:
        """The same refusal with another message (e.g. worded for the window)."""
        return type(self)(message, self.rare, self.kept, self.combination, self.kept_rare, self.kept_distinct)

    def __reduce__(self):  # survives the GUI's worker processes (pickle)
        return (type(self), (str(self), self.rare, self.kept, self.combination, self.kept_rare, self.kept_distinct))


def approved_set(allowed, what: str) -> frozenset | None:
    """perturb_file's ``allow_rare_categories`` / ``allow_flagged_kept`` as a set: None when everything is approved
    (True), the empty set for False or None, else the items of the collection ((column, category) pairs as
    tuples, column names, or the tuple of the kept columns' names approving their combination)."""
    if allowed is None or isinstance(allowed, bool):
        return None if allowed else frozenset()
    if isinstance(allowed, (str, bytes)):
        raise InputError(f"{what} must be True, False or a collection, not the text {allowed!r}")
    return frozenset(tuple(str(x) for x in item) if isinstance(item, (list, tuple)) else str(item) for item in allowed)


class CategoryGuard:
    """The released rows per category (code) of the perturbed columns, counted once per chunk (``np.bincount``),
    from which both refusals after the pass follow, on the rows actually released:

    - identifier-like columns (:func:`.schema.identifier_like` of the categories with rows; only columns of
      UNIQUE_MIN_ROWS or more categories can qualify): their categories, the identifiers themselves, would be
      published in the codebook (:meth:`check_identifiers`);
    - rare categories (:func:`.schema.rare_categories`, the rule of the Design tab and the release dialog): the
      codebook lists every category, so a category of 1..RARE_COUNT-1 rows discloses that such a person exists
      (:meth:`rare`). Every category of a nominal or ordinal column, its missing-value category included; of a
      numeric column only the categories listed beside its bins (texts such as 'unknown', its missing-value
      category): its bins publish ranges, never its numbers. A listed category with no rows is not rare."""

    def __init__(self, codec):
        from .schema import UNIQUE_MIN_ROWS

        self.names = [str(n) for n in codec.attributes]
        self.labels = [spec.labels for spec in codec.specs]
        self.configs = list(codec.config.perturbed())  # the column configurations, for :meth:`merged_labels`
        #: {column: its missing-value category (the label its missing rows are coded as), or None}
        self.missing = {
            name: spec.labels[spec.missing_code] if spec.missing_code is not None else None
            for name, spec in zip(self.names, codec.specs, strict=True)
        }
        #: the first code :meth:`rare` watches: 0, or after a numeric column's bins (its listed categories)
        self.rare_from = [len(spec.labels) - len(spec.extras) for spec in codec.specs]  # the bins (none but numeric)
        sizes = [int(a) for a in codec.sizes]
        self.wide = [a >= UNIQUE_MIN_ROWS for a in sizes]
        self.columns = [j for j in range(len(sizes)) if self.rare_from[j] < sizes[j] or self.wide[j]]
        self.counts = {j: np.zeros(sizes[j], dtype=np.int64) for j in self.columns}

    def add(self, codes: np.ndarray) -> None:
        for j in self.columns:
            self.counts[j] += np.bincount(codes[:, j], minlength=self.counts[j].size)

    def identifiers(self, rows: int) -> list[tuple[str, int]]:
        """(name, distinct categories released) of every identifier-like column, in column order."""
        from .schema import identifier_like

        distinct = {j: int(np.count_nonzero(self.counts[j])) for j in self.columns if self.wide[j]}
        return [(self.names[j], d) for j, d in distinct.items() if identifier_like(d, rows)]

    def check_identifiers(self, rows: int) -> None:
        """Refuse every identifier-like column at once (:func:`.schema.identifier_refusal`)."""
        from .schema import identifier_refusal

        found = self.identifiers(rows)
        if found:
            raise InputError(identifier_refusal(found, rows))

    def rare(self, approved: frozenset | None = frozenset()) -> list[tuple[str, str, int]]:
        """(column, category, rows) of every rare released category not in ``approved`` ((column, category)
        pairs; None: all approved), per column in column order, rarest first."""
        from .schema import rare_categories

        if approved is None:
            return []
        out: list[tuple[str, str, int]] = []
        for j in self.columns:
            start, name = self.rare_from[j], self.names[j]
            counts = dict(zip(self.labels[j][start:], self.counts[j][start:].tolist(), strict=True))
            out.extend((name, v, n) for v, n in rare_categories(counts) if (name, v) not in approved)
        return out


    def merged_labels(self, names) -> dict[str, dict[str, str]]:
        """{column: {category: the label it would be released as}} of what ``optrr schema --merge-rare`` would do to
        each nominal or ordinal column among ``names``, on the rows released (:func:`.merge_rare.merged_labels`:
        its own code), so that a refusal quotes it ('Other' into 'Male or other') and promises nothing else."""
        from .merge_rare import merged_labels

        out = {}
        for j in self.columns:
            col = self.configs[j]
            if self.names[j] in names and col.type in ("nominal", "ordinal") and col.categories:
                counts = dict(zip(self.labels[j], self.counts[j].tolist(), strict=True))
                out[self.names[j]] = merged_labels(col, counts)
        return out


#: Past this many distinct values, a kept column's values are counted by 64-bit hash (:class:`KeptUniqueGuard`).
KEPT_DISTINCT_CAP = 1_000_000
#: Merge the counts waiting once they outnumber the merged ones, or are this many tables (few values a chunk).
MAX_PENDING = 64


def _merge_due(waiting: int, merged: int, pending: int) -> bool:
    """Whether the counts waiting should be merged into the running ones: each value is merged a few times, not
    once per chunk."""
    return waiting > max(merged, 1024) or pending > MAX_PENDING


class _KeyCounts:
    """Rows per 64-bit key, chunk by chunk: each chunk's (keys, rows) wait and are summed into the running sorted
    (keys, rows) arrays with numpy (:func:`_merge_due`). 16 bytes per distinct key (about twice that while
    merging); equal keys are one value (a hash collision can only hide a value held by one row)."""

    def __init__(self):
        self.keys = np.zeros(0, dtype=np.uint64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.waiting = 0

    def add(self, keys: np.ndarray, rows: np.ndarray) -> None:
        self.pending.append((keys, rows))
        self.waiting += len(rows)
        if _merge_due(self.waiting, self.rows.size, len(self.pending)):
            self._merge()

    def _merge(self) -> None:
        if not self.pending:
            return
        keys = np.concatenate([self.keys, *(k for k, _r in self.pending)])
        rows = np.concatenate([self.rows, *(r for _k, r in self.pending)])
        self.pending, self.waiting = [], 0
        if not keys.size:  # chunks without a value (every cell missing)
            return
        order = np.argsort(keys, kind="stable")  # timsort: runs already sorted (np.unique of a chunk) merge fast
        keys, rows = keys[order], rows[order]
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        self.keys, self.rows = keys[starts], np.add.reduceat(rows, starts)

    def rows_per_value(self) -> np.ndarray:
        """The rows of each distinct key so far."""
        self._merge()
        return self.rows

    def unique_and_distinct(self) -> tuple[int, int]:
        """(keys held by exactly one row, distinct keys) so far."""
        return _unique_and_distinct(self.rows_per_value())


def _unique_and_distinct(rows: np.ndarray) -> tuple[int, int]:
    """(values held by exactly one row, distinct values) of the rows per value ``rows``."""
    return int(np.count_nonzero(rows == 1)), int(rows.size)


def _rare_values(rows: np.ndarray) -> tuple[int, int]:
    """(values, rows holding them) of the rare values of the rows per value ``rows`` (:func:`.schema.is_rare`, the
    one rule, applied to each distinct row count)."""
    from .schema import is_rare

    rare = np.isin(rows, [n for n in np.unique(rows).tolist() if is_rare(n)])
    return int(np.count_nonzero(rare)), int(rows[rare].sum())


class _ValueCounts:
    """Rows per value of one kept column, chunk by chunk (see :class:`KeptUniqueGuard`): exact (Arrow strings) up to
    ``cap`` distinct values, then by 64-bit hash (:class:`_KeyCounts`)."""

    def __init__(self, cap: int):
        self.cap = cap
        self.hashed: _KeyCounts | None = None  # past the cap
        self.merged: tuple | None = None  # (values: pyarrow string Array; rows: int64)
        self.pending: list[tuple] = []
        self.waiting = 0

    def add(self, values, rows: np.ndarray, keys: np.ndarray | None = None) -> None:
        """A chunk's released values (a string Array without nulls; equal values may repeat), their rows, and their
        64-bit keys (:func:`_hash`) when already computed."""
        if self.hashed is not None:
            self.hashed.add(_hash(values) if keys is None else keys, rows)
            return
        self.pending.append((values, rows))
        self.waiting += len(rows)
        if _merge_due(self.waiting, len(self.merged[1]) if self.merged else 0, len(self.pending)):
            self._merge()

    def _merge(self) -> None:
        import pyarrow as pa

        parts = ([self.merged] if self.merged is not None else []) + self.pending
        self.pending, self.waiting = [], 0
        if not parts:
            return
        values, rows = pa.concat_arrays([v for v, _r in parts]), np.concatenate([r for _v, r in parts])
        table = pa.table({"value": values, "rows": rows})
        summed = table.group_by("value", use_threads=False).aggregate([("rows", "sum")])
        self.merged = (summed.column("value").combine_chunks(), summed.column("rows_sum").to_numpy())
        if len(self.merged[1]) > self.cap:
            self.hashed = _KeyCounts()
            self.hashed.add(_hash(self.merged[0]), self.merged[1])  # equal hashes of different values merge there
            self.merged = None

    def rows_per_value(self) -> np.ndarray:
        """The rows of each distinct value so far (of each 64-bit key past the cap)."""
        self._merge()  # first: this merge may cross the cap and move the counts to ``hashed``
        if self.hashed is not None:
            return self.hashed.rows_per_value()
        return self.merged[1] if self.merged is not None else np.zeros(0, dtype=np.int64)

    def unique_and_distinct(self) -> tuple[int, int]:
        """(values held by exactly one row, distinct values) so far."""
        return _unique_and_distinct(self.rows_per_value())


def _hash(values) -> np.ndarray:
    """64-bit hashes of a pyarrow string array (its values as Python strings: pandas' hash)."""
    import pandas as pd

    texts = values.to_numpy(zero_copy_only=False).astype(object, copy=False)
    return pd.util.hash_array(texts, categorize=False).astype(np.uint64, copy=False)


#: The 64-bit key of a missing value in a combination of kept columns (:class:`KeptUniqueGuard`).
_MISSING_KEY = np.uint64(0x9E3779B97F4A7C15)
#: An odd multiplier: a row's combination key is ((k1 * M + k2) * M + k3 ...) mod 2**64, so the order counts.
_KEY_SPREAD = np.uint64(0xFF51AFD7ED558CCD)


def _value_keys(values) -> np.ndarray:
    """The 64-bit key of each entry of ``values`` (a string Array, the missing value as null: :data:`_MISSING_KEY`)."""
    present = values.is_valid().to_numpy(zero_copy_only=False)
    keys = np.full(len(values), _MISSING_KEY, dtype=np.uint64)
    keys[present] = _hash(values.drop_null())
    return keys


def _released_distinct(column, recode):
    """A chunk of a kept column as released: (its distinct values after ``recode``, a string Array with the missing
    value once, as null, when present (values merged by the recoding repeat); each row's index into them, int numpy;
    the rows per entry). The recoding touches the distinct values only."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .recode import recode_arrow

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], type=pa.string())
    if not pa.types.is_string(column.type):
        column = column.cast(pa.string())
    encoded = pc.dictionary_encode(column, null_encoding="encode")
    index = encoded.indices.to_numpy(zero_copy_only=False)
    values = recode_arrow(encoded.dictionary, recode)
    return values, index, np.bincount(index, minlength=len(values)).astype(np.int64)


class KeptUniqueGuard:
    """Refuses the kept columns (copied unchanged, in the clear) where too many released rows hold a value that no
    other released row has (:func:`.schema.kept_too_unique`) or where a value is held by fewer than RARE_COUNT rows
    (:meth:`rare`, the perturbed columns' rare-category rule), and, when two or more columns are kept, their
    combination when too many rows hold a combination of their values that no other row has: either can link the
    record to the person in another data set.

    :meth:`add` takes the kept columns of the rows released, as read (in the prefetch thread: :func:`encoded_chunks`).
    Per chunk and column, ``pyarrow.compute.dictionary_encode`` gives the distinct values and each row's index into
    them, the column's recoding is applied to the distinct values only (the values counted are the ones released), and
    their rows are merged into the column's running counts (:class:`_ValueCounts`, with Arrow's ``group_by`` once the
    counts waiting outnumber them: each value is merged a few times, not once per chunk). No Python object is made
    per row for a column watched alone (the combination's keys hash each chunk's distinct values as Python strings:
    about 0.7 s per 1M rows of an ID-like kept column, in the prefetch thread). Memory grows with the distinct
    values, not the rows: their bytes and 8 bytes each (about twice that while merging). Past ``cap``
    (KEPT_DISTINCT_CAP) distinct values a column is counted by 64-bit hash instead: 16 bytes per distinct value
    whatever its length, at the cost of hashing each chunk's distinct values as Python strings; a hash collision
    (about D²/2⁶⁵ for D values) can only hide a unique value.

    The combination (``together``: every kept column, in column order): each column's distinct values of the chunk
    are hashed to 64 bits (:func:`_hash`; the missing value has a key of its own, :data:`_MISSING_KEY`), each row's
    keys are combined in column order into one 64-bit row key with numpy, and the chunk's (key, rows) from
    ``np.unique`` are merged into running arrays (:class:`_KeyCounts`): 16 bytes per distinct combination. A 64-bit
    collision (about C²/2⁶⁵ for C combinations) can only merge two combinations, so hide a unique one, never invent
    one. The combination is only refused when it adds something: its unique rows exceed those of every kept column
    alone, counted by hash from the same keys for the columns not watched alone."""

    def __init__(
        self, names, recodes: dict | None = None, cap: int = KEPT_DISTINCT_CAP, together=(), identifiers_only=()
    ):
        self.names = list(names)
        #: columns approved as too unique but not as identifiers: refused only when they identify the records
        self.identifiers_only = frozenset(identifiers_only)
        self.together = tuple(together) if len(together) >= 2 else ()
        self.recodes = dict(recodes or {})
        self.counts = {n: _ValueCounts(cap) for n in self.names}
        self.alone_by_key = {n: _KeyCounts() for n in self.together if n not in self.counts}
        self.joint = _KeyCounts()

    @classmethod
    def for_release(cls, codec, approved: frozenset | None, identifiers: frozenset | None) -> KeptUniqueGuard:
        """The guard of a release of ``codec``'s kept columns, ``approved`` (:func:`approved_set` of
        ``allow_flagged_kept``: None approves everything): each kept column not approved is watched alone, and their
        combination unless it is approved (the tuple of the kept columns' names, in column order). ``identifiers``
        (:func:`approved_set` of ``allow_identifier_kept``, as perturb_file decides it): a column approved but
        not named there is still watched, and refused only when it identifies the records
        (:func:`.schema.identifier_like` of the rows released)."""
        names = [n for n in codec.kept if approved is not None and n not in approved]
        only = [n for n in codec.kept if n not in names and identifiers is not None and n not in identifiers]
        together = tuple(codec.kept) if approved is not None and tuple(codec.kept) not in approved else ()
        return cls([n for n in codec.kept if n in names or n in only], codec.kept_recode, together=together,
                   identifiers_only=only)

    def add(self, table) -> None:
        """The kept columns of the rows released, as read (before recoding)."""
        joint = None
        for name in dict.fromkeys([*self.together, *self.names]):  # the combination's columns in column order
            values, index, rows = _released_distinct(table.column(name), self.recodes.get(name))
            present = values.is_valid().to_numpy(zero_copy_only=False)
            given, given_rows, keys = values.drop_null(), rows[present], None
            if name in self.together:
                all_keys = _value_keys(values)
                keys = all_keys[present]
                joint = all_keys[index] if joint is None else joint * _KEY_SPREAD + all_keys[index]
            if name in self.counts:
                self.counts[name].add(given, given_rows, keys)
            elif keys is not None:  # a column of the combination approved alone: counted by key
                self.alone_by_key[name].add(keys, given_rows)
        if joint is not None and joint.size:
            self.joint.add(*np.unique(joint, return_counts=True))

    def _alone(self, name: str) -> _ValueCounts | _KeyCounts:
        """The counts of one kept column's values: exact when it is watched alone, else by key."""
        return self.counts[name] if name in self.counts else self.alone_by_key[name]

    def found(self, rows: int) -> list[tuple[str, int, int]]:
        """(name, rows with a value no other row has, distinct values) of every column refused, in column order."""
        from .schema import identifier_like, kept_too_unique

        out = []
        for name in self.names:
            unique, distinct = self.counts[name].unique_and_distinct()
            only = name in self.identifiers_only
            if identifier_like(distinct, rows) if only else kept_too_unique(unique, rows):
                out.append((name, unique, distinct))
        return out

    def rare(self) -> list[tuple[str, int, int]]:
        """(name, values held by fewer than RARE_COUNT rows, rows holding them) of every watched column that has
        such values (:func:`.schema.is_rare`, the rule of the perturbed columns' categories; empty cells are no value),
        in column order: a value so few records have discloses that such a person is in the data."""
        out = []
        for name in self.names:
            if name in self.identifiers_only:  # approved: watched only for identifying the records
                continue
            values, held = _rare_values(self.counts[name].rows_per_value())
            if values:
                out.append((name, values, held))
        return out

    def combination(self, rows: int) -> tuple[tuple[str, ...], int, int] | None:
        """(the kept columns' names, rows whose combination of their values no other row has, ``rows``) when the
        combination is refused: :func:`.schema.kept_too_unique` of its unique rows, and more of them than any of the
        columns alone has (otherwise a column's own entry says it); else None."""
        from .schema import kept_too_unique

        if not self.together:
            return None
        unique, _distinct = self.joint.unique_and_distinct()
        alone = max(self._alone(n).unique_and_distinct()[0] for n in self.together)
        if kept_too_unique(unique, rows) and unique > alone:
            return self.together, unique, rows
        return None


def check_published(categories: CategoryGuard, unique: KeptUniqueGuard, rows: int, rare_ok=frozenset()) -> None:
    """After the pass (``rows`` released), one :class:`PublishRefusal` naming every rare category not approved
    (``rare_ok``: :func:`approved_set` of ``allow_rare_categories``), every too-unique kept column that ``unique``
    watches (the kept columns not approved), every other watched kept column with values of fewer than RARE_COUNT
    rows (:meth:`KeptUniqueGuard.rare`) and the kept columns' combination when it watches it and refuses it
    (:meth:`KeptUniqueGuard.combination`)."""
    from .schema import kept_combination_refusal, kept_rare_refusal, kept_unique_refusal, rare_refusal

    rare = categories.rare(rare_ok)
    kept = unique.found(rows)
    too_unique = {name for name, _u, _d in kept}
    kept_rare = [found for found in unique.rare() if found[0] not in too_unique]  # the unique rule says more
    combination = unique.combination(rows)
    by_column: dict[str, list[tuple[str, int]]] = {}
    for name, value, n in rare:
        by_column.setdefault(name, []).append((value, n))
    merges = categories.merged_labels(by_column)
    problems = [rare_refusal(list(by_column.items()), categories.missing, merges)] if rare else []
    if kept:
        problems.append(kept_unique_refusal(kept, rows))
    if kept_rare:
        problems.append(kept_rare_refusal(kept_rare))
    if combination is not None:
        problems.append(kept_combination_refusal(*combination))
    if problems:
        from .schema import RARE_COUNT

        if rows < RARE_COUNT:  # every category is rare then: the cause is the file, not a column
            problems.insert(0, few_rows_note(rows))
        unique_rows = [(name, u, rows) for name, u, _d in kept]
        distinct = [(name, d, rows) for name, _u, d in kept]
        raise PublishRefusal("\n".join(problems), rare, unique_rows, combination, kept_rare, distinct)


def few_rows_note(rows: int) -> str:
    """The first line of a refusal of a release of fewer than RARE_COUNT rows (every value it holds is rare)."""
    from .schema import RARE_COUNT, rows_text

    return (
        f"the release would hold only {rows_text(rows)}, fewer than {RARE_COUNT}: every value "
        "in it is rare, so every column below is named; a release needs more rows"
    )


#: A released column is named as in runs in the kept record order (:class:`RowOrder`) when adjacent rows hold the same
#: value this much closer to always than a shuffled order gives ((observed - expected) / (1 - expected))...
ORDER_RUN_EXCESS = 0.25
#: ... and this many standard deviations above a shuffled order (no warning from chance in a small file).
ORDER_RUN_Z = 4.0
#: Rows sampled (uniformly, by random priority) to estimate how often two rows of a shuffled order agree.
ORDER_SAMPLE_ROWS = 1 << 16


class RowOrder:
    """Whether the released columns' values come in runs in the input's order (the file sorted or grouped by them),
    for a release that keeps that order: then a row's position discloses its value, whatever the randomization.

    :meth:`add` takes each chunk's codes of the perturbed columns (the values before randomization) and kept columns
    of the rows released (their released values, by 64-bit key, empty cells one key): it counts the adjacent rows
    that agree, per column, and keeps a uniform sample of ORDER_SAMPLE_ROWS rows (by random priority) from which
    the share of agreeing pairs in a shuffled order, sum(p²), is estimated (exact for smaller files). Memory:
    8 bytes per column and sampled row, whatever the file's size or the columns' distinct values."""

    def __init__(self, names, sample_rows: int = ORDER_SAMPLE_ROWS, kept=(), recodes: dict | None = None):
        self.names = list(names) + list(kept)
        self.kept = list(kept)
        self.recodes = dict(recodes or {})
        self.sample_rows = sample_rows
        self.agree = np.zeros(len(self.names), dtype=np.int64)
        self.rows = 0
        self.last: np.ndarray | None = None
        self.sample = np.zeros((0, len(self.names)), dtype=np.uint64)
        self.priority = np.zeros(0)
        self.rng = np.random.default_rng(0)  # the same note for the same file; nothing released depends on it

    @classmethod
    def for_release(cls, codec) -> RowOrder:
        """Every released column of ``codec``: the perturbed ones, then the kept ones (after their recoding)."""
        return cls(codec.attributes, kept=codec.kept, recodes=codec.kept_recode)

    def add(self, codes: np.ndarray, kept=None) -> None:
        """A chunk of the rows released: their codes (rows x perturbed columns) and kept columns (a table, or None)."""
        parts = [codes.astype(np.uint64)]
        for name in self.kept:
            values, index, _rows = _released_distinct(kept.column(name), self.recodes.get(name))
            parts.append(_value_keys(values)[index][:, None])
        keys = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
        if not len(keys):
            return
        if self.last is not None:
            self.agree += keys[0] == self.last
        self.agree += np.count_nonzero(keys[1:] == keys[:-1], axis=0)
        self.last = keys[-1].copy()
        self.rows += len(keys)
        sample = np.concatenate([self.sample, keys])
        priority = np.concatenate([self.priority, self.rng.random(len(keys))])
        if len(priority) > self.sample_rows:
            chosen = np.argpartition(priority, self.sample_rows)[: self.sample_rows]
            sample, priority = sample[chosen], priority[chosen]
        self.sample, self.priority = sample, priority

    def in_runs(self) -> list[str]:
        """The columns whose values come in runs (:data:`ORDER_RUN_EXCESS`, :data:`ORDER_RUN_Z`), in :attr:`names`
        order. Adjacent pairs agreeing in a shuffled order: mean (n-1)q, variance (n-1)q(1-q) + 2(n-2)(r-q²), with
        q = sum(p²) and r = sum(p³) estimated without bias from the sample of m rows; when m < n the estimate's own
        variance, about (n-1)² 4(r-q²)/m, is added."""
        m, pairs = len(self.sample), self.rows - 1
        if m < 3 or pairs < 2:
            return []
        out = []
        for j, name in enumerate(self.names):
            c = np.unique(self.sample[:, j], return_counts=True)[1].astype(float)
            q = float((c * (c - 1)).sum()) / (m * (m - 1))
            r = float((c * (c - 1) * (c - 2)).sum()) / (m * (m - 1) * (m - 2))
            if q >= 1.0:  # one value: its order discloses nothing
                continue
            spread = max(r - q * q, 0.0)
            var = pairs * q * (1 - q) + 2 * (pairs - 1) * spread
            if m < self.rows:  # q estimated from a sample
                var += pairs**2 * 4 * spread / m
            var = max(var, 1e-12)
            observed = float(self.agree[j])
            excess = (observed / pairs - q) / (1 - q)
            if excess >= ORDER_RUN_EXCESS and (observed - pairs * q) / var**0.5 >= ORDER_RUN_Z:
                out.append(name)
        return out


def order_kept_note() -> str:
    """The note (manifest, reports, the command line's stderr) of a release in the input's record order: what row
    positions can disclose. It names no column: which columns the raw file is sorted or grouped by is the hospital's
    to know (:func:`order_runs_warning`, in the audit record, the internal report and stderr)."""
    return (
        "WARNING: the records keep the input file's row order (not shuffled): in a file sorted or grouped by a "
        "released column, a row's position discloses that column's value, whatever the randomization (e.g. all "
        "cases first). Release shuffled unless the order is needed"
    )


def order_runs_warning(in_runs: list[str]) -> str | None:
    """For the hospital only (the audit entry's ``order_in_runs``, :meth:`RowOrder.in_runs`): the released columns
    whose values come in long runs in the kept row order, or None when none do."""
    if not in_runs:
        return None
    named = ", ".join(repr(n) for n in in_runs)
    return (
        f"the release keeps the row order, and the values of {named} come in long runs in it (the file is sorted or "
        "grouped by them): their positions disclose them; release shuffled"
    )


def encoded_chunks(source, codec, fingerprints=None, kept_values=None):
    """(rows read, codes, kept columns of the rows kept, excluded counts) per chunk; each chunk read is added to
    ``fingerprints`` (:class:`.audit.ColumnFingerprints`) and the kept columns of the rows kept to ``kept_values``
    (:class:`KeptUniqueGuard`) when given. Runs in the prefetch thread, so reading, hashing, counting and encoding
    overlap with sampling and writing."""
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
            if kept_values is not None:
                kept_values.add(kept)
        yield table.num_rows, codes, kept, excluded
        first += table.num_rows


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
