"""The pooled block (X_S depends on the count of differing attributes per pool of mixed sizes): every number it
reports equals a brute-force dense matrix, its marginals equal those of its own pattern table, its sampler draws
from its matrix, and it survives the manifest's JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from optrr_engine.blocks import PatternBlock, PooledBlock
from optrr_engine.blocks.pooled import grid_of
from optrr_engine.dense import dense_epsilons, dense_matrix
from optrr_engine.mechanism import Mechanism


def pooled(sizes, pool, seed=0, spread=2.0) -> PooledBlock:
    counts = np.bincount(pool)
    log_x = np.random.default_rng(seed).uniform(0.0, spread, grid_of(counts).shape[0])
    return PooledBlock(sizes, pool, log_x)


@st.composite
def blocks(draw):
    k = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(2, 4), min_size=k, max_size=k))
    labels = draw(st.lists(st.integers(0, 2), min_size=k, max_size=k))
    relabel = {v: i for i, v in enumerate(dict.fromkeys(labels))}  # pool indices 0.. in order of appearance
    pool = [relabel[v] for v in labels]
    return pooled(sizes, pool, seed=draw(st.integers(0, 10_000)), spread=draw(st.floats(0.0, 4.0)))


@settings(max_examples=60, deadline=None)
@given(blocks())
def test_accounting_equals_the_dense_matrix(block):
    mech = Mechanism.single(block)
    matrix = dense_matrix(mech)
    assert np.allclose(matrix.sum(axis=0), 1.0, atol=1e-12)  # a channel: every column sums to 1
    total, eps = dense_epsilons(matrix, block.sizes)
    assert mech.overall_epsilon() == pytest.approx(total, rel=1e-9, abs=1e-12)
    assert np.allclose(mech.attribute_epsilons(), eps, rtol=1e-9, atol=1e-12)
    assert abs(block.log_mass()) < 1e-12
    check = block.verify_against_table()
    assert check["table_mass_error"] < 1e-12 and check["table_attribute_error"] < 1e-9


def test_marginals_equal_those_of_the_pattern_table():
    block = pooled([2, 4, 3, 2, 3, 4], [0, 0, 1, 1, 0, 1], seed=3)
    table = PatternBlock(block.sizes, block.log_pattern_probs(), normalize=False)
    for positions in ([0], [1], [4, 2], [2, 4], [0, 1, 5], [5, 3, 1, 0], [3, 0]):
        got = block.marginal(positions).log_pattern_probs()
        want = table.marginal(positions).log_pattern_probs()
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12), positions
    # attributes 0 and 3 share pool and size (interchangeable): the kept marginal serves both, with their sizes
    assert np.array_equal(block.marginal([3, 2]).sizes, [2, 3])
    full = block.marginal([5, 4, 3, 2, 1, 0])
    assert np.allclose(full.log_pattern_probs(), table.marginal([5, 4, 3, 2, 1, 0]).log_pattern_probs(), atol=1e-12)


def test_the_sampler_draws_from_the_matrix():
    """One pool of mixed sizes is where a wrong choice of the differing attributes shows (given c = 1, attribute
    2 of size 4 differs three times as often as attribute 0 of size 2): chi-square of 200,000 draws per input."""
    sizes = [2, 3, 4]
    block = pooled(sizes, [0, 0, 0], seed=5, spread=1.5)
    matrix = dense_matrix(Mechanism.single(block))
    rng = np.random.default_rng(11)
    radix = np.array([1, 2, 6])  # row index of a record in the dense matrix (attribute 0 fastest)
    for x in ([0, 0, 0], [1, 2, 3]):
        n = 200_000
        out = block.sample(np.tile(np.array(x), (n, 1)), rng)
        observed = np.bincount(out @ radix, minlength=24)
        expected = matrix[:, int(np.array(x) @ radix)] * n
        assert chisquare(observed, expected).pvalue > 1e-4


def test_round_trip_through_json():
    block = pooled([2, 5, 3, 5], [1, 0, 1, 0], seed=2)
    mech = Mechanism(block.sizes, [(np.arange(4), block)])
    again = Mechanism.from_dict(json.loads(json.dumps(mech.to_dict())))
    assert again.to_dict() == mech.to_dict()
    assert again.overall_epsilon() == mech.overall_epsilon()
    assert np.array_equal(again.attribute_epsilons(), mech.attribute_epsilons())


@pytest.mark.parametrize(
    ("sizes", "pool", "log_x", "message"),
    [
        ([2, 3], [0, 2], np.zeros(4), "every pool index"),
        ([2, 3], [0, 0], np.zeros(2), "finite log x for each of the 3"),
        ([2, 3], [0, 0], [0.0, np.inf, 1.0], "finite log x"),
        ([1, 3], [0, 0], np.zeros(3), "at least 2 categories"),
    ],
)
def test_malformed_blocks_are_refused(sizes, pool, log_x, message):
    from optrr_engine.errors import InputError

    with pytest.raises(InputError, match=message):
        PooledBlock(sizes, pool, log_x)


@pytest.mark.parametrize(
    "block",
    [
        {"kind": "pooled", "sizes": [2, 3], "pool": [0, 10**9], "log_x": [0.0] * 4},
        {
            "kind": "classes", "sizes": [2, 3], "class_sizes": [2, 3], "class_counts": [1, 1],
            "member_class": [0, 10**10], "log_T": 0, "theta": 0, "beta": [0, 0],
        },
    ],
)
def test_a_crafted_group_index_is_refused_before_any_array_is_sized_by_it(block):
    """A manifest is read by the recipient: a pool or class index of 1e9 must be a one-line error, not an attempt
    to allocate 8-75 GB (the classes block tried before)."""
    from optrr_engine.errors import InputError

    with pytest.raises(InputError, match="pool index|member classes"):
        Mechanism.from_dict({"sizes": [2, 3], "blocks": [{"positions": [0, 1], **block}]})
