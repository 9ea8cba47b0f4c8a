"""Validation of the numbers a user gives: category counts and epsilons."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import InputError

#: Largest per-attribute epsilon accepted. e^50 ~ 5e21: beyond this RR hardly perturbs at all and
#: closed forms lose precision, so a larger request is almost certainly a typing error.
MAX_EPSILON = 50.0
#: Smallest per-attribute epsilon accepted. An epsilon is a difference of log-probabilities, which float64 gives
#: to about 1e-15; at 1e-10 that is still 1e-5 of the value, below it the designs cannot meet the request
#: reliably. e^(1e-10) - 1 = 1e-10: the answers are already pure noise, so no real need is refused.
MIN_EPSILON = 1e-10
#: Largest number of categories of one attribute.
MAX_CATEGORIES = 1_000_000


def check_sizes(sizes: Sequence[int]) -> np.ndarray:
    arr = list(sizes)
    if len(arr) == 0:
        raise InputError("no attributes given: need at least one category count")
    out: list[float] = []
    for i, a in enumerate(arr):
        try:
            ai = int(a)
        except (TypeError, ValueError):
            raise InputError(f"size of attribute {i + 1} is not a whole number: {a!r}") from None
        if ai != a and not (isinstance(a, float) and float(ai) == a):
            raise InputError(f"size of attribute {i + 1} is not a whole number: {a!r}")
        if ai < 2:
            raise InputError(f"attribute {i + 1} has {ai} categories; every attribute needs at least 2")
        if ai > MAX_CATEGORIES:
            raise InputError(f"attribute {i + 1} has {ai} categories; at most {MAX_CATEGORIES} are supported")
        out.append(ai)
    return np.asarray(out, dtype=np.int64)


def as_number(value, label: str) -> float:
    """``value`` as a float; booleans, None and texts that are not numbers are refused, naming ``label``."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"{label} must be a number; got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be a number; got {value!r}") from None


def positive_number(value, label: str, unit: str = "") -> float:
    """A finite number greater than 0 (weights, seconds, targets)."""
    x = as_number(value, label)
    if not math.isfinite(x) or x <= 0:
        raise InputError(f"{label} is {x:g}; it must be a finite positive number{unit}")
    return x


def check_epsilon(value, label: str) -> float:
    """One epsilon, a finite number in [MIN_EPSILON, MAX_EPSILON]; ``label`` names it in the error message
    (e.g. "epsilon of attribute 2", "column 'sex': epsilon")."""
    eps = as_number(value, label)
    if not math.isfinite(eps):
        raise InputError(f"{label} is {'NaN' if math.isnan(eps) else eps}; it must be a finite positive number")
    if eps <= 0:
        raise InputError(f"{label} is {eps:g}; it must be greater than 0 (lower = more private)")
    if eps < MIN_EPSILON:
        raise InputError(
            f"{label} is {eps:g}; the smallest accepted is {MIN_EPSILON:g} (below it floating-point arithmetic "
            "cannot resolve the probabilities; the answers would be pure noise anyway)"
        )
    if eps > MAX_EPSILON:
        raise InputError(
            f"{label} is {eps:g}; at most {MAX_EPSILON:g} is accepted (larger values give essentially no privacy)"
        )
    return eps


def check_epsilons(epsilons: Sequence[float], k: int | None = None, name: str = "epsilon") -> np.ndarray:
    arr = list(epsilons)
    if k is not None and len(arr) != k:
        raise InputError(f"got {len(arr)} {name} values for {k} attributes; give one per attribute")
    return np.asarray([check_epsilon(e, f"{name} of attribute {i + 1}") for i, e in enumerate(arr)], dtype=float)


def check_weights(weights: Sequence[float], k: int) -> np.ndarray:
    """Positive finite weights (relative shares of a total budget; any scale)."""
    arr = list(weights)
    if len(arr) != k:
        raise InputError(f"got {len(arr)} weights for {k} attributes; give one per attribute")
    shares = np.asarray([positive_number(w, f"weight of attribute {i + 1}") for i, w in enumerate(arr)], dtype=float)
    return shares / shares.max()


def check_seconds(seconds: float, name: str = "time budget") -> float:
    """A finite positive number of seconds."""
    return positive_number(seconds, name, " of seconds")


def check_target(target: float, columns: int | None = None, what: str = "") -> float:
    """A whole-record epsilon target: a finite number of at least MIN_EPSILON and, when ``columns`` is given, at
    most ``columns`` x MAX_EPSILON (no column may exceed MAX_EPSILON, so more can never be used; ``columns``: how
    many randomized values a record carries, ``what`` says which, e.g. "each row's 1 reported column")."""
    x = positive_number(target, "target total epsilon")
    if x < MIN_EPSILON:
        raise InputError(f"the whole-record epsilon {x:g} is below the smallest accepted, {MIN_EPSILON:g}")
    if columns is not None and x > MAX_EPSILON * columns:
        carried = what or f"{columns} randomized column{'s' if columns != 1 else ''}"
        raise InputError(
            f"the whole-record epsilon {x:g} cannot be used with {carried}: at most {MAX_EPSILON:g} per column is "
            f"accepted (larger values give essentially no privacy), so at most {MAX_EPSILON * columns:g} here"
        )
    return x


def first_duplicate(values):
    """The first value that occurs a second time in ``values`` (None if all differ); linear time."""
    seen = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None
