"""Derivative-free minimisers for the few small searches in the engine (both only steer a search whose result
is certified separately, so they need to land near the optimum, not prove it).

- :func:`golden_section`: minimum of a unimodal f on [lo, hi]; the bracket shrinks by 0.618 per evaluation.
- :func:`nelder_mead`: the Nelder-Mead simplex method (reflection 1, expansion 2, contraction 1/2, shrink 1/2;
  Lagarias et al. 1998), stopping when the simplex is within ``xatol`` in every coordinate of its best vertex
  and the values within ``fatol``, or after ``maxfev`` evaluations.
"""

from __future__ import annotations

import math

import numpy as np

_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


def golden_section(f, lo: float, hi: float, xatol: float = 1e-10, max_iter: int = 500) -> float:
    """x in [lo, hi] minimising a unimodal f (a local minimum otherwise); the best point evaluated is returned."""
    if not lo < hi:
        raise ValueError("golden_section needs lo < hi")
    a, b = float(lo), float(hi)
    c = b - _INV_PHI * (b - a)
    d = a + _INV_PHI * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(max_iter):
        if b - a <= xatol:
            break
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _INV_PHI * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_PHI * (b - a)
            fd = f(d)
    return c if fc <= fd else d


def nelder_mead(f, simplex, xatol: float = 1e-8, fatol: float = 1e-8, maxfev: int = 4000) -> np.ndarray:
    """Vertex of lowest f after the Nelder-Mead iterations from ``simplex`` ((n+1) x n initial vertices)."""
    sim = np.array(simplex, dtype=float)
    n = sim.shape[1]
    if sim.shape != (n + 1, n):
        raise ValueError("the initial simplex needs n + 1 vertices of n coordinates")
    fsim = np.array([f(v) for v in sim], dtype=float)
    fev = n + 1
    while fev < maxfev:
        order = np.argsort(fsim, kind="stable")
        sim, fsim = sim[order], fsim[order]
        if np.max(np.abs(sim[1:] - sim[0])) <= xatol and np.max(np.abs(fsim[1:] - fsim[0])) <= fatol:
            break
        centroid = sim[:-1].mean(axis=0)
        xr = centroid + (centroid - sim[-1])
        fr = f(xr)
        fev += 1
        if fr < fsim[0]:
            xe = centroid + 2.0 * (centroid - sim[-1])
            fe = f(xe)
            fev += 1
            sim[-1], fsim[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < fsim[-2]:
            sim[-1], fsim[-1] = xr, fr
        else:
            outside = fr < fsim[-1]
            xc = centroid + (0.5 if outside else -0.5) * (centroid - sim[-1])
            fc = f(xc)
            fev += 1
            if fc <= (fr if outside else fsim[-1]):
                sim[-1], fsim[-1] = xc, fc
            else:
                sim[1:] = sim[0] + 0.5 * (sim[1:] - sim[0])
                fsim[1:] = [f(v) for v in sim[1:]]
                fev += n
    return sim[int(np.argmin(fsim))].copy()
