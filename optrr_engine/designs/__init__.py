"""Mechanism designs. ``run_design(method, sizes, epsilons)`` returns a :class:`Design`.

Methods: ``auto`` (exact eps_i, best design found in a time budget, certified lower bound),
``kronecker`` (Wang et al.), ``optimal`` (exact LP), ``heuristic`` (paper's Algorithm 3),
``family`` (exact optimum of the heuristic's family), ``classes`` (exact optimum for <= 3 groups of
identical attributes).
"""

from __future__ import annotations

import time

import numpy as np

from ..tasks import TaskControl
from ..validation import check_epsilons, check_sizes
from .result import Design

METHODS = ("auto", "kronecker", "optimal", "heuristic", "family", "classes")
#: Methods that keep every eps_i by construction (the heuristic may change some, and says so).
EXACT_EPSILON_METHODS = ("auto", "kronecker", "optimal", "family", "classes")


def _function(method: str):
    from ..errors import InputError

    if method == "kronecker":
        from .kronecker import kronecker as fn
    elif method == "optimal":
        import highspy

        from .optimal_lp import optimal as fn
    elif method == "heuristic":
        from .heuristic import heuristic as fn
    elif method == "family":
        from .family_lp import family as fn
    elif method == "classes":
        from .classes import classes_design as fn
    elif method == "auto":
        import highspy  # noqa: F401 - imported before timing starts

        from .auto import auto as fn
    else:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return fn


def _require_exact(method: str, achieved, requested) -> None:
    """An exact method that missed an eps_i (e.g. ~1e-9, below an LP solver's tolerances) says so in one line."""
    from ..errors import OptRRError
    from ..tolerance import eps_equal

    missed = np.flatnonzero(~eps_equal(achieved, requested))
    if missed.size:
        i = int(missed[0])
        raise OptRRError(
            f"method {method} cannot resolve the epsilon {requested[i]:.3g} of attribute {i + 1} numerically "
            f"(it reached {achieved[i]:.3g}); use --method auto or larger epsilons"
        )


def run_design(method: str, sizes, epsilons, progress=None, cancel=None, **options) -> Design:
    """Validate the request, run the design, and time the design computation alone.

    ``options`` go to the design function (e.g. ``budget`` seconds for ``auto``)."""
    sizes = check_sizes(sizes)
    eps = check_epsilons(epsilons, len(sizes))
    fn = _function(method)
    ctl = TaskControl(progress, cancel)
    t0 = time.perf_counter()
    mechanism, info = fn(sizes, eps, ctl, **options)
    seconds = time.perf_counter() - t0
    if method in EXACT_EPSILON_METHODS:
        _require_exact(method, mechanism.attribute_epsilons(), eps)
    info.setdefault("design", method)
    ctl.report(1.0, "done")
    return Design(method, mechanism, eps, seconds, info)


__all__ = ["EXACT_EPSILON_METHODS", "METHODS", "Design", "run_design"]
