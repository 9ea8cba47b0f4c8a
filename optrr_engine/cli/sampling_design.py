"""``optrr design --method smp|sample-m|rsfd``: a sampling design at a whole-record epsilon, its exact
accounting, what each released row carries and the predicted error of --marginals at --rows; with --config and
-o, the configuration to release it (its method, target_total and sample_m: no mechanism)."""

from __future__ import annotations

from ..errors import InputError


def sampling_json(design) -> dict:
    return {
        "method": design.method,
        "sizes": design.sizes.tolist(),
        "m": design.m,
        "overall_epsilon": design.whole_record_epsilon(),
        "target_total": design.target,
        "attribute_epsilons": design.attribute_epsilons().tolist(),
        "reporting_probabilities": design.reporting_probabilities().tolist(),
        "subsets": len(design.subsets),
        "inner_designs": len({id(m) for m in design.inner}),
        "suppresses_attributes": not design.fills_fakes and design.m < design.k,
        "suppression": design.suppression_text(),
        "info": dict(design.info),
    }


def run_sampling(args, gathered) -> int:
    from ..sampling import make_sampling_design
    from ..sampling.design import no_mechanism_to_copy, sample_m_weights_refusal, unequal_weights
    from .common import print_json
    from .design_cmd import attribute_labels, check_new_config, write_config, written_line
    from .design_utility import predicted_json, print_predicted

    sizes, epsilons, weights, target = gathered
    if target is None or epsilons is not None:
        if getattr(args, "config", None):
            raise InputError(
                f"method {args.method} is defined by a whole-record epsilon: set target_total in {args.config}"
            )
        raise InputError(
            f"method {args.method} is defined by a whole-record epsilon: give --target-total, not --epsilons"
        )
    if args.method == "sample-m" and args.m is None:
        raise InputError("method sample-m needs --m, the number of attributes each record reports")
    if args.method != "sample-m" and args.m is not None:
        raise InputError("--m applies to --method sample-m only")
    if args.with_mechanism:
        raise InputError(f"--with-mechanism: {no_mechanism_to_copy(args.method)}")
    if args.method == "sample-m" and unequal_weights(weights):
        way_out = 'leave out --weights (and the spec\'s "weights") or make them equal'
        if getattr(args, "config", None):
            way_out = f'remove the columns\' "weight" in {args.config} or make them equal'
        raise InputError(sample_m_weights_refusal(way_out))
    check_new_config(args)
    explicit = args.weights is not None or unequal_weights(weights)
    design = make_sampling_design(
        args.method, sizes, target, m=args.m, weights=weights if explicit and args.method != "sample-m" else None
    )
    out = sampling_json(design)
    if getattr(args, "names", None):
        out["names"] = args.names
    out["predicted_error"] = predicted_json(design, args)
    sample_m = design.m if design.method == "sample-m" else None
    written = write_config(args, design.method, None, sample_m)
    if args.json:
        if written:
            out["configuration_written"] = written
        print_json(out)
        return 0
    print(f"method: {out['method']}   attributes: {len(out['sizes'])}   {out['suppression']}")
    from ..release.risk import strength

    eps = out["overall_epsilon"]
    print(f"whole-record epsilon: {eps:.6f} ({strength(eps)})   (target {out['target_total']:.6g})")
    header, labels = attribute_labels(out)
    print(f"{header} {'size':>6} {'reported':>10} {'epsilon':>12}")
    for i, a in enumerate(out["sizes"]):
        print(f"{labels[i]} {a:>6} {out['reporting_probabilities'][i]:>10.4f} {out['attribute_epsilons'][i]:>12.6f}")
    print_predicted(out)
    if written:
        print(written_line(args, design.method, None, sample_m))
    return 0
