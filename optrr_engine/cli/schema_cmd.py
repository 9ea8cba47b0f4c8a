"""``optrr schema INPUT -o release.json``: a release-configuration template from one pass over the file."""

from __future__ import annotations

import sys

from .perturb_cmd import ProgressBar, add_reader_arguments, reader_options


def add_parser(sub):
    p = sub.add_parser("schema", help="write a release configuration template for a data file")
    p.add_argument("input", metavar="INPUT", help="data file: .csv .tsv .txt .xlsx .parquet .sav .dta")
    p.add_argument("-o", "--output", required=True, metavar="CONFIG", help="release configuration JSON to write")
    p.add_argument(
        "--force", action="store_true", help="replace CONFIG if it exists (never an input, a key or the audit record)"
    )
    p.add_argument(
        "--codebook",
        metavar="DICT",
        help="data dictionary declaring categories (CSV/JSON column,category list, or SPSS/Stata value labels)",
    )
    p.add_argument(
        "--merge-rare",
        action="store_true",
        help="merge the rare categories of perturbed columns (their warnings name them): nominal ones into 'Other' "
        "(named after the smallest others, 'Male or other', when they must join it for enough rows), ordinal ones "
        "into a neighbour (written to CONFIG as recode)",
    )
    p.add_argument(
        "--epsilon-per-column",
        action="store_true",
        help="start with epsilon 1 per perturbed column and no whole-record target (the whole-record epsilon is then "
        "about their sum); by default they share a whole-record epsilon of 3 (target_total), as in the window",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no column summary")
    add_reader_arguments(p)
    return p


def run(args) -> int:
    from ..release.config import save_config, with_safe_start
    from ..release.merge_rare import merge_rare, stats_rows
    from ..release.schema import infer_schema

    check_output(args)
    bar = ProgressBar(enabled=not args.quiet)
    stats: dict = {}
    try:
        cfg = infer_schema(args.input, reader_options(args), progress=bar, codebook=args.codebook, column_stats=stats)
    finally:
        bar.close()
    merged = merge_rare(cfg, stats_rows(cfg, stats)) if args.merge_rare else None
    if merged is not None:
        cfg = merged.config
    if not args.epsilon_per_column:
        cfg = with_safe_start(cfg)
    check_output(args)  # again: a file may have appeared there during a long pass
    save_config(cfg, args.output)
    skipped = (cfg.source or {}).get("empty_rows_skipped")
    if skipped:
        print(f"optrr: note: {skipped:,} rows with every cell empty were skipped (not records)", file=sys.stderr)
    unreleasable = nothing_released(cfg, args.output)
    if unreleasable:
        print(f"optrr: warning: {unreleasable}", file=sys.stderr)
    if not args.quiet:
        print_summary(cfg)
        if merged is not None:
            print(merge_summary(merged))
        else:
            rare_line = rare_summary(cfg)
            if rare_line:
                print(rare_line)
        if unreleasable:
            print(f"wrote {args.output}")
        else:
            start = (
                "edit roles, epsilons (or a whole-record target_total) and categories"
                if args.epsilon_per_column
                else f"the perturbed columns share a whole-record epsilon of {cfg.target_total:g} (target_total; "
                "remove it for epsilon per column); edit roles, weights, target_total and categories"
            )
            print(
                f"wrote {args.output}: {start}; then "
                f"`optrr design --config {args.output} -o designed.json` (the recommended design) and optrr perturb"
            )
    return 0


def check_output(args) -> None:
    """Refuse CONFIG when it exists (without --force) or, even with --force, when it is the input, the data
    dictionary, the audit record or a key file (:func:`.common.check_new_file`)."""
    from .common import check_new_file

    reads = [(args.input, "input file"), (args.codebook, "data dictionary (--codebook)")]
    check_new_file(args.output, "configuration", args.force, reads)


def nothing_released(cfg, output) -> str | None:
    """Why nothing can be released with the template ``cfg`` as written to ``output`` (no column is randomized),
    else None: one data row (every column holds a single value, nothing to randomize, whatever the roles), or no
    column proposed for randomizing (the notes say why; roles can be changed)."""
    from ..release.schema import too_few_rows

    if cfg.perturbed():
        return None
    source = cfg.source or {}
    rows, name = source.get("rows"), source.get("file") or "the file"
    few = too_few_rows(rows, name) if isinstance(rows, int) else None
    if few:
        return f"{few}; every column was dropped"
    return (
        f"nothing can be released yet: every column of {name} was dropped (their notes say why); give at least one "
        f"column the role perturb in {output} before optrr design and optrr perturb"
    )


def category_count(c) -> str:
    """The summary's count of a column's released categories, every column counted alike (its missing-value
    category included when listed); a binned numeric column's bins said: "4 bins", or "5 (4 bins)" with a category
    listed beside them (a text such as 'unknown', its missing-value category)."""
    if c.type == "numeric" and c.bins:
        bins, extra = len(c.bins["edges"]) - 1, len(c.categories or [])
        return f"{bins + extra} ({bins} bins)" if extra else f"{bins} bins"
    return str(len(c.categories)) if c.categories else "-"


def print_summary(cfg, stream=None) -> None:
    stream = stream or sys.stdout
    print(f"{'column':<24} {'role':<8} {'type':<8} {'categories':>13}  notes", file=stream)
    for c in cfg.columns:
        note = "; ".join(c.warnings)
        print(f"{c.name[:24]:<24} {c.role:<8} {c.type:<8} {category_count(c):>13}  {note}", file=stream)


def rare_summary(cfg) -> str:
    """Without --merge-rare: the line naming the perturbed columns with rare categories, which perturb refuses as
    written after its whole pass ("" when none)."""
    from ..release.schema import rare_warned

    rare = [c.name for c in cfg.columns if rare_warned(c)]
    if not rare:
        return ""
    names = ", ".join(repr(n) for n in rare)
    return (
        f"rare categories in {len(rare)} column{'s' if len(rare) != 1 else ''} ({names}; see their notes): perturb "
        "refuses them as written, after reading the whole file; optrr schema --merge-rare merges those it can, or "
        "drop the column, or give perturb --allow-rare-categories if publishing their existence is intended"
    )


def merge_summary(merged) -> str:
    """The line saying how many columns --merge-rare merged and which still have rare categories."""
    count = len(merged.merged)
    done = f"merged rare categories in {count} column{'s' if count != 1 else ''}"
    if not merged.still_rare:
        return f"{done}; no rare categories left"
    left = ", ".join(repr(n) for n in merged.still_rare)
    return (
        f"{done}; rare categories left in {len(merged.still_rare)} column{'s' if len(merged.still_rare) != 1 else ''}"
        f" ({left}; see their notes): drop them, or give perturb --allow-rare-categories if publishing their "
        "existence is intended"
    )
