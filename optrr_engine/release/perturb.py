"""Perturb a file into a release: stream chunks, encode, sample the mechanism, shuffle, write atomically.

Flow: check paths (the output, its manifest and its report must not be the input; the folder must be
writable) -> read the header and build the codec from the configuration -> run the design (honesty rule in
:mod:`.design_step`) -> hash the input -> one streaming pass: encode each chunk, perturb it with the
mechanism's vectorised sampler, and either write it or spill it into the external shuffle
(:mod:`.shuffle`) -> write the shuffled records -> hash the output -> write the manifest and the HTML
report -> rename the three temporary files into place. Memory is bounded by the chunk size and the
shuffle's bucket size, not by the file. A cancel, an error or a kill leaves nothing under the final names
(only hidden temporary files for a kill).

Randomness: a fixed ``seed`` gives a reproducible release (same file, configuration, chunk size and OptRR
version); without it the operating system's entropy is used, and the manifest says ``seeded: false``.
The seed is written to the manifest only when asked (``keep_seed_in_manifest``).
"""

from __future__ import annotations

import copy
import os

import numpy as np

from ..errors import InputError
from ..tasks import TaskControl


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


def check_seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise InputError(f"seed must be a whole number >= 0; got {seed!r}")
    return int(seed)


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
    seed=None,
    shuffle: bool = True,
    output_format: str | None = None,
    keep_seed_in_manifest: bool = False,
    progress=None,
    cancel=None,
    reader_options=None,
    design_check=None,
) -> dict:
    """Write the release OUTPUT, OUTPUT.manifest.json and OUTPUT.report.html; return the manifest.

    ``design_check(mechanism, attribute_names, config)``, when given, runs after the design and before any file is
    written: it raises InputError to refuse the release or returns notes for the manifest and report.
    ``config``: a ReleaseConfig, its dict, or the path of its JSON. ``reader_options`` (ReaderOptions)
    override the configuration's ``input`` options.
    """
    from ..io.atomic import AtomicFile, check_output_path, sha256_file
    from ..io.formats import format_of
    from ..io.readers import ReaderOptions, _check_input, open_source
    from ..io.source_base import prefetched
    from ..io.writers import open_writer
    from .codec import Codec
    from .design_step import make_design
    from .manifest import build_manifest, manifest_path, manifest_text, report_path
    from .report import render_report
    from .schema import resolve_bins
    from .shuffle import ExternalShuffle, bucket_count

    ctl = TaskControl(progress, cancel)
    input_path = _check_input(input_path)
    cfg = as_config(config)
    cfg.check_releasable()
    seed = check_seed(seed)
    output_path = os.fspath(output_path)
    in_format = format_of(input_path)
    out_format = choose_output_format(output_path, output_format, in_format)
    mpath, rpath = manifest_path(output_path), report_path(output_path)
    for path, what in ((output_path, "output"), (mpath, "manifest"), (rpath, "report")):
        check_output_path(path, [input_path], what)
    AtomicFile(output_path).discard()  # the folder must be writable: find out before any long pass

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
    release_design = make_design(cfg, codec.sizes, codec.attributes, ctl.sub(0.05, 0.1).progress, cancel)
    mechanism = release_design.mechanism
    if design_check is not None:
        release_design.notes.extend(design_check(mechanism, codec.attributes, cfg) or [])
    ctl.check()

    sample_seq, shuffle_seq = np.random.SeedSequence(seed).spawn(2)
    rng_sample, rng_shuffle = np.random.default_rng(sample_seq), np.random.default_rng(shuffle_seq)
    chunk_rows = source.chunk_rows(codec.columns)
    delimiter = source.options.delimiter if in_format == "csv" else ("\t" if output_path.endswith(".tsv") else ",")
    bom = in_format == "csv" and (source.options.encoding or "").lower().replace("_", "-") == "utf-8-sig"
    output_options = {}
    if out_format == "csv":
        output_options = {"delimiter": delimiter, "encoding": "utf-8-sig" if bom else "utf-8"}

    data_tmp = AtomicFile(output_path)
    temps = [data_tmp]
    writer = spill = None
    input_hash = BackgroundHash(input_path)
    try:
        writer = _write(open_writer, output_path, out_format, data_tmp.path, codec.columns, delimiter, bom)
        if shuffle:
            rows_est = source.row_count or getattr(source, "estimated_rows", lambda: chunk_rows)()
            per_row = codec.sizes.size * np.dtype(codec.dtype).itemsize + 24 * len(codec.kept) + 8
            folder = os.path.dirname(os.path.abspath(output_path))
            spill = _write(ExternalShuffle, output_path, folder, bucket_count(rows_est, per_row), rng_shuffle)
        stream = ctl.sub(0.1, 0.75 if shuffle else 0.95)
        rows_read = rows_out = 0
        excluded: dict[str, int] = {}
        for n, codes, kept, ex in prefetched(encoded_chunks(source, codec)):
            stream.check()
            for k, v in ex.items():
                excluded[k] = excluded.get(k, 0) + v
            out = codec.output_table(mechanism.sample(codes, rng_sample), kept)
            _write(spill.add if shuffle else writer.write, output_path, out)
            rows_read += n
            rows_out += out.num_rows
            stream.report(source.fraction_done(), f"randomized {rows_read:,} rows")
        if rows_read == 0:
            raise InputError(f"{os.path.basename(input_path)} has a header but no data rows")
        if rows_out == 0:
            raise InputError("every row has a missing value in a column with missing: exclude; nothing to release")
        if shuffle:
            for table in spill.tables(chunk_rows, ctl.sub(0.75, 0.95)):
                _write(writer.write, output_path, table)
        _write(writer.close, output_path)
        writer = None
        output_sha = sha256_file(data_tmp.path, ctl.sub(0.95, 0.99))
        input_sha = input_hash.result()
        manifest = build_manifest(
            codec=codec,
            release_design=release_design,
            rows=rows_out,
            rows_read=rows_read,
            rows_excluded=excluded,
            input_path=input_path,
            output_path=output_path,
            input_format=in_format,
            output_format=out_format,
            input_sha256=input_sha,
            output_sha256=output_sha,
            shuffled=bool(shuffle),
            seed=seed,
            keep_seed=keep_seed_in_manifest,
            reader_options=source.options.to_dict(),
            output_options=output_options,
            dropped_columns=[n for n in source.names if n not in codec.columns],
            chunk_rows=chunk_rows,
        )
        for path, text in ((mpath, manifest_text(manifest)), (rpath, render_report(manifest))):
            tmp = AtomicFile(path)
            temps.append(tmp)
            _write(_write_text, path, tmp.path, text)
        ctl.check()
        for tmp in temps:
            _write(tmp.commit, tmp.final)
        ctl.report(1.0, f"released {rows_out:,} rows")
        return manifest
    finally:
        input_hash.cancel()
        if writer is not None:
            writer.abort()
        if spill is not None:
            spill.cleanup()
        for tmp in temps:
            tmp.discard()


def encoded_chunks(source, codec):
    """(rows read, codes, kept columns of the rows kept, excluded counts) per chunk. Runs in the prefetch
    thread, so reading and encoding overlap with sampling and writing."""
    import pyarrow as pa

    first = 0
    for table in source.tables(codec.columns):
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


class BackgroundHash:
    """SHA-256 of a file computed in a thread while the main pass runs (hashlib releases the GIL)."""

    def __init__(self, path):
        import threading

        from ..io.atomic import sha256_file
        from ..tasks import TaskControl

        self._stop = threading.Event()
        self._value: list = []
        control = TaskControl(None, self._stop.is_set)

        def work() -> None:
            try:
                self._value.append(sha256_file(path, control))
            except BaseException as exc:
                self._value.append(exc)

        self._thread = threading.Thread(target=work, name="optrr-hash", daemon=True)
        self._thread.start()

    def result(self) -> str:
        self._thread.join()
        value = self._value[0]
        if isinstance(value, BaseException):
            raise value
        return value

    def cancel(self) -> None:
        self._stop.set()
        self._thread.join()
