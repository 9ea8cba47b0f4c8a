"""The protocol a design kind implements to be ranked by predicted error (``auto`` with a whole-record target).

A candidate is a complete release method (mechanism or sampling design) with exact accounting:

    name: str
    whole_record_epsilon() -> float          # recomputed from the design itself
    attribute_epsilons() -> np.ndarray       # eps_i of each attribute, recomputed
    predicted_error(n, marginals, prior=None, given_data=False) -> PredictedError

``marginals`` is a spec understood by :func:`optrr_engine.utility.resolve_marginals` ({"orders": [1, 2]} or
{"sets": [(0, 2), ...]}, 0-based). A sampling design implements ``predicted_error`` with
:func:`optrr_engine.utility.predicted_error_with_coverage` (n_eff = n * P(A reported together)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ..mechanism import Mechanism
from .predicted import PredictedError, predicted_error


@runtime_checkable
class DesignCandidate(Protocol):
    name: str

    def whole_record_epsilon(self) -> float: ...

    def attribute_epsilons(self) -> np.ndarray: ...

    def predicted_error(self, n: int, marginals=None, prior=None, given_data: bool = False) -> PredictedError: ...


@dataclass
class MechanismCandidate:
    """A pattern-structured mechanism (every design of optrr_engine.designs) as a candidate."""

    name: str
    mechanism: Mechanism
    info: dict = field(default_factory=dict)

    def whole_record_epsilon(self) -> float:
        return float(self.mechanism.overall_epsilon())

    def attribute_epsilons(self) -> np.ndarray:
        return self.mechanism.attribute_epsilons()

    def predicted_error(self, n: int, marginals=None, prior=None, given_data: bool = False) -> PredictedError:
        return predicted_error(self.mechanism, n, marginals, prior, given_data)


def candidate_of(design) -> DesignCandidate:
    """The candidate of a mechanism (MechanismCandidate, named by its method) or of a sampling design
    (SamplingCandidate): one way to predict the error of either."""
    from ..sampling.design import SamplingDesign
    from .sampling import SamplingCandidate

    if isinstance(design, SamplingDesign):
        return SamplingCandidate(design)
    return MechanismCandidate(getattr(design, "method", "design"), design)

