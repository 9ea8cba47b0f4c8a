"""``optrr perturb INPUT --config release.json -o OUTPUT``: write a release, its manifest and report."""

from __future__ import annotations

import argparse
import os
import sys
import time


class ProgressBar:
    """A text progress bar on stderr (redrawn in place on a terminal, a line per 10% otherwise)."""

    def __init__(self, stream=None, width: int = 30, enabled: bool = True):
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1.0
        self._shown = 0.0
        self._drawn = False

    def __call__(self, fraction: float, message: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if now - self._shown < 0.1 and fraction < 1.0:
                return
            filled = int(round(self.width * fraction))
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[{bar}] {100 * fraction:5.1f}% {message[:50]:<50}")
            self._drawn = True
        elif int(fraction * 10) > int(self._last * 10) or self._last < 0:
            self.stream.write(f"[{100 * fraction:5.1f}%] {message}\n")
            self._last = fraction
        self._shown = now
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def add_reader_arguments(p) -> None:
    p.add_argument("--delimiter", help="field delimiter of a text file (detected by default; 'tab' for tabs)")
    p.add_argument("--encoding", help="text encoding, e.g. utf-8, cp1252, latin-1 (detected by default)")
    p.add_argument("--decimal", choices=[".", ","], help="decimal mark of numbers in a text file (detected)")
    p.add_argument("--sheet", help="Excel sheet name or 0-based number (default: the first sheet)")
    p.add_argument(
        "--skip-rows",
        metavar="N",
        help="lines of a text file (rows of an Excel sheet) above the header row, such as title lines (default 0); "
        "a first line sep=; (Excel's delimiter hint) is skipped on its own",
    )


def reader_options(args):
    """The reader options given on the command line (``--skip-rows`` checked by the reader, as a configuration's)."""
    from ..io.readers import ReaderOptions

    return ReaderOptions(
        delimiter=args.delimiter,
        encoding=args.encoding,
        decimal=args.decimal,
        sheet=args.sheet,
        skip_rows=args.skip_rows,
    )


def add_parser(sub):
    from ..release.schema import KEPT_UNIQUE_SHARE, RARE_COUNT

    p = sub.add_parser("perturb", help="randomize a data file into a release (+ manifest and HTML report)")
    p.add_argument("input", metavar="INPUT", help="data file: .csv .tsv .txt .xlsx .parquet .sav .dta")
    p.add_argument("--config", required=True, help="release configuration JSON (make one with optrr schema)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="release file to write")
    p.add_argument(
        "--key-file",
        metavar="KEY",
        help="secret key from optrr keygen: the key holder can reproduce the release (default: OS randomness)",
    )
    # TESTS ONLY, hidden: a small seed anyone can find; accepted only with OPTRR_DEVELOPER=1 (marked NOT PRIVATE)
    p.add_argument("--insecure-test-seed", type=int, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--seed", help=argparse.SUPPRESS)
    p.add_argument(
        "--force", action="store_true", help="replace existing output files (never an input, a key or the audit record)"
    )
    p.add_argument(
        "--allow-repeat", action="store_true", help="release data that was released before (epsilons add up)"
    )
    p.add_argument(
        "--audit-dir",
        metavar="DIR",
        help="folder of the internal audit record optrr-audit.json and the internal reports (default: "
        "$OPTRR_AUDIT_DIR, else the per-user data folder OptRR/audit; never a folder you send)",
    )
    p.add_argument("--no-shuffle", action="store_true", help="keep the input's record order")
    p.add_argument(
        "--allow-flagged-kept",
        action="store_true",
        help="publish kept columns that optrr schema proposed to drop (likely identifiers, free text), or where "
        f"more than {KEPT_UNIQUE_SHARE * 100:g}%% of the released rows hold a value no other row has (a linkage key), "
        "or with a value fewer than 5 rows hold, as they are; also approves the kept columns together when that many "
        "rows hold a combination of their values no other row has",
    )
    p.add_argument(
        "--allow-rare-categories",
        action="store_true",
        help=f"release categories of fewer than {RARE_COUNT} rows by name (the codebook discloses that they exist)",
    )
    p.add_argument("--format", choices=["csv", "parquet", "xlsx", "sav", "dta"], help="output format")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.add_argument(
        "--allow-unidentifiable",
        action="store_true",
        help="release even when a marginal listed in needed_marginals cannot be estimated from the design",
    )
    add_reader_arguments(p)
    return p


def check_output_name(args) -> None:
    """Refuse, before any work, an output name whose extension OptRR's readers cannot read back (``optrr estimate``
    and the other commands choose the reader by extension). An output that is the run's own input, configuration,
    key file or audit record is left to :func:`check_never_overwritten`, whose refusal to overwrite it says more."""
    from ..errors import InputError
    from ..io.atomic import same_file
    from ..io.formats import EXTENSIONS, extension, known_format
    from ..release.audit import audit_folder, audit_path

    output = args.output
    if known_format(output) is None:
        ours = [args.input, args.config, args.key_file]
        try:
            ours.append(audit_path(audit_folder(args.audit_dir)))
        except InputError:
            pass  # no audit folder: said by perturb_file
        if any(same_file(output, path) for path in filter(None, ours)):
            return  # the engine's more specific "would overwrite" refusal follows
        ext = extension(output)
        what = f"ends in {ext}, which OptRR cannot read back" if ext else "has no extension"
        raise InputError(f"output {output}: the name {what}; end it in one of {' '.join(sorted(EXTENSIONS))}")


def check_never_overwritten(args) -> None:
    """Refuse, before any work, a release, manifest or report name that the rule of every command refuses
    (:func:`.common.check_new_file`): an existing file without --force and, even with it, the input, the
    configuration, the key file, the audit record or a file holding a key or an audit record. perturb_file checks
    the same files again (and the internal report) when it starts writing."""
    from ..release.manifest import manifest_path, report_path
    from .common import check_new_file

    reads = [(args.input, "input file"), (args.config, "configuration"), (args.key_file, "key file")]
    outputs = ((args.output, "output"), (manifest_path(args.output), "manifest"), (report_path(args.output), "report"))
    for path, what in outputs:
        check_new_file(path, what, args.force, reads, args.audit_dir)


def early_config(args):
    """The configuration for the checks made before any work, or None when it cannot be read (perturb_file then
    says what is wrong with it, in its order of checks)."""
    from ..errors import InputError
    from ..release.config import load_config

    try:
        return load_config(args.config)
    except InputError:
        return None


def check_excel_rows(args, cfg) -> None:
    """Refuse, before any work, an Excel release of an input that the configuration ``cfg`` (``source.rows``, counted
    by ``optrr schema`` for a file of the same name) shows to have more data rows than a sheet holds, unless rows may
    be left out (``missing: exclude``). The writer checks the rows actually written in any case."""
    from ..errors import InputError
    from ..io.formats import known_format
    from ..io.writers import XLSX_MAX_ROWS

    out_format = str(args.format).lower() if args.format else known_format(args.output)
    if cfg is None or out_format != "xlsx":
        return
    source = cfg.source or {}
    rows = source.get("rows")
    same_file = source.get("file") == os.path.basename(os.fspath(args.input))
    if not (same_file and isinstance(rows, int) and rows > XLSX_MAX_ROWS):
        return
    if any(c.missing == "exclude" for c in cfg.perturbed()):
        return
    raise InputError(
        f"{source['file']} has {rows:,} data rows (source.rows of {os.path.basename(args.config)}); an Excel sheet "
        f"holds at most {XLSX_MAX_ROWS:,}: write the release as csv or parquet"
    )


def check_flagged_kept(args, cfg) -> None:
    """Refuse, before any work, kept columns of ``cfg`` (copied unchanged, in the clear) that ``optrr schema``
    proposed to drop (a likely identifier or free text: the reason is in the column's warnings), unless
    --allow-flagged-kept: such a column's values would be published as they are (the window asks for the same with
    its tick). Kept columns with values unique to one row in many rows or with values of fewer than 5 rows, and kept
    columns whose combination of values is unique in many rows, are refused by perturb_file after its pass (the same
    flag allows them: it passes allow_flagged_kept=True)."""
    from ..errors import InputError
    from ..release.schema import drop_reason

    if cfg is None or args.allow_flagged_kept:
        return
    flagged = [(c.name, r) for c in cfg.kept() for r in (drop_reason(str(w)) for w in c.warnings) if r]
    if flagged:
        named = "; ".join(f"{name!r} ({reason})" for name, reason in flagged)
        raise InputError(
            f"kept column(s) that optrr schema proposed to drop would be published as they are, in the clear: {named}; "
            "drop or perturb them, or give --allow-flagged-kept if publishing their values is intended"
        )


def print_repeat(ledger: list, record: str) -> None:
    """After a repeat release (``--allow-repeat``; ``ledger``: every release of the same data, this one last), say on
    stderr the accumulated whole-record epsilon over those releases (sum: basic composition)."""
    from ..release.audit import ACCUMULATED_NOTE, accumulated_epsilon

    if len(ledger) > 1:
        print(
            f"optrr: warning: this data has now been released {len(ledger)} times; accumulated whole-record epsilon "
            f"{accumulated_epsilon(ledger):.6g} ({ACCUMULATED_NOTE}; the privacy ledger is in {record})",
            file=sys.stderr,
        )


def run(args) -> int:
    from ..errors import InputError
    from ..io.atomic import is_within, same_file
    from ..release.audit import audit_folder, audit_path
    from ..release.manifest import manifest_path, noise_attributes, report_path
    from ..release.perturb import order_runs_warning, perturb_file
    from ..release.randomness import (
        DEVELOPER_ENV,
        NOT_PRIVATE_COLUMN,
        developer_mode,
        key_file_is_shared,
        read_key_file,
    )
    from ..release.risk import strength, weak_protection_warnings
    from ..release.schema import rows_text
    from ..utility.release_check import check_release, release_rows_notes
    from .interrupts import hold

    check_output_name(args)
    check_never_overwritten(args)
    cfg = early_config(args)
    check_excel_rows(args, cfg)
    check_flagged_kept(args, cfg)
    if args.seed is not None:
        raise InputError(
            "--seed is not accepted: a release made from a small seed can be undone by trying seeds; use "
            "--key-file (reproducible by the key holder, make one with optrr keygen) or no option (OS randomness)"
        )
    if args.insecure_test_seed is not None and not developer_mode():
        raise InputError(
            f"--insecure-test-seed is for OptRR's developers and tests only (it needs {DEVELOPER_ENV}=1); a release "
            "uses OS randomness (default) or --key-file"
        )
    # read once, here: not a key file at all says so before how its permissions are set, and the release uses
    # this key (the file is not read again)
    key = read_key_file(args.key_file) if args.key_file else None
    if args.key_file and key_file_is_shared(args.key_file):
        print(f"optrr: warning: key file {args.key_file} can be read by other users; chmod 600 it", file=sys.stderr)
    if args.insecure_test_seed is not None:
        print(
            "optrr: warning: --insecure-test-seed makes a release that is NOT PRIVATE (anyone can undo it); "
            "for tests only",
            file=sys.stderr,
        )
    new_record = not os.path.exists(audit_path(audit_folder(args.audit_dir)))
    bar = ProgressBar(enabled=not args.quiet)
    try:
        made = perturb_file(
            args.input,
            args.config,
            args.output,
            key=key,
            key_path=args.key_file,
            insecure_test_seed=args.insecure_test_seed,
            shuffle=not args.no_shuffle,
            output_format=args.format,
            force=args.force,
            allow_repeat=args.allow_repeat,
            allow_rare_categories=args.allow_rare_categories,
            allow_flagged_kept=args.allow_flagged_kept,
            audit_dir=args.audit_dir,
            progress=bar,
            reader_options=reader_options(args),
            design_check=lambda mech, names, cfg: check_release(
                mech, names, cfg.needed_marginals, args.allow_unidentifiable or cfg.allow_unidentifiable
            ),
            rows_check=release_rows_notes,
            at_commit=hold,
        )
    finally:
        bar.close()
    manifest = made.manifest
    for note in manifest["design"]["notes"]:
        print(f"optrr: note: {note}", file=sys.stderr)
    for line in made.audit_entry.get("config_warnings") or []:  # the configuration's, never in the manifest
        print(f"optrr: warning: {line} (said here and in the internal report, never to the recipient)", file=sys.stderr)
    runs = order_runs_warning(made.audit_entry.get("order_in_runs") or [])
    if runs:
        print(f"optrr: warning: {runs} (said here and in the internal report, never to the recipient)", file=sys.stderr)
    for line in weak_protection_warnings(manifest):
        print(f"optrr: warning: {line}", file=sys.stderr)
    attrs = manifest["attributes"]
    noise = noise_attributes(attrs)
    if noise:
        print(
            f"optrr: warning: released as pure noise (epsilon 0; no needed table uses them): {', '.join(noise)}; "
            "nothing can be learned from them: drop them, or name tables that need them (needed_marginals)",
            file=sys.stderr,
        )
    if manifest["kept_columns"]:
        kept = ", ".join(manifest["kept_columns"])
        print(f"optrr: warning: columns copied unchanged, without privacy protection: {kept}", file=sys.stderr)
    if not manifest["randomness"]["private"]:
        print(
            f"optrr: warning: this release is NOT PRIVATE (test seed; its first column {NOT_PRIVATE_COLUMN} says "
            "so); never share it",
            file=sys.stderr,
        )
    folder = audit_folder(args.audit_dir)
    release_folder = os.path.dirname(os.path.abspath(args.output))
    if is_within(folder, release_folder):
        where = "in the release's folder" if same_file(folder, release_folder) else "inside the release's folder"
        print(
            f"optrr: warning: the internal audit record and report are {where} ({folder}); never send them "
            "(optrr-audit.json, *.internal-report.html; a zip of the release's folder would hold them) - use "
            "--audit-dir to keep them elsewhere",
            file=sys.stderr,
        )
    print_repeat(made.ledger, audit_path(folder))
    if new_record:  # a reviewer's fourth release of one file went unnoticed with a fresh --audit-dir
        print(
            f"optrr: note: a new audit record was started in {folder}: repeats are recognised, and epsilons added "
            "up, only among the releases recorded there; give every release of this data the same --audit-dir",
            file=sys.stderr,
        )
    skipped = made.audit_entry.get("empty_rows_skipped")
    if skipped:
        print(f"optrr: note: {skipped:,} rows with every cell empty were skipped (not records)", file=sys.stderr)
    excluding = {c["name"] for c in manifest.get("codebook", []) if c.get("missing") == "exclude"}
    for name, cells in (made.audit_entry.get("unlisted_values_as_missing") or {}).items():
        what = "were treated as missing: their rows were left out" if name in excluding else "were released as missing"
        print(
            f"optrr: note: column {name!r}: {cells:,} cell(s) that are not numbers and not listed in its categories "
            f"{what}",
            file=sys.stderr,
        )
    if not args.quiet:
        randomness = {"os-entropy": "OS randomness", "secret-key": "keyed (reproducible with the key)"}.get(
            manifest["randomness"]["source"], "TEST SEED: NOT PRIVATE"
        )
        print(
            f"released {rows_text(manifest['rows'])} x {len(manifest['attributes'])} "
            f"randomized column{'s' if len(manifest['attributes']) != 1 else ''} to {args.output}\n"
            f"whole-record epsilon {manifest['overall_epsilon']:.6g} ({strength(manifest['overall_epsilon'])}; method "
            f"{manifest['design']['method']}); "
            f"{'shuffled' if manifest['shuffled'] else 'input order'}; {randomness}\n"
            f"send:     {args.output}, {manifest_path(args.output)}, {report_path(args.output)}\n"
            f"keep:     {audit_path(folder)}, {made.audit_entry['files']['internal_report']}"
        )
    return 0
