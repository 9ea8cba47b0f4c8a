"""A mechanism on k attributes: a product of blocks acting on disjoint attribute sets.

P(y | x) = prod_b X^b_{S(x_b, y_b)}. Whole-record epsilon adds over blocks, each attribute's
epsilon is that of its block, and sampling runs block by block. Everything reported is
recomputed from the blocks' parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .blocks import Block, block_from_dict
from .blocks.patterns import require_pattern_k, restrict_masks
from .errors import InputError

#: Tolerance of the self-check: absolute on the mass, relative on epsilons (optrr_engine.tolerance).
CHECK_TOL = 1e-9


@dataclass
class CheckReport:
    ok: bool
    mass_error: float
    attribute_error: float = 0.0
    overall_error: float = 0.0
    details: dict = field(default_factory=dict)


class Mechanism:
    def __init__(self, sizes: ArrayLike, parts: Sequence[tuple[ArrayLike, Block]]):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.parts: list[tuple[np.ndarray, Block]] = []
        seen = np.zeros(self.k, dtype=bool)
        for positions, block in parts:
            pos = np.asarray(positions, dtype=np.int64).ravel()
            if np.any((pos < 0) | (pos >= self.k)):
                raise InputError(f"a block's positions must lie in 0..{self.k - 1}")
            if pos.size != block.k:
                raise InputError("a block's positions do not match its number of attributes")
            if np.any(seen[pos]):
                raise InputError("blocks of a mechanism must act on disjoint attributes")
            if not np.array_equal(self.sizes[pos], block.sizes):
                raise InputError("a block's category counts do not match the mechanism's")
            seen[pos] = True
            self.parts.append((pos, block))
        if not seen.all():
            raise InputError("every attribute must belong to exactly one block")

    @classmethod
    def single(cls, block: Block) -> Mechanism:
        return cls(block.sizes, [(np.arange(block.k), block)])

    @property
    def k(self) -> int:
        return int(self.sizes.size)

    # -- accounting ------------------------------------------------------------------------
    def overall_epsilon(self) -> float:
        """eps_total = ln(max X / min X), the whole-record LDP guarantee (sums over blocks)."""
        return float(sum(b.overall_epsilon() for _, b in self.parts))

    def attribute_epsilons(self) -> np.ndarray:
        out = np.empty(self.k)
        for pos, b in self.parts:
            out[pos] = b.attribute_epsilons()
        return out

    def log_mass(self) -> float:
        return float(sum(b.log_mass() for _, b in self.parts))

    def log_pattern_probs(self) -> np.ndarray:
        """log X_S for every bitmask S over all k attributes (k <= 22)."""
        require_pattern_k(self.k)
        masks = np.arange(1 << self.k, dtype=np.int64)
        total = np.zeros(masks.size)
        for pos, b in self.parts:
            total += b.log_pattern_probs()[restrict_masks(masks, pos)]
        return total

    # -- structure ---------------------------------------------------------------------------
    def marginal(self, attributes: Sequence[int]) -> Mechanism:
        """The mechanism induced on ``attributes`` (global indices, in that order; docs/math.md §5). The 1- and
        2-way ones are kept (a design's summary asks for each of them several times: standard errors, predicted
        error); a mechanism never changes after it is built."""
        attrs = [int(a) for a in attributes]
        kept = self.__dict__.setdefault("_marginals", {})
        key = tuple(attrs)
        if key not in kept:
            if len(attrs) > 2:
                return self._marginal(attrs)
            kept[key] = self._marginal(attrs)
        return kept[key]

    def one_way_log_probs(self) -> np.ndarray:
        """Shape (k, 2): log P(same value), log P(one specific other value) of the mechanism induced on each
        attribute (``marginal([i])``'s pattern table), all attributes at once; kept like the marginals."""
        kept = self.__dict__.get("_one_way")
        if kept is None:
            kept = np.empty((self.k, 2))
            for pos, b in self.parts:
                kept[pos] = b.one_way_log_probs()
            self._one_way = kept
        return kept.copy()

    def _marginal(self, attrs: list[int]) -> Mechanism:
        if len(set(attrs)) != len(attrs) or any(a < 0 or a >= self.k for a in attrs):
            raise InputError(f"invalid attribute subset {attrs} for k = {self.k}")
        parts = []
        for pos, b in self.parts:
            local = [(new_idx, int(np.flatnonzero(pos == a)[0])) for new_idx, a in enumerate(attrs) if a in pos]
            if not local:
                continue
            new_positions = [n for n, _ in local]
            parts.append((new_positions, b.marginal([l for _, l in local])))
        return Mechanism(self.sizes[attrs], parts)

    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Perturb integer codes (n, k); each block independently (docs/math.md §7)."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.k:
            raise InputError(f"codes must have shape (rows, {self.k})")
        if len(self.parts) == 1 and np.array_equal(self.parts[0][0], np.arange(self.k)):
            return self.parts[0][1].sample(codes, rng)
        out = np.empty_like(codes)
        for pos, b in self.parts:
            out[:, pos] = b.sample(codes[:, pos], rng)
        return out

    # -- verification ------------------------------------------------------------------------
    def self_check(self, tol: float = CHECK_TOL) -> CheckReport:
        """Recompute mass (must be 1) and, for small k, epsilons from the full pattern table."""
        mass_error = abs(float(np.expm1(self.log_mass())))
        details = {}
        attr_err = overall_err = 0.0
        for idx, (_, b) in enumerate(self.parts):
            rep = b.verify_against_table(tol)
            if rep:
                details[f"block{idx}"] = rep
                mass_error = max(mass_error, rep["table_mass_error"])
                attr_err = max(attr_err, rep["table_attribute_error"])
                overall_err = max(overall_err, rep["table_overall_error"])
        eps = self.attribute_epsilons()
        finite = bool(np.all(np.isfinite(eps)) and np.isfinite(self.overall_epsilon()))
        ok = finite and mass_error <= tol and attr_err <= tol and overall_err <= tol
        return CheckReport(ok, mass_error, attr_err, overall_err, details)

    # -- serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "sizes": self.sizes.tolist(),
            "blocks": [{"positions": pos.tolist(), **b.to_dict()} for pos, b in self.parts],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Mechanism:
        """Rebuild from :meth:`to_dict`; anything edited or malformed is a one-line InputError."""
        from .validation import check_sizes

        try:
            sizes = check_sizes(d["sizes"])
            parts = [(_whole_numbers(bd["positions"]), block_from_dict(bd)) for bd in d["blocks"]]
            return cls(sizes, parts)
        except InputError as exc:
            raise InputError(f"mechanism description is invalid: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            raise InputError(f"mechanism description is incomplete or malformed: {exc!r}") from None


def _whole_numbers(values) -> list[int]:
    if not isinstance(values, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise InputError(f"block positions must be a list of whole numbers; got {values!r}")
    return values
