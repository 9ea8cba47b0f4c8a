"""Kronecker product of per-attribute GRR (Wang et al.): eps_total = sum eps_i."""

from __future__ import annotations

from ..blocks import IndependentBlock
from ..mechanism import Mechanism


def kronecker(sizes, epsilons, ctl=None) -> tuple[Mechanism, dict]:
    return Mechanism.single(IndependentBlock.from_epsilons(sizes, epsilons)), {}
