"""Before a release is written: refuse when a marginal the user marked as needed cannot be estimated from it.

Only the structural criterion counts here (an eigenvalue of the mechanism on the marginal is 0 relative to the
largest, see :mod:`.identifiability`): no number of rows recovers such a marginal. The release also notes every
non-identifiable 1- and 2-way marginal (when there are at most ``NOTE_LIMIT`` of them to check).

Once the row count is known (after the pass), :func:`uninformative_notes` names the needed tables that carry
almost no information at that count (:attr:`.predicted.MarginalError.information` below ``NO_INFORMATION``): a
note, never a refusal. :func:`estimate_information` says the same to a recipient estimating or testing a table of
the release (``optrr estimate``, ``optrr analyze``, the Analyse tab), and, for a table with some information whose
unbiased estimate is too noisy (:attr:`.predicted.MarginalError.too_noisy`: its intervals span everything), that.
"""

from __future__ import annotations

from math import comb

from ..errors import InputError
from .identifiability import never_together, way_out
from .marginals import column_set_text
from .predicted import MarginalError, PredictedError, predicted_error

#: Rows used to separate structural non-identifiability from "uninformative at n rows".
STRUCTURAL_ROWS = 10**15
#: Most 1-/2-way marginals checked for the release notes.
NOTE_LIMIT = 5000
#: Most needed tables named one by one in the notes on tables without information (the others are counted).
SHOWN_TABLES = 20


def _predicted(mechanism, rows, sets) -> PredictedError:
    """The predicted errors of the marginals ``sets`` (tuples of column indices) at ``rows`` rows, for a mechanism
    or a sampling design (which estimates a marginal from the rows expected to report it)."""
    from ..sampling import SamplingDesign

    if isinstance(mechanism, SamplingDesign):
        from .sampling import SamplingCandidate

        return SamplingCandidate(mechanism).predicted_error(rows, {"sets": sets})
    return predicted_error(mechanism, rows, {"sets": sets})


def _erased(mechanism, sets) -> list[tuple]:
    """Marginals no number of rows recovers: a zero eigenvalue, or (sampling designs) never reported together."""
    return _predicted(mechanism, STRUCTURAL_ROWS, sets).erased


def _label(attrs, names) -> str:
    return column_set_text(names[i] for i in attrs)


def _too_wide(mechanism, attrs) -> bool:
    """A sampling design's records randomize fewer columns from the data than the marginal has: no record carries
    them together, whatever the epsilon."""
    from ..sampling import SamplingDesign

    return isinstance(mechanism, SamplingDesign) and len(attrs) > mechanism.m


def _refusal(mechanism, bad, names) -> str:
    """Why the erased needed marginals ``bad`` cannot be estimated, and the way out: a design whose records report
    all their columns for the ones wider than a sampling design's records, the general way out for the others."""
    wide = [a for a in bad if _too_wide(mechanism, a)]
    other = [a for a in bad if not _too_wide(mechanism, a)]
    parts = []
    if wide:
        parts.append(
            f"{', '.join(_label(a, names) for a in wide)} cannot be estimated: "
            f"{never_together(mechanism.method, mechanism.m, max(len(a) for a in wide))}"
        )
    if other:
        parts.append(
            f"{', '.join(_label(a, names) for a in other)} cannot be estimated from this design (an eigenvalue of "
            f"the mechanism is 0); the way out: {way_out()}"
        )
    return "; and ".join(parts)


def check_release(mechanism, names, needed=None, allow: bool = False) -> list[str]:
    """Raise InputError if a needed marginal (list of lists of names) is non-identifiable and ``allow`` is
    False; return the notes for the manifest and report."""
    names = list(names)
    notes = []
    if needed:
        index = {n: i for i, n in enumerate(names)}
        unknown = [n for s in needed for n in s if n not in index]
        if unknown:
            raise InputError(f"needed_marginals: {unknown[0]!r} is not a randomized column")
        sets = [tuple(sorted(index[n] for n in s)) for s in needed]
        bad = _erased(mechanism, sets)
        if bad:
            shown = ", ".join(_label(a, names) for a in bad)
            if not allow:
                raise InputError(
                    f"refusing to release: the needed marginal(s) {_refusal(mechanism, bad, names)}; or override "
                    "with --allow-unidentifiable (configuration key allow_unidentifiable)"
                )
            notes.append(f"released although the needed marginal(s) {shown} cannot be estimated (override given)")
    k = len(names)
    if k >= 2 and k + comb(k, 2) <= NOTE_LIMIT:
        bad = _erased(mechanism, [(i,) for i in range(k)] + [(i, j) for i in range(k) for j in range(i + 1, k)])
        if bad:
            shown = ", ".join(_label(a, names) for a in bad[:20]) + (" ..." if len(bad) > 20 else "")
            notes.append(f"{len(bad)} marginal(s) cannot be estimated from this release: {shown}")
    return notes


def uninformative_tables(mechanism, sets, rows: int) -> list[MarginalError]:
    """The marginals of ``sets`` (tuples of column indices) that are not erased but on which, at ``rows`` rows, the
    data remove less than NO_INFORMATION of the prior's spread (:attr:`.predicted.MarginalError.information`)."""
    errors = _predicted(mechanism, rows, [tuple(sorted(s)) for s in sets]).marginals
    return [e for e in errors if e.no_information]


def _share(information: float) -> str:
    """A share of the prior's spread for people to read: "0.34 %"."""
    return f"{100 * information:.2g} %"


def _at_rows(err: MarginalError, rows: int) -> str:
    """The words "at 309 rows", with the rows the design expects to report the table when fewer do (sampling
    designs: a prediction, not the count of the records that do report it, which only the release's data give)."""
    expected = f"{err.rows:,.0f}" if err.rows >= 10 else f"{err.rows:.2g}"
    reporting = f" (the design expects about {expected} of them to report this table)" if err.rows < rows else ""
    from ..release.schema import rows_text

    return f"at {rows_text(int(rows))}{reporting}"


def uninformative_notes(mechanism, names, needed, rows: int) -> list[str]:
    """Notes for the manifest and report: one per needed marginal (list of lists of names, as ``check_release``
    takes them) that carries almost no information at the release's ``rows`` (:func:`uninformative_tables`); a
    warning, never a refusal. Erased marginals are :func:`check_release`'s, which also refuses unknown names (skipped
    here)."""
    if not needed:
        return []
    names = list(names)
    index = {n: i for i, n in enumerate(names)}
    sets = [tuple(index[n] for n in s) for s in needed if all(n in index for n in s)]
    found = uninformative_tables(mechanism, sets, rows)
    notes = [
        f"table {_label(e.attributes, names)}: the data remove {_share(e.information)} of the prior's uncertainty "
        f"{_at_rows(e, rows)}: its estimate will be close to uniform whatever the data; more epsilon, fewer columns "
        "or more rows"
        for e in found[:SHOWN_TABLES]
    ]
    if len(found) > SHOWN_TABLES:
        notes.append(
            f"and {len(found) - SHOWN_TABLES} more needed table(s) carry almost no information at {int(rows):,} rows"
        )
    return notes


#: What a table with almost no information does to each use of it (:func:`estimate_information`): the default
#: estimate, the other estimates, the tests of association.
NO_INFORMATION_EFFECT = {
    "map": "the estimate is close to uniform (the prior) whatever the data; intervals span nearly everything",
    "estimate": "the estimate is mostly randomization noise; intervals span nearly everything",
    "tests": "the tests have almost no power: a large p-value says nothing about independence",
}


#: What a table too noisy for the unbiased estimate (but with some information) does to each use of it
#: (:func:`estimate_information`), keyed as NO_INFORMATION_EFFECT.
TOO_NOISY_EFFECT = {
    "map": "the shown estimate leans on the prior",
    "estimate": "the estimate is mostly randomization noise",
    "tests": "the tests have little power: a large p-value says little about independence",
}


def estimate_information(manifest: dict, mechanism, names, effect: str = "map") -> dict:
    """How much a release says about the table of the attributes ``names``, for an estimate's ``info`` or a
    test's output: ``information`` (the share of the prior's spread the data remove at the release's row count,
    :attr:`.predicted.MarginalError.information`; for a sampling release, from the rows expected to report the
    table), ``no_information`` (below NO_INFORMATION), ``too_noisy`` (the unbiased estimate's predicted cell
    standard deviation reaches MAX_CELL_SD: :attr:`.predicted.MarginalError.too_noisy`), and then one warning
    sentence: ``uninformative`` without information, else ``too_noisy_warning`` when too noisy; ``effect`` keys
    NO_INFORMATION_EFFECT and TOO_NOISY_EFFECT (an estimation method other than "map" reads as "estimate"). An
    erased table gets information 0, both flags False and no sentence (the estimate's own ``not_identifiable``
    says it)."""
    from ..estimation.release_source import attribute_index

    idx = attribute_index(manifest, list(names))
    rows = int(manifest["rows"])
    (err,) = _predicted(mechanism, rows, [tuple(sorted(idx))]).marginals
    out: dict = {"information": err.information, "no_information": err.no_information, "too_noisy": err.too_noisy}
    label = _label(idx, [str(a["name"]) for a in manifest["attributes"]])  # in the order asked
    if err.no_information:
        out["uninformative"] = (
            f"{_at_rows(err, rows)} this release carries almost no information on {label}: the data remove "
            f"{_share(err.information)} of the prior's uncertainty; "
            + NO_INFORMATION_EFFECT.get(effect, NO_INFORMATION_EFFECT["estimate"])
        )
    elif err.too_noisy:
        out["too_noisy_warning"] = (
            f"{_at_rows(err, rows)} the unbiased estimate of {label} has a standard error of about "
            f"{100 * err.max_cell_sd:,.0f} percentage points: its intervals span everything; "
            + TOO_NOISY_EFFECT.get(effect, TOO_NOISY_EFFECT["estimate"])
        )
    return out


def effect_of(estimate) -> str:
    """The ``effect`` key of :func:`estimate_information` for a MarginalEstimate: its method, except that a default
    estimate whose 1-way prior the release lowered (estimation.pooled_prior) leans less on the prior than the
    "map" sentences say, and reads as "estimate"."""
    return "estimate" if "prior_lowered" in estimate.info else estimate.method


#: The keys of :func:`estimate_information`'s warning sentences, as the CLI and the Analyse tab print them.
INFORMATION_WARNINGS = ("uninformative", "too_noisy_warning")


def release_rows_notes(mechanism, names, config, rows: int) -> list[str]:
    """``perturb_file``'s ``rows_check`` (the CLI's and the window's): :func:`uninformative_notes` of the
    configuration's needed marginals at the rows released."""
    return uninformative_notes(mechanism, names, config.needed_marginals, rows)
