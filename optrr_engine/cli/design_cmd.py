"""``optrr design``: build a mechanism and report its exact privacy accounting."""

from __future__ import annotations

from ..errors import InputError
from ..tolerance import eps_equal


def add_parser(sub):
    p = sub.add_parser("design", help="design a mechanism for given category counts and epsilons")
    p.add_argument(
        "--method",
        default="auto",
        help="auto (default: exact eps_i, best design found, certified bound; with --target-total: the design "
        "with the smallest predicted error), kronecker, optimal, heuristic, family, classes or utility "
        "(least predicted error of the unbiased estimates of --marginals at --target-total); sampling designs "
        "(with --target-total): smp, "
        "sample-m (with --m) or rsfd",
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
    p.add_argument("--target-total", type=float, help="whole-record epsilon to meet (budget mode)")
    p.add_argument("--weights", help="relative weights of the attributes in budget mode")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--patterns", action="store_true", help="include pattern_probabilities even for k > 16 (k <= 22)")
    p.add_argument(
        "--with-mechanism",
        action="store_true",
        help='with --json: include the designed mechanism ("mechanism"); copy it into a release configuration to '
        "release exactly this design (method utility needs it); up to megabytes for many columns",
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


def gather(args) -> tuple[list, list | None, list | None, float | None]:
    from .common import parse_list

    sizes = epsilons = weights = None
    target = args.target_total
    args.spec_names = None  # the spec's column names, for --prior (design_utility.prior); the file is read once
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
        raise InputError("give --sizes (or --spec FILE)")
    if epsilons is None and target is None:
        raise InputError("give --epsilons, or --target-total with --weights")
    if epsilons is not None and target is not None:
        raise InputError("give either --epsilons or --target-total, not both")
    if target is not None and weights is None:
        weights = [1.0] * len(sizes)
    return sizes, epsilons, weights, target


def run(args) -> int:
    import sys

    from ..designs import METHODS, run_design
    from ..sampling import SAMPLING_METHODS
    from ..validation import check_epsilons, check_seconds, check_sizes
    from . import design_utility
    from .common import print_json

    if args.method in SAMPLING_METHODS:
        from .sampling_design import run_sampling

        return run_sampling(args, gather(args))
    if args.with_mechanism and not args.json:
        raise InputError("--with-mechanism needs --json (the mechanism is a JSON object for the configuration)")
    if args.m is not None:
        raise InputError("--m applies to --method sample-m only")
    if args.method not in METHODS and args.method != "utility":
        known = ", ".join((*METHODS, "utility", *SAMPLING_METHODS))
        raise InputError(f"unknown method {args.method!r}; choose one of {known}")
    given_sizes, epsilons, weights, target = gather(args)
    sizes = check_sizes(given_sizes)
    if args.budget is not None:
        check_seconds(args.budget, "--budget")
    budget: dict | None = None
    if target is not None and args.method == "auto":
        out = design_utility.recommend_output(args, sizes, weights, target)
        if args.json:
            print_json(out)
        else:
            if "overall_epsilon" in out and "requested_epsilons" in out:
                print_table(out)
            design_utility.print_recommendation(out)
            design_utility.print_predicted(out)
        return 0
    if args.method == "utility":
        design = design_utility.utility_result(args, sizes, target)
        budget = {"target_total": float(target)} if target is not None else None
    elif target is not None:
        from ..budget import distribute_budget

        assert weights is not None  # gather: a target always comes with weights
        result = distribute_budget(args.method, sizes, weights, target)
        design = result.design
        budget = {"target_total": float(target), "weights": [float(w) for w in weights], "scale": result.scale}
    else:
        assert epsilons is not None  # gather: epsilons when there is no target
        check_epsilons(epsilons, len(sizes))
        options = {"budget": args.budget} if (args.method == "auto" and args.budget is not None) else {}
        design = run_design(args.method, sizes, epsilons, **options)
    out = design.to_json_dict(include_patterns=True if args.patterns else None)
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
    if args.json:
        print_json(out)
    else:
        print_table(out)
        design_utility.print_predicted(out)
    return 0


def print_table(out: dict) -> None:
    k = len(out["sizes"])
    print(f"method: {out['method']}   attributes: {k}   design time: {out['design_seconds']:.4f} s")
    print(
        f"whole-record epsilon: {out['overall_epsilon']:.6f}   (sum of requested: {out['sum_requested_epsilons']:.6f})"
    )
    if "lower_bound" in out:
        gap = out["overall_epsilon"] - out["lower_bound"]
        print(
            f"certified lower bound on the optimum: {out['lower_bound']:.6f}   (gap {gap:.3g}; design: {out['design']})"
        )
    shown = range(k) if k <= 40 else list(range(20)) + list(range(k - 20, k))
    print(f"{'attr':>6} {'size':>6} {'requested':>12} {'achieved':>12}")
    last = -1
    for i in shown:
        if i != last + 1:
            print(f"{'...':>6}")
        last = i
        req, ach = out["requested_epsilons"][i], out["attribute_epsilons"][i]
        flag = "" if eps_equal(ach, req) else ("  RAISED" if ach > req else "  lowered")
        print(f"{i + 1:>6} {out['sizes'][i]:>6} {req:>12.6f} {ach:>12.6f}{flag}")
    if out.get("epsilon_changes"):
        print(f"{len(out['epsilon_changes'])} attribute epsilon(s) differ from the request (lower = more private).")
