"""When a marginal cannot be learned from a release.

A marginal A is **non-identifiable** when some eigenvalue lambda_T (T a non-empty subset of A) of the mechanism
is below ``MIN_REL_EIGENVALUE`` relative to the largest one (lambda_empty = 1): that contrast of the table
is erased by the mechanism, so no number of rows recovers it (e.g. every 2-way association of 3 binary
attributes at whole-record eps <= 1.5 under the design with the lowest whole-record epsilon). It is
**uninformative at n rows** when the predicted standard deviation of some cell of the unbiased estimate is
at least ``MAX_CELL_SD`` = 1: the error then spans the whole probability range, so nothing can be learned
about that cell at this n.
"""

from __future__ import annotations

import numpy as np

#: Eigenvalues below this fraction of the largest (which is 1) make a marginal non-identifiable at any n.
MIN_REL_EIGENVALUE = 1e-9
#: A cell whose predicted standard deviation reaches this cannot be learned at the given n.
MAX_CELL_SD = 1.0


def zero_eigenvalue(eigenvalues: np.ndarray) -> bool:
    lam = np.abs(np.asarray(eigenvalues, dtype=float))
    return bool(np.min(lam) < MIN_REL_EIGENVALUE * np.max(lam))


def way_out() -> str:
    return (
        "the way out: a higher whole-record epsilon, other attribute weights, another design "
        "(e.g. kronecker or --method utility with these marginals), or fewer needed marginals"
    )
