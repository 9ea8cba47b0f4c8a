"""Sampling designs: each record reports a random subset of its attributes (docs/sampling.md).

- ``smp`` (Wang et al. 2019): one attribute j, chosen with probability w_j (uniform by default), perturbed by
  GRR at the whole-record epsilon; the other cells are not reported.
- ``sample-m``: m attributes, the subset S uniform among the C(k, m), perturbed jointly by an inner mechanism
  on S designed for the whole-record epsilon (``optimal`` by default, or ``kronecker``); the others not
  reported. m = 1 is ``smp`` with uniform weights.
- ``rsfd`` (Arcolezi et al. 2021, RS+FD[GRR]): one attribute j reported by GRR, every other cell filled with a
  uniform fake value, so the release looks complete.

The choice of S is independent of the data and part of the output (a not-reported cell is visible), so an
output (S, y_S) has probability w_S M_S(y_S | x_S) and the whole-record epsilon is max_S eps(M_S). For RS+FD
the output is a full record y with P(y | x) = (1/prod a) sum_j w_j a_j M_j(y_j | x_j): every term is
maximised (x_j = y_j) or minimised independently, so eps = ln(sum_j w_j a_j p_j / sum_j w_j a_j q_j) = the
inner GRR's epsilon when all are equal. (The paper's smaller epsilon is the guarantee for records that differ
in one attribute; its "amplified" epsilon is the whole-record one.) Every epsilon is recomputed from the
inner mechanisms; tests check them against brute force over every input and output. The whole-record epsilon so
recomputed is never above the target (a design whose rounding or LP noise put it above is made again a little
lower: :func:`_at_most_target`), and within 1e-9 below it (tests/test_sampling_intervals_and_margin.py).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

import numpy as np

from ..designs.auto import MARGIN
from ..errors import InfeasibleError, InputError
from ..mechanism import Mechanism
from ..tolerance import ABS_FLOOR, REL_TOL

#: Code of a cell that a record does not report (in code arrays; the release file writes NOT_REPORTED_LABEL).
NOT_REPORTED = -1
#: The text of a not-reported cell in a release file: never a category (checked) and never empty (= missing).
NOT_REPORTED_LABEL = "<not reported>"
SAMPLING_METHODS = ("smp", "sample-m", "rsfd")
INNER_METHODS = ("optimal", "kronecker")
#: Largest number of reported subsets C(k, m) a sample-m design may have.
MAX_SUBSETS = 5000
#: Relative margins of the successive lower requests of a design whose whole-record epsilon came out above its
#: target (:func:`_at_most_target`): none (rounding), then auto's MARGIN and larger ones for the noise of an LP.
FIT_MARGINS = (0.0, MARGIN, 10 * MARGIN, 100 * MARGIN)
#: Below this an epsilon's rounding is absolute, not relative (optrr_engine.tolerance): margins are taken of it.
EPS_SCALE_FLOOR = ABS_FLOOR / REL_TOL
T = TypeVar("T")


def unequal_weights(weights) -> bool:
    """Whether ``weights`` are given and not all equal (equal weights are the uniform choice of sample-m)."""
    if weights is None:
        return False
    try:
        return len({float(w) for w in weights}) > 1
    except (TypeError, ValueError):  # not numbers at all: certainly not the uniform choice
        return True


def sample_m_weights_refusal(way_out: str) -> str:
    """The one refusal of weights for sample-m (the engine, ``optrr design`` and a release configuration), with
    ``way_out`` naming what to leave out where the weights came from."""
    return (
        "sample-m chooses its subsets uniformly and takes no weights (equal weights are the same as none); "
        f"{way_out}, or choose method smp or rsfd, which sample the columns by weight"
    )


def no_mechanism_to_copy(method: str) -> str:
    """Why a sampling design is never copied as a "mechanism" (``optrr design --with-mechanism`` and a release
    configuration's ``mechanism``): it is designed anew from its method and whole-record epsilon."""
    more = ", sample_m" if method == "sample-m" else ""
    return (
        f"a sampling design has no mechanism to copy; a configuration with method {method} (and target_total{more}) "
        "is designed by optrr perturb itself"
    )


def _grr(size: int, eps: float) -> Mechanism:
    from ..blocks import IndependentBlock

    return Mechanism.single(IndependentBlock.from_epsilons([size], [eps]))


def _single_keep_move(mechanism: Mechanism, position: int) -> tuple[float, float]:
    """(P(keep), P(move to one given other value)) of the mechanism induced on one attribute."""
    lx = mechanism.marginal([position]).log_pattern_probs()
    return float(np.exp(lx[0])), float(np.exp(lx[1]))


@dataclass
class SamplingDesign:
    method: str
    sizes: np.ndarray
    m: int
    subsets: list  # tuples of attribute indices (increasing)
    probs: np.ndarray  # P(S) for each subset
    inner: list  # Mechanism on sizes[S] for each subset
    target: float
    info: dict = field(default_factory=dict)

    @property
    def k(self) -> int:
        return int(self.sizes.size)

    @property
    def fills_fakes(self) -> bool:
        return self.method == "rsfd"

    # -- accounting (recomputed from the inner mechanisms) -----------------------------------
    def overall_epsilon(self) -> float:
        """The whole-record epsilon (the name a Mechanism uses)."""
        return self.whole_record_epsilon()

    def self_check(self, tol: float = 1e-9):
        """Every inner mechanism's own check, plus the subset probabilities summing to 1."""
        from ..mechanism import CheckReport

        reports = [mech.self_check(tol) for mech in self.inner]
        mass = max([abs(float(self.probs.sum()) - 1.0)] + [r.mass_error for r in reports])
        ok = all(r.ok for r in reports) and mass <= tol and np.isfinite(self.whole_record_epsilon())
        return CheckReport(ok, mass)

    def whole_record_epsilon(self) -> float:
        if not self.fills_fakes:
            return float(max(mech.overall_epsilon() for mech in self.inner))
        hi, lo = [], []
        for (j,), w, mech in zip(self.subsets, self.probs, self.inner, strict=True):
            h, low = mech.parts[0][1].log_max_min()
            base = np.log(w) + np.log(float(self.sizes[j]))
            hi.append(base + h)
            lo.append(base + low)
        return float(np.logaddexp.reduce(hi) - np.logaddexp.reduce(lo))

    def attribute_epsilons(self) -> np.ndarray:
        """eps_i of the channel induced on attribute i (value or "not reported"; paper eq. 2)."""
        keep = np.zeros(self.k)
        move = np.zeros(self.k)
        for subset, w, mech in zip(self.subsets, self.probs, self.inner, strict=True):
            for pos, i in enumerate(subset):
                p, q = _single_keep_move(mech, pos)
                keep[i] += w * p
                move[i] += w * q
        if self.fills_fakes:
            reported = self.reporting_probabilities()
            keep += (1.0 - reported) / self.sizes
            move += (1.0 - reported) / self.sizes
        out = np.zeros(self.k)  # an attribute never reported (weight 0) releases nothing about x_i: eps_i = 0
        seen = keep > 0
        out[seen] = np.abs(np.log(keep[seen]) - np.log(move[seen]))
        return out

    def reporting_probabilities(self) -> np.ndarray:
        """P(attribute i is reported by a record's sampled subset)."""
        out = np.zeros(self.k)
        for subset, w in zip(self.subsets, self.probs, strict=True):
            out[list(subset)] += w
        return out

    @cached_property
    def _member(self) -> np.ndarray:
        """Subsets x attributes: whether subset i holds attribute j (once per design; its subsets never change)."""
        member = np.zeros((len(self.subsets), self.k), dtype=bool)
        for i, s in enumerate(self.subsets):
            member[i, list(s)] = True
        return member

    @cached_property
    def _memo(self) -> dict:
        return {}

    def memo(self, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()``, kept under ``key`` for the life of this design object (for the layers above: e.g. the
        eigenvalues of an inner mechanism's marginal, keyed by its id). Never pickled: ids mean nothing in another
        process."""
        memo = self._memo
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def __getstate__(self) -> dict:
        """Pickled without the caches (:meth:`memo`'s keys are object ids of this process)."""
        state = dict(self.__dict__)
        for cache in ("_member", "_memo"):
            state.pop(cache, None)
        return state

    def holding(self, attrs) -> np.ndarray:
        """Whether each subset (in the order of ``subsets``) holds every attribute of ``attrs`` (booleans)."""
        return np.asarray(self._member[:, [int(a) for a in attrs]].all(axis=1))

    def coverage(self, attrs) -> float:
        """P(every attribute of ``attrs`` is in the sampled subset)."""
        return float(np.asarray(self.probs, dtype=float)[self.holding(attrs)].sum())

    def suppression_text(self, names=None) -> str:
        """Plain statement of what each row carries, e.g. "each row carries 2 of 9 columns"."""
        if self.fills_fakes:
            return (
                f"each row carries all {self.k} columns, but only 1 holds a (randomized) true value; the other "
                f"{self.k - 1} {'is a uniform fake value' if self.k == 2 else 'are uniform fake values'}, and which "
                "one is real is not marked"
            )
        rest = self.k - self.m
        if rest == 0:
            return f"each row carries all {self.k} columns"
        return (
            f"each row carries {self.m} of {self.k} columns (chosen at random, independently of the data); the "
            f"other {rest} {'is' if rest == 1 else 'are'} marked as not reported"
        )

    # -- sampling ----------------------------------------------------------------------------
    def sample(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Perturb codes (n, k): NOT_REPORTED in cells outside the sampled subset (``rsfd``: uniform fakes)."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.k:
            raise InputError(f"codes must have shape (rows, {self.k})")
        n = codes.shape[0]
        choice = rng.choice(len(self.subsets), size=n, p=self.probs)
        if self.fills_fakes:
            out = np.stack([rng.integers(0, int(a), size=n) for a in self.sizes], axis=1).astype(np.int64)
        else:
            out = np.full((n, self.k), NOT_REPORTED, dtype=np.int64)
        for s in np.unique(choice):
            rows = np.flatnonzero(choice == s)
            cols = list(self.subsets[s])
            out[np.ix_(rows, cols)] = self.inner[s].sample(codes[np.ix_(rows, cols)], rng)
        return out

    # -- description ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Everything that rebuilds the design exactly (inner mechanisms as Mechanism.to_dict())."""
        shared: dict = {}
        inner_index = []
        mechanisms: list[dict] = []
        for mech in self.inner:
            key = id(mech)
            if key not in shared:
                shared[key] = len(mechanisms)
                mechanisms.append(mech.to_dict())
            inner_index.append(shared[key])
        return {
            "kind": "sampling",
            "method": self.method,
            "sizes": self.sizes.tolist(),
            "m": int(self.m),
            "subsets": [list(map(int, s)) for s in self.subsets],
            "probabilities": [float(p) for p in self.probs],
            "inner_mechanisms": mechanisms,
            "inner_of_subset": inner_index,
            "fake_values": self.fills_fakes,
            "not_reported_label": None if self.fills_fakes else NOT_REPORTED_LABEL,
            "suppression": self.suppression_text(),
            "target_epsilon": float(self.target),
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: dict) -> SamplingDesign:
        try:
            mechanisms = [Mechanism.from_dict(x) for x in d["inner_mechanisms"]]
            design = cls(
                method=str(d["method"]),
                sizes=np.asarray(d["sizes"], dtype=np.int64),
                m=int(d["m"]),
                subsets=[tuple(int(i) for i in s) for s in d["subsets"]],
                probs=np.asarray(d["probabilities"], dtype=float),
                inner=[mechanisms[int(i)] for i in d["inner_of_subset"]],
                target=float(d["target_epsilon"]),
                info=dict(d.get("info") or {}),
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(f"sampling design description is incomplete or malformed: {exc}") from None
        design.check()
        return design

    def check(self) -> SamplingDesign:
        if self.method not in SAMPLING_METHODS:
            raise InputError(f"unknown sampling method {self.method!r}; choose one of {', '.join(SAMPLING_METHODS)}")
        if len(self.subsets) != len(self.inner) or len(self.subsets) != self.probs.size:
            raise InputError("a sampling design needs one probability and one inner mechanism per subset")
        if np.any(self.probs < 0) or abs(float(self.probs.sum()) - 1.0) > 1e-9:
            raise InputError("the subset probabilities of a sampling design must be >= 0 and sum to 1")
        for s, mech in zip(self.subsets, self.inner, strict=True):
            if len(s) != self.m or len(set(s)) != len(s) or min(s) < 0 or max(s) >= self.k:
                raise InputError(f"subset {list(s)} is not {self.m} distinct attributes of {self.k}")
            if mech.sizes.tolist() != self.sizes[list(s)].tolist():
                raise InputError(f"the inner mechanism of subset {list(s)} does not match its category counts")
        return self


def _check_common(sizes, target, reported: int = 1) -> tuple[np.ndarray, float]:
    """Category counts and the whole-record target; ``reported`` randomized values per row (their epsilons are at
    most the target each, and no column may exceed MAX_EPSILON)."""
    from ..validation import check_sizes, check_target

    sizes = check_sizes(sizes)
    if isinstance(target, bool) or not np.isfinite(float(target)) or float(target) <= 0:
        raise InputError(f"the whole-record epsilon must be a positive number; got {target!r}")
    what = f"each row's {reported} reported column{'s' if reported != 1 else ''}"
    return sizes, check_target(float(target), reported, what)


def _weights(weights, k: int) -> np.ndarray:
    if weights is None:
        return np.full(k, 1.0 / k)
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"sampling weights must be {k} non-negative numbers, not all 0; got {weights!r}") from None
    if w.shape != (k,) or np.any(~np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError(f"sampling weights must be {k} non-negative numbers, not all 0")
    return w / w.sum()


def _at_most_target(build: Callable[[float], T], start: float, target: float, achieved: Callable[[T], float]) -> T:
    """``build(start)``, or ``build`` at a lower parameter: while the whole-record epsilon recomputed from the result
    (``achieved``, as the manifest does) is above ``target``, the parameter is scaled by target / achieved, lowered
    by the next of FIT_MARGINS (relative, absolute below EPS_SCALE_FLOOR) and stepped down to the next float, so the
    result is never above ``target`` and, the epsilon rising with the parameter about in proportion, at most a margin
    below it (rounding alone: a few ulps). InfeasibleError if it is still above after every margin."""
    param = float(start)
    for margin in (*FIT_MARGINS, None):
        result = build(param)
        got = achieved(result)
        if got <= target:
            return result
        if margin is not None:
            param = float(np.nextafter(param * (target / got) - margin * (param + EPS_SCALE_FLOOR), 0.0))
    raise InfeasibleError(
        f"the sampling design's whole-record epsilon stays above the target {target:g} after {len(FIT_MARGINS)} "
        "smaller requests (numerical trouble of its inner design); try a slightly different target_total"
    )


def _one_attribute_design(method: str, sizes, target: float, weights=None) -> SamplingDesign:
    """SMP or RS+FD: attribute j with probability w_j by GRR at one epsilon, the largest found whose recomputed
    whole-record epsilon is at most ``target`` (:func:`_at_most_target`)."""
    sizes, target = _check_common(sizes, target)
    w = _weights(weights, sizes.size)
    keep = np.flatnonzero(w > 0)

    def build(eps: float) -> SamplingDesign:
        inner: dict[int, Mechanism] = {}
        mechs = [inner.setdefault(int(sizes[j]), _grr(int(sizes[j]), eps)) for j in keep]
        return SamplingDesign(method, sizes, 1, [(int(j),) for j in keep], w[keep], mechs, target)

    return _at_most_target(build, target, target, SamplingDesign.whole_record_epsilon).check()


def smp_design(sizes, target: float, weights=None) -> SamplingDesign:
    """SMP: attribute j with probability w_j, GRR at the whole-record epsilon ``target`` (never above it)."""
    return _one_attribute_design("smp", sizes, target, weights)


def rsfd_design(sizes, target: float, weights=None) -> SamplingDesign:
    """RS+FD[GRR]: attribute j with probability w_j by GRR, uniform fakes elsewhere; every inner GRR gets the
    same epsilon, which is then the whole-record epsilon (module docstring; never above ``target``)."""
    return _one_attribute_design("rsfd", sizes, target, weights)


def _inner_design(method: str, sizes: tuple, target: float) -> Mechanism:
    """The inner mechanism of sample-m on ``sizes``: equal epsilons, the largest found (the budget search to within
    REL_TOL) whose recomputed whole-record epsilon is at most ``target`` (:func:`_at_most_target`)."""
    from ..budget import distribute_budget
    from ..designs import run_design

    ones = np.ones(len(sizes))
    found = distribute_budget(method, list(sizes), ones, target, rel_tol=REL_TOL)
    first = found.design.mechanism

    def build(scale: float) -> Mechanism:
        return first if scale == found.scale else run_design(method, list(sizes), scale * ones).mechanism

    return _at_most_target(build, found.scale, target, Mechanism.overall_epsilon)


def sample_m_design(sizes, target: float, m: int, inner_method: str = "optimal") -> SamplingDesign:
    """m attributes uniformly at random, jointly perturbed by an inner design at the whole-record epsilon
    (equal weights; one design per distinct tuple of category counts)."""
    from ..validation import check_sizes

    k = check_sizes(sizes).size
    if isinstance(m, bool) or int(m) != m or not 1 <= int(m) <= k:
        raise InputError(f"m must be a whole number from 1 to {k} (the number of attributes); got {m!r}")
    m = int(m)
    sizes, target = _check_common(sizes, target, m)
    if inner_method not in INNER_METHODS:
        raise InputError(f"unknown inner method {inner_method!r}; choose one of {', '.join(INNER_METHODS)}")
    count = math.comb(k, m)
    if count > MAX_SUBSETS:
        raise InputError(f"{k} attributes give {count:,} subsets of {m}; at most {MAX_SUBSETS:,} are supported")
    subsets = list(itertools.combinations(range(k), m))
    cache: dict = {}
    inner = []
    for s in subsets:
        key = tuple(int(a) for a in sizes[list(s)])
        if key not in cache:
            cache[key] = _inner_design(inner_method if m > 1 else "kronecker", key, target)
        inner.append(cache[key])
    probs = np.full(len(subsets), 1.0 / len(subsets))
    info = {"inner_method": inner_method if m > 1 else "kronecker (GRR)"}
    return SamplingDesign("sample-m", sizes, m, subsets, probs, inner, target, info).check()


def make_sampling_design(method: str, sizes, target: float, m: int | None = None, weights=None, inner_method=None):
    """The sampling design ``method`` (smp, sample-m, rsfd) at whole-record epsilon ``target``."""
    if method == "smp":
        return smp_design(sizes, target, weights)
    if method == "rsfd":
        return rsfd_design(sizes, target, weights)
    if method == "sample-m":
        if m is None:
            raise InputError("the sample-m design needs m, the number of attributes each record reports")
        if unequal_weights(weights):
            raise InputError(sample_m_weights_refusal("leave the weights out"))
        return sample_m_design(sizes, target, m, inner_method or "optimal")
    raise InputError(f"unknown sampling method {method!r}; choose one of {', '.join(SAMPLING_METHODS)}")
