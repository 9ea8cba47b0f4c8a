"""Block types: the building pieces of a mechanism (a product of blocks on disjoint attributes)."""

from .base import Block
from .classes import ClassBlock
from .independent import IndependentBlock
from .pattern_table import PatternBlock
from .pooled import PooledBlock
from .singles import SinglesBlock

BLOCK_TYPES = {cls.kind: cls for cls in (PatternBlock, IndependentBlock, SinglesBlock, ClassBlock, PooledBlock)}


def block_from_dict(d: dict) -> Block:
    from ..errors import InputError

    kind = d.get("kind")
    if kind not in BLOCK_TYPES:
        raise InputError(f"unknown mechanism block kind {kind!r}")
    return BLOCK_TYPES[kind].from_dict(d)


__all__ = [
    "Block",
    "ClassBlock",
    "IndependentBlock",
    "PatternBlock",
    "PooledBlock",
    "SinglesBlock",
    "block_from_dict",
]
