"""Block products: a mechanism over disjoint attribute groups is the product of per-group mechanisms.

eps_total adds over groups; each attribute's epsilon is its group's. Kronecker is the product of
one-attribute groups; RR-Clusters is the product of per-cluster joint GRR; an optimized design per
group is the same construction with a better block.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..blocks import SinglesBlock
from ..errors import InputError
from ..mechanism import Mechanism


def product_of(sizes, groups: Sequence[Sequence[int]], mechanisms: Sequence[Mechanism]) -> Mechanism:
    """Place each group's mechanism (on its attributes, in the group's order) into one product."""
    sizes = np.asarray(sizes, dtype=np.int64)
    parts = []
    for group, mech in zip(groups, mechanisms, strict=True):
        attrs = np.asarray(group, dtype=np.int64)
        if mech.k != attrs.size:
            raise InputError("a group's mechanism has the wrong number of attributes")
        for pos, block in mech.parts:
            parts.append((attrs[pos], block))
    return Mechanism(sizes, parts)


def grouped_design(method: str, sizes, epsilons, groups: Sequence[Sequence[int]]) -> Mechanism:
    """Run ``method`` on each group with its attributes' eps_i and take the product."""
    from . import run_design

    sizes = np.asarray(sizes, dtype=np.int64)
    eps = np.asarray(epsilons, dtype=float)
    mechs = [run_design(method, sizes[list(g)], eps[list(g)]).mechanism for g in groups]
    return product_of(sizes, groups, mechs)


def joint_grr_clusters(sizes, cluster_epsilons: Sequence[float], groups: Sequence[Sequence[int]]) -> Mechanism:
    """RR-Clusters (Domingo-Ferrer & Soria-Comas): GRR on each cluster's Cartesian product with eps_C."""
    sizes = np.asarray(sizes, dtype=np.int64)
    mechs = []
    for g, e in zip(groups, cluster_epsilons, strict=True):
        g = list(g)
        if len(g) == 1:
            from ..blocks import IndependentBlock

            mechs.append(Mechanism.single(IndependentBlock.from_epsilons(sizes[g], [e])))
        else:
            mechs.append(Mechanism.single(SinglesBlock.joint_grr(sizes[g], float(e))))
    return product_of(sizes, groups, mechs)
