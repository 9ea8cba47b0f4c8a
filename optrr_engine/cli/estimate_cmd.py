"""``optrr estimate``: the joint distribution of a few attributes of a release, with confidence intervals."""

from __future__ import annotations

import math
import sys

from ..errors import InputError


def add_parser(sub):
    p = sub.add_parser("estimate", help="estimate the true joint distribution of attributes from a release")
    from .common import NAMES_HELP, add_release_arguments

    add_release_arguments(p)
    p.add_argument("--marginal", required=True, help=f"the attributes (e.g. sex,smoker): {NAMES_HELP}")
    p.add_argument(
        "--method",
        default="map",
        help="map (default: smoothed maximum likelihood, a proper distribution), ibu (maximum likelihood), "
        "unbiased (for inference) or clip",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals (0.95)")
    return p


def run(args) -> int:
    from ..estimation import METHODS, estimate_release
    from ..utility.release_check import INFORMATION_WARNINGS, effect_of, estimate_information
    from .common import open_named_release, print_json, warn_not_private
    from .release_hints import release_hints

    if args.method not in METHODS:
        raise InputError(f"unknown method {args.method!r}; choose one of {', '.join(METHODS)}")
    with release_hints(args):
        names, opened = open_named_release(args, args.marginal, "--marginal")
        est = estimate_release(args.release, names, method=args.method, confidence=args.confidence, opened=opened)
        est.info.update(estimate_information(opened[0], opened[1], names, effect_of(est)))
    warn_not_private(est.info.get("not_private"))
    for key in ("not_identifiable", *INFORMATION_WARNINGS, "few_rows"):
        if key in est.info:
            print(f"optrr: warning: {est.info[key]}", file=sys.stderr)
    if args.json:
        print_json(est.to_json_dict())
    else:
        print_estimate(est)
    return 0


def print_estimate(est) -> None:
    from ..estimation.result import INTERVAL_NOTE, METHOD_NOTES
    from .common import shown_name, shown_names

    names = est.names()
    print(f"attributes: {shown_names(names)}   rows: {est.rows:,}   method: {est.method}")
    print(f"  {METHOD_NOTES[est.method]}")
    if "prior_lowered" in est.info:
        print(f"  {est.info['prior_lowered']}")
    elif "prior_records" in est.info:
        print(f"  prior: {est.info['prior_records']:.3g} pseudo-records, uniform")
    if "whole_record_epsilon" in est.info:
        eps = ", ".join(f"{shown_name(n)} {e:.4g}" for n, e in zip(names, est.info["attribute_epsilons"], strict=True))
        print(f"whole-record epsilon of the release: {est.info['whole_record_epsilon']:.6g}; per attribute: {eps}")
    if "suppression" in est.info:
        print(f"sampling design ({est.info['sampling_method']}): {est.info['suppression']}; {est.info['reporting']}")
    if "iterations" in est.info:
        print(convergence_line(est.info))
    cells = est.cells()
    widths = [max(len(n), *(len(c["values"][i]) for c in cells)) for i, n in enumerate(names)]
    level = f"{100 * est.confidence:g}%"
    head = "  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))
    print(f"{head}  {'estimate':>10}  {level + ' low':>10}  {level + ' high':>10}  {'observed':>10}")
    for c in cells:
        vals = "  ".join(v.ljust(w) for v, w in zip(c["values"], widths, strict=True))
        shown = "  ".join(shown_share(c[k]) for k in ("estimate", "ci_low", "ci_high"))
        print(f"{vals}  {shown}  {c['observed']:>10d}")
    if est.negative_cells:
        print(f"{est.negative_cells} cell(s) of the unbiased estimate are negative")
    if est.outside_interval_note:
        print(est.outside_interval_note)
    print(INTERVAL_NOTE)


#: What the text table shows for a share that is not available (NaN; null in the JSON): e.g. the interval of a table
#: the release cannot estimate (its ``not_identifiable`` warning says why), never "nan".
UNKNOWN = "unknown"


def shown_share(x: float) -> str:
    """A share in the estimate's text table, 10 wide: 5 decimals, or "unknown" when it is not a number."""
    return f"{x:>10.5f}" if math.isfinite(x) else f"{UNKNOWN:>10}"


def convergence_line(info: dict) -> str:
    """One line on whether the EM iteration (maximum likelihood or its smoothed form) converged, with its
    certified gap."""
    gap, tol, it = info["log_likelihood_gap_bound"], info["log_likelihood_gap_tolerance"], info["iterations"]
    what = info.get("objective", "log-likelihood").split(" (")[0]
    if info["converged"] and it == 0:
        return "converged in 0 iterations: the unbiased estimate is already a distribution, so it is the maximum"
    if info["converged"]:
        return f"converged in {it} iterations ({what} within {gap:.2g} of its maximum, certified)"
    return (
        f"warning: NOT converged: stopped after {it} iterations with the {what} up to {gap:.3g} below its "
        f"maximum (tolerance {tol:.2g}); the estimate is a proper distribution but not yet the maximising one"
    )
