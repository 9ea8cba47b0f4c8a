"""RR-Independent and RR-Joint (Domingo-Ferrer & Soria-Comas, Protocols 1-2) and their estimates.

- RR-Independent: GRR on each attribute (= the Kronecker design); the paper estimates a joint distribution as
  the product of the attributes' estimated marginals (Protocol 1 step 10), which assumes independence;
- RR-Joint: GRR on the Cartesian product of all attributes with one epsilon (accurate only when n >> prod a_i);
- RR-Clusters estimates: per-cluster joint estimates, combined across clusters as independent.
The structured estimator (optrr_engine.estimation) needs none of these independence assumptions.
"""

from __future__ import annotations

import numpy as np

from ..blocks import IndependentBlock, SinglesBlock
from ..mechanism import Mechanism


def rr_independent_mechanism(sizes, epsilons) -> Mechanism:
    return Mechanism.single(IndependentBlock.from_epsilons(sizes, epsilons))


def rr_joint_mechanism(sizes, epsilon: float) -> Mechanism:
    """GRR on the whole Cartesian product: P(y = x) = e^eps P(y = x') for every other record x'."""
    sizes = list(sizes)
    if len(sizes) == 1:
        return Mechanism.single(IndependentBlock.from_epsilons(sizes, [epsilon]))
    return Mechanism.single(SinglesBlock.joint_grr(sizes, float(epsilon)))


def product_distribution(marginals) -> np.ndarray:
    """Outer product of 1-D (or n-D) distributions, axes in the given order."""
    out = np.ones(())
    for p in marginals:
        out = np.multiply.outer(out, np.asarray(p, dtype=float))
    return out


def cluster_product(attrs, clusters, cluster_estimates) -> np.ndarray:
    """Distribution on ``attrs`` from per-cluster joint estimates, assuming the clusters are independent.

    ``cluster_estimates[c]`` is a distribution over the attributes ``clusters[c]`` (in that order).
    """
    attrs = [int(a) for a in attrs]
    pieces, order = [], []
    for cluster, est in zip(clusters, cluster_estimates, strict=True):
        inside = [a for a in cluster if a in attrs]
        if not inside:
            continue
        keep = tuple(cluster.index(a) for a in inside)
        drop = tuple(i for i in range(len(cluster)) if i not in keep)
        pieces.append(np.asarray(est).sum(axis=drop) if drop else np.asarray(est))
        order.extend(inside)
    joint = product_distribution(pieces)
    return np.transpose(joint, [order.index(a) for a in attrs])
