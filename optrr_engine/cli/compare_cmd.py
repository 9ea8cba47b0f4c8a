"""``optrr compare``: the comparison harness (papers' figures and the AVD table), written as CSV, PNG and SVG.

Figures are drawn by the installed figure renderer (``optrr_engine.compare.figures.render``: the GUI package's
pyqtgraph one, offscreen), the same that draws the Compare tab."""

from __future__ import annotations

import os

from ..errors import InputError


def add_parser(sub):
    p = sub.add_parser("compare", help="reproduce the papers' comparisons (CSV, PNG and SVG out)")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    common = {
        "--out": {"default": ".", "help": "output folder (default: current folder)"},
        "--seed": {"type": int, "help": "fix the random seed (default: fresh OS entropy)"},
        "--force": {"action": "store_true", "help": "replace files of an earlier run in --out (never an input)"},
    }

    def add(name, help_text):
        q = kinds.add_parser(name, help=help_text)
        for flag, kw in common.items():
            q.add_argument(flag, **kw)
        q.add_argument("--csv", action="store_true", help="write CSV (default: CSV and PNG)")
        q.add_argument("--png", action="store_true", help="write PNG figures (default: CSV and PNG)")
        q.add_argument("--svg", action="store_true", help="write SVG figures (vector; default: CSV and PNG)")
        return q

    q = add("ratios", "Yamamoto & Shibuya Figs. 1-4: eps_total / sum eps_i of Kronecker, optimal, heuristic")
    q.add_argument("--mode", default="fixed_sizes", help="fixed_sizes (Figs. 1-2) or fixed_epsilons (Figs. 3-4)")
    q.add_argument("--ks", default="3,5,7,10", help="numbers of attributes (default 3,5,7,10)")
    q.add_argument("--sets", type=int, default=200, help="random cases per k (default 200, as the paper)")
    q = add("snp-chi2", "Yamamoto & Shibuya Fig. 5: chi-square error vs number of SNPs")
    q.add_argument("--ks", default="10,20,30,40,50,60,70,80,90,100", help="numbers of SNPs")
    q.add_argument("--runs", type=int, default=10, help="runs per k (default 10)")
    q.add_argument("--people", type=int, default=1000, help="people N (2N alleles; default 1000)")
    q.add_argument("--methods", default="kronecker,heuristic", help="designs (default kronecker,heuristic)")
    q.add_argument("--target", type=float, help="whole-record epsilon (default: the heuristic's at eps_i = w_i)")
    q = add("count-queries", "Domingo-Ferrer & Soria-Comas Fig. 3: relative error of count queries vs coverage")
    q.add_argument("--data", required=True, help="CSV data set (columns become categorical attributes)")
    q.add_argument("--ps", default="0.1,0.3,0.5,0.7", help="randomization levels p (default 0.1,0.3,0.5,0.7)")
    q.add_argument("--sigmas", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", help="domain coverages")
    q.add_argument("--runs", type=int, default=50, help="runs (the paper used 1000; default 50)")
    q.add_argument("--tv", type=float, default=50, help="RR-Clusters: max value combinations per cluster (50)")
    q.add_argument("--td", type=float, default=0.1, help="RR-Clusters: min dependence to merge (0.1)")
    q.add_argument("--optimized", default="auto", help="optimized design for our method (default auto)")
    q = add("avd", "AVD and R-squared of 2- to 5-way marginals: designs and Bloom-filter schemes (LOPUB, LOCOP, BRR)")
    q.add_argument("--data", required=True, help="CSV data set (columns become categorical attributes)")
    q.add_argument("--target", type=float, help="one whole-record epsilon")
    q.add_argument("--per-attribute", type=float, help="whole-record epsilon = this times the number of attributes")
    q.add_argument("--epsilons", help="several epsilons on the axes of --axis, e.g. 0.1,0.4,0.7,1")
    q.add_argument(
        "--axis",
        default="both",
        help="with --epsilons: per-attribute (the LOPUB/LOCOP/BRR paper's axis), whole-record (OptRR's) or both",
    )
    q.add_argument(
        "--methods",
        help="designs (default: every design method), utility, rr_clusters, rr_clusters_optimized, and the "
        "Bloom-filter schemes lasso, lopub, locop, brr",
    )
    q.add_argument("--ways", default="2,3,4,5", help="marginal sizes (default 2,3,4,5)")
    q.add_argument("--subsets", type=int, default=100, help="random attribute subsets per size (default 100)")
    q.add_argument("--repetitions", type=int, default=1, help="perturbations per design (default 1)")
    q.add_argument("--estimator", default="clip", help="designs' estimator: clip (default), ibu or map")
    return p


def _ints(text, what):
    from .common import parse_list

    return parse_list(text, int, what)


def _floats(text, what):
    from .common import parse_list

    return parse_list(text, float, what)


def _names(text):
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise InputError(f"could not read the list {text!r}")
    return items


def _methods(text, extra=()):
    """Design names, each one of optrr_engine.designs.METHODS (or ``extra``)."""
    from ..designs import METHODS

    known = tuple(METHODS) + tuple(extra)
    names = _names(text)
    bad = [m for m in names if m not in known]
    if bad:
        raise InputError(f"unknown method {bad[0]!r}; choose from {', '.join(known)}")
    return names


def _target(value, what):
    from ..validation import check_target

    if value is None:
        return None
    try:
        return check_target(value)
    except InputError:
        raise InputError(f"{what} is {value}; it must be a finite positive number") from None


def _positive(value, what):
    if value is None or value < 1:
        raise InputError(f"{what} must be at least 1")
    return value


class OutputFiles:
    """The files one comparison writes in --out, by name: :meth:`plan` checks them all before the work and
    :meth:`path` each again as it is written, by the rule of every command (:func:`.common.check_new_file`: none
    replaced without --force, never the --data file, the audit record or a key file). A missing --out folder is
    created by the writers (``write_atomic``)."""

    def __init__(self, args, want_csv: bool, formats: list[str]):
        self.args = args
        self.want_csv = want_csv
        self.formats = formats
        self.names: set[str] = set()

    def plan(self, csv_stems=(), figure_stems=()) -> None:
        """The CSV files ``STEM.csv`` (when CSV is wanted) and the figures ``STEM.FORMAT`` that the run writes."""
        names = [f"{stem}.csv" for stem in csv_stems if self.want_csv]
        names += [f"{stem}.{fmt}" for stem in figure_stems for fmt in self.formats]
        self.names.update(names)
        for name in names:
            self._check(os.path.join(self.args.out, name))

    def path(self, name: str) -> str:
        """The path of the planned file ``name``, checked again (a file may have appeared during the work)."""
        if name not in self.names:
            raise AssertionError(f"{name} was not planned")  # programming error: plan() lists every file
        return self._check(os.path.join(self.args.out, name))

    def _check(self, path: str) -> str:
        from .common import check_new_file

        if not os.path.isdir(self.args.out):
            return path  # nothing there yet
        data = getattr(self.args, "data", None)
        way_out = "choose another --out folder"
        return check_new_file(path, "output", self.args.force, [(data, "data file (--data)")], way_out=way_out)


def run(args) -> int:
    import pandas as pd

    with pd.option_context("display.width", 160, "display.max_columns", 30):
        return _run(args)


def _run(args) -> int:
    from ..compare import output

    if not getattr(args, "kind", None):
        raise InputError("choose what to compare: ratios, snp-chi2, count-queries or avd")
    both = not (args.csv or args.png or args.svg)
    want_csv = args.csv or both
    formats = [fmt for fmt, wanted in (("png", args.png or both), ("svg", args.svg)) if wanted]
    seed_note = f"seed {args.seed} (fixed)" if args.seed is not None else "seed: fresh OS entropy (not reproducible)"
    written: list[str] = []
    files = OutputFiles(args, want_csv, formats)
    out = files.path

    if args.kind == "ratios":
        from ..compare import ratio_curves
        from ..compare.ratios import MODES

        if args.mode not in MODES:
            raise InputError(f"mode must be one of {', '.join(MODES)}")
        ks = _ints(args.ks, "k")
        if any(k < 2 or k > 16 for k in ks):
            raise InputError("each k must be between 2 and 16 (the exact LP is needed for the optimum)")
        sets = _positive(args.sets, "--sets")
        stem = f"ratios_{args.mode}"
        files.plan([stem], [f"{stem}_to_sum", f"{stem}_heuristic_to_optimal"])
        frame = ratio_curves(ks, sets, args.mode, seed=args.seed)
        if want_csv:
            written.append(output.write_csv(frame, out(stem + ".csv")))
        for fmt in formats:
            written.append(output.plot_ratios(frame, out(f"{stem}_to_sum.{fmt}"), "ratio_to_sum"))
            written.append(output.plot_ratios(frame, out(f"{stem}_heuristic_to_optimal.{fmt}"), "ratio_to_optimal"))
        print(frame.groupby(["k", "method"])["ratio_to_sum"].mean().unstack().round(4).to_string())
    elif args.kind == "snp-chi2":
        from ..compare import snp_chi2_curve, summarize_snp

        request = (
            _ints(args.ks, "k"),
            _positive(args.runs, "--runs"),
            _positive(args.people, "--people"),
            _methods(args.methods),
            _target(args.target, "--target"),
        )
        files.plan(["snp_chi2_runs", "snp_chi2_summary"], ["snp_chi2"])
        frame = snp_chi2_curve(*request, seed=args.seed)
        summary = summarize_snp(frame)
        if want_csv:
            written.append(output.write_csv(frame, out("snp_chi2_runs.csv")))
            written.append(output.write_csv(summary, out("snp_chi2_summary.csv")))
        for fmt in formats:
            written.append(output.plot_snp(summary, out(f"snp_chi2.{fmt}")))
        print(summary.pivot_table(index="k", columns=["method", "estimator"], values="mean_abs_error").round(2))
    elif args.kind == "count-queries":
        from ..compare import count_query_errors, load_dataset

        _methods(args.optimized)
        data = load_dataset(args.data)
        ps, sigmas, runs = _floats(args.ps, "p"), _floats(args.sigmas, "sigma"), _positive(args.runs, "--runs")
        files.plan([f"count_queries_{data.name}_all", f"count_queries_{data.name}"], [f"count_queries_{data.name}"])
        queries, summary, info = count_query_errors(
            data, ps, sigmas, runs, args.tv, args.td, optimized_method=args.optimized, seed=args.seed
        )
        if want_csv:
            written.append(output.write_csv(queries, out(f"count_queries_{data.name}_all.csv")))
            written.append(output.write_csv(summary, out(f"count_queries_{data.name}.csv")))
        for fmt in formats:
            written.append(output.plot_count_queries(summary, out(f"count_queries_{data.name}.{fmt}")))
        for item in info:
            if "clusters" in item:
                print(
                    f"p = {item['p']}: clusters (chosen from the raw data, outside the guarantee): {item['clusters']}"
                )
        print(summary.pivot_table(index=["p", "sigma"], columns="method", values="median_relative_error").round(4))
    elif args.kind == "avd":
        _run_avd(args, files, written)
    else:
        raise InputError(f"unknown comparison {args.kind!r}")
    print(seed_note)
    for path in written:
        print(f"wrote {path}")
    return 0


AXIS_NAMES: dict[str, tuple[str, ...]] = {"per-attribute": ("per_attribute",), "whole-record": ("whole_record",)}
AXIS_NAMES["both"] = AXIS_NAMES["per-attribute"] + AXIS_NAMES["whole-record"]


def _avd_methods(text):
    from ..compare.avd_marginals import BLOOM_METHODS, CLUSTER_METHODS, UTILITY_METHOD

    return _methods(text, (UTILITY_METHOD, *CLUSTER_METHODS, *BLOOM_METHODS)) if text else None


def _run_avd(args, files: OutputFiles, written: list[str]) -> None:
    from ..compare import avd_sweep, avd_table, load_dataset, output

    out, want_csv, formats = files.path, files.want_csv, files.formats

    given = [v is not None for v in (args.target, args.per_attribute, args.epsilons)]
    if sum(given) != 1:
        raise InputError("give exactly one of --target (whole-record epsilon), --per-attribute or --epsilons")
    _target(args.target, "--target")
    _target(args.per_attribute, "--per-attribute")
    if args.estimator not in ("clip", "ibu", "map"):
        raise InputError("estimator must be clip, ibu or map")
    methods = _avd_methods(args.methods)
    ways = _ints(args.ways, "way")
    subsets, reps = _positive(args.subsets, "--subsets"), _positive(args.repetitions, "--repetitions")
    data = load_dataset(args.data)
    k = len(data.sizes)
    bad = [w for w in ways if not 2 <= w <= k]
    if bad:
        raise InputError(f"--ways {bad[0]}: marginals of 2 to {k} attributes exist ({data.name} has {k} usable)")
    if args.epsilons is None:
        target = args.target if args.target is not None else args.per_attribute * len(data.sizes)
        files.plan([f"avd_{data.name}"], [f"avd_{data.name}"])
        rows, designs = avd_table(data, target, methods, ways, subsets, reps, estimator=args.estimator, seed=args.seed)
        axes: tuple[str, ...] = ("whole_record",)
    else:
        if args.axis not in AXIS_NAMES:
            raise InputError(f"--axis must be one of {', '.join(AXIS_NAMES)}")
        epsilons = _floats(args.epsilons, "epsilon")
        if any(not e > 0 for e in epsilons):
            raise InputError("every epsilon must be positive")
        axes = AXIS_NAMES[args.axis]
        files.plan([f"avd_{data.name}"], [f"{kind}_{data.name}_{axis}" for axis in axes for kind in ("avd", "r2")])
        rows, designs = avd_sweep(
            data, epsilons, axes, methods, ways, subsets, reps, estimator=args.estimator, seed=args.seed
        )
    if want_csv:
        written.append(output.write_csv(rows, out(f"avd_{data.name}.csv")))
    for fmt in formats:
        if args.epsilons is None:
            written.append(output.plot_avd(rows, out(f"avd_{data.name}.{fmt}")))
        else:
            for axis in axes:
                part = rows[rows.epsilon_axis == axis]
                written.append(output.plot_avd_sweep(part, out(f"avd_{data.name}_{axis}.{fmt}"), "mean_avd"))
                written.append(output.plot_avd_sweep(part, out(f"r2_{data.name}_{axis}.{fmt}"), "mean_r2"))
    seen = set()
    for d in designs:
        key = (d["method"], d.get("error", ""), d.get("note", ""))
        if key in seen:
            continue
        seen.add(key)
        if "error" in d:
            print(f"{d['method']}: not run ({d['error']})")
        elif "note" in d:
            print(f"{d['method']}: {d['note']}")
    print(rows.pivot_table(index=["epsilon_axis", "epsilon", "method"], columns="way", values="mean_avd").round(4))
