"""Bloom-filter client side: encoding (Eq. 3), bit flipping, and the stated epsilon against the mechanism itself."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from optrr_engine.bloom import (
    BloomEncoding,
    BloomMechanism,
    bloom_filters,
    bloom_length,
    flip_probability,
    perturb_bits,
    stated_attribute_epsilon,
    true_attribute_epsilon,
)
from optrr_engine.errors import InputError


def brute_force_epsilon(filters: np.ndarray, f: float) -> float:
    """max over value pairs and all 2^m outputs of ln P(out | u) / P(out | w), by enumeration."""
    m = filters.shape[1]
    outs = np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.int64)
    p1 = np.where(filters == 1, 1 - f / 2, f / 2)  # P(output bit = 1 | value)
    logp = outs @ np.log(p1).T + (1 - outs) @ np.log(1 - p1).T  # (2^m, values)
    return float(np.max(logp[:, :, None] - logp[:, None, :]))


def test_bloom_length_is_equation_3():
    # m = ceil(|Omega| ln(1/p) / (ln 2)^2) with the paper's p = 0.022
    assert bloom_length(2) == math.ceil(2 * 3.8167 / 0.480453)  # 16
    assert [bloom_length(a) for a in (1, 3, 5)] == [8, 24, 40]
    assert bloom_length(4, p=0.5) == math.ceil(4 * math.log(2) / math.log(2) ** 2)
    with pytest.raises(InputError):
        bloom_length(3, p=0.0)


def test_filters_are_deterministic_and_set_at_most_h_bits():
    a = bloom_filters(7, 56, 4)
    assert np.array_equal(a, bloom_filters(7, 56, 4))
    assert a.shape == (7, 56) and set(np.unique(a)) <= {0, 1}
    assert np.all((a.sum(axis=1) >= 1) & (a.sum(axis=1) <= 4))


def test_encoding_concatenates_the_attribute_filters():
    enc = BloomEncoding((3, 2))
    codes = np.array([[0, 1], [2, 0]])
    bits = enc.encode(codes)
    assert bits.shape == (2, enc.bits) and enc.bits == sum(enc.lengths)
    assert np.array_equal(bits[1, enc.columns(0)], enc.filters[0][2])
    assert np.array_equal(bits[0, enc.columns(1)], enc.filters[1][1])


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(2, 4),
    m=st.integers(2, 9),
    h=st.integers(1, 4),
    f=st.floats(0.05, 0.95),
)
def test_true_epsilon_is_the_brute_force_worst_ratio_and_never_above_the_stated(size, m, h, f):
    filters = bloom_filters(size, m, h)
    true = true_attribute_epsilon(filters, f)
    assert true == pytest.approx(brute_force_epsilon(filters, f), rel=1e-9, abs=1e-12)
    assert stated_attribute_epsilon(h, f) >= true * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), f=st.floats(0.05, 0.95))
def test_worst_ratio_factorises_over_differing_bits_for_any_filters(data, f):
    m = data.draw(st.integers(2, 8))
    rows = data.draw(st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=2, max_size=4))
    filters = np.array(rows, dtype=np.uint8)
    assert true_attribute_epsilon(filters, f) == pytest.approx(brute_force_epsilon(filters, f), rel=1e-9, abs=1e-12)


def test_stated_epsilon_is_tight_without_collisions_and_loose_with_them():
    f = 0.5
    # two values with 2 distinct bits each and none in common: they differ in 2h = 4 bits
    disjoint = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=np.uint8)
    assert brute_force_epsilon(disjoint, f) == pytest.approx(stated_attribute_epsilon(2, f), rel=1e-12)
    # the paper's defaults on a binary attribute: m = 16, and the hashes collide (filters differ in 7 < 8 bits)
    binary = bloom_filters(2, bloom_length(2), 4)
    assert true_attribute_epsilon(binary, f) < stated_attribute_epsilon(4, f) * (1 - 1e-3)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 4.0])
def test_flip_probability_inverts_the_stated_formula(eps):
    assert stated_attribute_epsilon(4, flip_probability(eps, 4)) == pytest.approx(eps, rel=1e-12)


def test_mechanism_epsilons_compose_and_stay_within_what_was_asked():
    mech = BloomMechanism.from_epsilons([3, 5, 2, 12], 0.4)
    assert mech.stated_attribute_epsilons() == pytest.approx([0.4] * 4, rel=1e-12)
    assert np.all(mech.attribute_epsilons() <= mech.stated_attribute_epsilons() * (1 + 1e-12))
    assert mech.overall_epsilon() == pytest.approx(mech.attribute_epsilons().sum(), rel=1e-12)
    assert mech.stated_overall_epsilon() == pytest.approx(1.6, rel=1e-12)


def test_bits_are_kept_or_set_with_the_papers_probabilities():
    f, n = 0.3, 200_000
    bits = np.tile(np.array([[0, 1]], dtype=np.uint8), (n, 1))
    out = perturb_bits(bits, f, np.random.default_rng(1))
    assert binomtest(int(out[:, 1].sum()), n, 1 - f / 2).pvalue > 1e-4
    assert binomtest(int(out[:, 0].sum()), n, f / 2).pvalue > 1e-4


def test_per_column_flips_and_fresh_entropy_by_default():
    bits = np.zeros((5000, 2), dtype=np.uint8)
    out = perturb_bits(bits, np.array([1.0, 0.0 + 1e-12]), np.random.default_rng(2))
    assert out[:, 1].sum() == 0 and 0.4 < out[:, 0].mean() < 0.6
    a, b = perturb_bits(bits, 1.0), perturb_bits(bits, 1.0)
    assert not np.array_equal(a, b)
    with pytest.raises(InputError):
        perturb_bits(bits, 0.0)
