"""Chi-square test of association between two attributes of a release, on their estimated table."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..estimation import StructuredOperator, estimate_release
from ..estimation.covariance import covariance_matrix
from ..estimation.estimate import few_rows, few_rows_head
from ..estimation.spectrum import NotIdentifiableError
from ..utility.release_check import INFORMATION_WARNINGS
from .chi_square import pearson_chi2, strict_p_values, wald_independence, wald_rank
from .power import detectable_association, low_power_warning, power_sentence
from .wald_simulation import MAX_SIMULATED_CELLS, SIMULATIONS, simulated_p

#: Eigenvalue products must agree to this for the pair's mechanism to count as a product (independent RR).
PRODUCT_TOL = 1e-9


def not_testable(manifest: dict, idx, names) -> str:
    """Why the association of two attributes whose joint table the design erased (a zero eigenvalue) cannot be
    tested: a column with achieved epsilon 0 is released as pure noise; otherwise the pair's joint table is erased.
    No estimation method recovers either."""
    from ..release.manifest import noise_attributes

    attrs = [manifest["attributes"][i] for i in idx]
    noise = noise_attributes(attrs)
    if noise:
        listed = " and ".join(repr(n) for n in noise)
        return (
            f"{listed} {'is' if len(noise) == 1 else 'are'} released as noise (achieved epsilon 0: the design puts "
            "no privacy budget on it), so the association cannot be analysed from this release; no method "
            "recovers it"
        )
    a, b = names
    return (
        f"the association of {a!r} and {b!r} cannot be analysed from this release: the design erased their joint "
        "table (an eigenvalue of its mechanism is 0), and no method recovers it"
    )


def simulated_method(beyond: bool) -> str:
    """What the Wald test's simulated p-value is (``p_value_method``): the share of the simulated releases whose
    statistic is at least the observed one or, when the observed statistic is above all of them (where that share
    would stop at 1 / (B + 1)), the tail of the chi-square scaled to their mean and variance
    (:mod:`.wald_simulation`)."""
    if beyond:
        return (
            f"simulated, beyond every one of the {SIMULATIONS} simulated releases of independent attributes with the "
            "estimated margins (through this release's mechanism): the tail of the chi-square scaled to their "
            f"statistics' mean and variance (Satterthwaite), capped at 1/{SIMULATIONS + 1}; not a share of them, "
            f"which cannot go below 1/{SIMULATIONS + 1}"
        )
    return (
        f"simulated: the share of {SIMULATIONS} simulated releases of independent attributes with the estimated "
        "margins, through this release's mechanism, whose statistic is at least this one's (the chi-square "
        "law is too light-tailed with few records per cell)"
    )


def pair_is_product(marginal_mechanism) -> bool:
    """True when the induced mechanism on the two attributes perturbs them independently (lambda_11 = l_10 l_01);
    ``marginal_mechanism`` may also be its StructuredOperator."""
    op = marginal_mechanism
    lam = (op if isinstance(op, StructuredOperator) else StructuredOperator.from_mechanism(op)).eigenvalues
    return bool(abs(lam[3] - lam[1] * lam[2]) <= PRODUCT_TOL * max(1.0, abs(lam[3])))


def chi2_release(
    release_path: str, names, manifest_path=None, check_hash: bool = True, progress=None, cancel=None, opened=None
):
    """Tests of independence between two attributes, each with what it assumes.

    1. Wald test on the unbiased estimate with its covariance (the recommended one);
    2. Pearson on the raw perturbed counts: a valid test only if the mechanism perturbs the two attributes
       independently (then independence of the true values is equivalent to independence of the perturbed ones).

    Pearson on n * (estimated table), as if estimated counts had been observed, is not offered: it ignores the
    randomization noise, and its false-positive rate was 78-100% at the 5% level (issue 13).

    The output says how much the release tells about the pair's table (``information``, ``no_information``,
    ``too_noisy``; with almost none, ``uninformative``: the tests have almost no power; else, too noisy for the
    unbiased estimate, ``too_noisy_warning``: they have little power), by
    :func:`~optrr_engine.utility.release_check.estimate_information`. ``opened``: the release's (manifest,
    mechanism) when already opened (:func:`~optrr_engine.estimation.release_estimate.open_release`).
    """
    from ..estimation.release_estimate import open_release
    from ..estimation.release_source import attribute_index
    from ..utility.release_check import estimate_information

    names = list(names)
    if len(names) != 2:
        raise InputError("a chi-square test of association needs exactly two attributes, e.g. --chi2 sex,smoker")
    manifest, mechanism = opened or open_release(release_path, manifest_path, check_hash)
    est = estimate_release(release_path, names, progress=progress, cancel=cancel, opened=(manifest, mechanism))
    idx = attribute_index(manifest, names)
    if "subset_rows" in est.info or est.info.get("sampling_method") == "rsfd":  # a sampling release
        from ..estimation.sampled import marginal_operator

        mech = op = marginal_operator(mechanism, idx, est.info.get("subset_rows"))
    else:
        mech = mechanism.marginal(idx)
        op = StructuredOperator.from_mechanism(mech)
    lam = est.observed / est.rows
    try:
        cov = covariance_matrix(op, lam, est.unbiased, est.rows)
    except NotIdentifiableError:
        raise InputError(not_testable(manifest, idx, names)) from None
    wald = wald_independence(est.unbiased, cov)
    rank = wald_rank(est.unbiased, cov)
    computable = rank >= wald.dof
    power = detectable_association(op, est.estimate, est.rows, int(manifest["rows"])) if computable else None
    statistic = wald.statistic
    simulated = (
        simulated_p(op, est.unbiased, est.observed, statistic, cancel=cancel)
        if computable and statistic is not None
        else None
    )
    if not computable:  # the pseudo-inverse would give a statistic of 0 (p = 1) however strong the association
        wald.statistic = wald.p_value = None
        wald.info["p_value_method"] = "none: the statistic is not computable"
        wald.assumes = (
            f"NOT computable: the covariance of the estimated table has rank {rank} of the {wald.dof} the test needs "
            "(the perturbed counts fall in too few cells), so the release cannot say in every direction how far the "
            "table is from independence; " + wald.assumes
        )
    elif simulated is not None:
        wald.info["p_value_chi2_approximation"] = wald.p_value
        wald.p_value = simulated.p
        wald.info["p_value_method"] = simulated_method(simulated.beyond)
        wald.assumes = (
            "records are independent; the p-value is simulated under independence with the estimated margins (a "
            "parametric bootstrap: near its level also with a few records per cell); uses the covariance of the "
            "unbiased estimate, so the randomization noise is accounted for; H0: the two attributes are independent "
            "in the true data"
        )
    elif computable:
        wald.info["p_value_method"] = (
            f"chi-square approximation (not simulated: the table has more than {MAX_SIMULATED_CELLS} cells, or "
            "the simulated statistic did not vary)"
        )
    product = pair_is_product(mech)
    raw = pearson_chi2(
        est.observed,
        test="pearson_on_perturbed_counts",
        assumes=(
            "valid test of independence here: the mechanism perturbs these two attributes independently"
            if product
            else "NOT a valid test here: this mechanism perturbs the two attributes jointly, so perturbed values are "
            "associated even when the true values are independent"
        ),
    )
    raw.info["valid"] = product
    # the estimate's own rule (estimation.estimate.few_rows), worded for tests on the unbiased table (no prior)
    few = few_rows(est.rows, int(np.prod(est.sizes)), None) if est.info.get("few_rows") else None
    wald.info["valid"] = few is None and computable
    if few:
        for test in (wald, raw):
            test.info["valid"] = False
            why = few
            if test is wald and simulated is not None:  # its law is simulated, not normal: the margins are the doubt
                cells = int(np.prod(est.sizes))
                why = (
                    f"{few_rows_head(est.rows, cells)}: the margins the simulation draws from are themselves very "
                    "uncertain, and the test can detect only a strong association"
                )
            test.assumes = f"NOT reliable: {why}; " + test.assumes
    out = {
        "attributes": est.names(),
        "rows": est.rows,
        "rows_in_release": int(manifest["rows"]),
        "table": {
            "categories": est.labels(),
            "estimate": est.unbiased.tolist(),
            "estimate_method": "unbiased",
            "observed": np.asarray(est.observed).tolist(),
        },
        "tests": [wald.to_json_dict(), raw.to_json_dict()],
        "recommended": None if few or not computable else wald.test,
    }
    if few:
        out["warning"] = few
    # information, no_information, too_noisy and the sentence "uninformative" or "too_noisy_warning"
    out.update(estimate_information(manifest, mechanism, names, "tests"))
    if power is not None:
        out["power"] = {**power, "statement": power_sentence(power)}
        weak = low_power_warning(power)
        if weak and not any(out.get(k) for k in INFORMATION_WARNINGS):  # one warning of the same kind
            out["low_power_warning"] = weak
    if est.info.get("not_private"):
        out["not_private"] = est.info["not_private"]
    return out


#: The keys of :func:`chi2_release`'s warning sentences, in the order the CLI and the Analyse tab show them.
TEST_WARNINGS = (*INFORMATION_WARNINGS, "low_power_warning", "warning")


def json_report(out: dict) -> dict:
    """:func:`chi2_release`'s result as written to JSON: every test's p-values below printing precision null, with
    the bound beside them (:func:`~.chi_square.strict_p_values`); the result itself keeps the numbers."""
    return {**out, "tests": [strict_p_values(t) for t in out["tests"]]}
