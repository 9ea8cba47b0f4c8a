"""A thin wrapper over highspy for LPs with few dense rows and many bounded columns.

    maximise c.x   subject to   A x = b,   lower <= x <= upper

A is given densely as (rows, columns) and passed column-wise. highspy is imported lazily and is much
lighter to import than scipy.optimize, which keeps `optrr design` start-up fast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptRRError


@dataclass
class LPSolution:
    status: str
    optimal: bool
    x: np.ndarray | None
    row_dual: np.ndarray | None
    iterations: int


def _silent_solver(highspy):
    """A HiGHS instance that prints nothing. highspy >= 1.14's ``Highs()`` enables its Python callbacks in the
    constructor, which writes the "Running HiGHS ..." banner to the process's standard output before
    ``output_flag`` can be set (it broke ``optrr design --json``); the compiled class under it has the same
    solver methods and no callbacks, so it is used where present (docs/decisions.md)."""
    try:
        from highspy._core import _Highs as solver_class
    except ImportError:  # older highspy: Highs() prints nothing until a model is passed
        solver_class = highspy.Highs
    h = solver_class()
    h.setOptionValue("output_flag", False)
    return h


def maximise(c, a_dense, b, lower, upper, time_limit: float | None = None) -> LPSolution:
    import highspy

    a_dense = np.asarray(a_dense, dtype=float)
    m, n = a_dense.shape
    h = _silent_solver(highspy)
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("simplex_strategy", 1)  # dual simplex
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    # The array overload passes the model in one call; assigning HighsLp attributes one by one copies
    # element-wise while holding the GIL (about 45 ms each at k = 16). Older highspy lacks the overload.
    arrays = (
        np.ascontiguousarray(c, dtype=float),
        np.ascontiguousarray(lower, dtype=float),
        np.ascontiguousarray(upper, dtype=float),
        np.ascontiguousarray(b, dtype=float),
        np.ascontiguousarray(b, dtype=float),
        np.arange(0, m * n + 1, m, dtype=np.int32),
        np.tile(np.arange(m, dtype=np.int32), n),
        np.ascontiguousarray(a_dense.T).reshape(-1),
    )
    try:
        status = h.passModel(
            n,
            m,
            m * n,
            int(highspy.MatrixFormat.kColwise),
            int(highspy.ObjSense.kMaximize),
            0.0,
            *arrays,
            np.zeros(n, dtype=np.int32),
        )
    except TypeError:
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.col_cost_, lp.col_lower_, lp.col_upper_, lp.row_lower_, lp.row_upper_ = arrays[:5]
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = arrays[5:]
        status = h.passModel(lp)
    if status == highspy.HighsStatus.kError:
        raise OptRRError("the LP solver (HiGHS) rejected the model")
    run_status = h.run()
    if run_status == highspy.HighsStatus.kError:
        raise OptRRError("the LP solver (HiGHS) reported an error")
    model_status = h.getModelStatus()
    status_text = h.modelStatusToString(model_status)
    optimal = model_status == highspy.HighsModelStatus.kOptimal
    sol = h.getSolution()
    x = np.asarray(sol.col_value, dtype=float) if sol.value_valid else None
    dual = np.asarray(sol.row_dual, dtype=float) if sol.dual_valid else None
    iters = int(h.getInfo().simplex_iteration_count)
    return LPSolution(status_text, optimal, x, dual, iters)
