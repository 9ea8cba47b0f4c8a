"""``optrr perturb INPUT --config release.json -o OUTPUT``: write a release, its manifest and report."""

from __future__ import annotations

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


def reader_options(args):
    from ..io.readers import ReaderOptions

    return ReaderOptions(delimiter=args.delimiter, encoding=args.encoding, decimal=args.decimal, sheet=args.sheet)


def add_parser(sub):
    p = sub.add_parser("perturb", help="randomize a data file into a release (+ manifest and HTML report)")
    p.add_argument("input", metavar="INPUT", help="data file: .csv .tsv .txt .xlsx .parquet .sav .dta")
    p.add_argument("--config", required=True, help="release configuration JSON (make one with optrr schema)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="release file to write")
    p.add_argument("--seed", type=int, help="fixed random seed (reproducible release; default: OS randomness)")
    p.add_argument("--keep-seed", action="store_true", help="write the seed into the manifest")
    p.add_argument("--no-shuffle", action="store_true", help="keep the input's record order")
    p.add_argument("--format", choices=["csv", "parquet", "xlsx", "sav", "dta"], help="output format")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.add_argument(
        "--allow-unidentifiable",
        action="store_true",
        help="release even when a marginal listed in needed_marginals cannot be estimated from the design",
    )
    add_reader_arguments(p)
    return p


def run(args) -> int:
    from ..release.manifest import manifest_path, report_path
    from ..release.perturb import perturb_file
    from ..utility.release_check import check_release

    bar = ProgressBar(enabled=not args.quiet)
    try:
        manifest = perturb_file(
            args.input,
            args.config,
            args.output,
            seed=args.seed,
            shuffle=not args.no_shuffle,
            output_format=args.format,
            keep_seed_in_manifest=args.keep_seed,
            progress=bar,
            reader_options=reader_options(args),
            design_check=lambda mech, names, cfg: check_release(
                mech, names, cfg.needed_marginals, args.allow_unidentifiable or cfg.allow_unidentifiable
            ),
        )
    finally:
        bar.close()
    for note in manifest["design"]["notes"]:
        print(f"optrr: note: {note}", file=sys.stderr)
    if manifest["kept_columns"]:
        kept = ", ".join(manifest["kept_columns"])
        print(f"optrr: warning: columns copied unchanged, without privacy protection: {kept}", file=sys.stderr)
    if manifest["rows_excluded"]:
        print(f"optrr: note: {manifest['rows_excluded']:,} rows with missing values were left out", file=sys.stderr)
    if not args.quiet:
        print(
            f"released {manifest['rows']:,} rows x {len(manifest['attributes'])} randomized columns to {args.output}\n"
            f"whole-record epsilon {manifest['overall_epsilon']:.6g} (method {manifest['design']['method']}); "
            f"{'shuffled' if manifest['shuffled'] else 'input order'}; "
            f"{'fixed seed' if manifest['seeded'] else 'OS randomness'}\n"
            f"manifest: {manifest_path(args.output)}\nreport:   {report_path(args.output)}"
        )
    return 0
