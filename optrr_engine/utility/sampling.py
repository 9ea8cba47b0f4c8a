"""Sampling designs (optrr_engine.sampling) as design candidates ranked by predicted error.

Marginal A is estimated from the n * coverage(A) records that report all of A, through the pooled channel
whose eigenvalues are sum_{S >= A} (w_S / coverage(A)) lambda_T(M_{S,A}) (estimation/sampled.py, with the
expected subset counts); RS+FD uses all n records and its 1-way channel. Its |A| >= 2 eigenvalues are 0: no
record reports two real values together, so those marginals are treated exactly as SMP's joint marginals (no
rows report them: erased, no predicted error of any estimate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..estimation.sampled import marginal_operator
from ..sampling.design import MAX_SUBSETS, SamplingDesign
from .marginals import resolve_marginals
from .predicted import MarginalError, PredictedError, error_of_marginal
from .prior import UniformPrior

#: Why an RS+FD joint marginal has no predicted error (it is erased, as SMP's joint marginals are).
RSFD_JOINT_REASON = (
    "never reported together: each RS+FD record carries the real value of one attribute and fake values for the "
    "others, so joint distributions cannot be recovered"
)


@dataclass
class SamplingCandidate:
    design: SamplingDesign
    name: str = ""
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.name:
            self.name = self.design.method if self.design.method != "sample-m" else f"sample-{self.design.m}"
        self.info.setdefault("suppression", self.design.suppression_text())

    def whole_record_epsilon(self) -> float:
        return self.design.whole_record_epsilon()

    def attribute_epsilons(self) -> np.ndarray:
        return self.design.attribute_epsilons()

    def predicted_error(self, n: int, marginals=None, prior=None, given_data: bool = False) -> PredictedError:
        """As :func:`~optrr_engine.utility.predicted.predicted_error` (``given_data``: against the data's own
        marginals)."""
        design = self.design
        prior = prior or UniformPrior()
        out = PredictedError(int(n))
        for attrs in resolve_marginals(marginals, design.k):
            out.marginals.append(self._one(attrs, float(n), prior, float(n) if given_data else None))
        return out

    def _one(self, attrs, n: float, prior, data_rows=None) -> MarginalError:
        design = self.design
        sizes = design.sizes
        if design.fills_fakes:
            if len(attrs) > 1:
                # no record carries the real values of two attributes together: not estimable exactly as SMP's
                # joint marginals (0 rows report them: erased, no predicted error of any estimate, shown as "-")
                err = error_of_marginal(sizes, attrs, np.ones(1 << len(attrs)), prior.marginal(sizes, attrs), 0.0)
                return replace(err, reason=RSFD_JOINT_REASON)
            lam = marginal_operator(design, attrs).eigenvalues
            return error_of_marginal(sizes, attrs, lam, prior.marginal(sizes, attrs), n, data_rows)
        expected = np.where(design.holding(attrs), np.asarray(design.probs, dtype=float), 0.0)
        coverage = float(expected.sum())
        if coverage <= 0:
            return error_of_marginal(sizes, attrs, np.ones(1 << len(attrs)), prior.marginal(sizes, attrs), 0.0)
        lam = marginal_operator(design, attrs, expected).eigenvalues
        return error_of_marginal(sizes, attrs, lam, prior.marginal(sizes, attrs), n * coverage, data_rows)


def smp_weights(sizes, target: float, marginals=None, prior=None) -> np.ndarray | None:
    """Sampling weights of SMP minimising the mean predicted AVD of the unbiased estimates of the needed 1-way
    marginals (a closed form; the default estimate's predicted error is within a fraction of a percent of its
    own minimum there); None when some needed marginal has 2 or more attributes (SMP cannot estimate it).

    Attribute j reported by a fraction w_j of the n rows has predicted AVD c_j / sqrt(n w_j) (GRR at the
    whole-record epsilon; c_j from the prior), so the mean over the needed j is minimised on the simplex by
    w_j proportional to c_j^(2/3) (Lagrange; the objective is convex) and w_j = 0 for attributes not needed."""
    from ..sampling import make_sampling_design

    k = len(sizes)
    sets = resolve_marginals(marginals, k)
    if not sets or any(len(a) != 1 for a in sets):
        return None
    uniform = SamplingCandidate(make_sampling_design("smp", sizes, target))
    needed = sorted({a[0] for a in sets})
    pe = uniform.predicted_error(k, {"sets": [(j,) for j in needed]}, prior)  # n w_j = 1 row each
    c = np.zeros(k)
    c[needed] = [m.expected_avd for m in pe.marginals]
    w = c ** (2.0 / 3.0)
    return w / w.sum()


def sampling_candidates(
    sizes, target: float, max_m: int = 3, marginals=None, prior=None, weights=None
) -> list[SamplingCandidate]:
    """SMP, sample-m for m = 2..max_m (m < k) and RS+FD at the whole-record epsilon ``target``, for ranking.
    SMP and RS+FD sample attribute j with the caller's ``weights`` when given (the columns' weights, which is
    what a release of the configuration would use); without them, when every needed marginal is 1-way, SMP
    uses the weights of :func:`smp_weights` (uniform when all attributes are needed and alike). SMP's weights
    are in ``info["sampling_weights"]`` whenever they are not uniform by default."""
    from ..sampling import make_sampling_design

    k = len(sizes)
    w = smp_weights(sizes, target, marginals, prior) if weights is None else np.asarray(weights, dtype=float)
    smp = make_sampling_design("smp", sizes, target, weights=w)
    info = {} if w is None else {"sampling_weights": [float(x) for x in smp.probs]}
    out = [SamplingCandidate(smp, info=info)]
    out += [
        SamplingCandidate(make_sampling_design("sample-m", sizes, target, m=m))
        for m in range(2, min(max_m, k - 1) + 1)
        if math.comb(k, m) <= MAX_SUBSETS  # beyond it sample-m refuses; SMP and RS+FD still compete
    ]
    out.append(SamplingCandidate(make_sampling_design("rsfd", sizes, target, weights=weights)))
    return out
