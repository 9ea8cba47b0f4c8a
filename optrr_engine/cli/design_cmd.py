"""``optrr design``: build a mechanism and report its exact privacy accounting.

The request comes from the command line (--sizes, --epsilons or --target-total with --weights), a spec file
(--spec) or a release configuration (--config: the perturbed columns' names and category counts as ``optrr
perturb`` derives them, their epsilons or weights and target_total, needed_marginals, the method). With --config,
``-o`` writes a new configuration with the chosen design put in, which ``optrr perturb`` releases exactly.
"""

from __future__ import annotations

import sys

from ..errors import InputError
from ..tolerance import eps_equal


def add_parser(sub):
    p = sub.add_parser(
        "design",
        help="design a mechanism for given category counts and epsilons, or for the columns of a release "
        "configuration (--config; -o writes the design into a new one)",
    )
    p.add_argument(
        "--method",
        default=None,
        help="auto (default, or the configuration's method with --config: exact eps_i, best design found, "
        "certified bound; with a whole-record target: the design with the smallest predicted error, recommended "
        'from a ranking in which the row "auto" is what a configuration\'s "method": "auto" releases), kronecker, '
        "optimal, heuristic, family, classes or utility (least predicted error of the unbiased estimates of "
        "--marginals at --target-total); sampling designs (with --target-total): smp, sample-m (with --m) or rsfd",
    )
    p.add_argument("--m", type=int, help="sample-m: the number of attributes each record reports")
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="work budget of --method auto in seconds of this reference machine; deterministic (default 5)",
    )
    p.add_argument("--sizes", help="category counts a_i, comma-separated (e.g. 3,4,2)")
    p.add_argument("--epsilons", help="per-attribute epsilons, comma-separated (lower = more private)")
    p.add_argument("--spec", help="JSON file with 'sizes' and 'epsilons' (or 'weights' and 'target_total')")
    p.add_argument(
        "--config",
        metavar="CONFIG",
        help="release configuration (optrr schema writes it; optrr perturb --config reads it): the perturbed "
        "columns' names and category counts (bins included), their epsilons, or weights and target_total, "
        "needed_marginals, the method (--method overrides it) and the row count optrr schema recorded; instead "
        "of --sizes/--spec/--epsilons/--weights/--target-total",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="NEW_CONFIG",
        help="with --config: write a new configuration, CONFIG with this design put in (the recommended one, or "
        "--method's): its method and mechanism (a sampling design: its method and sample_m), which optrr perturb "
        "--config NEW_CONFIG releases exactly as printed",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace NEW_CONFIG if it exists (never a file read, a key or the audit record)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr while a long design runs")
    p.add_argument("--target-total", type=float, help="whole-record epsilon to meet (budget mode)")
    p.add_argument("--weights", help="relative weights of the attributes in budget mode")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--patterns", action="store_true", help="include pattern_probabilities even for k > 16 (k <= 22)")
    p.add_argument(
        "--with-mechanism",
        action="store_true",
        help='with --json: include the designed mechanism ("mechanism"); a release configuration holding it '
        "releases exactly this design (method utility needs it; --config CONFIG -o NEW_CONFIG writes it in for "
        "you); up to megabytes for many columns",
    )
    from . import design_utility

    design_utility.add_arguments(p)
    return p


def _read_spec(path: str) -> dict:
    from ..io.json_file import read_json

    spec = read_json(path, "spec file")
    if not isinstance(spec, dict) or "sizes" not in spec:
        raise InputError(f"spec file {path} must be a JSON object with 'sizes' and 'epsilons'")
    return spec


#: The options whose answers a release configuration holds itself (--config refuses them): option, attribute.
_CONFIG_ANSWERS = (
    ("--sizes", "sizes"),
    ("--spec", "spec"),
    ("--epsilons", "epsilons"),
    ("--weights", "weights"),
    ("--target-total", "target_total"),
)


def gather(args) -> tuple[list, list | None, list | None, float | None]:
    """(sizes, epsilons, weights, target) of the request. Also sets on ``args``: ``method`` (given, else the
    configuration's, else auto), ``spec_names`` (column names for --prior), ``names`` (column names for the output;
    --config only), ``release_config`` (the --config one, else None) and ``rows_source`` (where the row count of
    the predicted error comes from, when --config answers it or cannot)."""
    from .common import parse_list

    args.spec_names = None  # the spec's column names, for --prior (design_utility.prior); the file is read once
    args.names = None
    args.release_config = None
    args.rows_source = None
    args.shares = args.shares_source = None
    args.marginals_given = args.marginals
    if args.config:
        return _from_config(args)
    if getattr(args, "data", None) is not None:
        raise InputError(
            "--data gives the shares of the file a release configuration describes: use it with --config CONFIG"
        )
    if args.output is not None:
        raise InputError(
            "-o writes a new release configuration with the design put in: give the configuration it starts from "
            "with --config CONFIG (optrr schema writes one) instead of --sizes/--spec"
        )
    args.method = args.method or "auto"
    sizes = epsilons = weights = None
    target = args.target_total
    if args.spec:
        spec = _read_spec(args.spec)
        args.spec_names = spec.get("names")
        sizes = spec.get("sizes")
        epsilons = spec.get("epsilons")
        weights = spec.get("weights")
        target = spec.get("target_total", target)
        if not isinstance(sizes, list) or (epsilons is not None and not isinstance(epsilons, list)):
            raise InputError("spec 'sizes' and 'epsilons' must be JSON lists")
    if args.sizes:
        sizes = parse_list(args.sizes, int, "size")
    if args.epsilons:
        epsilons = parse_list(args.epsilons, float, "epsilon")
    if args.weights:
        weights = parse_list(args.weights, float, "weight")
    if sizes is None:
        raise InputError("give --sizes (or --spec FILE, or --config CONFIG)")
    if epsilons is None and target is None:
        from ..sampling.design import SAMPLING_METHODS

        if args.method in SAMPLING_METHODS:
            raise InputError(f"method {args.method} is defined by a whole-record epsilon: give --target-total")
        raise InputError(
            "give --epsilons (one per attribute), or --target-total (a whole-record epsilon, split by --weights, "
            "equal by default)"
        )
    if epsilons is not None and target is not None:
        raise InputError("give either --epsilons or --target-total, not both")
    if target is not None and weights is None:
        weights = [1.0] * len(sizes)
    return sizes, epsilons, weights, target


def _from_config(args) -> tuple[list, list | None, list | None, float | None]:
    """The request of a release configuration, as ``optrr perturb`` reads it: the perturbed columns' names and
    category counts (its codec's, bins and their extra categories included), their epsilons, or weights and
    target_total; the method unless --method, sample_m unless --m, needed_marginals unless --marginals, and the
    row count optrr schema recorded unless --rows."""
    from ..release.codec import Codec
    from ..release.config import load_config
    from ..release.schema import needs_bins

    given = [option for option, key in _CONFIG_ANSWERS if getattr(args, key) is not None]
    if given:
        raise InputError(
            f"--config {args.config} gives the columns, their category counts and epsilons (or weights and "
            f"target_total) itself: leave out {', '.join(given)} (edit the configuration instead), or leave out "
            "--config"
        )
    cfg = load_config(args.config)
    cfg.check_releasable()
    late = needs_bins(cfg)
    if late:
        raise InputError(
            f"column {late[0].name!r} of {args.config}: its bin edges are computed from the data when it is released, "
            "so its number of categories is not known yet; list the edges in its bins (optrr schema writes them)"
        )
    codec = Codec(cfg)
    names = [str(n) for n in codec.attributes]
    args.release_config = cfg
    args.names = args.spec_names = names
    args.method = args.method or cfg.method
    if args.method == "sample-m" and args.m is None:
        args.m = cfg.sample_m
    if args.marginals is None and cfg.needed_marginals:
        args.marginals = _needed_marginals_text(cfg.needed_marginals, names, args.config)
    _rows_of_config(args, cfg)
    from .design_utility import file_shares

    file_shares(args, cfg, codec)
    if cfg.mechanism is not None:
        print(
            f"optrr: note: {args.config} holds a 'mechanism', which optrr perturb releases as it is; this design is "
            f"made anew with method {args.method}" + (f" and replaces it in {args.output}" if args.output else ""),
            file=sys.stderr,
        )
    sizes = [int(a) for a in codec.sizes]
    cols = cfg.perturbed()
    if cfg.target_total is None:
        return sizes, [float(c.epsilon) for c in cols], None, None
    weights = [float(c.weight if c.weight is not None else 1.0) for c in cols]
    return sizes, None, weights, float(cfg.target_total)


def _needed_marginals_text(needed: list, names: list[str], path: str) -> str:
    """A configuration's needed_marginals (lists of column names) as --marginals text: 1-based indices of the
    perturbed columns, every table ended by ";" (so that "1,2;" is one table, never the orders 1 and 2)."""
    unknown = [n for s in needed for n in s if n not in names]
    if unknown:
        raise InputError(
            f"needed_marginals of {path}: {unknown[0]!r} is not a perturbed column (optrr perturb refuses it too); "
            "remove it from needed_marginals or set its role to perturb"
        )
    return "".join(",".join(str(names.index(n) + 1) for n in s) + ";" for s in needed)


def _rows_of_config(args, cfg) -> None:
    """The rows of the predicted error with --config: --rows, else the data rows optrr schema counted (source.rows),
    else the default, which the output then calls an assumption."""
    if args.rows is not None:
        return
    source = cfg.source or {}
    rows = source.get("rows")
    if isinstance(rows, int) and not isinstance(rows, bool) and rows >= 1:
        args.rows = rows
        args.rows_source = f"the rows of {source.get('file') or 'the data'} counted by optrr schema"
    else:
        args.rows_source = f"an assumption: {args.config} does not record the data's row count; give --rows"


def check_new_config(args) -> None:
    """-o: refuse at once (before a long design) an existing file without --force, and, even with it, a file the
    command reads (the configuration, the prior), the audit record or a key file (:func:`.common.check_new_file`)."""
    if args.output is None:
        if args.force:
            raise InputError("--force applies to -o (the new configuration to write)")
        return
    from .common import check_new_file

    reads = [(args.config, "configuration read (--config)"), (args.prior, "prior read (--prior)")]
    check_new_file(args.output, "configuration", args.force, reads)


def write_config(args, method: str, mechanism=None, sample_m: int | None = None) -> str | None:
    """-o: write the --config configuration with this design put in: ``method``, the ``mechanism`` to release as it
    is (None for a sampling design, which perturb designs from its method, target_total and ``sample_m``), read back
    as optrr perturb reads it, atomically; returns the path (None without -o)."""
    if args.output is None:
        return None
    from ..release.config import ReleaseConfig, save_config

    check_new_config(args)  # again: a file may have appeared there during a long design
    cfg = args.release_config
    cfg.method = method
    cfg.sample_m = sample_m
    cfg.mechanism = None
    if mechanism is not None:
        cfg.set_mechanism(mechanism, method)
    save_config(ReleaseConfig.from_dict(cfg.to_dict()), args.output)
    return args.output


def written_line(args, method: str, mechanism=None, sample_m: int | None = None) -> str:
    """The line saying what -o wrote and the command that releases it."""
    import shlex

    data = ((args.release_config.source or {}).get("file")) or "DATA"
    what = f"method {method}" + (f", sample_m {sample_m}" if sample_m is not None else "")
    what += (
        " and its mechanism (released as it is)"
        if mechanism is not None
        else " (no mechanism: designed by optrr perturb)"
    )
    command = f"optrr perturb {shlex.quote(data)} --config {shlex.quote(args.output)} -o RELEASE"
    line = f"wrote {args.output}: {args.config} with {what}; release it with: {command}"
    from .schema_cmd import rare_summary

    rare = rare_summary(args.release_config)  # said now, not by perturb's refusal after its whole pass
    return f"{line}\nwarning: {rare}" if rare else line


def auto_differs_line(args, out: dict) -> str | None:
    """With a recommendation: the one line saying that a configuration's "method": "auto" releases another row of
    the ranking than the recommended one, and the command that puts the recommendation into a configuration."""
    import shlex

    chosen = out.get("recommended")
    rec = out.get("recommendation") or {}
    if chosen in (None, "auto") or args.output is not None:
        return None
    failed = any(c.get("design") == "auto" and "result" in c for c in rec.get("candidates", []))
    row = 'the row "auto" (which failed here)' if failed else 'the row "auto" of this ranking'
    command = ["optrr", "design", "--config", shlex.quote(args.config) if args.config else "CONFIG"]
    for option, value in (
        ("--marginals", args.marginals_given),
        ("--rows", args.rows if args.rows_source is None else None),
        ("--prior", args.prior),
        ("--caps", args.caps),
        ("--data", args.data),
    ):
        if value is not None:
            command += [option, shlex.quote(str(value))]
    return (
        f'note: a configuration with "method": "auto" releases {row}, not the recommended {chosen} printed below; '
        f"to release {chosen}: {' '.join(command)} -o designed.json"
    )


#: Seconds a design runs before its progress is shown (a quick one prints nothing).
PROGRESS_DELAY = 2.0


class DesignProgress:
    """The progress of a design on stderr, drawn by perturb's :class:`~.perturb_cmd.ProgressBar`, from
    ``PROGRESS_DELAY`` seconds on: then the latest step at once (a timer, as one solver call can last long), and
    every step after it. Disabled by --quiet and --json. ``close()`` ends it before the results are printed."""

    def __init__(self, args) -> None:
        import threading

        from .perturb_cmd import ProgressBar

        self.bar = ProgressBar(enabled=not (args.quiet or args.json))
        self.latest: tuple[float, str] = (0.0, f"designing ({args.method})")
        self.shown = self.closed = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(PROGRESS_DELAY, self._show)
        self.timer.daemon = True
        if self.bar.enabled and PROGRESS_DELAY <= 0:
            self._show()
        elif self.bar.enabled:
            self.timer.start()

    def __call__(self, fraction: float, message: str = "") -> None:
        with self.lock:
            self.latest = (fraction, message)
            if self.shown:
                self.bar(fraction, message)

    def _show(self) -> None:
        with self.lock:
            if self.closed:  # the timer fired while close() ran: nothing more is drawn after it
                return
            self.shown = True
            self.bar(*self.latest)

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.shown, self.closed = False, True
            self.bar.close()


def run(args) -> int:
    from ..designs import METHODS
    from ..sampling import SAMPLING_METHODS
    from ..validation import check_seconds, check_sizes

    gathered = gather(args)
    if args.caps and gathered[3] is None:  # (sizes, epsilons, weights, target)
        raise InputError(
            "--caps (per-attribute epsilon caps) applies to a whole-record target (--target-total) with --method "
            "auto or utility; with --epsilons each column's epsilon is exact already"
        )
    if args.caps and args.method not in ("auto", "utility"):
        raise InputError(f"--caps applies to --method auto or utility; method {args.method} does not use them")
    if args.method in SAMPLING_METHODS:
        from .sampling_design import run_sampling

        return run_sampling(args, gathered)
    if args.with_mechanism and not args.json:
        raise InputError("--with-mechanism needs --json (the mechanism is a JSON object for the configuration)")
    if args.m is not None:
        raise InputError("--m applies to --method sample-m only")
    if args.method not in METHODS and args.method != "utility":
        known = ", ".join((*METHODS, "utility", *SAMPLING_METHODS))
        raise InputError(f"unknown method {args.method!r}; choose one of {known}")
    given_sizes, epsilons, weights, target = gathered
    sizes = check_sizes(given_sizes)
    if args.budget is not None:
        check_seconds(args.budget, "--budget")
    check_new_config(args)
    if target is not None and args.method == "auto":
        return _run_recommendation(args, sizes, weights, target)
    progress = DesignProgress(args)
    try:
        design, budget = _design(args, sizes, epsilons, weights, target, progress)
    finally:
        progress.close()
    _print_design(args, design, budget)
    return 0


def _run_recommendation(args, sizes, weights, target) -> int:
    """auto with a whole-record target: rank every design kind, print (or -o write) the recommended one."""
    from . import design_utility
    from .common import print_json

    progress = DesignProgress(args)
    try:
        out, chosen = design_utility.recommend_output(args, sizes, weights, target, progress)
    finally:
        progress.close()
    if args.names:
        out["names"] = args.names
    written = write_config(args, *chosen)
    if args.json:
        if written:
            out["configuration_written"] = written
        print_json(out)
        return 0
    differs = auto_differs_line(args, out)
    if differs:  # first: the design printed next is not what the configuration releases as it is
        print(differs)
    if "overall_epsilon" in out and "requested_epsilons" in out:
        print_table(out)
    design_utility.print_recommendation(out)
    design_utility.print_predicted(out)
    if written:
        print(written_line(args, *chosen))
    return 0


def _design(args, sizes, epsilons, weights, target, progress):
    """(Design, budget JSON or None) of a named method (not the recommendation)."""
    from ..designs import run_design
    from ..validation import check_epsilons
    from . import design_utility

    if args.method == "utility":
        design = design_utility.utility_result(args, sizes, target, progress)
        return design, ({"target_total": float(target)} if target is not None else None)
    if target is not None:
        from ..budget import distribute_budget

        assert weights is not None  # gather: a target always comes with weights
        result = distribute_budget(args.method, sizes, weights, target, progress=progress)
        budget = {"target_total": float(target), "weights": [float(w) for w in weights], "scale": result.scale}
        return result.design, budget
    assert epsilons is not None  # gather: epsilons when there is no target
    check_epsilons(epsilons, len(sizes))
    options = {"budget": args.budget} if (args.method == "auto" and args.budget is not None) else {}
    return run_design(args.method, sizes, epsilons, progress=progress, **options), None


def _print_design(args, design, budget) -> None:
    from . import design_utility
    from .common import print_json

    out = design.to_json_dict(include_patterns=True if args.patterns else None)
    if args.names:
        out["names"] = args.names
    if budget:
        out["budget"] = budget
    out["predicted_error"] = design_utility.predicted_json(design.mechanism, args)
    if args.with_mechanism:
        out["mechanism"] = design.mechanism.to_dict()
    if design.info.get("target_not_reached"):
        print(f"optrr: note: {design.info['target_not_reached']}", file=sys.stderr)
    if design.exceeds_request():
        print(
            "optrr: warning: the design raised some attribute epsilons above the request (weaker privacy); "
            "see epsilon_changes",
            file=sys.stderr,
        )
    written = write_config(args, args.method, design.mechanism)
    if written and design.exceeds_request() and not args.release_config.accept_changed_epsilons:
        print(
            f"optrr: note: optrr perturb refuses {written} while these raised epsilons are not accepted: set "
            "accept_changed_epsilons to true in it to release them, or choose method auto, optimal or family",
            file=sys.stderr,
        )
    if args.json:
        if written:
            out["configuration_written"] = written
        print_json(out)
        return
    print_table(out)
    design_utility.print_predicted(out)
    if written:
        print(written_line(args, args.method, design.mechanism))


def attribute_labels(out: dict) -> tuple[str, list[str]]:
    """(header, labels) of the attributes of a design's output as the tables print them, right-aligned to one
    width: the column names (--config), else the 1-based indices under "attr"."""
    names = out.get("names")
    labels = [str(n) for n in names] if names else [str(i + 1) for i in range(len(out["sizes"]))]
    header = "column" if names else "attr"
    width = max(6, len(header), *(len(t) for t in labels))
    return header.rjust(width), [t.rjust(width) for t in labels]


#: Where a design's per-column epsilons come from, as the GUI's column table says it (its SOURCE_HEADERS): the
#: table's header and the words of the sum line. Per-column mode: requested; total-budget mode: the utility and
#: sampling designs choose each column's epsilon themselves, the other designs scale the weights (the largest scale
#: within the target).
EPSILON_SOURCES = {
    "typed": ("requested", "requested"),
    "design": ("chosen by design", "chosen by the design"),
    "weights": ("from weights", "from the weights (the largest scale of the weights within the target)"),
}


def epsilon_source(out: dict) -> tuple[str, str]:
    """(header, words) of :data:`EPSILON_SOURCES` for a design's output: "typed" without a whole-record target,
    "design" for a utility or sampling design, else "weights"."""
    from ..sampling import SAMPLING_METHODS

    if "budget" not in out:
        return EPSILON_SOURCES["typed"]
    method = str(out.get("method", ""))
    if method == "utility" or method in SAMPLING_METHODS or method.startswith("sample-"):
        return EPSILON_SOURCES["design"]
    return EPSILON_SOURCES["weights"]


def print_table(out: dict) -> None:
    from ..release.manifest import noise_columns
    from ..release.risk import strength

    k = len(out["sizes"])
    print(f"method: {out['method']}   attributes: {k}   design time: {out['design_seconds']:.4f} s")
    column, asked = epsilon_source(out)
    print(
        f"whole-record epsilon: {out['overall_epsilon']:.6f} ({strength(out['overall_epsilon'])})   (sum of the "
        f"per-column epsilons {asked}: {out['sum_requested_epsilons']:.6f})"
    )
    if "lower_bound" in out:
        gap = max(0.0, out["overall_epsilon"] - out["lower_bound"])  # (rounding can make it -2e-16)
        print(
            f"certified lower bound on the optimum: {out['lower_bound']:.6f}   (gap {gap:.3g}; design: {out['design']})"
        )
    shown = range(k) if k <= 40 else list(range(20)) + list(range(k - 20, k))
    header, labels = attribute_labels(out)
    width = max(12, len(column))
    print(f"{header} {'size':>6} {column:>{width}} {'achieved':>12}")
    last = -1
    for i in shown:
        if i != last + 1:
            print("...".rjust(len(header)))
        last = i
        req, ach = out["requested_epsilons"][i], out["attribute_epsilons"][i]
        flag = "" if eps_equal(ach, req) else ("  RAISED" if ach > req else "  lowered")
        noise = "  epsilon 0: released as pure noise" if ach == 0 else ""
        print(f"{labels[i]} {out['sizes'][i]:>6} {req:>{width}.6f} {ach:>12.6f}{flag}{noise}")
    if out.get("epsilon_changes"):
        print(f"{len(out['epsilon_changes'])} attribute epsilon(s) differ from the request (lower = more private).")
    silent = noise_columns([label.strip() for label in labels], out["attribute_epsilons"])
    if silent:
        print(
            f"warning: {len(silent)} column(s) get epsilon 0 ({', '.join(silent[:10])}"
            f"{' ...' if len(silent) > 10 else ''}): "
            "their released values are pure noise, nothing can be learned from them; drop them from the release, "
            "or name tables that need them (needed_marginals / --marginals)"
        )
