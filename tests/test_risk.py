"""Risk numbers: P(released value = true value) against brute-force dense matrices, the posterior bound
against Bayes' rule on the worst-case likelihood ratio, and the wording."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optrr_engine.dense import dense_matrix, enumerate_records
from optrr_engine.designs import run_design
from optrr_engine.release import risk
from optrr_engine.tolerance import REL_TOL


@pytest.mark.parametrize("method", ["kronecker", "optimal", "heuristic", "auto"])
def test_keep_probability_matches_the_dense_channel(method):
    sizes, eps = [3, 4, 2, 5], [1.0, 2.0, 0.5, 1.0]
    mech = run_design(method, sizes, eps).mechanism
    m = dense_matrix(mech)
    records = enumerate_records(sizes)
    got = risk.keep_probabilities(mech)
    for i in range(len(sizes)):
        # P(y_i = x_i | x) summed over outputs, for every input record: the same for all of them
        same = records[:, None, i] == records[None, :, i]  # [y, x]
        per_input = (m * same).sum(axis=0)
        assert np.allclose(per_input, got[i], rtol=1e-9)
    achieved = mech.attribute_epsilons()
    closed = np.exp(achieved) / (np.exp(achieved) + np.asarray(sizes) - 1)
    assert np.allclose(got, closed, rtol=1e-9)


@given(st.floats(1e-6, 1 - 1e-6), st.floats(0.0, 60.0))
def test_posterior_bound_is_bayes_with_ratio_e_eps(prior, eps):
    odds = prior / (1 - prior) * np.exp(eps)
    expected = odds / (1 + odds)
    assert risk.posterior_bound(prior, eps) == pytest.approx(expected, rel=1e-9)
    assert prior - 1e-15 <= risk.posterior_bound(prior, eps) <= 1.0


def test_posterior_bound_is_reached_by_a_binary_attacker():
    """Brute force on two records x, x' and an eps-LDP channel with ratio exactly e^eps on output y."""
    for eps, p in itertools.product([0.1, 1.0, 3.0, 8.0], [0.01, 0.1, 0.5]):
        py_x, py_x2 = np.exp(eps) / (1 + np.exp(eps)), 1 / (1 + np.exp(eps))  # binary RR
        posterior = p * py_x / (p * py_x + (1 - p) * py_x2)
        assert posterior == pytest.approx(risk.posterior_bound(p, eps), rel=1e-12)


def test_words_and_sentences():
    assert [risk.strength(e) for e in (0.5, 1.0, 2.9, 3.0, 5.0, 8.0, 27.5)] == [
        "strong", "strong", "moderate", "moderate", "weak", "weak", "very weak"]
    # the band bounds are compared as every epsilon is: relatively (tolerance.REL_TOL), not to 1e-12
    for bound, word, above in ((1.0, "strong", "moderate"), (3.0, "moderate", "weak"), (8.0, "weak", "very weak")):
        assert risk.strength(bound * (1 + REL_TOL / 2)) == word
        assert risk.strength(bound * (1 + 1e-6)) == above
    s = risk.column_sentence(0.5761, 3)
    assert s == "A released value is the true one 58% of the time (a random guess among its 3 categories: 33%)."
    r = risk.record_sentence(1.0)
    assert r.startswith("Whole-record epsilon 1 (strong)") and "from 10% to at most 23%" in r
    assert "from 50% to over 99.9%" in risk.record_sentence(27.5)
    # a bound just below 100% never reads "at most 100%" (the posterior bound at 7.34 from 50% is 99.935%)
    assert "from 50% to at most 99.9%" in risk.record_sentence(7.34)
    assert "from 10% to at most 99.4%" in risk.record_sentence(7.34)
    assert "from 1% to at most 2.7%, from 10% to at most 23%, from 50% to at most 73%" in r
