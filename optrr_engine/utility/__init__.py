"""Predicted utility of a design without the data (issue 13, docs/math.md §6).

- :func:`predicted_error`: expected AVD and squared error of the unbiased estimates of the marginals a user
  needs, for a mechanism and n rows, under a public prior; names the non-identifiable marginals;
- :class:`DesignCandidate`: the protocol every design kind implements so designs can be ranked by it;
- :func:`resolve_marginals`: "all 1-way, 2-way, ..." or a list of attribute sets -> attribute tuples.
"""

from .candidate import DesignCandidate, MechanismCandidate
from .marginals import parse_marginals, resolve_marginals
from .predicted import MarginalError, PredictedError, predicted_error, predicted_error_with_coverage
from .prior import IndependentPrior, TablePrior, UniformPrior

__all__ = [
    "DesignCandidate",
    "IndependentPrior",
    "MarginalError",
    "MechanismCandidate",
    "PredictedError",
    "TablePrior",
    "UniformPrior",
    "parse_marginals",
    "predicted_error",
    "predicted_error_with_coverage",
    "resolve_marginals",
]
