"""When a marginal cannot be learned from a release.

A marginal A is **non-identifiable** when some eigenvalue lambda_T (T a non-empty subset of A) of the mechanism
is below ``MIN_REL_EIGENVALUE`` relative to the largest one (lambda_empty = 1): that contrast of the table
is erased by the mechanism, so no number of rows recovers it (e.g. every 2-way association of 3 binary
attributes at whole-record eps <= 1.5 under the design with the lowest whole-record epsilon). It is
**uninformative at n rows** when the predicted standard deviation of some cell of the unbiased estimate is
at least ``MAX_CELL_SD`` = 0.5: that estimate's 95 % interval (+- 1.96 sd) is then wider than the whole
probability range at this n (the threshold was 1 until 2026-11-27: a census column's unbiased estimate with a
standard error of 0.66, its interval [0, 1] and its point estimate reversed, was not called too noisy). The
default (smoothed) estimate of such a marginal is still defined: it leans on its prior where the data say little,
and its predicted error (:mod:`.default_error`) measures how much.
Only the first kind (``MarginalError.erased``) refuses a release and ranks a design last; the second is a warning.
"""

from __future__ import annotations

import numpy as np

#: Eigenvalues below this fraction of the largest (which is 1) make a marginal non-identifiable at any n.
MIN_REL_EIGENVALUE = 1e-9
#: A cell whose predicted standard deviation (unbiased estimate) reaches this cannot be learned by it at the given n.
MAX_CELL_SD = 0.5


def zero_eigenvalue(eigenvalues: np.ndarray) -> bool:
    lam = np.abs(np.asarray(eigenvalues, dtype=float))
    return bool(np.min(lam) < MIN_REL_EIGENVALUE * np.max(lam))


def way_out(epsilon: str = "epsilon", kronecker: str = "kronecker", utility: str = "--method utility",
            marginals: str = "marginals") -> str:
    """What to change when a needed marginal cannot be estimated: the one text of the CLI, the release check and
    the GUI, each naming epsilon, the designs and the marginals in its user's words (defaults: the CLI's)."""
    return (
        f"a higher whole-record {epsilon}, other attribute weights, another design (e.g. {kronecker}, or {utility} "
        f"with these {marginals}), or fewer needed {marginals}"
    )


def never_together(method: str, m: int, width: int) -> str:
    """Why a marginal of ``width`` columns cannot be estimated from a sampling design whose records randomize ``m``
    < ``width`` columns from the data, and the way out (no epsilon helps): the one text of the design command's
    warning and the release's refusal."""
    columns = "both columns" if width == 2 else f"all {width} columns"
    return (
        f"each record of this {method} design randomizes {m} column{'s' if m != 1 else ''} from the data, so no "
        f"record carries {columns} of the table together, whatever the epsilon; the way out: a design whose records "
        f"report {columns} (sample-m with sample_m {width} or more, auto, utility), or fewer needed marginals"
    )
