"""The result of a design: a mechanism plus what was asked and how it was found."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..mechanism import Mechanism
from ..tolerance import REL_TOL, eps_equal

#: Achieved epsilons within this relative tolerance of the request count as equal (see optrr_engine.tolerance).
EPS_MATCH_TOL = REL_TOL


@dataclass
class Design:
    method: str
    mechanism: Mechanism
    requested_epsilons: np.ndarray
    design_seconds: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def sizes(self) -> np.ndarray:
        return self.mechanism.sizes

    @property
    def attribute_epsilons(self) -> np.ndarray:
        """Recomputed from the mechanism (never copied from the request)."""
        return self.mechanism.attribute_epsilons()

    @property
    def overall_epsilon(self) -> float:
        return self.mechanism.overall_epsilon()

    def epsilon_changes(self, tol: float = EPS_MATCH_TOL) -> list[dict]:
        """Attributes whose achieved epsilon differs from the request, with the direction."""
        achieved = self.attribute_epsilons
        out = []
        for i, (req, ach) in enumerate(zip(self.requested_epsilons, achieved, strict=True)):
            if not eps_equal(ach, req, tol):
                out.append(
                    {
                        "attribute": i,
                        "requested": float(req),
                        "achieved": float(ach),
                        "direction": "higher (weaker privacy)" if ach > req else "lower (stronger privacy)",
                    }
                )
        return out

    def exceeds_request(self, tol: float = EPS_MATCH_TOL) -> bool:
        return any(c["achieved"] > c["requested"] for c in self.epsilon_changes(tol))

    def to_json_dict(self, include_patterns: bool | None = None) -> dict:
        k = self.mechanism.k
        out = {
            "method": self.method,
            "sizes": self.sizes.tolist(),
            "requested_epsilons": [float(e) for e in self.requested_epsilons],
            "attribute_epsilons": [float(e) for e in self.attribute_epsilons],
            "overall_epsilon": self.overall_epsilon,
            "sum_requested_epsilons": float(np.sum(self.requested_epsilons)),
            "design_seconds": self.design_seconds,
            "epsilon_changes": self.epsilon_changes(),
            "exceeds_request": self.exceeds_request(),
        }
        out.update({k_: v for k_, v in self.info.items() if k_ not in out})
        if include_patterns is None:
            include_patterns = k <= 16
        if include_patterns:
            out["pattern_probabilities"] = [float(v) for v in np.exp(self.mechanism.log_pattern_probs())]
        return out
