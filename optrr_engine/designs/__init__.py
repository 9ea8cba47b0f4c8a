"""Mechanism designs. ``run_design(method, sizes, epsilons)`` returns a :class:`Design`.

Methods: ``auto`` (exact eps_i, best design found in a time budget, certified lower bound),
``kronecker`` (Wang et al.), ``optimal`` (exact LP), ``heuristic`` (paper's Algorithm 3),
``family`` (exact optimum of the heuristic's family), ``classes`` (exact optimum for <= 3 groups of
identical attributes).
"""

from __future__ import annotations

import time

from ..tasks import TaskControl
from ..validation import check_epsilons, check_sizes
from .result import Design

METHODS = ("auto", "kronecker", "optimal", "heuristic", "family", "classes")


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
    info.setdefault("design", method)
    ctl.report(1.0, "done")
    return Design(method, mechanism, eps, seconds, info)


__all__ = ["METHODS", "Design", "run_design"]
