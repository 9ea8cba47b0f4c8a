"""Before a release is written: refuse when a marginal the user marked as needed cannot be estimated from it.

Only the structural criterion counts here (an eigenvalue of the mechanism on the marginal is 0 relative to the
largest, see :mod:`.identifiability`): no number of rows recovers such a marginal. The release also notes every
non-identifiable 1- and 2-way marginal (when there are at most ``NOTE_LIMIT`` of them to check).
"""

from __future__ import annotations

from math import comb

from ..errors import InputError
from .identifiability import way_out
from .marginals import column_set_text
from .predicted import predicted_error

#: Rows used to separate structural non-identifiability from "uninformative at n rows".
STRUCTURAL_ROWS = 10**15
#: Most 1-/2-way marginals checked for the release notes.
NOTE_LIMIT = 5000


def _erased(mechanism, sets) -> list[tuple]:
    """Marginals no number of rows recovers: a zero eigenvalue, or (sampling designs) never reported together."""
    from ..sampling import SamplingDesign

    if isinstance(mechanism, SamplingDesign):
        from .sampling import SamplingCandidate

        res = SamplingCandidate(mechanism).predicted_error(STRUCTURAL_ROWS, {"sets": sets})
    else:
        res = predicted_error(mechanism, STRUCTURAL_ROWS, {"sets": sets})
    return res.erased


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
        n, m = max(len(a) for a in wide), mechanism.m
        columns = "both columns" if n == 2 else f"all {n} columns"
        parts.append(
            f"{', '.join(_label(a, names) for a in wide)} cannot be estimated from this {mechanism.method} design: "
            f"each record randomizes {m} column{'s' if m != 1 else ''} from the data, so no record carries "
            f"{columns} of the table together, whatever the epsilon; choose a design whose records report "
            f"{columns} (sample-m with sample_m {n} or more, auto, utility)"
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
