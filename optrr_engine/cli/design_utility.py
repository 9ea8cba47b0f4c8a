"""``optrr design`` and utility: --marginals / --rows / --caps, the predicted error of every design, the
utility-optimal design (--method utility) and the recommendation by predicted error (auto with a target)."""

from __future__ import annotations

import sys
from math import comb

from ..errors import InputError, OptRRError

#: With no --marginals, all 1- and 2-way marginals are predicted when there are at most this many of them.
DEFAULT_PAIR_LIMIT = 2000


def add_arguments(p) -> None:
    p.add_argument(
        "--marginals",
        help="marginals the analysis needs: orders (1,2 = all 1- and 2-way) or attribute sets by 1-based index "
        '("1,2;3"; one set ends with ";": "1,2;"; with --config: of the perturbed columns in its order); default: '
        "the configuration's needed_marginals (--config), else 1,2 (only 1 when k(k+1)/2 > 2000)",
    )
    p.add_argument(
        "--rows",
        type=int,
        default=None,
        help="number of rows the predicted error is computed for (default: with --config the rows optrr schema "
        "counted, else 10000)",
    )
    p.add_argument("--caps", help="--method utility: per-attribute epsilon caps, comma-separated (0 = no cap)")
    p.add_argument(
        "--data",
        metavar="FILE",
        help="with --config: the data file the configuration describes (default: its source file when it is found "
        "beside the configuration); its columns' shares, counted as optrr perturb codes them, are the margins at "
        "which the tests of association on the needed 2-way tables are evaluated (a rare category makes them much "
        "weaker than at uniform margins); printed for you only, never written into a configuration or a release",
    )
    p.add_argument(
        "--prior",
        metavar="FILE",
        help="your guess of the columns' distributions for the predicted error (JSON or CSV; default uniform): "
        '{"age": [0.2, 0.5, 0.3], "2": [1, 1]} by column name (the spec\'s "names") or 1-based index',
    )


def marginal_spec(args, k: int) -> tuple[dict, str, bool]:
    """(spec, text, explicit): the needed marginals from --marginals or the default."""
    from ..utility import parse_marginals

    if args.marginals:
        return parse_marginals(args.marginals), args.marginals, True
    text = "1,2" if comb(k, 2) + k <= DEFAULT_PAIR_LIMIT else "1"
    return parse_marginals(text), text, False


def prior(args, sizes):
    """The --prior file as an optrr_engine.utility prior (None: uniform), checked against the category counts."""
    if not getattr(args, "prior", None):
        return None
    from .prior_file import load_prior

    names = getattr(args, "spec_names", None)  # read with the spec by design_cmd.gather
    if names is not None and (not isinstance(names, list) or len(names) != len(sizes)):
        raise InputError(f"spec file {args.spec}: 'names' must list one name per attribute")
    return load_prior(args.prior, sizes, [str(n) for n in names] if names else None)


def rows(args) -> int:
    from ..utility.recommend import DEFAULT_ROWS

    n = DEFAULT_ROWS if args.rows is None else int(args.rows)
    if n < 1:
        raise InputError(f"--rows must be a positive whole number; got {args.rows}")
    return n


def caps(args, k: int):
    if not args.caps:
        return None
    from .common import parse_list

    values = parse_list(args.caps, float, "cap")
    if len(values) != k:
        raise InputError(f"{len(values)} caps for {k} attributes")
    if any(v < 0 for v in values):
        raise InputError("caps must be positive (0 = no cap)")
    return [None if v == 0 else v for v in values]


def utility_result(args, sizes, target, progress=None):
    """The utility-optimal design as a :class:`~optrr_engine.designs.Design` (``progress``: fraction, message)."""
    import time

    from ..designs import Design
    from ..tasks import TaskControl
    from ..utility.optimal_design import utility_design

    if target is None:
        if getattr(args, "config", None):
            raise InputError(f"method utility needs a whole-record epsilon: set target_total in {args.config}")
        raise InputError("--method utility needs --target-total (the whole-record epsilon)")
    spec, _, _ = marginal_spec(args, len(sizes))
    t0 = time.perf_counter()
    mech, info = utility_design(sizes, target, spec, caps(args, len(sizes)), TaskControl(progress))
    return Design("utility", mech, mech.attribute_epsilons(), time.perf_counter() - t0, info)


def predicted_json(mechanism, args) -> dict:
    """The predicted error of a design (a Mechanism or a SamplingDesign: the same JSON, from its candidate) for the
    JSON output, per marginal only for small lists."""
    from ..errors import TooLargeError
    from ..utility.candidate import candidate_of

    spec, text, _ = marginal_spec(args, mechanism.k)
    n = rows(args)
    guess = prior(args, mechanism.sizes)
    try:
        pe = candidate_of(mechanism).predicted_error(n, spec, guess)
    except TooLargeError as exc:
        return {"rows": n, "marginals": text, "skipped": str(exc)}
    out = described(pe.to_json(getattr(args, "names", None)), args, text, guess)
    with_test_power(out, mechanism, pe, n, getattr(args, "shares", None))
    warn_non_identifiable(out, mechanism)
    return out


def with_test_power(pe_json: dict, design, predicted, n: int, shares=None) -> None:
    """``test_power`` in the predicted-error JSON: what tests of association on the needed 2-way tables of
    ``predicted`` (the design's PredictedError) will detect (:func:`optrr_engine.analysis.power.design_power`), at
    the data file's 1-way ``shares`` (:func:`file_shares`; uniform margins without), when there are such tables.
    Printed by ``optrr design`` for the data manager; ``-o`` writes only the configuration, never this."""
    from ..analysis.power import design_power

    pairs = [m.attributes for m in predicted.marginals if len(m.attributes) == 2]
    power = design_power(design, n, pairs, shares)
    if power is not None:
        pe_json["test_power"] = power


def described(pe_json: dict, args, text: str, guess) -> dict:
    """A predicted error's JSON with what it assumed: the marginals asked for, the prior, where the row count
    comes from (--config); per marginal only for small lists."""
    pe_json["marginals_requested"] = text
    pe_json["prior"] = args.prior if guess is not None else "uniform"
    if getattr(args, "rows_source", None):
        pe_json["rows_source"] = args.rows_source
    if getattr(args, "shares_source", None):
        pe_json["shares_source"] = args.shares_source
    if len(pe_json["marginals"]) > 100:
        del pe_json["marginals"]
    return pe_json


def warn_non_identifiable(pe_json: dict, design=None) -> None:
    """The warnings about needed marginals no rows recover (erased) or too noisy; ``design``: the mechanism or
    sampling design predicted, whose records may never carry a marginal's columns together (then no epsilon helps)."""
    from ..utility.identifiability import never_together, way_out

    def shown(sets) -> str:
        return "; ".join(",".join(str(a) for a in m) for m in sets[:10]) + (" ..." if len(sets) > 10 else "")

    erased = pe_json.get("erased") or []
    if erased:
        m = getattr(design, "m", None) if getattr(design, "subsets", None) is not None else None
        if m is not None and any(len(a) > m for a in erased):  # a sampling design: no record holds them together
            way = never_together(design.method, m, max(len(a) for a in erased))
        else:
            way = f"the way out: {way_out()}"
        print(
            f"optrr: warning: {len(erased)} needed marginal(s) cannot be estimated from this release at any number "
            f"of rows (attributes {shown(erased)}); a release that needs them is refused; {way}",
            file=sys.stderr,
        )
    weak = [m for m in pe_json.get("non_identifiable") or [] if m not in erased]
    if weak:
        print(
            f"optrr: warning: at {pe_json.get('rows')} rows the unbiased estimate of {len(weak)} needed marginal(s) "
            f"has a cell standard deviation of 1 or more (attributes {shown(weak)}): their confidence intervals "
            "span everything, and the default estimate leans on its prior there (its predicted error says how "
            f"much); for more: {way_out()}",
            file=sys.stderr,
        )


def recommend_output(args, sizes, weights, target, progress=None) -> tuple[dict, tuple]:
    """auto with a whole-record target: every design kind ranked by predicted error (``progress``: fraction,
    message). Returns the best one's JSON and what a release configuration needs to release it: (method,
    mechanism or None, sample_m or None)."""
    from ..designs import Design
    from ..tasks import TaskControl
    from ..utility.candidate import MechanismCandidate
    from ..utility.recommend import FailedCandidate, recommend

    spec, text, _ = marginal_spec(args, len(sizes))
    n = rows(args)
    guess = prior(args, sizes)
    ctl = TaskControl(progress)
    rec = recommend(sizes, target, weights, n, spec, prior=guess, caps=caps(args, len(sizes)), ctl=ctl)
    best = rec.best
    cand = best.candidate
    if best.error is None or isinstance(cand, FailedCandidate):
        raise OptRRError(f"no design kind could be ranked: {best.failure}")
    info = getattr(cand, "info", None) or {}
    design = info.get("budget_design")
    if design is None and isinstance(cand, MechanismCandidate):
        design = Design(cand.name, cand.mechanism, cand.mechanism.attribute_epsilons(), best.seconds, info)
    if design is not None:
        out = design.to_json_dict(include_patterns=True if args.patterns else None)
        if args.with_mechanism:
            out["mechanism"] = design.mechanism.to_dict()
    else:  # a sampling design
        out = {
            "method": cand.name,
            "sizes": [int(a) for a in sizes],
            "attribute_epsilons": [float(e) for e in cand.attribute_epsilons()],
            "overall_epsilon": cand.whole_record_epsilon(),
            "design_seconds": best.seconds,
            **{k: v for k, v in info.items() if isinstance(v, (str, int, float))},
        }
    if args.with_mechanism and design is None:
        method = cand.name  # smp, rsfd, or sample-M: the configuration's sample-m with sample_m M
        if method.startswith("sample-"):
            method = f"sample-m, sample_m {method.removeprefix('sample-')},"
        print(
            f"optrr: note: the recommended design {cand.name} is a sampling design: no mechanism to include; a "
            f"configuration with method {method} and target_total is designed by optrr perturb itself",
            file=sys.stderr,
        )
    out["recommended"] = cand.name
    out["budget"] = {"target_total": float(target), "weights": [float(w) for w in weights]}
    names = getattr(args, "names", None)
    out["recommendation"] = rec.to_json(n, text, names)
    pe = described(best.error.to_json(names), args, text, guess)
    released = design.mechanism if design is not None else cand.design  # type: ignore[attr-defined] # sampling
    with_test_power(pe, released, best.error, n, getattr(args, "shares", None))
    out["predicted_error"] = pe
    warn_non_identifiable(pe, getattr(cand, "design", None))
    return out, configuration_of(cand, design)


def configuration_of(cand, design) -> tuple[str, object, int | None]:
    """(method, mechanism or None, sample_m or None) that a release configuration gives to release a ranked
    candidate: a mechanism design by its method and mechanism (released as it is), a sampling design by its
    method (and sample_m), which optrr perturb designs itself."""
    if design is not None:
        return cand.name, design.mechanism, None
    sampling = cand.design
    return sampling.method, None, (int(sampling.m) if sampling.method == "sample-m" else None)


def print_predicted(out: dict) -> None:
    from ..utility.predicted import NO_INFORMATION

    pe = out.get("predicted_error")
    if pe and "skipped" in pe:
        print(f"predicted error: not computed: {pe['skipped']}")
    if not pe or "by_order" not in pe:
        return
    source = f"{pe['rows_source']}; " if pe.get("rows_source") else ""
    print(f"predicted error at {pe['rows']} rows ({source}prior: {pe.get('prior', 'uniform')}):")
    for order, v in pe["by_order"].items():
        default = v["mean_expected_avd_default"]
        avd = (
            ("unbiased estimate: not identifiable" if v["erased"] else "unbiased estimate: too noisy at these rows")
            if v["mean_expected_avd"] is None
            else f"mean expected AVD {v['mean_expected_avd']:.4g} (unbiased estimate)"
        )
        if default is not None:
            avd = f"mean expected AVD {default:.4g} (default estimate); " + avd
        print(
            f"  {order}-way ({v['marginals']} marginals): {avd}; erased: {v['erased']}; "
            f"too noisy for the unbiased estimate at these rows: {v['non_identifiable'] - v['erased']}; "
            f"no information at these rows (the data remove under {100 * NO_INFORMATION:g} % of the prior's spread): "
            f"{v['no_information']}"
        )
        if str(order) == "2" and pe.get("test_power"):
            print(f"    {pe['test_power']['statement']}")
            if pe.get("shares_source"):
                print(f"    margins: {pe['shares_source']}")


def print_recommendation(out: dict) -> None:
    rec = out.get("recommendation")
    if not rec:
        return
    needed = described_marginals(rec["marginals"], out.get("names"))
    print(f"recommended: {rec['chosen']}   (by predicted error of {needed} at {rec['rows']} rows)")
    print(
        f"{'design':>12} {'whole-record eps':>17} {'exp. AVD (default)':>19} {'(unbiased)':>11} "
        f"{'erased':>7} {'too noisy':>10}"
    )
    for c in rec["candidates"]:
        if "result" in c:
            print(f"{c['design']:>12} {c['result']}")
            continue
        avd = "-" if c["mean_expected_avd"] is None else f"{c['mean_expected_avd']:.4g}"
        default = "-" if c["mean_expected_avd_default"] is None else f"{c['mean_expected_avd_default']:.4g}"
        print(
            f"{c['design']:>12} {c['whole_record_epsilon']:>17.6f} {default:>19} {avd:>11} "
            f"{len(c['erased']):>7} {len(c['non_identifiable']) - len(c['erased']):>10}" + ranked_last(c)
        )


def ranked_last(candidate: dict) -> str:
    """The words after a ranking row whose design is ranked last for having no information on any needed marginal
    (the engine's PredictedError.no_information: each is erased, or the data remove under 1 % of its prior's
    spread), one cause per table: "erased" (never reported together, or a zero eigenvalue: no rows recover it,
    counted in the row's erased column) or "no information" (estimable, but the data barely move it at these rows);
    "" for a design ranked by its predicted error."""
    if not candidate.get("no_information"):
        return ""
    total = sum(int(v.get("marginals", 0)) for v in (candidate.get("by_order") or {}).values())
    erased = len(candidate.get("erased") or [])
    if erased and erased >= total:
        return "  every needed table erased: ranked last"
    if erased:
        return f"  the other {total - erased} needed table(s) without information at these rows: ranked last"
    return "  no information at these rows: ranked last"


def described_marginals(text: str, names=None) -> str:
    """--marginals text in words; tables by their columns' names when the names are known (--config)."""
    from ..utility.marginals import column_set_text, describe, parse_marginals

    spec = parse_marginals(text)
    if not names or "sets" not in spec:
        return describe(spec)
    return "the tables " + ", ".join(column_set_text(names[i] for i in s) for s in spec["sets"])


def file_shares(args, cfg, codec) -> None:
    """With --config: set ``args.shares`` (per perturbed column, the shares of its categories in the data file, in
    the codec's category order, as optrr perturb codes the rows it keeps) and ``args.shares_source`` (where they
    come from, or why there are none). The file: --data, else the configuration's source file when it lies beside
    the configuration; none found, the tests are evaluated at uniform margins. A file that cannot be read or coded
    as the configuration says is refused with --data, else noted and left out. The shares serve only the test-power
    statement printed for the data manager."""
    import os

    import numpy as np

    from ..io.readers import ReaderOptions, open_source

    args.shares = None
    given = getattr(args, "data", None)
    path = given
    if path is None:
        name = (cfg.source or {}).get("file")
        beside = os.path.join(os.path.dirname(os.path.abspath(args.config)), str(name)) if name else None
        if beside is None or not os.path.isfile(beside):
            where = f"{name} is not beside {args.config}" if name else f"{args.config} names no data file"
            args.shares_source = f"uniform margins: {where}; give --data FILE for the tests at your file's shares"
            return
        path = beside
    try:
        source = open_source(path, ReaderOptions.from_dict(cfg.input or {}))
        absent = [n for n in codec.attributes if n not in source.names]
        if absent:
            raise InputError(f"column {absent[0]!r} of {args.config} is not in {os.path.basename(path)}")
        counts = [np.zeros(int(a), dtype=np.int64) for a in codec.sizes]
        first = 0
        for table in source.tables(codec.attributes):
            codes, _rows, _excluded = codec.encode_table(table, first)
            first += table.num_rows
            for j, c in enumerate(counts):
                c += np.bincount(codes[:, j], minlength=c.size)[: c.size]
    except (OptRRError, OSError, ValueError) as exc:
        if given is not None:
            raise
        args.shares_source = f"uniform margins: {os.path.basename(path)} could not be read as {args.config} says: {exc}"
        return
    total = int(counts[0].sum()) if counts else 0
    if total <= 0:
        args.shares_source = f"uniform margins: {os.path.basename(path)} has no rows to release"
        return
    args.shares = [c / c.sum() for c in counts]
    args.shares_source = f"your file's shares: {os.path.basename(path)}, {total:,} rows (for you only, not released)"
