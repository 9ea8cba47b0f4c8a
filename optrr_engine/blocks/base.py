"""The block interface: a pattern-structured mechanism on a few or many attributes.

A block on k attributes with sizes a_i gives P(y | x) = X_{S(x, y)}. Every quantity that is
shown or written (epsilons, mass) is recomputed from the block's own parameters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..errors import InputError
from ..tolerance import eps_relative_error
from . import table_math
from .patterns import MAX_PATTERN_K


class Block(ABC):
    kind: str = "block"

    def __init__(self, sizes):
        self.sizes = np.asarray(sizes, dtype=np.int64)

    @property
    def k(self) -> int:
        return int(self.sizes.size)

    # -- the mechanism ------------------------------------------------------------------
    @abstractmethod
    def log_pattern_probs(self) -> np.ndarray:
        """log X_S for all 2^k patterns (bit i set = attribute i differs). Only for small k."""

    @abstractmethod
    def log_max_min(self) -> tuple[float, float]:
        """(log max_S X_S, log min_S X_S)."""

    @abstractmethod
    def attribute_epsilons(self) -> np.ndarray:
        """eps_i of the mechanism induced on each attribute (paper eq. 2)."""

    @abstractmethod
    def log_mass(self) -> float:
        """log sum_S t_S X_S; 0 for a valid mechanism."""

    @abstractmethod
    def marginal(self, positions) -> Block:
        """The induced mechanism on the attributes ``positions`` (local indices, in that order)."""

    @abstractmethod
    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Perturb integer codes of shape (n, k) (values 0..a_i-1); returns a new array."""

    @abstractmethod
    def to_dict(self) -> dict:
        """Parameters that rebuild this block exactly (see :mod:`optrr_engine.serialize`)."""

    # -- derived ------------------------------------------------------------------------
    def one_way_log_probs(self) -> np.ndarray:
        """Shape (k, 2): log P(same value) and log P(one specific other value) of the mechanism induced on each
        attribute (the pattern table of ``marginal([i])``). Blocks with a closed form override this loop."""
        return np.array([self.marginal([i]).log_pattern_probs() for i in range(self.k)]).reshape(self.k, 2)

    def overall_epsilon(self) -> float:
        hi, lo = self.log_max_min()
        return float(hi - lo)

    def verify_against_table(self, tol: float = 1e-9) -> dict:
        """For k <= MAX_PATTERN_K: recompute mass and epsilons from the pattern table (errors: see tolerance)."""
        if self.k > MAX_PATTERN_K:
            return {}
        lx = self.log_pattern_probs()
        eps_table = table_math.attribute_epsilons(self.sizes, lx)
        hi, lo = table_math.log_max_min(lx)
        return {  # epsilon errors relative (optrr_engine.tolerance), mass error absolute
            "table_mass_error": abs(np.expm1(table_math.log_mass(self.sizes, lx))),
            "table_attribute_error": eps_relative_error(eps_table, self.attribute_epsilons()),
            "table_overall_error": eps_relative_error(hi - lo, self.overall_epsilon()),
        }


def apply_patterns(codes: np.ndarray, masks: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each row, replace x_i by (x_i + U{1..a_i-1}) mod a_i for every bit i set in the row's mask."""
    out = np.array(codes, copy=True)
    sizes = np.asarray(sizes)
    for i, a in enumerate(sizes):
        rows = np.flatnonzero((masks >> i) & 1)
        if rows.size:
            off = rng.integers(1, int(a), size=rows.size)
            out[rows, i] = (out[rows, i] + off) % int(a)
    return out


def chunk_workspace(sizes: np.ndarray, n: int, k: int):
    """Shared set-up of the vectorised samplers: rows per chunk (about 32k cells), the unsigned work type
    (2 a_i - 1 fits; wrap-around intended), a_i tiled to the chunk, and float / work / work buffers."""
    work = np.min_scalar_type(2 * int(sizes.max()) - 1)
    rows = min(n, max(1, (1 << 15) // k))
    plus_a = np.tile(sizes.astype(work), (rows, 1))
    buffers = np.empty((rows, k)), np.empty((rows, k), dtype=work), np.empty((rows, k), dtype=work)
    return rows, work, plus_a, buffers


def wrap_add_into(out, codes, offsets, scratch, shift, plus_a) -> None:
    """out = (codes + offsets + shift) mod a for 0 <= codes + offsets + shift + a < 2a, in unsigned arithmetic:
    w = codes + offsets + shift wraps to a huge value when negative, so min(w, w + a) is the remainder.
    ``offsets`` and ``scratch`` are work arrays of the unsigned work type and are overwritten."""
    np.copyto(scratch, codes, casting="unsafe")
    np.add(offsets, scratch, out=offsets)
    np.add(offsets, shift, out=offsets)
    np.add(offsets, plus_a, out=scratch)
    np.minimum(offsets, scratch, out=offsets)
    np.copyto(out, offsets, casting="unsafe")


#: A list of log values this long or longer, with at most len(LOG_CODE_DIGITS) distinct values, is written compactly
#: (:func:`encode_logs`): e.g. an ``auto`` pattern table of 19 attributes has 2^19 entries but 5 distinct values.
COMPACT_MIN_ENTRIES = 4096
#: The digits of a compact list's codes: entry i is ``distinct[int(codes[i], 36)]``.
LOG_CODE_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def encode_logs(values) -> list | dict:
    """JSON-safe log values (-inf becomes the string "-inf"): a list, or for a long list with few distinct values
    (COMPACT_MIN_ENTRIES, LOG_CODE_DIGITS) ``{"distinct": [...], "codes": "0010..."}``, entry i being
    ``distinct[int(codes[i], 36)]`` (exact: the distinct values are the floats themselves)."""
    flat = np.asarray(values, dtype=float).ravel()
    if flat.size >= COMPACT_MIN_ENTRIES:
        distinct, codes = np.unique(flat, return_inverse=True)
        if distinct.size <= len(LOG_CODE_DIGITS):
            digits = np.frombuffer(LOG_CODE_DIGITS.encode("ascii"), dtype=np.uint8)
            return {"distinct": _json_logs(distinct), "codes": digits[codes.ravel()].tobytes().decode("ascii")}
    return _json_logs(flat)


def _json_logs(flat: np.ndarray) -> list:
    return [float(v) if np.isfinite(v) else "-inf" for v in flat]


def decode_logs(values) -> np.ndarray:
    """The log values written by :func:`encode_logs` (a list, or the compact form); InputError if malformed."""
    if isinstance(values, dict):
        return _decode_compact(values)
    return np.asarray([float(v) for v in values], dtype=float)


def _decode_compact(values: dict) -> np.ndarray:
    distinct, codes = values.get("distinct"), values.get("codes")
    if set(values) != {"distinct", "codes"} or not isinstance(distinct, list) or not isinstance(codes, str):
        raise InputError('a compact list of log values needs exactly "distinct" (a list) and "codes" (a text)')
    table = np.asarray([float(v) for v in distinct], dtype=float)
    try:
        raw = np.frombuffer(codes.encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        raise InputError("the codes of a compact list of log values must be digits 0-9 and letters a-z") from None
    index = np.where(raw <= ord("9"), raw.astype(np.int64) - ord("0"), raw.astype(np.int64) - ord("a") + 10)
    bad = ((raw < ord("0")) | ((raw > ord("9")) & (raw < ord("a"))) | (raw > ord("z"))) | (index >= table.size)
    if np.any(bad):
        at = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"code {codes[at]!r} at entry {at} of a compact list of log values names none of its "
            f"{table.size} distinct values"
        )
    return table[index]
