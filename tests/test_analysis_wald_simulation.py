"""The Wald test's simulated p-value (analysis/wald_simulation.py): calibrated where the chi-square law is not (few
records per cell of a randomized table), powerful under association, the same for the same release."""

from __future__ import annotations

import numpy as np
import pytest

from optrr_engine.analysis import wald_independence
from optrr_engine.analysis.wald_simulation import MAX_SIMULATED_CELLS, simulated_p_value
from optrr_engine.designs import run_design
from optrr_engine.estimation import StructuredOperator
from optrr_engine.estimation.counts import count_replicates
from optrr_engine.estimation.covariance import covariance_matrix


def releases(mech, pi, n, reps, seed):
    """Perturbed counts of ``reps`` releases of n records drawn from pi."""
    rng = np.random.default_rng(seed)
    flat = rng.choice(pi.size, size=reps * n, p=pi.ravel())
    records = np.stack(np.unravel_index(flat, pi.shape), axis=1)
    return count_replicates(mech.sample(records, rng), pi.shape, np.repeat(np.arange(reps), n), reps)


def p_values(op, counts, n):
    """(chi-square p, simulated p) of each release's Wald test."""
    out = []
    for c in counts:
        lam = c / n
        est = op.solve(lam)
        wald = wald_independence(est, covariance_matrix(op, lam, est, n))
        out.append((wald.p_value, simulated_p_value(op, est, c, wald.statistic)))  # as release_chi2 calls it
    return np.array(out)


def test_simulated_p_is_calibrated_with_few_records_where_the_chi_square_law_is_not():
    """A 4 x 4 table of independent attributes, 85 records (about 5 per cell; a sample-m release's pair), eps 1 per
    attribute: the chi-square p-value rejects 17 % at the 5 % level, the simulated one about 5 %."""
    mech = run_design("kronecker", [4, 4], [1.0, 1.0]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    pi0 = np.outer([0.25] * 4, [0.4, 0.3, 0.2, 0.1])
    p = p_values(op, releases(mech, pi0, 85, 300, seed=1), 85)
    chi2_rate, simulated_rate = np.mean(p < 0.05, axis=0)
    assert 0.02 <= simulated_rate <= 0.085, simulated_rate
    assert chi2_rate > 0.12, chi2_rate  # the problem the simulation solves
    assert np.mean(p[:, 1] < 0.01) <= 0.025


def test_simulated_p_is_calibrated_for_a_joint_design_where_a_two_moment_fit_was_not():
    """Optimal 3 x 4 design from 120 records: the chi-square law rejected 10 % at 5 %; a chi-square fitted to the
    simulated mean and variance, 8.5 % (a reviewer's check); the simulated share about 5 %."""
    mech = run_design("optimal", [3, 4], [1.0, 1.0]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    pi0 = np.outer([0.6, 0.3, 0.1], [0.4, 0.3, 0.2, 0.1])
    p = p_values(op, releases(mech, pi0, 120, 400, seed=5), 120)
    chi2_rate, simulated_rate = np.mean(p < 0.05, axis=0)
    assert 0.025 <= simulated_rate <= 0.08, simulated_rate
    assert chi2_rate > simulated_rate


def test_the_share_is_the_p_value_and_the_fitted_tail_only_says_how_far_beyond():
    from optrr_engine.analysis.wald_simulation import monte_carlo_p

    simulated = np.arange(1.0, 1000.0)  # 999 values 1..999
    assert monte_carlo_p(simulated, 990.0) == pytest.approx(11 / 1000)  # 1 + 10 at or above, over B + 1
    beyond = monte_carlo_p(simulated, 5000.0)
    assert 0.0 < beyond <= 1 / 1000
    assert monte_carlo_p(np.ones(999), 2.0) is None  # no law to fit beyond a constant


def test_simulated_p_has_power_under_association():
    mech = run_design("optimal", [3, 3], [1.0, 1.5]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    pi0 = np.outer([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    pi1 = 0.7 * pi0 + 0.3 * np.diag([1 / 3, 1 / 3, 1 / 3])
    p = p_values(op, releases(mech, pi1, 2000, 40, seed=2), 2000)
    assert np.mean(p[:, 1] < 0.05) > 0.9
    assert np.median(p[:, 1]) < 1e-4  # resolved below 1 / (simulations + 1): the scaled law, not a share of them
    # with many records the two p-values agree where they are not tiny
    null = p_values(op, releases(mech, pi0, 2000, 40, seed=3), 2000)
    assert np.median(np.abs(null[:, 0] - null[:, 1])) < 0.03


def test_the_same_release_gives_the_same_p_and_large_tables_keep_the_chi_square_law():
    mech = run_design("kronecker", [4, 4], [1.0, 1.0]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    counts = releases(mech, np.full((4, 4), 1 / 16), 100, 1, seed=4)[0]
    point = np.full((4, 4), 1 / 16)
    assert simulated_p_value(op, point, counts, 9.0) == simulated_p_value(op, point, counts, 9.0)
    side = int(np.sqrt(MAX_SIMULATED_CELLS)) + 1
    big = StructuredOperator.from_mechanism(run_design("kronecker", [side, side], [1.0, 1.0]).mechanism)
    assert simulated_p_value(big, np.full((side, side), 1 / side**2), np.ones((side, side)), 1.0) is None


def test_a_cancel_stops_the_simulation():
    from optrr_engine.tasks import Cancelled

    mech = run_design("kronecker", [3, 3], [1.0, 1.0]).mechanism
    op = StructuredOperator.from_mechanism(mech)
    with pytest.raises(Cancelled):
        simulated_p_value(op, np.full((3, 3), 1 / 9), np.full((3, 3), 10), 1.0, cancel=lambda: True)


def test_the_p_value_says_whether_it_is_the_share_or_the_tail_beyond_every_simulated_value():
    """A review: a p of 1e-14 was described as a share of 999 simulated releases; it is the scaled chi-square's tail
    beyond all of them, and the result says which (``beyond``), as does the test's ``p_value_method``."""
    from optrr_engine.analysis.release_chi2 import simulated_method
    from optrr_engine.analysis.wald_simulation import monte_carlo_tail

    simulated = np.arange(1.0, 1000.0)
    inside = monte_carlo_tail(simulated, 990.0)
    assert inside.p == pytest.approx(11 / 1000) and not inside.beyond
    beyond = monte_carlo_tail(simulated, 5000.0)
    assert beyond.beyond and 0.0 < beyond.p <= 1 / 1000
    capped = monte_carlo_tail(simulated, 999.5)  # just beyond: the tail is above 1/1000, capped there
    assert capped.beyond and capped.p == pytest.approx(1 / 1000)
    assert monte_carlo_tail(np.ones(999), 2.0) is None
    assert simulated_method(False).startswith("simulated: the share of 999 simulated releases")
    text = simulated_method(True)
    assert "beyond every one of the 999 simulated releases" in text and "scaled" in text
    assert "the share of 999" not in text
