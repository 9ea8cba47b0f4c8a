"""Estimating true joint distributions from perturbed data (docs/math.md §5-6).

- :func:`estimate_from_counts` / :func:`estimate_marginal`: smoothed maximum likelihood (the default), maximum
  likelihood (IBU), unbiased or clip-and-rescale estimate of the joint distribution of a few attributes, with
  standard errors and confidence intervals (of the unbiased estimate);
- :func:`estimate_release`: the same, streaming a release (perturbed file + manifest);
- :class:`StructuredOperator`: M, M^{-1} and the covariance algebra by per-axis operations.
"""

from .counts import StreamingCounter, count_codes
from .estimate import DEFAULT_METHOD, METHODS, estimate_from_counts, estimate_marginal, z_value
from .nonnegative import clip_and_rescale, iterative_bayesian_update
from .operator import StructuredOperator
from .release_estimate import count_release, estimate_release
from .result import MarginalEstimate

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "MarginalEstimate",
    "StreamingCounter",
    "StructuredOperator",
    "clip_and_rescale",
    "count_codes",
    "count_release",
    "estimate_from_counts",
    "estimate_marginal",
    "estimate_release",
    "iterative_bayesian_update",
    "z_value",
]
