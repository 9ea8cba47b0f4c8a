"""RR-Clusters (Domingo-Ferrer & Soria-Comas, Algorithm 1) and the mechanism it releases with.

Algorithm 1: start from singleton clusters; walk the cluster pairs in descending dependence (the dependence
of two clusters is the largest dependence between an attribute of one and an attribute of the other); while
the current dependence is >= Td, merge the pair if the merged cluster has at most Tv value combinations
(then recompute and restart from the top of the list), else move to the next pair.

Each cluster is then perturbed jointly: the paper's GRR on the cluster's Cartesian product with
eps_C = sum of its attributes' eps_i, or (ours) an optimized design spending the same eps_C.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np

from ..errors import InputError
from ..mechanism import Mechanism
from .dependence import dependence_matrix

DEPENDENCE_SOURCES = ("raw", "randomized")


@dataclass
class Clustering:
    clusters: list[list[int]]
    trace: list[dict] = field(default_factory=list)


def _pair_list(clusters, dependence):
    pairs = []
    for a in range(len(clusters)):
        for b in range(a + 1, len(clusters)):
            dep = max(dependence[i, j] for i in clusters[a] for j in clusters[b])
            pairs.append((float(dep), a, b))
    pairs.sort(key=lambda t: (-t[0], t[1], t[2]))  # descending dependence, ties by position
    return pairs


def cluster_attributes(dependence, sizes, tv: float, td: float) -> Clustering:
    """Algorithm 1 on a symmetric m x m dependence matrix; clusters are sorted lists of attribute indices."""
    dependence = np.asarray(dependence, dtype=float)
    sizes = [int(a) for a in sizes]
    m = len(sizes)
    if dependence.shape != (m, m):
        raise InputError(f"the dependence matrix must be {m} x {m}")
    clusters = [[i] for i in range(m)]
    trace: list[dict] = []
    pairs = _pair_list(clusters, dependence)
    pos = 0
    while pos < len(pairs) and pairs[pos][0] >= td:
        dep, a, b = pairs[pos]
        merged = sorted(clusters[a] + clusters[b])
        combos = prod(sizes[i] for i in merged)
        if combos <= tv:
            trace.append({"action": "merge", "clusters": [clusters[a], clusters[b]], "dependence": dep})
            clusters = [c for k, c in enumerate(clusters) if k not in (a, b)] + [merged]
            clusters.sort(key=lambda c: c[0])
            pairs = _pair_list(clusters, dependence)
            pos = 0
        else:
            trace.append(
                {"action": "skip", "clusters": [clusters[a], clusters[b]], "dependence": dep, "combinations": combos}
            )
            pos += 1
    return Clustering(clusters, trace)


def cluster_mechanism(sizes, epsilons, clusters, within: str = "joint_grr") -> Mechanism:
    """Product over clusters: joint GRR with eps_C = sum eps_i, or design ``within`` at whole-cluster eps_C."""
    from ..blocks import IndependentBlock
    from ..designs.product import joint_grr_clusters, product_of

    sizes = np.asarray(sizes, dtype=np.int64)
    eps = np.asarray(epsilons, dtype=float)
    cluster_eps = [float(eps[list(c)].sum()) for c in clusters]
    if within == "joint_grr":
        return joint_grr_clusters(sizes, cluster_eps, clusters)
    from ..budget import distribute_budget

    mechs = []
    for c, e in zip(clusters, cluster_eps, strict=True):
        c = list(c)
        if len(c) == 1:
            mechs.append(Mechanism.single(IndependentBlock.from_epsilons(sizes[c], [e])))
        else:
            mechs.append(distribute_budget(within, sizes[c], eps[c], e).design.mechanism)
    return product_of(sizes, clusters, mechs)


@dataclass
class ClusterPlan:
    clusters: list[list[int]]
    dependence: np.ndarray
    trace: list[dict]
    mechanism: Mechanism
    within: str
    dependence_source: str
    first_round: Mechanism | None
    notes: list[str]

    @property
    def release_epsilon(self) -> float:
        return self.mechanism.overall_epsilon()

    @property
    def total_epsilon(self) -> float:
        """Sequential composition: first round (if any) + the clustered release."""
        first = self.first_round.overall_epsilon() if self.first_round is not None else 0.0
        return first + self.release_epsilon

    def to_json_dict(self) -> dict:
        return {
            "clusters": self.clusters,
            "within": self.within,
            "dependence_source": self.dependence_source,
            "release_epsilon": self.release_epsilon,
            "first_round_epsilon": None if self.first_round is None else self.first_round.overall_epsilon(),
            "total_epsilon": self.total_epsilon,
            "attribute_epsilons": self.mechanism.attribute_epsilons().tolist(),
            "notes": self.notes,
            "trace": self.trace,
        }


def plan_rr_clusters(
    codes,
    sizes,
    epsilons,
    tv: float,
    td: float,
    measure: str = "cramers_v",
    ordinal=None,
    dependence_source: str = "raw",
    first_round_epsilons=None,
    within: str = "joint_grr",
    rng: np.random.Generator | None = None,
) -> ClusterPlan:
    """Choose clusters (Algorithm 1) from raw or first-round randomized data, then build the release mechanism."""
    if dependence_source not in DEPENDENCE_SOURCES:
        raise InputError(f"dependence source must be one of {', '.join(DEPENDENCE_SOURCES)}")
    codes = np.asarray(codes)
    sizes = [int(a) for a in sizes]
    notes = []
    first = None
    if dependence_source == "raw":
        dep_codes = codes
        notes.append(
            "the clusters were chosen from the raw data: that choice is outside the epsilon guarantee "
            "(Domingo-Ferrer & Soria-Comas 4.2 assume it is not sensitive)"
        )
    else:
        if first_round_epsilons is None:
            raise InputError("a randomized first round needs its own per-attribute epsilons")
        from ..blocks import IndependentBlock

        first = Mechanism.single(IndependentBlock.from_epsilons(sizes, first_round_epsilons))
        rng = np.random.default_rng() if rng is None else rng
        dep_codes = first.sample(codes, rng)
        notes.append(
            f"the clusters were chosen from a first RR-Independent round with whole-record epsilon "
            f"{first.overall_epsilon():.6g}; by sequential composition the total epsilon is the sum of both rounds"
        )
    dependence = dependence_matrix(dep_codes, sizes, measure=measure, ordinal=ordinal)
    clustering = cluster_attributes(dependence, sizes, tv, td)
    mech = cluster_mechanism(sizes, epsilons, clustering.clusters, within)
    return ClusterPlan(clustering.clusters, dependence, clustering.trace, mech, within, dependence_source, first, notes)
