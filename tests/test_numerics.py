"""The engine's own numerical routines (optrr_engine.numerics) against scipy, which stays a test dependency."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special, stats

from optrr_engine.numerics.minimize import golden_section, nelder_mead
from optrr_engine.numerics.special import chi2_sf, log_binomial_row, log_factorials


@pytest.mark.parametrize("n", [0, 1, 2, 7, 50, 1000, 10_000])
def test_log_binomial_row_matches_gammaln(n):
    c = np.arange(n + 1, dtype=float)
    expected = special.gammaln(n + 1.0) - special.gammaln(c + 1.0) - special.gammaln(n - c + 1.0)
    got = log_binomial_row(n)
    assert got.shape == (n + 1,)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-10)
    assert got[0] == 0.0 and got[-1] == 0.0


def test_log_binomial_row_is_exact_on_small_rows():
    for n in range(30):
        got = np.exp(log_binomial_row(n))
        np.testing.assert_allclose(got, [math.comb(n, c) for c in range(n + 1)], rtol=1e-13)
    assert log_factorials(3).tolist() == pytest.approx([0.0, 0.0, math.log(2), math.log(6)], abs=1e-15)


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 5, 9, 10, 17, 50, 99, 400, 10_000])
def test_chi2_sf_matches_scipy_over_the_whole_range(dof):
    xs = np.concatenate([[1e-12, 1e-3, 0.5], np.linspace(0.1, 3 * dof + 60, 400), [dof * 10.0 + 500]])
    for x in xs:
        expected = float(stats.chi2.sf(x, dof))
        got = chi2_sf(x, dof)
        if expected > 1e-290:
            assert got == pytest.approx(expected, rel=1e-11), (x, dof)
        else:
            assert got < 1e-280


@settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 2000.0), st.integers(1, 800))
def test_chi2_sf_property_against_scipy(x, dof):
    expected = float(stats.chi2.sf(x, dof))
    got = chi2_sf(x, dof)
    assert 0.0 <= got <= 1.0
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_chi2_sf_edges():
    assert chi2_sf(0.0, 3) == 1.0
    assert chi2_sf(-1.0, 3) == 1.0
    assert chi2_sf(math.inf, 3) == 0.0
    assert math.isnan(chi2_sf(math.nan, 3))
    assert chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-12)
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)


def test_golden_section_finds_the_minimum_of_unimodal_functions():
    assert golden_section(lambda t: (t - 0.3) ** 2, -5.0, 5.0) == pytest.approx(0.3, abs=1e-9)
    # minimum at an end of the interval
    assert golden_section(lambda t: t, -60.0, -1e-12) == pytest.approx(-60.0, abs=1e-9)
    # a flat minimum: values within float resolution of f(x*) ~ 1.2 lie within sqrt(2.2e-16 * 1.2 / f'') ~ 2e-8
    # of x*, so no comparison-based search (scipy's bounded Brent included) can place it closer than that
    f = lambda t: math.cosh(t - 2.0) + 0.1 * t  # noqa: E731
    exact = 2.0 - math.asinh(0.1)
    ref = optimize.minimize_scalar(f, bounds=(-10, 10), method="bounded", options={"xatol": 1e-12}).x
    assert abs(ref - exact) < 5e-8
    assert golden_section(f, -10.0, 10.0, xatol=1e-12) == pytest.approx(exact, abs=5e-8)
    with pytest.raises(ValueError):
        golden_section(f, 1.0, 1.0)


def test_nelder_mead_reaches_the_minimum_like_scipy():
    def rosen(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    simplex = np.array([[-1.2, 1.0], [-1.0, 1.0], [-1.2, 1.2]])
    got = nelder_mead(rosen, simplex, xatol=1e-10, fatol=1e-14, maxfev=10_000)
    np.testing.assert_allclose(got, [1.0, 1.0], atol=1e-7)
    ref = optimize.minimize(
        rosen, simplex[0], method="Nelder-Mead", options={"initial_simplex": simplex, "xatol": 1e-10, "fatol": 1e-14}
    ).x
    np.testing.assert_allclose(got, ref, atol=1e-7)
    # one variable, convex; f(x*) ~ 0.61 and f'' = 2, so float resolution places x* only within ~1e-8
    got1 = nelder_mead(lambda x: math.exp(x[0]) - 2 * x[0], [[0.0], [1.0]], xatol=1e-12, fatol=1e-15)
    assert got1[0] == pytest.approx(math.log(2.0), abs=2e-8)
    with pytest.raises(ValueError):
        nelder_mead(rosen, np.zeros((2, 2)))


def test_nelder_mead_stops_at_maxfev():
    calls = []

    def f(x):
        calls.append(1)
        return float(x @ x)

    nelder_mead(f, [[5.0, 5.0], [6.0, 5.0], [5.0, 6.0]], xatol=0.0, fatol=0.0, maxfev=50)
    assert len(calls) <= 50 + 2


def test_engine_runtime_does_not_import_scipy():
    """The shipped program has no scipy: designs, accounting and tests of the engine run without it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from optrr_engine.designs import run_design\n"
        "from optrr_engine.analysis.chi_square import pearson_chi2\n"
        "d = run_design('auto', [2, 3, 2, 3, 2], [1.0, 1.0, 2.0, 2.0, 1.0])\n"
        "d = run_design('classes', [2] * 40 + [3] * 30, [1.0] * 40 + [0.5] * 30)\n"
        "from optrr_engine.designs.lower_bounds import chernoff_dual_bound\n"
        "chernoff_dual_bound([3] * 200, [1.0] * 200)\n"
        "pearson_chi2([[10, 20], [30, 5]])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
