"""Independent reference implementations used only by the tests.

- ``algorithm3_exact``: the paper's Algorithm 3 written literally (A, B, C of step 6, the 2x2 system of
  step 7, the checks of step 8) in exact rational arithmetic.
- ``paper_lp``: the paper's own LP (Algorithms 1-2: x_full = 1, monotonicity rows, minimise x_empty),
  dense and unscaled, solved with HiGHS.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import prod

import numpy as np


def _base_case_exact(m, n, e1, e2):
    e12 = e1 * e2
    if e12 >= (m - 1) * (n - 1):
        if n * (e1 - 1) >= m * (e2 - 1):
            return (
                (n * e12 + (m - 1) * (n - 1) * (e2 - 1)) / (e2 + n - 1),
                Fraction(1),
                (n * e1 - (m - 1) * (e2 - 1)) / (e2 + n - 1),
            )
        return (
            (m * e12 + (m - 1) * (n - 1) * (e1 - 1)) / (e1 + m - 1),
            (m * e2 - (n - 1) * (e1 - 1)) / (e1 + m - 1),
            Fraction(1),
        )
    if (n - m) * e12 - m * (n - 1) * e1 + (m - 1) * n * e2 >= 0:
        den = -(e1 - 1) * e2 + m * (n - 1)
        x0 = (n - 1) * (e1 + m - 1) * e2 / den
        return (x0, x0, (m * (n - 1) * e1 + (m - 1) * (e1 - 1) * e2) / den)
    den = -e1 * (e2 - 1) + (m - 1) * n
    x0 = (m - 1) * e1 * (e2 + n - 1) / den
    return (x0, ((m - 1) * n * e2 + (n - 1) * e1 * (e2 - 1)) / den, x0)


def algorithm3_exact(sizes, epsilons):
    """Returns (x_0, [x_1..x_k], achieved eps list) exactly as Algorithm 3 computes them."""
    a = [int(v) for v in sizes]
    e = [Fraction(float(np.exp(v))) for v in epsilons]
    k = len(a)
    x0, x1, x2 = _base_case_exact(a[0], a[1], e[0], e[1])
    xs = [x1, x2]
    eps_out = [float(v) for v in epsilons]
    for i in range(2, k):
        ai = a[i]
        xs = [ai * xj - ai + 1 for xj in xs]
        A = sum((a[h] - 1) * xs[h] for h in range(i))
        P = prod(a[:i])
        B = P - sum(a[:i]) + (i + 1) - 2
        C = P - 1
        ei = e[i]
        # x0' + (ai-1) xii = ai x0 ;  x0' - ei xii = -A - B + ei C
        xii = (ai * x0 - (-A - B + ei * C)) / ((ai - 1) + ei)
        x0_new = ai * x0 - (ai - 1) * xii
        if x0_new < 1 or xii < 1 or any(x0_new < xj for xj in xs + [xii]):
            x0_new = ai * x0 - ai + 1
            xii = Fraction(1)
            ratio = (x0_new + A + B) / (xii + C)
            eps_out[i] = float(np.log(float(ratio))) if ratio < 10**300 else None
        x0 = x0_new
        xs.append(xii)
    return x0, xs, eps_out


def paper_lp(sizes, epsilons):
    """min x_empty s.t. x_full = 1, x_S >= x_{S u {j}}, eq. (3); returns eps_total = ln x_empty.

    Built independently of the engine (sparse COO assembly of Algorithms 1-2), solved with HiGHS.
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    a = np.asarray(sizes, dtype=np.int64)
    k = a.size
    e = np.exp(np.asarray(epsilons, dtype=float))
    n = 1 << k
    full = n - 1
    masks = np.arange(n)
    nvar = n - 1  # variable j <-> pattern j (0..n-2); x_full = 1 is a constant
    rows, cols, vals, b_ub = [], [], [], []
    r = 0
    for j in range(k):
        src = masks[(masks >> j) & 1 == 0]
        dst = src | (1 << j)
        for s_, d_ in zip(src, dst, strict=True):
            rows.append(r)
            cols.append(s_)
            vals.append(-1.0)
            if d_ == full:
                b_ub.append(-1.0)
            else:
                rows.append(r)
                cols.append(d_)
                vals.append(1.0)
                b_ub.append(0.0)
            r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nvar))
    t = np.ones(n)
    for i in range(k):
        t = np.where((masks >> i) & 1, t * (a[i] - 1), t)
    a_eq = np.zeros((k, nvar))
    b_eq = np.zeros(k)
    for i in range(k):
        inside = (masks >> i) & 1 == 1
        coef = np.where(inside, -e[i] * t / (a[i] - 1), t)
        a_eq[i] = coef[:-1]
        b_eq[i] = -coef[-1]
    c = np.zeros(nvar)
    c[0] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.array(b_ub), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return float(np.log(res.fun))


def all_subsets(k):
    for r in range(k + 1):
        yield from combinations(range(k), r)
